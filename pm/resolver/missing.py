"""A missing project: a requirement on a project that no configured source has.

It is a verdict about a declaration — a misspelt name, or a project that lives on another
index — not a network failure and not a conflict between plugins: nobody else's requirement
collides, so nobody else is named, core least of all. pm reports it as a failure (receipt
outcome ``failed``, exit 1, ``failure.kind = "missing-project"``), every missing name at once,
each with who requires it (a root origin, or the package that states it and the chain from the
plugin that pulled that in), where pm searched, and a near-match from the names this run knows.

- Root requirements: their pages are fetched before resolvelib runs (it needs every one of
  them at once anyway); :func:`missing_roots` finds those with no files in any source.
- Core's own root requirements that no listed version meets (:func:`unoffered_roots`,
  :class:`NotOffered`): the project exists, but not at any version the host needs. The host's
  requirements are the ones every home must meet, so this is the index being wrong for the home
  (a public index in place of the private one, a mirror missing releases), told as such — never
  as a conflict that blames healthy plugins.
- Transitive ones matter only when the resolution fails because of them: :func:`as_missing`
  turns a :class:`~.explain.Conflict` whose every finding ends in missing projects into
  :class:`MissingProjects`; a failure that also has a real conflict stays a Conflict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from packaging.utils import NormalizedName, canonicalize_name

from pm.base.errors import EXIT_FAILURE, PmError
from pm.index.base import Source
from pm.resolver.explain import Cause, Conflict, Finding, _causes
from pm.resolver.model import Req
from pm.resolver.provider import Provider
from pm.resolver.wording import format_missing, format_not_offered

_CUTOFF = 0.75  # difflib ratio above which a known name is offered as "did you mean"


class MissingProjects(PmError):
    """Requirements on projects that no source has. ``findings`` are of kind ``missing`` (a
    transitive one carries its chain as ``dead_end``); ``searched`` the index URLs and find-links
    folders asked; ``suggestions`` a near-match per missing project, when one is known."""

    kind = "missing-project"
    exit_code = EXIT_FAILURE

    def __init__(self, findings: Sequence[Finding], searched: Sequence[str],
                 suggestions: Mapping[str, str], candidate: str | None) -> None:
        self.findings = tuple(findings)
        self.searched = tuple(searched)
        self.suggestions = dict(suggestions)
        self.candidate = candidate
        super().__init__(format_missing(self))

    @property
    def projects(self) -> tuple[str, ...]:
        """The missing projects' names, in the order they are told."""
        return tuple(dict.fromkeys(name for f in self.findings for name in missing_names(f)))

    @property
    def plugins(self) -> tuple[str, ...]:
        """The plugins whose declarations lead to a missing project (the candidate first)."""
        names = [c.origin.plugin for f in self.findings for c in (*f.causes, *f.context) if c.origin.plugin]
        if self.candidate is not None and self.candidate in names:
            names.insert(0, self.candidate)
        return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class Unoffered:
    """A project core requires at versions that no source lists: ``causes`` (core's requirements
    on it, the lock's pin included) and ``offered`` (the versions listed, newest first)."""

    package: str
    causes: tuple[Cause, ...]
    offered: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {"name": self.package, "required_by": [c.to_json() for c in self.causes],
                "offered": list(self.offered)}


class NotOffered(PmError):
    """The sources list none of the versions core's own requirements allow (``projects``); the
    index is most likely the wrong one for this home. A failure (exit 1), not a conflict."""

    kind = "not-offered"
    exit_code = EXIT_FAILURE

    def __init__(self, projects: Sequence[Unoffered], searched: Sequence[str]) -> None:
        self.projects = tuple(projects)
        self.searched = tuple(searched)
        super().__init__(format_not_offered(self))


def unoffered_roots(roots: Sequence[Req], provider: Provider) -> list[Unoffered]:
    """Core's root requirements (its declaration and its lock) that no version the sources list
    allows (pre-releases counted: listing is what is judged, not whether a version suits the
    target), a project the sources do not have at all included. Blocks until those pages are
    fetched (start them with ``source.prefetch`` first)."""
    by_name: dict[NormalizedName, list[Req]] = {}
    for req in roots:
        if any(o.is_core for o in req.origins):
            by_name.setdefault(req.name, []).append(req)
    found = []
    for name, reqs in by_name.items():
        versions = provider.project(name).versions
        unmet = [r for r in reqs if not any(r.specifier.contains(v, prereleases=True) for v in versions)]
        if unmet:
            causes = tuple(sorted((c for c in _causes(unmet) if c.origin.is_core), key=lambda c: c.locked))
            found.append(Unoffered(name, causes, tuple(str(v) for v in versions)))
    return sorted(found, key=lambda u: u.package)


def missing_names(finding: Finding) -> list[str]:
    """The missing projects a finding ends in (its own package when it has no chain)."""
    if finding.dead_end is None:
        return [finding.package.split("[")[0]] if finding.kind == "missing" else []
    return [leaf.package.split("[")[0] for leaf in finding.dead_end.leaves() if leaf.kind == "missing"]


def missing_roots(roots: Sequence[Req], provider: Provider) -> list[Finding]:
    """One ``missing`` finding per project that root requirements name and no source has.

    Blocks until those pages are fetched (start them with ``source.prefetch`` first).
    """
    by_name: dict[NormalizedName, list[Req]] = {}
    for req in roots:
        by_name.setdefault(req.name, []).append(req)
    return [Finding("missing", name, tuple(_causes(reqs))) for name, reqs in by_name.items()
            if not provider.project(name)]


def as_missing(conflict: Conflict) -> list[Finding] | None:
    """The findings when every one of them ends only in missing projects, else None."""
    def only_missing(finding: Finding) -> bool:
        if finding.dead_end is None:
            return finding.kind == "missing"
        kinds = [leaf.kind for leaf in finding.dead_end.leaves()]
        return finding.dead_end.complete and bool(kinds) and all(kind == "missing" for kind in kinds)

    findings = list(conflict.findings)
    return findings if findings and all(only_missing(f) for f in findings) else None


def searched(source: Source) -> list[str]:
    """The labels (index URL, find-links folder) of the sources behind ``source``."""
    parts = getattr(source, "sources", None)
    return [label for s in (parts if parts is not None else (source,)) if (label := getattr(s, "label", ""))]


def known_projects(source: Source) -> list[str]:
    """Project names the sources list cheaply (``project_names()``, an optional capability): a
    find-links folder's files, an index's ``/simple/`` list when it is small (never PyPI's)."""
    parts = getattr(source, "sources", None)
    names: list[str] = []
    for part in parts if parts is not None else (source,):
        listing = getattr(part, "project_names", None)
        if callable(listing):
            names += listing()
    return names


def suggestions(names: Iterable[str], known: Iterable[str]) -> dict[str, str]:
    """A near-match for each missing name among ``known`` names (canonical, by difflib ratio).

    ``known`` is what the caller collected in this run: the union's requirement names, the
    projects whose pages were fetched, the find-links folders' projects, and an index's project
    list when it is small (:func:`known_projects`). pm never downloads a large project list to
    make a suggestion (PyPI's is tens of megabytes).
    """
    import difflib  # (only when a project is missing: a resolve that succeeds never loads it)

    pool = sorted({canonicalize_name(n) for n in known})
    found = {}
    for name in names:
        close = difflib.get_close_matches(name, [k for k in pool if k != name], n=1, cutoff=_CUTOFF)
        if close:
            found[name] = close[0]
    return found
