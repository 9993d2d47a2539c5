"""Whether a plugin's new pin could bring more than its installed one: consent is about what is
installed, not about text (issue 34). Pure: two declarations in, the ways the new one widens out.

A re-pin **widens** when, on some target the catalog supports, the new declaration could add a
requirement, an extra or a version the old one did not, or it joins the union where the old did not:

- **targets**: CPython 3.8 and newer on every system of the entry's ``platforms`` (linux, macos,
  windows; none named: all), x86-64 and arm64 — as ``--platform`` computes their markers. The
  Python versions looked at are those that can tell the two declarations apart: each version
  either names (in a marker or ``requires-python``), its neighbours and the next minor.
- **per target**, a declaration brings nothing when it is not a member there (no declaration,
  ``python_runtime: external``, ``requires-python`` excluding that Python); else the requirements
  whose markers apply, gathered per project: the extras asked for (a union) and the versions
  admitted (every specifier at once). The new one widens when it requires a project the old did
  not, asks for an extra the old did not, or admits a version the old did not — pre-releases and
  post-releases included, probed at every version either side names and just beside it
  (:func:`admits_more`; an ``===`` specifier that changed counts as widening).
- a requirement whose marker reads a variable the targets do not fix (``platform_release``,
  ``platform_version``) is compared as text: one added or removed counts as widening.
- a new entry point group (``[project.entry-points]``, ``scripts``) widens too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

if TYPE_CHECKING:
    from pm.inputs.declaration import Declaration
    from pm.inputs.manifest import Manifest

#: Marker variables every target fixes (the rest — platform_release, platform_version — it does not).
FIXED = frozenset({"os_name", "sys_platform", "platform_system", "platform_machine", "python_version",
                   "python_full_version", "implementation_name", "platform_python_implementation",
                   "implementation_version", "extra"})
_OLDEST = (3, 8)  # the oldest CPython a target may be (``--python-version`` accepts 3.8 and newer)
_FAMILIES = {"linux": "manylinux", "macos": "macos", "windows": "windows"}
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


@dataclass(frozen=True)
class Brings:
    """What one pin of a plugin brings to the union, as read from its root."""

    requirements: tuple[Requirement, ...] = ()
    requires_python: SpecifierSet | None = None
    declared: bool = True  # False: a sidecar-only root
    external: bool = False  # python_runtime: external
    entry_points: frozenset[str] = frozenset()

    @classmethod
    def of(cls, declaration: Declaration | None, manifest: Manifest | None) -> Brings:
        external = manifest is not None and manifest.external
        if declaration is None:
            return cls(declared=False, external=external)
        return cls(declaration.requirements, declaration.requires_python, True, external,
                   frozenset(declaration.entry_points))

    @property
    def member(self) -> bool:
        return self.declared and not self.external


@dataclass(frozen=True)
class _Need:
    """One project as a declaration requires it on one target."""

    texts: tuple[str, ...]
    specifiers: tuple[SpecifierSet, ...]
    extras: frozenset[str]


def widening(old: Brings, new: Brings, platforms: Iterable[str] = ()) -> list[str]:
    """How ``new`` could bring more than ``old`` on a target of ``platforms``, in words (empty:
    it brings the same or less everywhere)."""
    found: list[str] = []
    if new.member and not old.member:
        found.append("python_runtime: external dropped: it joins the union" if old.external and old.declared
                     else "a declaration where there was none: it joins the union")
    unfixed_old, unfixed_new = _unfixed(old), _unfixed(new)
    if unfixed_old != unfixed_new:
        changed = sorted(unfixed_old ^ unfixed_new)
        found.append(f"requirements whose markers pm cannot evaluate for every target changed: {changed}")
    declared_old: dict[str, list[str]] = {}
    for requirement in old.requirements if old.member else ():
        declared_old.setdefault(canonicalize_name(requirement.name), []).append(str(requirement))
    told: set[str] = set()
    for env in targets(platforms, old, new):
        if unfixed_new and "unfixed" not in told and _member_at(new, env) and not _member_at(old, env):
            told.add("unfixed")  # shared ones too: here the old pin brought none of them
            found.append(f"requirements whose markers pm cannot evaluate may apply on {_label(env)}, where the "
                         f"plugin was not in the union before: {sorted(unfixed_new)}")
        before = _needs(old, env)
        for name, need in _needs(new, env).items():
            said = "" if name in told else _widens(before.get(name), need, declared_old.get(name), env)
            if said:
                told.add(name)
                found.append(said)
    gained = sorted(new.entry_points - old.entry_points) if new.member else []
    found += [f"new entry point groups {gained}"] if gained else []
    return found


def _widens(before: _Need | None, after: _Need, declared: list[str] | None, env: dict[str, str]) -> str:
    """How ``after`` brings more than ``before`` on the target of ``env`` ("" when it does not);
    ``declared``: the old declaration's requirements on the project, on any target."""
    text = "; ".join(after.texts)
    if before is None:
        if declared is None:
            return f"a new requirement {text!r}"
        if declared == list(after.texts):  # the same text: requires-python (or runtime) lets it in here now
            return f"{text!r} now applies on {_label(env)} too"
        return f"{'; '.join(declared)!r} widened to {text!r} (it now applies on {_label(env)})"
    was = "; ".join(before.texts)
    if after.extras - before.extras:
        return f"{was!r} now asks for extras {sorted(after.extras - before.extras)}"
    if admits_more(before.specifiers, after.specifiers):
        return f"{was!r} widened to {text!r}"
    return ""


