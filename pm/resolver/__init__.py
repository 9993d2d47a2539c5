"""The resolver: resolvelib over packaging objects, reading packages only through a Source.

- :mod:`.model` — Req, Candidate, Policy, Pin, Resolution
- :mod:`.provider` — the resolvelib provider (preference order in its docstring), and the
  :class:`Builder` interface through which allowed sdists get built (an edge: pm.index.builds)
- :mod:`.resolve` — root requirements of a union, one resolution, its pins
- :mod:`.lookahead` — crawling ahead of resolvelib so its callbacks rarely wait on the network
- :mod:`.learning` — dead ends (requirements no choice can satisfy), learned as it goes
- :mod:`.explain` — Conflict / TooComplex, causes mapped to origins, findings as data
- :mod:`.deadends` — why a requirement can never be satisfied: unusable versions and chains
- :mod:`.missing` — MissingProjects: requirements on projects that no source has (a failure)
- :mod:`.wording` — :func:`format_conflict` and :func:`format_missing`, the formatters of findings
"""

from .explain import Cause, Conflict, Finding, TooComplex
from .missing import MissingProjects
from .model import Pin, Policy, Resolution
from .provider import Builder
from .resolve import resolve_union
from .wording import format_conflict

__all__ = ["Builder", "Cause", "Conflict", "Finding", "MissingProjects", "Pin", "Policy", "Resolution", "TooComplex", "format_conflict", "resolve_union"]
