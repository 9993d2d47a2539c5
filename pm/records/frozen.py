"""Frozen resolutions: a receipt, a generation record or a ``pylock.toml`` (any valid PEP 751
lock: :mod:`pm.records.pylock`) read back into exactly the files to install, plus the inputs they were
decided for (the :class:`Basis`; a lock pm did not write records none).

A frozen sync (``hermes pm sync --from FILE``) builds from these files and nothing else: no
resolver, no index metadata. Before it builds, the recorded basis is compared with the home's
current one (:func:`differences`): by plugin name and declaration sha256, core, core's lock and
the target — never by paths or index settings, so a file resolved on one machine builds on another.
Pure, except :func:`read_frozen` (reads FILE) and :func:`localize` (hashes ``--find-links`` files).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm.base.errors import InputError, PmError, Problem
from pm.base.files import read_text
from pm.base.watch import UNWATCHED, Watch
from pm.inputs.union import Origin
from pm.records.sections import resolution_from_json
from pm.resolver import Pin, Resolution

if TYPE_CHECKING:
    from pm.inputs.collect import Inputs
    from pm.inputs.target import Target

#: Receipts of a few hundred packages are far below this; a bigger file is not one of ours.
MAX_FROZEN_BYTES = 16 * 1024 * 1024
#: The markers a frozen file must share with the target (the patch version may differ).
TARGET_KEYS = ("implementation_name", "python_version", "sys_platform", "platform_machine")


class FileMismatch(PmError):
    """A ``--find-links`` file has the recorded filename but other bytes than the recorded sha256."""

    kind = "file-mismatch"
    outcome = "refused"

    def __init__(self, path: Path, expected: str, found: str) -> None:
        self.path, self.expected, self.found = path, expected, found
        super().__init__(f"refused: {path} does not match the sha256 recorded for it "
                         f"(recorded {expected}, the file has {found}); nothing was built")


@dataclass(frozen=True)
class Member:
    """One member as recorded: its key, declaration file and the sha256 of that file's bytes."""

    name: str
    file: str
    sha256: str


@dataclass(frozen=True)
class Basis:
    """What a resolution was decided for.

    ``fingerprint`` is the home's digest (it also covers paths and index settings); the other
    fields are location-independent and say *what* changed. ``target`` is in receipt form
    (``python``, ``platform``, ``implementation``, ``markers``). ``statuses`` (current side only)
    tells why a plugin that is not a member now sits out.
    """

    fingerprint: str | None
    members: tuple[Member, ...]
    core: tuple[str, ...]
    core_lock: tuple[str, ...]
    target: Mapping[str, Any]
    statuses: Mapping[str, str] = field(default_factory=dict, compare=False)

    @classmethod
    def from_inputs(cls, inputs: Inputs) -> Basis:
        members = tuple(Member(m.plugin.key, str(m.plugin.declaration.file), m.plugin.declaration.sha256)
                        for m in inputs.union.members if m.plugin.declaration is not None)
        statuses = {s.plugin.key: f"{s.status}: {s.reason}" for s in inputs.selection.plugins}
        return cls(inputs.fingerprint, members, tuple(str(r) for r in inputs.core.requirements),
                   tuple(f"{n}=={v}" for n, v in inputs.core.lock), inputs.target.to_receipt(), statuses)

    @classmethod
    def from_receipt(cls, data: Mapping[str, Any]) -> Basis:
        inputs = data["inputs"]
        members = tuple(Member(p["name"], p["declaration"]["file"], p["declaration"]["sha256"])
                        for p in inputs["plugins"] if p["status"] == "member" and p.get("declaration"))
        return cls(inputs["fingerprint"], members, tuple(c["requirement"] for c in inputs["core"]),
                   tuple(inputs.get("core_lock", ())), data["target"])

    @classmethod
    def from_generation(cls, record: Mapping[str, Any]) -> Basis:
        declared = record["declared"]
        core = tuple(d["requirement"] for d in declared if d["origin"]["kind"] == "core" and not d.get("locked"))
        lock = tuple(d["requirement"] for d in declared if d.get("locked"))
        members = tuple(Member(m["name"], m["file"], m["sha256"]) for m in record["members"])
        return cls(record["fingerprint"], members, core, lock, record["target"])

    @classmethod
    def from_tool(cls, table: Mapping[str, Any]) -> Basis:
        """From a pylock's ``[tool.hermes-pm]`` (written by :func:`pm.records.export.to_pylock`)."""
        markers = dict(table["markers"])
        target = {"python": markers.get("python_full_version"), "platform": table.get("target"),
                  "implementation": markers.get("implementation_name"), "markers": markers}
        members = tuple(Member(m["name"], m["file"], m["sha256"]) for m in table["members"])
        return cls(table["fingerprint"], members, tuple(table["core"]), tuple(table["core-lock"]), target)


