"""An environment without the uv and pip settings of the machine the tests run on.

pm honours ``UV_*``/``PIP_*`` index variables, ``uv.toml`` and ``pip.conf`` (:mod:`pm.inputs.index_settings`);
a developer's machine often has some (``PIP_FIND_LINKS=/opt/wheels``, a ``~/.config/pip/pip.conf``
with extra indexes), which must not leak into a test by accident. :func:`without_tool_settings`
drops the variables pm reads and turns the files off with uv's and pip's own switches
(``UV_NO_CONFIG=1``, ``PIP_CONFIG_FILE=/dev/null``); a test that is about one of them sets it back.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: Every variable pm takes an index setting from, but the HERMES_PM_* ones tests set themselves.
TOOL_VARIABLES = (
    "HERMES_PM_NO_INDEX", "HERMES_PM_OFFLINE",
    "UV_DEFAULT_INDEX", "UV_INDEX_URL", "UV_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "UV_NO_INDEX",
    "UV_OFFLINE", "UV_KEYRING_PROVIDER", "UV_CONFIG_FILE", "UV_NO_CONFIG",
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_KEYRING_PROVIDER",
    "PIP_CONFIG_FILE", "PIP_CERT",
)

#: What turns uv.toml and pip.conf off.
NO_TOOL_FILES = {"UV_NO_CONFIG": "1", "PIP_CONFIG_FILE": os.devnull}


def without_tool_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without :data:`TOOL_VARIABLES`, with :data:`NO_TOOL_FILES`."""
    return {**{k: v for k, v in environ.items() if k not in TOOL_VARIABLES}, **NO_TOOL_FILES}
