"""The resolver: resolvelib over packaging objects, reading packages only through a Source.

- :mod:`.model` — Req, Candidate, Policy, Pin, Resolution
- :mod:`.provider` — the resolvelib provider (preference order in its docstring), and the
  :class:`Builder` interface through which allowed sdists get built (an edge: pm.index.builds)
- :mod:`.resolve` — root requirements of a union, one resolution, its pins
- :mod:`.preferences` — Preferences (the selected generation's pins) and Upgrade (what may move)
- :mod:`.ordering` — the candidate order preferences give; :mod:`.moves` — why a preference moved
- :mod:`.lookahead` — crawling ahead of resolvelib so its callbacks rarely wait on the network
- :mod:`.learning` — dead ends (requirements no choice can satisfy), learned as it goes
- :mod:`.explain` — Conflict / TooComplex, causes mapped to origins, findings as data
- :mod:`.deadends` — why a requirement can never be satisfied: unusable versions and chains
- :mod:`.missing` — MissingProjects (requirements on projects that no source has) and NotOffered
  (core's requirements at versions no source lists): failures, not conflicts
- :mod:`.wording` — :func:`format_conflict` and :func:`format_missing`, the formatters of findings
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pm.resolver.explain import Cause, Conflict, Finding, TooComplex
    from pm.resolver.missing import MissingProjects, NotOffered
    from pm.resolver.model import Pin, Policy, Resolution
    from pm.resolver.provider import Builder
    from pm.resolver.resolve import resolve_union
    from pm.resolver.wording import format_conflict

#: Where each public name lives, loaded on first use (PEP 562): reading a stored resolution
#: (pins, a receipt) needs only the model, not resolvelib, the provider and the explanations.
_LAZY = {"Cause": ".explain", "Conflict": ".explain", "Finding": ".explain", "TooComplex": ".explain",
         "MissingProjects": ".missing", "NotOffered": ".missing", "Pin": ".model", "Policy": ".model", "Resolution": ".model",
         "Builder": ".provider", "resolve_union": ".resolve", "format_conflict": ".wording"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_LAZY[name], __name__), name)


__all__ = ["Builder", "Cause", "Conflict", "Finding", "MissingProjects", "NotOffered", "Pin", "Policy", "Resolution", "TooComplex", "format_conflict", "resolve_union"]