def _label(env: dict[str, str]) -> str:
    return f"{env['sys_platform']} {env['platform_machine']} / Python {env['python_full_version']}"


def _unfixed(brings: Brings) -> frozenset[str]:
    """The requirements whose markers read a variable the targets do not fix, as text."""
    if not brings.member:
        return frozenset()
    return frozenset(str(r) for r in brings.requirements if r.marker is not None and _reads_unfixed(str(r.marker)))


def _reads_unfixed(marker: str) -> bool:
    names = _NAME.findall(_QUOTED.sub(" ", marker))
    return any(n not in FIXED and n not in ("and", "or", "in", "not") for n in names)


def _member_at(brings: Brings, env: dict[str, str]) -> bool:
    """Whether ``brings`` joins the union on the target of ``env`` (its requires-python too)."""
    return brings.member and (brings.requires_python is None or brings.requires_python.contains(
        env["python_full_version"], prereleases=True))


def _needs(brings: Brings, env: dict[str, str]) -> dict[str, _Need]:
    """Per project, what ``brings`` requires on the target of ``env``."""
    if not _member_at(brings, env):
        return {}
    found: dict[str, _Need] = {}
    for requirement in brings.requirements:
        marker = requirement.marker
        if marker is not None and (_reads_unfixed(str(marker)) or not marker.evaluate(env)):
            continue
        name = canonicalize_name(requirement.name)
        was = found.get(name, _Need((), (), frozenset()))
        found[name] = _Need((*was.texts, str(requirement)), (*was.specifiers, requirement.specifier),
                            was.extras | frozenset(requirement.extras))
    return found


def admits_more(old: tuple[SpecifierSet, ...], new: tuple[SpecifierSet, ...]) -> bool:
    """Whether every specifier of ``new`` at once admits a version that those of ``old`` do not
    (pre-releases counted). Probed at every version either side names, beside it and between
    (exact for PEP 440's operators); ``===`` that differs is taken as widening."""
    specs = [s for group in (*old, *new) for s in group]
    if any(s.operator == "===" for s in specs):  # arbitrary equality: only the same text is surely no wider
        return {str(s) for group in new for s in group} != {str(s) for group in old for s in group}
    probes: set[Version] = {Version("0"), Version("0.dev0"), Version("99999")}
    for spec in specs:
        probes |= _beside(Version(spec.version.removesuffix(".*")))
    return any(_admits(new, v) and not _admits(old, v) for v in probes)


def _admits(groups: tuple[SpecifierSet, ...], version: Version) -> bool:
    return all(group.contains(version, prereleases=True) for group in groups)


def _beside(bound: Version) -> set[Version]:
    """``bound``, versions just beside it at each of its release segments, and their pre-, post-,
    dev- and local forms: a representative of every stretch a specifier on ``bound`` can tell apart."""
    release = bound.release
    near = {bound.base_version}
    for i in range(len(release) + 1):
        head = release[:i]
        if i < len(release):
            near.add(_text((*head, release[i] + 1)))
            if release[i] > 0:
                near.add(_text((*head, release[i] - 1, 9999)))
        near.add(_text((*release, *([0] * max(0, i - len(release))), 1)))
    found = {bound}
    for text in near:
        prefix = f"{bound.epoch}!" if bound.epoch else ""
        found |= {Version(f"{prefix}{text}{tail}") for tail in ("", ".dev0", "a1", "rc1", ".post1", "+local")}
    return found


def _text(release: tuple[int, ...]) -> str:
    return ".".join(map(str, release))


def targets(platforms: Iterable[str], *declarations: Brings) -> list[dict[str, str]]:
    """The marker environments of every target that can tell ``declarations`` apart."""
    from pm.inputs.foreign import PLATFORMS

    families = {_FAMILIES[p] for p in platforms if p in _FAMILIES} or set(_FAMILIES.values())
    systems = {(s.sys_platform, s.platform_system, s.machine, s.os_name): s for s in PLATFORMS.values()
               if s.family in families}
    pythons = sorted(_pythons(declarations))
    return [{"os_name": os_name, "sys_platform": sys_platform, "platform_system": system, "platform_machine": machine,
             "python_version": f"{v.major}.{v.minor}", "python_full_version": str(v), "implementation_version": str(v),
             "implementation_name": "cpython", "platform_python_implementation": "CPython", "platform_release": "",
             "platform_version": "", "extra": ""}
            for (sys_platform, system, machine, os_name) in sorted(systems) for v in pythons]


def _pythons(declarations: Iterable[Brings]) -> set[Version]:
    """CPython versions (3.8 and newer) that meet every stretch the named versions cut out."""
    named: set[Version] = set()
    for brings in declarations:
        texts = [s.version for s in brings.requires_python or ()]
        texts += [t.strip("'\"") for r in brings.requirements if r.marker is not None
                  for t in _QUOTED.findall(str(r.marker))]
        for text in texts:
            try:
                named.add(Version(text.removesuffix(".*")))
            except InvalidVersion:
                continue
    found = {Version(f"3.{_OLDEST[1]}.0")}
    for version in named:
        if version.major != 3:
            continue
        minor, patch = (version.release + (0, 0))[1:3]
        for m, p in ((minor, patch), (minor, patch + 1), (minor, max(patch - 1, 0)), (minor, 0), (minor + 1, 0),
                     (minor - 1, 0)):
            if m >= _OLDEST[1]:
                found.add(Version(f"3.{m}.{p}"))
    return found
