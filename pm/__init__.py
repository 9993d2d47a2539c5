"""hermes-pm: the plugin package manager and dependency resolver of the Hermes agent.

Table of contents (pure core first, edges last):

- :mod:`pm.inputs.manifest`, :mod:`pm.inputs.declaration` — what a plugin root says it needs
- :mod:`pm.inputs.discover`, :mod:`pm.inputs.plugin` — plugin roots from their sources, and precedence
- :mod:`pm.inputs.config`, :mod:`pm.inputs.selection` — which roots are members, and why the others are not
- :mod:`pm.core`, :mod:`pm.inputs.target` — the host's requirements and lock; the target interpreter
- :mod:`pm.inputs.union` — core + members with origins, and the input fingerprint
- :mod:`pm.inputs.settings`, :mod:`pm.inputs.collect` — flag > environment > config > default; one gathering step
- :mod:`pm.resolver`, :mod:`pm.records.sections` — resolutions and conflicts, and their receipt sections
- :mod:`pm.records.receipt` — the receipt, a value (schema in ``pm/schemas/``)
- :mod:`pm.index`, :mod:`pm.base.uv`, :mod:`pm.env.build`, :mod:`pm.env.generations`, :mod:`pm.base.store`,
  :mod:`pm.base.lock` — the edges: index client, the one uv choke point, builds, atomic writes, the lock
- :mod:`pm.ops` — the operations (resolve, sync, enable/disable, update, install/remove, check, gc):
  one transaction each, one failure vocabulary, printing nothing
- :mod:`pm.cli` — ``hermes pm …`` / ``python -m pm …``: parse → Options → operation → render;
  :mod:`pm.cli.shortcut` answers an identical resolve over unchanged inputs (:mod:`pm.base.watch`)
- :mod:`pm.testing` — real wheels, a real local index and home builders for tests and benchmarks
"""

__version__ = "0.1.0"