@dataclass(frozen=True)
class Frozen:
    """A file read for a frozen sync: the resolution it names and, when it records one, its basis."""

    path: Path
    kind: str  # "receipt", "generation" or "pylock"
    resolution: Resolution
    basis: Basis | None
    sha256: str  # of the file's bytes: the fingerprint of a build that ignores the inputs
    #: Pin URLs that carried ``user:password@``: the pins keep them clean (receipts, records and the
    #: requirements file never hold a secret); uv gets them through its private netrc.
    credentials: tuple[str, ...] = ()


def differences(recorded: Basis, current: Basis, label: str) -> list[str]:
    """Every way the current inputs differ from the recorded ones, as sentences (empty = same)."""
    found = []
    then = {m.name: m for m in recorded.members}
    now = {m.name: m for m in current.members}
    for name, member in then.items():
        if name in now and now[name].sha256 != member.sha256:
            found.append(f"plugin {name!r}: its declaration changed since {label} was made ({now[name].file}: "
                         f"sha256 {member.sha256[:12]}… then, {now[name].sha256[:12]}… now)")
    found += [f"plugin {name!r} is a member now but was not when {label} was made" for name in now if name not in then]
    for name in (n for n in then if n not in now):
        status = current.statuses.get(name, "no such plugin in this home")
        found.append(f"plugin {name!r} was a member when {label} was made but is not now ({status})")
    found += _changed("core requirements", recorded.core, current.core, label)
    found += _changed("core's lock", recorded.core_lock, current.core_lock, label)
    if _target_words(recorded.target) != _target_words(current.target):
        found.append(f"target: {label} was made for {_target_words(recorded.target)}; "
                     f"this target is {_target_words(current.target)}")
    return found


def _changed(what: str, then: Sequence[str], now: Sequence[str], label: str) -> list[str]:
    gone, new = sorted(set(then) - set(now)), sorted(set(now) - set(then))
    if not gone and not new:
        return []
    sentence = (f"{what} changed since {label} was made (only then: {', '.join(gone) or '-'}; "
                f"only now: {', '.join(new) or '-'})")
    return [sentence]


def _target_words(target: Mapping[str, Any]) -> str:
    markers = target.get("markers") or {}
    impl, version, system, machine = (markers.get(k, "?") for k in TARGET_KEYS)
    return f"{impl} {version} on {system} {machine}"


def read_frozen(path: Path, target: Target, *, watch: Watch = UNWATCHED) -> Frozen:
    """Read a receipt, a ``generation.json`` or a ``pylock.toml``; raises :class:`InputError`
    naming the file and key. ``target`` picks a pylock's wheels and evaluates its markers."""
    text = read_text(path, limit=MAX_FROZEN_BYTES, watch=watch)
    digest = "sha256:" + text.sha256
    if path.suffix == ".toml":
        resolution, basis = _from_pylock(path, text.text, target)
        clean, credentials = _without_credentials(resolution)
        return Frozen(path, "pylock", clean, basis, digest, credentials)
    try:
        data = json.loads(text.text)
    except ValueError as exc:
        raise InputError.one(path, None, f"is neither JSON (a receipt) nor a pylock.toml: {exc}") from None
    kind = "receipt" if isinstance(data, dict) and "schema" in data and "kind" in data else "generation"
    if not isinstance(data, dict) or "resolution" not in data:
        raise InputError.one(path, None, "is not a receipt or a generation record of hermes pm")
    if data["resolution"] is None:
        raise InputError.one(path, "resolution", (
            f"is null: this receipt (kind {data.get('kind')!r}, outcome {data.get('outcome')!r}) records no "
            "resolution; use one from a resolve or a sync that resolved, or `hermes pm export --format "
            "pylock --selected`"))
    resolution = _receipt_resolution(path, data["resolution"])
    try:
        basis = Basis.from_receipt(data) if kind == "receipt" else Basis.from_generation(data)
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError.one(path, "inputs", f"does not record the inputs it was made for ({exc!r} missing or wrong)") from None
    clean, credentials = _without_credentials(resolution)
    return Frozen(path, kind, clean, basis, digest, credentials)


def _without_credentials(resolution: Resolution) -> tuple[Resolution, tuple[str, ...]]:
    """The resolution with every pin URL's ``user:password@`` taken out, and those URLs."""
    if not any("@" in pin.link.url for pin in resolution.pins):  # no user:password@ anywhere
        return resolution, ()  # (and pm.index.http, with http.client and ssl, stays unloaded)
    from pm.index.http import split_credentials

    pins, credentials = [], []
    for pin in resolution.pins:
        clean, authorization = split_credentials(pin.link.url)
        if authorization is not None:
            credentials.append(pin.link.url)
            pin = replace(pin, link=replace(pin.link, url=clean))
        pins.append(pin)
    return replace(resolution, pins=tuple(pins)), tuple(credentials)


