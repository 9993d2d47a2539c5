"""The one formatter: a :class:`~pm.resolver.explain.Conflict`'s findings in words.

Pure: data in, one paragraph out; no I/O, no logging. Findings are told in :data:`KINDS` order
(Requires-Python problems first, conflicts last); the versions of one package that cannot be
used are grouped by reason; the versions the resolver tried are told after whoever asked for
their package; other requirements that led there are told once per message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .explain import Conflict, Finding

#: Finding kinds, in the order they are told.
KINDS = ("requires-python", "missing", "no-compatible-file", "sdist-only", "yanked", "excluded-newer",
         "conflict")
_MAX_VERSIONS = 5  # versions named per group before "and N more"


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
    """The "but …" part of a finding: why no version of its package can be used."""
    name = finding.package
    if finding.kind == "missing":
        return f"no package named {name!r} exists on the configured indexes"
    if name == "python":
        return f"the target Python is {finding.python}"
    groups: dict[tuple[str, str], list[str]] = {}
    for item in sorted(finding.versions, key=lambda u: KINDS.index(u.kind)):
        groups.setdefault((item.kind, item.fact), []).append(item.version)
    return ", and ".join(_unusable_text(finding, kind, fact, versions) for (kind, fact), versions in groups.items())


def _unusable_text(finding: Finding, kind: str, fact: str, versions: list[str]) -> str:
    shown = ", ".join(versions[:_MAX_VERSIONS]) + (f" (and {len(versions) - _MAX_VERSIONS} more)"
                                                  if len(versions) > _MAX_VERSIONS else "")
    name, many = finding.package, len(versions) > 1
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
                "a requirement pins it with ==")
    return f"{name} {shown} {'were' if many else 'was'} uploaded after the pm.exclude_newer cutoff ({fact})"


def _finding_text(finding: Finding, told: set[str]) -> str:
    head = "; ".join(_statements(finding))
    if finding.kind != "conflict":
        text = f"{head}; but {finding.detail}."
    elif len({c.requirement for c in finding.causes}) == 1:
        shown = ", ".join(finding.available[:_MAX_VERSIONS]) + (", …" if len(finding.available) > _MAX_VERSIONS else "")
        text = f"{head}; no version of {finding.package} satisfies it" + (f" (available: {shown})." if shown else ".")
    else:
        text = f"{head}; no version of {finding.package} satisfies all of these."
    tried = {c.via_package for c in finding.causes if c.via_package}
    extra = [s for s in dict.fromkeys(c.describe() for c in finding.context
                                      if c.via is not None or c.package not in tried) if s not in told]
    told.update(extra)
    return text + (f" Other requirements involved: {'; '.join(extra)}." if extra else "")


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
