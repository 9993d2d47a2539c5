"""A PEP 751 ``pylock.toml`` read for a frozen sync (``hermes pm sync --from``), whoever wrote it.

:mod:`packaging.pylock` does the reading: :meth:`~packaging.pylock.Pylock.from_dict` validates
every key the PEP defines (an invalid lock is refused naming the file and the key), and
:meth:`~packaging.pylock.Pylock.select` chooses what to install on the target (``environments``,
``requires-python``, each package's ``marker``, the wheel whose tags the target ranks best, else
the sdist). The caller (:mod:`pm.records.frozen`) then checks every chosen file at once. A package locked
as a ``vcs`` checkout, a local ``directory`` or a direct ``archive`` is refused by name and key
(:func:`refusal`): pm installs wheels and sdists only.

pm's own locks (``hermes pm export --format pylock``) carry ``[tool.hermes-pm]`` with the inputs
they were decided for; their target is compared through those inputs (a different target is an
inputs change, built only with ``--ignore-inputs``), so their ``environments`` and
``requires-python`` do not select (``own=True``). Pure, apart from resolving relative paths.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.pylock import (
    Package,
    PackageArchive,
    PackageDirectory,
    PackageSdist,
    PackageVcs,
    PackageWheel,
    Pylock,
    PylockSelectError,
    PylockValidationError,
)
from packaging.tags import Tag
from packaging.utils import canonicalize_name

from pm.base.errors import InputError, Problem
from pm.base.tomlfile import load as load_toml
from pm.index.base import FileLink
from pm.inputs.union import Origin
from pm.resolver import Pin

if TYPE_CHECKING:
    from pm.inputs.target import Target

#: What :meth:`Pylock.select` gives for one package.
Chosen = PackageVcs | PackageDirectory | PackageArchive | PackageWheel | PackageSdist


def read_lock(path: Path, text: str) -> Pylock:
    """``text`` (the content of ``path``) as a lock validated against PEP 751; raises
    :class:`InputError` naming the file and the key that is wrong."""
    document = _document(path, text)
    version = document.get("lock-version")
    if not isinstance(version, str) or not version.startswith("1."):
        raise InputError.one(path, "lock-version", f"must be 1.x (PEP 751), got {version!r}")
    try:
        return Pylock.from_dict(document)
    except PylockValidationError as exc:
        raise InputError.one(path, exc.context, f"{exc.message} (not a valid PEP 751 lock)") from None


def _document(path: Path, text: str) -> dict[str, Any]:
    return load_toml(path, text)


def tool_table(lock: Pylock, name: str = "hermes-pm") -> Mapping[str, Any]:
    """The lock's ``[tool.<name>]`` table (empty when absent or not a table)."""
    table = (lock.tool or {}).get(name)
    return table if isinstance(table, Mapping) else {}


def choose(path: Path, lock: Pylock, target: Target, *, own: bool) -> list[tuple[int, Package, Chosen]]:
    """What the lock installs on ``target`` — packaging's selection, PEP 751's algorithm — as
    (number in ``packages``, package, chosen source). ``own``: a lock pm wrote, whose target is
    checked through its recorded inputs instead of ``environments`` and ``requires-python``.
    Raises :class:`InputError` naming the key when the lock admits no install here."""
    if own:
        lock = replace(lock, environments=None, requires_python=None)
    numbers = {id(package): number for number, package in enumerate(lock.packages)}
    tags = [Tag(*tag.split("-", 2)) for tag in target.tags]
    chosen: list[tuple[Package, Chosen]] = []
    # The lock's own requirements first, each alone, so that a refusal names its key; then the
    # whole lock (a package's refusal names packages[i] itself).
    for key, trial in (("requires-python", replace(lock, packages=[], environments=None)),
                       ("environments", replace(lock, packages=[], requires_python=None)), (None, lock)):
        try:
            chosen = list(trial.select(environment=target.environment, tags=tags))  # type: ignore[arg-type]
        except PylockSelectError as exc:
            raise InputError.one(path, key, f"{exc} (this target: {_target_words(target)})") from None
    return [(numbers[id(package)], package, source) for package, source in chosen]


def _target_words(target: Target) -> str:
    markers = target.environment
    return (f"{markers.get('implementation_name')} {markers.get('python_full_version')} on "
            f"{markers.get('sys_platform')} {markers.get('platform_machine')}")


def to_pin(path: Path, package: Package, chosen: PackageWheel | PackageSdist, origins: Mapping[str, Origin]) -> Pin:
    """The pin of a chosen wheel or sdist: its URL, else its ``path`` resolved against the lock's
    folder; ``origins`` maps ``[tool.hermes-pm] required-by`` texts to origins."""
    filename = chosen.filename
    url = chosen.url or (path.parent / (chosen.path or "")).resolve().as_uri()
    link = FileLink(filename, url, sha256=chosen.hashes.get("sha256"), size=chosen.size,
                    requires_python=str(package.requires_python) if package.requires_python else None,
                    source=str(path))
    version = package.version or link.version  # the file name's, read as the index's names are
    return Pin(canonicalize_name(package.name), version, link, frozenset(),
               tuple(origins[text] for text in _required_by(package) if text in origins), (),
               tuple(canonicalize_name(str(d["name"])) for d in package.dependencies or () if "name" in d))


def _required_by(package: Package) -> Iterable[str]:
    table = (package.tool or {}).get("hermes-pm") or {}
    found = table.get("required-by", []) if isinstance(table, Mapping) else []
    return [str(text) for text in found] if isinstance(found, list) else []


def refusal(path: Path, number: int, package: Package, chosen: Chosen) -> Problem:
    """The refusal of a package pm cannot install (vcs, directory, archive), naming its key."""
    if isinstance(chosen, PackageVcs):
        key, what = "vcs", f"a {chosen.type} checkout of {chosen.url or chosen.path} at {chosen.commit_id}"
    elif isinstance(chosen, PackageDirectory):
        key, what = "directory", f"the local directory {chosen.path}"
    else:
        key, what = "archive", f"the archive {getattr(chosen, 'url', None) or getattr(chosen, 'path', None)}"
    return Problem(path, f"packages[{number}].{key} ({package.name})",
                   f"locks {what}, which pm does not install: pm installs wheels and sdists only, fetched by URL "
                   "and checked by sha256 (lock this package from an index, or install it another way)")
