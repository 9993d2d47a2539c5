"""The one formatter: a :class:`~pm.resolver.explain.Conflict`'s findings in words.

Pure: data in, one paragraph out; no I/O, no logging. Findings are told in :data:`KINDS` order
(Requires-Python problems first, conflicts last); the versions of one package that cannot be
used are grouped by reason; the versions the resolver tried are told after whoever asked for
their package; other requirements that led there are told once per message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pm.resolver.deadends import DeadEnd, Needs, Unusable
    from pm.resolver.explain import Conflict, Finding
    from pm.resolver.missing import MissingProjects, NotOffered
    from pm.resolver.model import Pin

#: Finding kinds, in the order they are told: the hard ones (nothing the user allows can change
#: them) before the policy ones (building sdists, yanked releases, the exclude-newer cutoff), so a
#: set refused by both names its hard conflict first.
KINDS = ("requires-python", "missing", "no-compatible-file", "conflict", "sdist-only", "yanked", "excluded-newer")
#: The kinds a setting of the user's can lift.
POLICY_KINDS = frozenset({"sdist-only", "yanked", "excluded-newer"})
_MAX_VERSIONS = 5  # versions named per group before "and N more"
_ELSEWHERE = {"seen": " (see above)", "cut": " (and so on)"}  # chain links not told again
_MAX_BRANCHES = 3  # dead requirements told per project; the other versions are only counted


def format_conflict(conflict: Conflict) -> str:
    """One paragraph a tired user can act on; each context statement is told once."""
    told: set[str] = set()
    parts = [_finding_text(f, told) for f in conflict.findings]
    if conflict.plugins:
        if conflict.candidate is not None:
            partners = [p for p in conflict.plugins if p != conflict.candidate]
            tail = (f" cannot live with plugin(s) {', '.join(map(repr, partners))}" if partners
                    else " cannot live with the host's core requirements")
            parts.append(f"Plugin {conflict.candidate!r}{tail}.")
        else:
            parts.append(f"Plugins involved: {', '.join(map(repr, conflict.plugins))}.")
    return " ".join(parts)


def describe_problem(finding: Finding) -> str:
    """The "but …" part of a finding: why no version of its package (or, for a chain, of the
    projects at its ends) can be used."""
    if finding.dead_end is not None:
        return "; ".join(dict.fromkeys(_leaf_tail(finding, leaf).removeprefix("; but ")
                                       for leaf in finding.dead_end.leaves()))
    return _problem(finding.kind, finding.package, finding.versions, finding)


def _problem(kind: str, name: str, versions: tuple[Unusable, ...], finding: Finding) -> str:
    """Why no version of ``name`` can be used (the target's facts come from ``finding``)."""
    if kind == "missing":
        return f"no package named {name!r} exists on the configured indexes"
    if name == "python":
        return f"the target Python is {finding.python}"
    groups: dict[tuple[str, str], list[str]] = {}
    for item in sorted(versions, key=lambda u: KINDS.index(u.kind)):
        groups.setdefault((item.kind, item.fact), []).append(item.version)
    return ", and ".join(_unusable_text(finding, name, kind, fact, found) for (kind, fact), found in groups.items())


def _unusable_text(finding: Finding, name: str, kind: str, fact: str, versions: list[str]) -> str:
    shown = _shown(versions)
    many = len(versions) > 1
    if kind == "requires-python":
        return f"{name} {shown} {'require' if many else 'requires'} Python {fact} (the target Python is {finding.python})"
    if kind == "no-compatible-file":
        return (f"{name} {shown} {'have' if many else 'has'} no file for this interpreter (Python {finding.python} "
                f"on {finding.platform}; wheels for: {fact})")
    if kind == "sdist-only":
        bare = name.split("[")[0]
        return (f"{name} {shown} {'have' if many else 'has'} only a source distribution for this interpreter, "
                f"which pm builds only when allowed (add {bare!r} to pm.allow_builds in config.yaml, or pass "
                f"--allow-build {bare})")
    if kind == "yanked":
        reason = f" (reason: {fact})" if fact else ""
        return (f"{name} {shown} {'are' if many else 'is'} yanked{reason}; pm uses a yanked release only when "
                "core or a plugin pins that release with == or ===")
    return f"{name} {shown} {'were' if many else 'was'} uploaded after the pm.exclude_newer cutoff ({fact})"


def format_yanked_pin(pin: Pin) -> str:
    """The receipt's warning for a pin whose file is yanked (PEP 592: an exact root pin chose it)."""
    reason = f" (reason: {pin.link.yanked})" if pin.link.yanked else " (no reason given)"
    asked = _and([str(p) for p in pin.parents if p.origin is not None and _pins_exactly(p.requirement)])
    return (f"{pin.name} {pin.version} is yanked{reason}; its file {pin.link.filename} is used because "
            f"{asked}, pinning that release exactly")


def _pins_exactly(requirement: str) -> bool:
    from packaging.requirements import Requirement

    from pm.resolver.model import stated

    return any(s.operator == "===" or (s.operator == "==" and not s.version.endswith(".*"))
               for s in Requirement(stated(requirement)).specifier)


def _shown(versions: list[str]) -> str:
    return ", ".join(versions[:_MAX_VERSIONS]) + (f" (and {len(versions) - _MAX_VERSIONS} more)"
                                                 if len(versions) > _MAX_VERSIONS else "")


def _finding_text(finding: Finding, told: set[str]) -> str:
    in_chain = {r for leaf in finding.dead_end.leaves() for r in leaf.roots} if finding.dead_end else set()
    head = "; ".join(s for s in _statements(finding) if s not in in_chain)  # a ruling root is told at its link
    if finding.dead_end is not None:
        missing = _once(lambda leaf: f"; but {_problem('missing', leaf.package, (), finding)}",
                        lambda leaf: f"; but {leaf.package!r} does not exist either")
        text = "; ".join([head, *_chain(finding, finding.dead_end, missing)]) + "."
    elif finding.kind != "conflict":
        text = f"{head}; but {finding.detail}."
    elif len({c.requirement for c in finding.causes}) == 1:
        shown = ", ".join(finding.available[:_MAX_VERSIONS]) + (", …" if len(finding.available) > _MAX_VERSIONS else "")
        text = f"{head}; no version of {finding.package} satisfies it" + (
            f" ({_available(finding.package, shown)})." if shown else ".")
    else:
        shown = ", ".join(finding.available[:_MAX_VERSIONS]) + (", …" if len(finding.available) > _MAX_VERSIONS else "")
        text = f"{head}; no version of {finding.package} satisfies all of these" + (
            f" ({_available(finding.package, shown)})." if shown else ".")
    return text + _involved(finding, told)


def _available(package: str, shown: str) -> str:
    """What there is of ``package``: its versions, or for the host itself (provided, never taken
    from an index: :mod:`pm.resolver.host`) the running host's version."""
    from pm.resolver.host import is_host

    return f"the running host provides {package} {shown}; pm never installs another" if is_host(package) else \
        f"available: {shown}"


def _involved(finding: Finding, told: set[str]) -> str:
    """" Other requirements involved: …." for the context not told yet in this message."""
    tried = {c.via_package for c in finding.causes if c.via_package}
    extra = [s for s in dict.fromkeys(c.describe() for c in finding.context
                                      if c.via is not None or c.package not in tried) if s not in told]
    told.update(extra)
    return f" Other requirements involved: {'; '.join(extra)}." if extra else ""


def _statements(finding: Finding) -> list[str]:
    """Direct causes in order; the versions tried of one package merged into one statement."""
    asked: dict[str, list[str]] = {}
    for cause in finding.context:
        if cause.via is None:
            asked.setdefault(cause.package, []).append(cause.describe())
    out: list[str | tuple[str]] = []
    tried: dict[str, dict[str, dict[str, None]]] = {}  # package -> version tried -> its requirements
    for cause in finding.causes:
        if cause.via is None or cause.via_package is None:
            out.append(cause.describe())
            continue
        if cause.via_package not in tried:
            out.append((cause.via_package,))
        tried.setdefault(cause.via_package, {}).setdefault(cause.via, {})[cause.requirement] = None
    return list(dict.fromkeys(s if isinstance(s, str) else _tried(tried[s[0]], asked.get(s[0], [])) for s in out))


def _tried(versions: dict[str, dict[str, None]], asked: list[str]) -> str:
    """``<who asked>, and the resolver tried a 3.0, which requires b==3`` (several: in parentheses)."""
    if len(versions) == 1:
        ((via, reqs),) = versions.items()
        text = f"the resolver tried {via}, which requires {_and(list(reqs))}"
    else:
        text = "the resolver tried " + _and([f"{via} (which requires {_and(list(reqs))})" for via, reqs in versions.items()])
    who = " and ".join(dict.fromkeys(asked))
    return f"{who}, and {text}" if who else text


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# -- dead ends: chains down to the project that cannot be used ------------------------------------

def _chain(finding: Finding, end: DeadEnd, missing: Callable[[DeadEnd], str]) -> list[str]:
    """One statement per link of ``end``'s chain, depth first: "every version of a (30 versions,
    1.0 to 30.0) requires b"; a leaf ends its statement with why (``missing`` tells a missing one)."""
    out = []
    fresh = [n for n in end.needs if n.dead.kind != "seen"] or list(end.needs[:1])
    if rest := [v for n in fresh[_MAX_BRANCHES:] for v in n.versions]:
        fresh = fresh[:_MAX_BRANCHES]
    ruled: list[str] = []  # consecutive links ruled out by the same roots: told once, with them
    for number, needs in enumerate(fresh):  # a dead requirement told elsewhere is not told again, unless it is the only one
        text = f"{_which(end, needs)} {needs.dead.requirement}"
        dead = needs.dead
        if dead.roots:
            ruled.append(text)
            later = fresh[number + 1] if number + 1 < len(fresh) else None
            if later is None or later.dead.roots != dead.roots:
                out.append(_and(ruled) + _leaf_tail(finding, dead))
                ruled = []
        elif dead.is_leaf:
            out.append(text + (missing(dead) if dead.kind == "missing" else _leaf_tail(finding, dead)))
        elif dead.kind in _ELSEWHERE:
            out.append(text + _ELSEWHERE[dead.kind])
        else:
            out += [text, *_chain(finding, dead, missing)]
    if rest:
        out.append(f"{end.package} {_shown(rest)} require other requirements that cannot be satisfied either")
    return out


def _once(first: Callable[[DeadEnd], str], again: Callable[[DeadEnd], str]) -> Callable[[DeadEnd], str]:
    """``first`` for a missing project's first mention in a message, ``again`` after."""
    told: set[str] = set()

    def tell(leaf: DeadEnd) -> str:
        name = leaf.package.split("[")[0]
        text = again(leaf) if name in told else first(leaf)
        told.add(name)
        return text
    return tell


def _which(end: DeadEnd, needs: Needs) -> str:
    """The subject and verb: "a 3.0 requires", "every version of a (…) requires", "a 2.0, 1.0 require"."""
    versions = list(needs.versions)
    if len(versions) == 1:
        return f"{end.package} {versions[0]} requires"
    if len(versions) == end.total:
        fits = " that fits" if end.requirement != end.package else ""
        return f"every version of {end.package}{fits} ({len(versions)} versions, {versions[-1]} to {versions[0]}) requires"
    return f"{end.package} {_shown(versions)} require"


def _leaf_tail(finding: Finding, leaf: DeadEnd) -> str:
    if leaf.roots:  # ruled out by what every solution must hold
        return f"; but {_and(list(leaf.roots))}"
    if leaf.excludes:  # a cycle: the chain came back to its own project at another version
        return f", which excludes {leaf.excludes} above (one environment holds one version of {leaf.package})"
    if leaf.kind == "conflict":
        return f"; but no version of {leaf.package} satisfies it ({_available(leaf.package, _shown(list(leaf.available)))})"
    return f"; but {_problem(leaf.kind, leaf.package, leaf.versions, finding)}"


# -- missing projects -------------------------------------------------------------------------------

def format_missing(error: MissingProjects) -> str:
    """Every missing project, each after whoever requires it, where pm searched, and a "did you mean"."""
    where = _where(error.searched)
    parts, told = [], set[str]()
    for finding in error.findings:
        names = [finding.package] if finding.dead_end is None else [leaf.package for leaf in finding.dead_end.leaves()]
        if finding.dead_end is not None:
            head = "; ".join(_statements(finding))
            tail = _once(lambda _: f", which {where}", lambda _: ", which is not there either")
            text = "; ".join([head, *_chain(finding, finding.dead_end, tail)])
        elif all(c.via is None for c in finding.causes):
            text = _and([f"{'core' if c.origin.is_core else c.origin} requires {c.requirement!r}"
                         for c in finding.causes]) + f", which {where}"
        else:
            text = "; ".join(_statements(finding)) + f", which {where}"
        hints = [f"{error.suggestions[n]!r}" + (f" (for {n!r})" if len(names) > 1 else "")
                 for n in dict.fromkeys(names) if error.suggestions.get(n)]
        parts.append(text + (f"; did you mean {' or '.join(hints)}?" if hints else ".") + _involved(finding, told))
    return " ".join(parts)


def _where(searched: tuple[str, ...]) -> str:
    """The "which … does not have" part, naming every index URL and find-links folder searched."""
    if not searched:
        return "no source has (neither an index nor a find-links folder is configured)"
    if len(searched) == 1:
        noun = "the index" if "://" in searched[0] else "the find-links folder"
        return f"{noun} does not have (searched {searched[0]})"
    return f"none of the configured sources has (searched {', '.join(searched)})"


def format_not_offered(error: NotOffered) -> str:
    """Core's requirements the sources list no version for: the evidence, where pm looked (once),
    then the likely cause (the index) and where to change it; no plugin is named, none is at fault."""
    parts = []
    for item in error.projects:
        asked = _and([c.describe() for c in item.causes])
        many = len(item.offered) > 1
        listed = (f"only {item.package} {_shown(list(item.offered))} {'are' if many else 'is'} listed" if item.offered
                  else f"no source has {item.package!r}")
        parts.append(f"{asked}, but {listed}")
    return ("; ".join(parts) + f" ({_searched(error.searched)}). The host's own requirements cannot be met from "
            "these sources, so they are most likely the wrong ones for this home (no plugin is at fault): check where "
            "the index settings came from (the receipt's inputs.index.sources: --index-url, HERMES_PM_INDEX_URL, "
            "pm.index_url and pm.find_links in config.yaml, UV_*/PIP_* variables, uv.toml or pip.conf).")


def _searched(searched: tuple[str, ...]) -> str:
    if not searched:
        return "no source is configured"
    if len(searched) == 1:
        return f"searched {searched[0]}"
    return f"searched {', '.join(searched)}; each project comes from the first index that lists it, as in uv"
