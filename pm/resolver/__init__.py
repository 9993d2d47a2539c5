"""The resolver: resolvelib over packaging objects, reading packages only through a Source.

- :mod:`.model` — Req, Candidate, Policy, Pin, Resolution
- :mod:`.provider` — the resolvelib provider (preference order in its docstring), and the
  :class:`Builder` interface through which allowed sdists get built (an edge: pm.index.builds)
- :mod:`.resolve` — root requirements of a union, one resolution, its pins
- :mod:`.lookahead` — crawling ahead of resolvelib so its callbacks rarely wait on the network
- :mod:`.explain` — Conflict / TooComplex, causes mapped to origins, findings as data
- :mod:`.wording` — :func:`format_conflict`, the one formatter of findings
"""

from .explain import Cause, Conflict, Finding, TooComplex
from .model import Pin, Policy, Resolution
from .provider import Builder
from .resolve import resolve_union
from .wording import format_conflict

__all__ = ["Builder", "Cause", "Conflict", "Finding", "Pin", "Policy", "Resolution", "TooComplex", "format_conflict", "resolve_union"]
