"""Why a preferred version was not kept: the moves of one resolution, from the resolver's own facts.

For each preference (:mod:`.preferences`) the resolution pinned at another version, or not at all,
the first of these that holds is the reason (:class:`~.model.Move`):

1. ``unused`` — nothing in the resolution requires the project any more;
2. ``upgrade`` — an upgrade freed its pin;
3. ``required`` — a requirement in the resolution (a root's first, then a pinned package's)
   excludes the old version: that requirement and who stated it are ``because``;
4. ``not-offered`` — the index no longer lists the old version, or none of its files is usable
   on the target (``detail``: which);
5. ``dependency`` — the old version itself requires what the resolution cannot meet (a
   pinned project at a version outside its specifier, a project nothing usable provides, or
   another Python): that requirement, stated by the old version, is ``because``;
6. ``other`` — none of those: the resolver settled elsewhere to meet everything else.

Computed once, when the resolution ends (its metadata is usually in memory then: the preferred
version was the first one tried), and stored with the resolution.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from pm.base.errors import PmError
from pm.resolver.model import PYTHON, Candidate, Move, Parent, Req

if TYPE_CHECKING:
    from pm.resolver.provider import Provider


def moves_of(result: Any, provider: Provider) -> tuple[Move, ...]:
    """The moves of resolvelib's ``result`` against the provider's policy's preferences."""
    preferences = provider.policy.preferences
    if not preferences.pins:
        return ()
    mapping: dict[str, Candidate] = result.mapping
    pinned = {c.name: c for key, c in mapping.items() if key != PYTHON and not c.extras}
    found = []
    for name, before in preferences.pins:
        chosen = pinned.get(name)
        if chosen is not None and chosen.version == before:
            continue
        if chosen is None:
            found.append(Move(name, before, None, "unused"))
        elif provider.policy.upgrade.frees(name):
            found.append(Move(name, before, chosen.version, "upgrade"))
        else:
            found.append(_why(name, before, chosen.version, result, pinned, provider))
    return tuple(found)


def _why(name: NormalizedName, before: Version, after: Version, result: Any, pinned: dict[NormalizedName, Candidate],
         provider: Provider) -> Move:
    because = _excluding(name, before, result, provider)
    if because is not None:
        return Move(name, before, after, "required", because)
    project = provider.project(name)
    if before not in project.versions:
        return Move(name, before, after, "not-offered", detail=f"{name} {before} is no longer listed by the index")
    link = provider._best_file(project, before, True)
    if link is None:
        problems = sorted({str(provider.file_problem(f, True)) for f in project.files(before)})
        return Move(name, before, after, "not-offered",
                    detail=f"no file of {name} {before} is usable here ({', '.join(problems) or 'no files'})")
    extras = sorted({e for c in result.mapping.values() if c.name == name for e in c.extras})
    because = _unmet_by_old(name, before, link, extras, pinned, provider)
    if because is not None:
        return Move(name, before, after, "dependency", because)
    return Move(name, before, after, "other")


def _excluding(name: NormalizedName, before: Version, result: Any, provider: Provider) -> Parent | None:
    """The first requirement on ``name`` in the resolution that excludes ``before`` (roots first)."""
    roots: list[Parent] = []
    stated: list[Parent] = []
    for key, criterion in result.criteria.items():
        if key == PYTHON or result.mapping[key].name != name:
            continue
        for info in criterion.information:
            req: Req = info.requirement
            parent = info.parent
            if req.name != name or provider.allowed.contains(name, req.specifier, before):
                continue
            if parent is None:
                origin = sorted(req.origins, key=lambda o: (o.plugin is not None, str(o)))[0]
                roots.append(Parent(req.text, origin=origin, locked=req.locked))
            elif parent.name != name:  # not an extra's own pin on its base
                stated.append(Parent(req.text, package=f"{parent.name} {parent.version}"))
    return next(iter(roots or stated), None)


def _unmet_by_old(name: NormalizedName, before: Version, link: Any, extras: list[str],
                  pinned: dict[NormalizedName, Candidate], provider: Provider) -> Parent | None:
    """The first requirement of ``name`` ``before`` (its own metadata) that the resolution does not
    meet; None when its metadata cannot be had or every requirement is met."""
    try:
        metadata = provider.metadata(link)
    except PmError:
        return None
    who = f"{name} {before}"
    python = metadata.requires_python
    if python is not None and not python.contains(provider.python_version, prereleases=True):
        return Parent(f"Python {python}", package=who)
    unpinned = None
    for requirement in [*provider.applying(metadata, []), *(provider.applying(metadata, extras) if extras else [])]:
        dep = canonicalize_name(requirement.name)
        text = str(requirement).split(";")[0].strip()
        chosen = pinned.get(dep)
        if chosen is None:
            unpinned = unpinned or Parent(text, package=who)
        elif not requirement.specifier.contains(chosen.version, prereleases=True):
            return Parent(text, package=who)
    return unpinned