def _receipt_resolution(path: Path, section: Any) -> Resolution:
    items = section.get("packages") if isinstance(section, dict) else None
    if not isinstance(items, list):
        raise InputError.one(path, "resolution.packages", "must be a list")
    pins: list[Pin] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for number, item in enumerate(items):
        try:
            (pin,) = resolution_from_json({"packages": [item]}).pins
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            problems.append(Problem(path, f"resolution.packages[{number}]", f"cannot be read: {exc!r}"))
            continue
        problems += _check_pin(path, f"resolution.packages[{number}] ({pin.name})", pin, seen)
        pins.append(pin)
    return _resolution(pins, problems)


def _check_pin(path: Path, where: str, pin: Pin, seen: set[str]) -> list[Problem]:
    """A pin pm can build (:meth:`Pin.defects`: every field what it says, hashed with sha256,
    fetched over http(s) or from a file), named once (``seen``: the names before it; a set, so a
    lock of tens of thousands of packages is read in linear time)."""
    problems = [Problem(path, where, defect) for defect in pin.defects()]
    if pin.name in seen:
        problems.append(Problem(path, where, "names a package a second time"))
    seen.add(pin.name)
    return problems


def _resolution(pins: list[Pin], problems: list[Problem]) -> Resolution:
    """Fail once with every problem, else the resolution."""
    if problems:
        raise InputError(problems)
    return Resolution(tuple(pins))


def _from_pylock(path: Path, text: str, target: Target) -> tuple[Resolution, Basis | None]:
    """Any valid PEP 751 lock (read and selected by :mod:`pm.records.pylock`); pm's own also give the
    inputs they were made for. Every problem of the chosen packages is reported at once."""
    from pm.records import pylock

    lock = pylock.read_lock(path, text)
    tool = pylock.tool_table(lock)
    try:
        basis = Basis.from_tool(tool) if "members" in tool else None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError.one(path, "tool.hermes-pm", f"cannot be read: {exc!r}") from None
    members = basis.members if basis else ()
    # required-by names plugins ("plugin 'x'"); locks written before that also gave their files
    origins = ({"core": Origin.core()} | {str(Origin(m.name, None)): Origin(m.name, None) for m in members}
               | {str(Origin(m.name, m.file)): Origin(m.name, m.file) for m in members})
    pins: list[Pin] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for number, package, chosen in pylock.choose(path, lock, target, own=basis is not None):
        where = f"packages[{number}] ({package.name})"
        if not isinstance(chosen, pylock.PackageWheel | pylock.PackageSdist):
            problems.append(pylock.refusal(path, number, package, chosen))
            continue
        pin = pylock.to_pin(path, package, chosen, origins)
        problems += _check_pin(path, where, pin, seen)
        pins.append(pin)
    return _resolution(pins, problems), basis


def localize(resolution: Resolution, folders: Sequence[Path], *,
             watch: Watch = UNWATCHED) -> tuple[Resolution, tuple[str, ...]]:
    """Point every pin whose file lies in one of ``folders`` (same filename, same sha256) at that
    file; returns the new resolution and the filenames taken locally. A same-named file with other
    bytes raises :class:`FileMismatch` (unless a later folder holds the right one)."""
    pins, local = [], []
    for pin in resolution.pins:
        found, wrong = _local_file(pin, folders, watch)
        if found is None and wrong is not None:
            raise FileMismatch(wrong[0], pin.link.sha256 or "", wrong[1])
        if found is not None:
            pin = replace(pin, link=replace(pin.link, url=found.as_uri(), source=str(found.parent)))
            local.append(pin.link.filename)
        pins.append(pin)
    return Resolution(tuple(pins)), tuple(local)


def _local_file(pin: Pin, folders: Sequence[Path], watch: Watch) -> tuple[Path | None, tuple[Path, str] | None]:
    wrong = None
    for folder in folders:
        candidate = folder / pin.link.filename
        if not candidate.is_file():
            watch.file(candidate)  # absent (or not a file): one put there is a change
            continue
        from pm.index.findlinks import file_sha256  # only for a file in a --find-links folder

        digest = file_sha256(candidate)
        watch.digest(candidate, digest)
        if digest == pin.link.sha256:
            return candidate.absolute(), None
        wrong = wrong or (candidate, digest)
    return None, wrong

