"""hermes-pm: the plugin package manager and dependency resolver of the Hermes agent.

Table of contents (pure core first, edges last):

- :mod:`pm.manifest`, :mod:`pm.declaration` — what a plugin root says it needs
- :mod:`pm.discover`, :mod:`pm.plugin` — plugin roots from their sources, and precedence
- :mod:`pm.config`, :mod:`pm.selection` — which roots are members, and why the others are not
- :mod:`pm.core`, :mod:`pm.target` — the host's requirements and lock; the target interpreter
- :mod:`pm.union` — core + members with origins, and the input fingerprint
- :mod:`pm.settings`, :mod:`pm.inputs` — flag > environment > config > default; one gathering step
- :mod:`pm.cli` — ``hermes pm …`` / ``python -m pm …``
- :mod:`pm.testing` — real wheels, a real local index and home builders for tests and benchmarks
"""

__version__ = "0.1.0"
