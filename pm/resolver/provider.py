"""The resolvelib provider: a thin adapter between resolvelib and a :class:`~pm.index.base.Source`.

It never touches the network or starts a process itself: it asks the source (and, for an sdist
that ``pm.allow_builds`` names and whose metadata is dynamic, the :class:`Builder` it was given),
and hints the source to prefetch project pages and metadata it will likely need next, so
resolvelib's callbacks rarely wait on one request at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version
from resolvelib import AbstractProvider

from pm.index._metadata import MetadataUnavailable
from pm.index.base import FileLink, IndexFailure, Metadata, Source
from pm.index.multi import project_of
from pm.index.project import Project
from pm.inputs.target import Target
from pm.resolver.allowed import Allowed, Markers
from pm.resolver.learning import Learning
from pm.resolver.lookahead import LookAhead
from pm.resolver.model import PYTHON, Candidate, Policy, Req
from pm.resolver.ordering import keeping_first, preferred_first

if TYPE_CHECKING:
    from pm.resolver.imposing import Imposing, Replacement

_log = logging.getLogger("pm.resolver")
#: How many of the best candidates of a project get their metadata prefetched: the best one; and
#: once the resolver walks down the list (the ``n``-th candidate's dependencies asked for: those
#: before it were rejected, each after its metadata came: one round trip, or three by range
#: requests), the next ``2 ** n`` of them at once, at most :data:`_PREFETCH_WALKING`.
_PREFETCH_CANDIDATES = 1
_PREFETCH_WALKING = 16
#: Why a file cannot be used, from the cheapest remedy to the hardest (see :meth:`file_problem`).
PROBLEMS = ("yanked", "excluded-newer", "sdist-only", "no-compatible-file", "requires-python")


def _no_note(requirement: Requirement) -> str:
    return ""


class Builder(Protocol):
    """Builds sdists that ``pm.allow_builds`` names: the resolver's one way to learn dynamic metadata.

    An implementation runs a build backend (a process: an edge, never the resolver core). It
    MUST return the built wheel's metadata, and MUST raise :class:`IndexFailure` (or a subclass)
    naming the file and the build's last output lines when the build fails: a failure, never a
    conflict. It is called from the resolver's thread, once per sdist the resolution needs.
    """

    def metadata(self, link: FileLink) -> Metadata:
        ...


class Provider(AbstractProvider):  # type: ignore[type-arg]
    """Finds candidates and dependencies for one target and one policy.

    It remembers every requirement it was asked to match, per identifier (with the candidate
    that stated it), so a conflict can be explained beyond resolvelib's last backtrack.
    """

    def __init__(self, source: Source, target: Target, policy: Policy, builder: Builder | None = None,
                 *, imposing: Imposing | None = None) -> None:
        self.source = source
        #: The operator's constraints and overrides (:mod:`.imposing`), applied in :meth:`applying`
        #: and :meth:`get_dependencies`; what each override replaced, per candidate.
        self.imposing = imposing
        self.replaced: dict[tuple[NormalizedName, Version], list[Replacement]] = {}
        self.target = target
        self.policy = policy
        self.builder = builder
        self.python_version = Version(target.python_full_version)
        self._tag_rank = {tag: rank for rank, tag in enumerate(target.tags)}
        self._counts: dict[str, int] = {}
        self._listed: dict[str, list[Candidate]] = {}  # the last find_matches, in order
        self._metadata: dict[FileLink, Metadata] = {}
        self._asked: dict[str, dict[tuple[object, ...], Req]] = {}
        self._python_fits: dict[str, bool] = {}
        self._ranks: dict[str, int | None] = {}
        self._projects: dict[NormalizedName, Project] = {}
        self._best: dict[tuple[NormalizedName, frozenset[str]], list[tuple[Version, FileLink]]] = {}
        self._best_file_of: dict[tuple[NormalizedName, Version, bool], FileLink | None] = {}
        self.allowed = Allowed()
        self._satisfied: dict[tuple[Req, Candidate], bool] = {}
        self._yank_pins: dict[NormalizedName, frozenset[str]] = {}
        self.markers = Markers(target.environment)
        self._lookahead = LookAhead(self)
        self.learning = Learning(self)
        #: The preferred version of each project (:mod:`.preferences`), those an upgrade frees left out.
        self.preferred = policy.preferences.kept(policy.upgrade)
        #: The projects the root requirements name (set by the resolution): their preferred
        #: versions are the ones a new project's candidates are judged against.
        self.root_preferred: dict[NormalizedName, Version] = {}
        self.moves_preference: dict[tuple[NormalizedName, Version, frozenset[str]], bool] = {}

    def set_roots(self, roots: Sequence[Req]) -> None:
        """The root requirements of this resolution: the learning's root context, and the versions
        whose yanked files may be used (see :meth:`may_use_yanked`)."""
        self.learning.set_roots(roots)
        #: The preferred versions of the projects the roots name (:func:`.ordering.keeping_first`).
        named = {r.name for r in roots}
        self.root_preferred = {n: v for n, v in self.preferred.items() if n in named}
        pins: dict[NormalizedName, set[str]] = {}
        for root in roots:
            for spec in root.specifier:
                if spec.operator == "===" or (spec.operator == "==" and not spec.version.endswith(".*")):
                    pins.setdefault(root.name, set()).add(spec.version)
        self._yank_pins = {name: frozenset(found) for name, found in pins.items()}

    def may_use_yanked(self, link: FileLink) -> bool:
        """PEP 592, as uv reads it: a yanked file may be used only for a version that a root
        requirement (core's, or a member's own) pins exactly, with ``==`` (no wildcard) or ``===``;
        ``==2`` pins 2, not 2+local (a non-yanked 2+local satisfies ``==2`` and sorts first), and a
        pin in a package's own metadata opts into nothing. The pin is global, as uv's: ``x[extra]``
        may take the yanked release that a root pins on ``x``."""
        pins = self._yank_pins.get(link.name)
        return pins is not None and any(_same_version(pin, link.version) for pin in pins)

    def look_ahead(self, reqs: Iterable[Req]) -> None:
        """Start crawling from ``reqs`` in the background (see :class:`~.lookahead.LookAhead`)."""
        for req in reqs:
            self._lookahead.page(req)

    def close(self) -> None:
        """Stop crawling ahead; a resolution's provider is closed when it ends."""
        self._lookahead.close()

    # -- resolvelib callbacks ---------------------------------------------------------------------

    def identify(self, requirement_or_candidate: Req | Candidate) -> str:
        return requirement_or_candidate.key

    def get_preference(
        self,
        identifier: str,
        resolutions: Mapping[str, Candidate],
        candidates: Mapping[str, Iterator[Candidate]],
        information: Mapping[str, Iterator[Any]],
        backtrack_causes: Sequence[Any],
    ) -> tuple[bool, bool, bool, bool, int, str]:
        """Which unpinned identifier to work on next; smaller sorts first.

        1. Requires-Python (the ``<python>`` pseudo-package): one candidate, decides a lot.
        2. Identifiers named in the latest backtrack causes: settle the conflict where it is.
        3. Identifiers with an exact ``==`` pin (core's lock among them): nothing to choose.
        4. Identifiers with an upper bound: fewer versions will do.
        5. Fewer candidates first (the count from the last ``find_matches``).
        6. The name, for a stable order.

        Preferences (:mod:`.preferences`) do not change this order, as in uv (its priorities know
        nothing of preferences): they change only which candidate comes first (``find_matches``).
        """
        requirements = [info.requirement for info in information[identifier]]
        cause_names = {c.requirement.key for c in backtrack_causes} | {
            c.parent.key for c in backtrack_causes if c.parent is not None
        }
        pinned = any(r.is_exact_pin for r in requirements)
        upper = any(s.operator in ("<", "<=", "~=", "==") for r in requirements for s in r.specifier)
        return (
            identifier != PYTHON,
            identifier not in cause_names,
            not pinned,
            not upper,
            self._counts.get(identifier, 1_000),
            identifier,
        )

    def find_matches(
        self,
        identifier: str,
        requirements: Mapping[str, Iterator[Req]],
        incompatibilities: Mapping[str, Iterator[Candidate]],
    ) -> list[Candidate]:
        """Candidates satisfying every requirement on ``identifier``, best first — the preferred
        version, then the newest; for a project without a preference, the newest that moves no
        preferred root pin first (:mod:`.ordering`) — without those that state a requirement
        proved dead (see :mod:`.learning`)."""
        reqs = tuple(requirements[identifier])
        self._remember(identifier, reqs)
        bad = {c.version for c in incompatibilities[identifier]}
        origins = frozenset(o for r in reqs for o in r.origins)
        if identifier == PYTHON:
            # the target's version, unless it fits no requirement or the resolver ruled it out
            # (offering a ruled-out candidate again loops the resolver until its round limit)
            fits = self.python_version not in bad and all(
                r.specifier.contains(self.python_version, prereleases=True) for r in reqs)
            found = [Candidate(PYTHON, self.python_version, frozenset(), None, origins)] if fits else []
        else:
            name, extras = (reqs[0].name, reqs[0].extras) if reqs else _split_key(identifier)  # none: a backjump's patch
            found = [
                Candidate(name, version, extras, link, origins)
                for version, link in self.best_files(name, reqs)
                if version not in bad
            ]
            if name in self.preferred:
                found = preferred_first(self, name, reqs, found, bad)
            elif self.root_preferred:
                found = keeping_first(self, found)
            self.source.prefetch_metadata(c.link for c in found[:_PREFETCH_CANDIDATES] if c.link is not None)
        alive = self.learning.alive(reqs, found)
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug("%s: %d candidate(s) for %s%s%s", identifier, len(alive), ", ".join(r.text for r in reqs),
                       f"; {len(bad)} ruled out by earlier conflicts" if bad else "",
                       f"; {len(found) - len(alive)} state a requirement proved dead" if len(alive) < len(found) else "")
        self._counts[identifier] = len(alive)
        self._listed[identifier] = list(alive)  # a copy: resolvelib keeps the one it is given
        return alive

    def is_satisfied_by(self, requirement: Req, candidate: Candidate) -> bool:
        """Remembered per (requirement, candidate) object pair (both hash by identity): resolvelib
        checks every requirement against its current pin again on every round."""
        key = (requirement, candidate)
        found = self._satisfied.get(key)
        if found is None:
            found = self._satisfied[key] = self.allowed.contains(requirement.name, requirement.specifier,
                                                                 candidate.version)
        return found

    def get_dependencies(self, candidate: Candidate) -> list[Req]:
        if candidate.link is None:
            return []
        self._walking(candidate)
        metadata = self.metadata(candidate.link)
        origins = candidate.origins
        deps: list[Req] = []
        if candidate.extras:
            deps.append(Req(candidate.name, SpecifierSet(f"=={candidate.version}"), frozenset(),
                            f"{candidate.name}=={candidate.version}", origins, candidate))
        if metadata.requires_python is not None:
            deps.append(Req(PYTHON, metadata.requires_python, frozenset(),
                            f"Python {metadata.requires_python}", origins, candidate))
        note = self.imposing.note if self.imposing is not None else _no_note
        deps += [Req.from_requirement(r, origins, candidate, note=note(r))
                 for r in self.applying(metadata, candidate.extras)]
        if self.imposing is not None and self.imposing.constraints:
            deps += self.imposing.constrain([d for d in deps if d.name != PYTHON],
                                            lambda marker: self.markers.holds(marker))
        self.learning.saw(candidate, deps)
        self.source.prefetch(d.name for d in deps if d.name != PYTHON)
        self.look_ahead(d for d in deps if d.name != PYTHON)
        return deps

    def _walking(self, candidate: Candidate) -> None:
        """Prefetch the metadata of the candidates after ``candidate`` when those before it were
        rejected (see :data:`_PREFETCH_WALKING`)."""
        listed = self._listed.get(candidate.key, [])
        # where it is: found by a scan that stops there (usually near the top), not a map of every
        # candidate built on each find_matches
        place = next((i for i, c in enumerate(listed) if c.version == candidate.version), 0)
        if place:
            ahead = listed[place + 1:place + 1 + min(_PREFETCH_WALKING, 2 ** place)]
            self.source.prefetch_metadata(c.link for c in ahead if c.link is not None)

    def applying(self, metadata: Metadata, extras: Iterable[str]) -> list[Requirement]:
        """The Requires-Dist entries whose markers hold on the target (only the extras' own for
        extras), the operator's overrides in the place of those on their projects."""
        found = []
        requirements = self._overridden(metadata)  # once, whatever the number of extras
        for extra in sorted(extras) or [""]:
            for requirement in requirements:
                if extra and requirement.marker is None:
                    continue  # the base candidate brings the unconditional ones
                if requirement.marker is None or self.markers.holds(requirement.marker, extra):
                    found.append(requirement)
        return found

    def _overridden(self, metadata: Metadata) -> Iterable[Requirement]:
        """``metadata``'s Requires-Dist with the overrides in place (:mod:`.imposing`); each
        replacement remembered for the candidate."""
        if self.imposing is None or not self.imposing.overrides:
            return metadata.requires_dist
        from pm.resolver.imposing import Replacement

        found: list[Requirement] = []
        for requirement in metadata.requires_dist:
            overrides = self.imposing.overriding(requirement)
            if overrides is None:
                found.append(requirement)
                continue
            found += overrides
            replaced = self.replaced.setdefault((metadata.name, metadata.version), [])
            package = f"{metadata.name} {metadata.version}"
            replaced += [r for o in self.imposing.overrides[canonicalize_name(requirement.name)]
                         if (r := Replacement(str(o), str(requirement), package=package)) not in replaced]
        return found

    # -- helpers shared with the explanation ------------------------------------------------------

    def requirements_on(self, identifier: str) -> list[Req]:
        """Every distinct requirement ever matched on ``identifier`` in this resolution, in order."""
        return list(self._asked.get(identifier, {}).values())

    def identifiers(self) -> list[str]:
        """Every identifier the resolver asked about in this resolution."""
        return [i for i in self._asked if i != PYTHON]

    def _remember(self, identifier: str, reqs: Iterable[Req]) -> None:
        asked = self._asked.setdefault(identifier, {})
        for req in reqs:
            parent = req.parent
            who: object = (parent.key, parent.version) if parent is not None else req.origins
            asked.setdefault((who, req.text, req.locked), req)

    def metadata(self, link: FileLink) -> Metadata:
        """The metadata of ``link`` (memoised), checked to name the file's own project and version."""
        found = self._metadata.get(link)
        if found is None:
            found = self._fetch_metadata(link)
            if found.name != link.name or found.version != link.version:
                raise IndexFailure(link.url, f"metadata names {found.name} {found.version}, "
                                             f"but the file is {link.name} {link.version}")
            self._metadata[link] = found
        return found

    def _fetch_metadata(self, link: FileLink) -> Metadata:
        try:
            return self.source.metadata(link)
        except MetadataUnavailable:
            if self.builder is None or link.is_wheel or link.name not in self.policy.allow_builds:
                raise
            return self.builder.metadata(link)

    def tag_rank(self, link: FileLink) -> int | None:
        """Rank of a wheel's best tag for the target (lower is better), None if incompatible."""
        rank = self._ranks.get(link.filename, -1)
        if rank == -1:
            ranks = [self._tag_rank[str(t)] for t in link.tags if str(t) in self._tag_rank]
            rank = self._ranks[link.filename] = min(ranks) if ranks else None
        return rank

    def file_problem(self, link: FileLink, pinned: bool) -> str | None:
        """Why ``link`` cannot be used on the target under the policy (one of :data:`PROBLEMS`).

        None when it can. ``pinned``: a yanked file may be used (:meth:`may_use_yanked`; True
        where a superset of the usable files is wanted).
        """
        if link.requires_python and not self._fits_python(link.requires_python):
            return "requires-python"
        if link.is_wheel and self.tag_rank(link) is None:
            return "no-compatible-file"
        if not link.is_wheel and link.name not in self.policy.allow_builds:
            return "sdist-only"
        cutoff = self.policy.exclude_newer
        if cutoff is not None and link.upload_time is not None and link.upload_time > cutoff:
            return "excluded-newer"
        if link.is_yanked and not pinned:
            return "yanked"
        return None

    def _fits_python(self, requires_python: str) -> bool:
        fits = self._python_fits.get(requires_python)
        if fits is None:
            try:
                fits = SpecifierSet(requires_python).contains(self.python_version, prereleases=True)
            except InvalidSpecifier:
                fits = True  # an unparsable Requires-Python on the index page: the metadata decides
            self._python_fits[requires_python] = fits
        return fits

    def best_files(self, name: NormalizedName, reqs: Iterable[Req]) -> list[tuple[Version, FileLink]]:
        """(version, best file) for every version allowed by ``reqs``, newest first.

        Yanked files count only for versions a root pins exactly (:meth:`may_use_yanked`): the one
        release such a pin names (PEP 592), its non-yanked files first. Remembered per set of specifiers:
        resolvelib asks the same question again on every backtrack. Only the versions the
        specifiers allow have their files built and judged (see :class:`~pm.index.project.Project`).
        """
        reqs = list(reqs)
        key = (name, frozenset(str(r.specifier) for r in reqs))
        found = self._best.get(key)
        if found is None:
            project = self.project(name)
            versions = self.allowed.versions(name, project.versions, [r.specifier for r in reqs])
            usable = [(v, link) for v in versions if (link := self._best_file(project, v)) is not None]
            allowed = set(self._apply_prerelease_rule([v for v, _ in usable], reqs))
            found = self._best[key] = [(v, link) for v, link in usable if v in allowed]
        return list(found)

    def project(self, name: NormalizedName) -> Project:
        """The project's files by version, from the source (once per resolution)."""
        found = self._projects.get(name)
        if found is None:
            found = self._projects[name] = project_of(self.source, name)
        return found

    def _best_file(self, project: Project, version: Version, yanked_ok: bool = False) -> FileLink | None:
        """The best usable file of ``version``; ``yanked_ok``: a yanked file may serve it too (a
        preferred version yanked since, :mod:`.ordering`), else only as :meth:`may_use_yanked` says."""
        key = (project.name, version, yanked_ok)
        if key not in self._best_file_of:
            best = None
            for link in project.files(version):
                if self.file_problem(link, yanked_ok or self.may_use_yanked(link)) is None and (
                        best is None or self._file_order(link) < self._file_order(best)):
                    best = link
            if best is None and _log.isEnabledFor(logging.DEBUG):  # -vv: why, worked out only when asked
                problems = sorted({str(self.file_problem(link, yanked_ok or self.may_use_yanked(link)))
                                   for link in project.files(version)})
                _log.debug("%s %s rejected: %s", project.name, version, ", ".join(problems) or "no files")
            self._best_file_of[key] = best
        return self._best_file_of[key]

    def _file_order(self, link: FileLink) -> tuple[int, int]:
        """Prefer non-yanked files, then wheels by tag rank, then sdists."""
        rank = self.tag_rank(link) if link.is_wheel else None
        return (1 if link.is_yanked else 0, rank if rank is not None else len(self._tag_rank))

    def _apply_prerelease_rule(self, versions: list[Version], reqs: list[Req]) -> list[Version]:
        """PEP 440: pre-releases only when allowed, named in a specifier, or the only match."""
        if self.policy.allow_prereleases or any(r.specifier.prereleases for r in reqs):
            return versions
        finals = [v for v in versions if not v.is_prerelease]
        return finals or versions



def _same_version(pin: str, version: Version) -> bool:
    """Whether an exact pin's text names ``version`` (``===`` text that is no PEP 440 version
    is compared as text)."""
    try:
        return Version(pin) == version
    except InvalidVersion:
        return pin.strip().lower() == str(version)


def _split_key(identifier: str) -> tuple[NormalizedName, frozenset[NormalizedName]]:
    """The name and extras of an identifier (:func:`~.model.make_key`'s inverse): resolvelib asks
    for the matches of a criterion whose requirements a backjump removed, with none left."""
    name, _, extras = identifier.partition("[")
    return NormalizedName(name), frozenset(NormalizedName(e) for e in extras.rstrip("]").split(",") if e)
