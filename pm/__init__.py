"""hermes-pm: the plugin package manager and dependency resolver of the Hermes agent.

Floors, lowest first (each a package whose ``__init__`` lists its modules; a floor imports only
from the floors below it, checked by tests/test_layers.py):

- :mod:`pm.base` — errors, bounded file reading, YAML/TOML, names, store, lock, watch, the uv runner
- :mod:`pm.index` — package indexes: pages, metadata, HTTP and its cache, find-links, builds
- :mod:`pm.inputs.collect` — the home read: config, settings, manifests, declarations, discovery,
  selection, core, target, union, catalog
- :mod:`pm.resolver` — resolutions, and the proof of a refusal
- :mod:`pm.records.sections` — receipts and their sections, reused resolutions, frozen locks, exports
- :mod:`pm.env` — builds, generations, leases, readiness, plugin installs
- :mod:`pm.ops` — the operations (resolve, sync, enable/disable, update, install/remove, check, gc):
  one transaction each, one failure vocabulary, printing nothing
- :mod:`pm.cli` — ``hermes pm …`` / ``python -m pm …``: parse → Options → operation → render;
  :mod:`pm.cli.shortcut` answers an identical command over unchanged inputs (:mod:`pm.base.watch`)

Beside them, :mod:`pm.testing`: real wheels, a real local index and home builders for tests and
benchmarks.
"""

__version__ = "0.1.0"
