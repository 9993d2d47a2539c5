"""The resolver: resolvelib over packaging objects, reading packages only through a Source.

- :mod:`.model` — Req, Candidate, Policy, Pin, Resolution
- :mod:`.provider` — the resolvelib provider (preference order in its docstring)
- :mod:`.resolve` — root requirements of a union, one resolution, its pins
- :mod:`.explain` — Conflict / TooComplex, causes mapped to origins, the one formatter
"""

from .explain import Cause, Conflict, Finding, TooComplex, format_conflict
from .model import Pin, Policy, Resolution
from .resolve import resolve_union

__all__ = ["Cause", "Conflict", "Finding", "Pin", "Policy", "Resolution", "TooComplex", "format_conflict", "resolve_union"]
