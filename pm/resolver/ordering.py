"""The candidate order preferences give (:mod:`.preferences`): what ``find_matches`` offers first.

Two rules, both only reordering (a verdict never changes: resolvelib still tries every candidate):

1. :func:`preferred_first` — a project with a preference offers its preferred version first,
   wherever every requirement allows it, the resolver has not ruled it out and a file of it is
   usable on the target. As uv does with the versions of an existing output file, it is offered
   even when yanked since, or a pre-release the PEP 440 rule would pass over; one no longer
   listed (or with no usable file) is simply not preferable.
2. :func:`keeping_first` — a project without a preference (new to the set) offers first its
   newest release that does not exclude the preferred version of a project the root requirements
   name. uv decides the roots first (in the order it meets them) and then rejects a release that
   would move one of them; resolvelib would instead pin the newest and re-pin the root. Only the
   first :data:`KEEPING_LOOK` candidates are judged, each by its metadata (usually fetched for
   the first one anyway).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from pm.index._metadata import MetadataUnavailable
from pm.index.base import IndexFailure
from pm.resolver.model import Candidate, Req

if TYPE_CHECKING:
    from pm.resolver.provider import Provider

#: How many candidates of a project without a preference are judged for moving a preferred pin.
KEEPING_LOOK = 4


def preferred_first(provider: Provider, name: NormalizedName, reqs: tuple[Req, ...], found: list[Candidate],
                    bad: set[Version]) -> list[Candidate]:
    """``found`` with the preferred version of ``name`` first (rule 1 of the module docstring)."""
    version = provider.preferred[name]
    rest = [c for c in found if c.version != version]
    if len(rest) < len(found):
        return [next(c for c in found if c.version == version), *rest]
    if version in bad or not all(provider.allowed.contains(name, r.specifier, version) for r in reqs):
        return found
    project = provider.project(name)
    link = provider._best_file(project, version, True) if version in project.versions else None
    if link is None:
        return found
    return [Candidate(name, version, reqs[0].extras, link, frozenset(o for r in reqs for o in r.origins)), *found]


def keeping_first(provider: Provider, found: list[Candidate]) -> list[Candidate]:
    """``found`` with the first candidate that moves no preferred root pin first (rule 2). The
    metadata of the candidates it may judge is asked for together first; each verdict is
    remembered for the resolution (resolvelib asks find_matches again on every backtrack)."""
    judged = found[:KEEPING_LOOK]
    provider.source.prefetch_metadata(c.link for c in judged if c.link is not None)
    for place, candidate in enumerate(judged):
        key = (candidate.name, candidate.version, candidate.extras)
        moves = provider.moves_preference.get(key)
        if moves is None:
            moves = provider.moves_preference[key] = moves_a_preference(provider, candidate)
        if not moves:
            return [candidate, *found[:place], *found[place + 1:]] if place else found
    return found


def moves_a_preference(provider: Provider, candidate: Candidate) -> bool:
    """Whether a requirement of ``candidate`` excludes the preferred version of a project the root
    requirements name; False when its metadata cannot be had (the resolver meets that itself)."""
    if candidate.link is None:
        return False
    try:
        metadata = provider.metadata(candidate.link)
    except (IndexFailure, MetadataUnavailable):
        return False
    extras = candidate.extras
    for requirement in [*provider.applying(metadata, ()), *(provider.applying(metadata, extras) if extras else [])]:
        name = canonicalize_name(requirement.name)
        preferred = provider.root_preferred.get(name)
        if preferred is not None and not requirement.specifier.contains(preferred, prereleases=True):
            return True
    return False
