"""Test support shared by the test suite and ``scripts/bench/``: real files, real servers.

- :mod:`pm.testing.wheels` — deterministic wheels and sdists, and a data-driven builder.
- :mod:`pm.testing.index` — :class:`LocalIndex`, a PEP 503/691/658 simple repository on 127.0.0.1
  (header presets of real indexes, bytes sent).
- :mod:`pm.testing.ranges` — the byte-range answers (206/416) LocalIndex gives on its files.
- :mod:`pm.testing.homes` — homes, profiles and plugin roots of every declaration style.
- :mod:`pm.testing.sdists` — sdists with an in-tree PEP 517 backend that build offline (dynamic metadata).
- :mod:`pm.testing.receipts` — validation of receipts against the shipped JSON Schema.
- :mod:`pm.testing.cli` — run pm's CLI in the test process; the latest receipt.
- :mod:`pm.testing.environ` — an environment without the machine's uv/pip index settings.

Standard library and ``packaging`` (plus PyYAML for homes) only; nothing here is used at runtime.
"""

from __future__ import annotations

from pm.testing.environ import NO_TOOL_FILES, TOOL_VARIABLES, without_tool_settings
from pm.testing.homes import DECLARING_STYLES, STYLES, add_plugin, add_profile, isolated_home, make_home, tree_digest
from pm.testing.index import PRESETS, LocalIndex, Transfer, index_from_spec, negotiate
from pm.testing.wheels import (
    IndexFile,
    build_packages,
    build_sdist,
    build_wheel,
    escape_name,
    metadata_bytes,
    normalize_version,
)

__all__ = [
    "DECLARING_STYLES",
    "NO_TOOL_FILES",
    "PRESETS",
    "STYLES",
    "TOOL_VARIABLES",
    "IndexFile",
    "LocalIndex",
    "Transfer",
    "add_plugin",
    "add_profile",
    "build_packages",
    "build_sdist",
    "build_wheel",
    "escape_name",
    "index_from_spec",
    "isolated_home",
    "make_home",
    "metadata_bytes",
    "negotiate",
    "normalize_version",
    "tree_digest",
    "without_tool_settings",
]
