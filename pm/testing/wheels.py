"""Real, deterministic distribution files for tests and benchmarks.

Every builder here writes bytes that depend only on its arguments (fixed timestamps, sorted
entries, fixed permissions), so a file's sha256 is the same across runs and machines with the same
zlib. Wheels follow the binary distribution format spec closely enough for uv and pip to install
them; sdists carry ``PKG-INFO`` and a setuptools ``pyproject.toml`` (or, with the spec key
``"sdist_backend": "in-tree"``, the offline-buildable ones of :mod:`pm.testing.sdists`).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import re
import tarfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.tags import parse_tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from pm.testing.sdists import backend_sdist

#: Zip timestamps are fixed at the earliest date the format can store.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
_GENERATOR = "hermes-pm-testing (1.0)"


@dataclass(frozen=True)
class IndexFile:
    """One distribution file and the attributes an index publishes beside it.

    ``yanked`` is ``False`` (not yanked), ``True`` (yanked, no reason) or the reason text.
    ``upload_time`` is an ISO 8601 timestamp or ``None``.
    """

    filename: str
    path: Path
    yanked: bool | str = False
    upload_time: str | None = None


def escape_name(name: str) -> str:
    """The name as wheel and sdist file names spell it (``My.Pkg-X`` → ``my_pkg_x``)."""
    return canonicalize_name(name).replace("-", "_")


def normalize_version(version: str) -> str:
    """The PEP 440 normal form of ``version`` (``1.0-RC1`` → ``1.0rc1``)."""
    return str(Version(version))


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def _metadata(
    name: str,
    version: str,
    requires_dist: Iterable[str],
    requires_python: str | None,
    provides_extra: Iterable[str],
    metadata_version: str = "2.1",
) -> bytes:
    lines = [f"Metadata-Version: {metadata_version}", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        lines.append(f"Requires-Python: {requires_python}")
    lines += [f"Provides-Extra: {extra}" for extra in provides_extra]
    lines += [f"Requires-Dist: {requirement}" for requirement in requires_dist]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _module_init(version: str) -> bytes:
    return f'__version__ = "{version}"\n'.encode()


def build_wheel(
    dest_dir: Path,
    name: str,
    version: str,
    *,
    requires_dist: Iterable[str] = (),
    requires_python: str | None = None,
    provides_extra: Iterable[str] = (),
    tag: str = "py3-none-any",
    module: str | None = None,
    extra_files: Mapping[str, bytes] | None = None,
) -> Path:
    """Write ``{escaped_name}-{version}-{tag}.whl`` into ``dest_dir`` and return its path.

    The wheel holds ``<module>/__init__.py`` (``__version__``) and a ``.dist-info`` with
    METADATA, WHEEL (one ``Tag:`` line per tag of a compressed tag set) and RECORD, plus
    ``extra_files`` (archive path -> bytes, stored uncompressed, listed in RECORD: padding that
    gives a benchmark's wheel a realistic size). Same arguments, same bytes.
    """
    version = normalize_version(version)
    escaped = escape_name(name)
    module = module or escaped
    tags = sorted(str(t) for t in parse_tag(tag))
    purelib = all(t.endswith("-any") for t in tags)
    dist_info = f"{escaped}-{version}.dist-info"
    wheel_meta = ["Wheel-Version: 1.0", f"Generator: {_GENERATOR}"]
    wheel_meta.append(f"Root-Is-Purelib: {'true' if purelib else 'false'}")
    wheel_meta += [f"Tag: {t}" for t in tags]
    entries = {
        **(extra_files or {}),
        f"{module}/__init__.py": _module_init(version),
        f"{dist_info}/METADATA": _metadata(
            name, version, requires_dist, requires_python, provides_extra
        ),
        f"{dist_info}/WHEEL": ("\n".join(wheel_meta) + "\n").encode(),
    }
    record_name = f"{dist_info}/RECORD"
    ordered = sorted(entries, key=lambda p: (p.startswith(dist_info), p))
    record = [f"{p},{_record_hash(entries[p])},{len(entries[p])}" for p in ordered]
    record.append(f"{record_name},,")
    entries[record_name] = ("\n".join(record) + "\n").encode()
    ordered.append(record_name)

    dest_dir.mkdir(parents=True, exist_ok=True)
    path = dest_dir / f"{escaped}-{version}-{tag}.whl"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for entry in ordered:
            info = zipfile.ZipInfo(entry, date_time=_ZIP_EPOCH)
            info.external_attr = 0o100644 << 16
            stored = extra_files is not None and entry in extra_files
            info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
            archive.writestr(info, entries[entry])
    path.write_bytes(buffer.getvalue())
    return path


def _toml_list(items: Iterable[str]) -> str:
    return "[" + ", ".join(_toml_str(item) for item in items) + "]"


def _toml_str(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def build_sdist(
    dest_dir: Path,
    name: str,
    version: str,
    *,
    requires_dist: Iterable[str] = (),
    requires_python: str | None = None,
    metadata_version: str = "2.1",
) -> Path:
    """Write ``{escaped_name}-{version}.tar.gz`` (PKG-INFO, setuptools pyproject, module).
    ``metadata_version`` 2.2 or later makes its PKG-INFO static (no ``Dynamic`` field): what an
    index may stand for the sdist's requirements without a build.

    Deterministic: gzip and tar headers carry mtime 0, uid/gid 0, fixed modes, sorted members.
    """
    version = normalize_version(version)
    escaped = escape_name(name)
    requires = list(requires_dist)
    project = [f"name = {_toml_str(name)}", f"version = {_toml_str(version)}"]
    project.append(f"dependencies = {_toml_list(requires)}")
    if requires_python:
        project.append(f"requires-python = {_toml_str(requires_python)}")
    pyproject = "\n".join(
        [
            "[build-system]",
            'requires = ["setuptools>=61"]',
            'build-backend = "setuptools.build_meta"',
            "",
            "[project]",
            *project,
            "",
            "[tool.setuptools]",
            f"packages = [{_toml_str(escaped)}]",
            "",
        ]
    )
    top = f"{escaped}-{version}"
    members = {
        f"{top}/PKG-INFO": _metadata(name, version, requires, requires_python, (), metadata_version),
        f"{top}/pyproject.toml": pyproject.encode(),
        f"{top}/{escaped}/__init__.py": _module_init(version),
    }
    dest_dir.mkdir(parents=True, exist_ok=True)
    path = dest_dir / f"{top}.tar.gz"
    raw = io.BytesIO()
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as compressed,
        tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as archive,
    ):
            for directory in (top, f"{top}/{escaped}"):
                archive.addfile(_tar_info(directory, 0, tarfile.DIRTYPE, 0o755))
            for member in sorted(members):
                data = members[member]
                info = _tar_info(member, len(data), tarfile.REGTYPE, 0o644)
                archive.addfile(info, io.BytesIO(data))
    path.write_bytes(raw.getvalue())
    return path


def _tar_info(name: str, size: int, kind: bytes, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.type, info.mode, info.mtime = size, kind, mode, 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def metadata_bytes(path: Path) -> bytes:
    """The core metadata of a wheel (``*.dist-info/METADATA``) or sdist (``PKG-INFO``).

    Raises ``ValueError`` when the file carries none.
    """
    if path.name.endswith(".whl"):
        with zipfile.ZipFile(path) as archive:
            for entry in archive.namelist():
                if re.fullmatch(r"[^/]+\.dist-info/METADATA", entry):
                    return archive.read(entry)
    elif path.name.endswith(".zip"):  # a legacy zip sdist
        with zipfile.ZipFile(path) as archive:
            for entry in archive.namelist():
                if re.fullmatch(r"[^/]+/PKG-INFO", entry):
                    return archive.read(entry)
    else:  # a tar sdist, however compressed
        with tarfile.open(path, "r:*") as archive:
            for member in archive.getmembers():
                if re.fullmatch(r"[^/]+/PKG-INFO", member.name) and member.isfile():
                    extracted = archive.extractfile(member)
                    if extracted is not None:
                        return extracted.read()
    raise ValueError(f"{path}: no core metadata found")


def _extra_requirement(text: str, extra: str) -> str:
    requirement = Requirement(text)
    marker = requirement.marker
    requirement.marker = None
    condition = f'extra == "{extra}"'
    if marker is not None:
        condition = f"({marker}) and {condition}"
    return f"{requirement}; {condition}"


def _version_files(dest_dir: Path, name: str, version: str, info: Any) -> list[IndexFile]:
    if info is None:
        info = {}
    elif isinstance(info, Sequence) and not isinstance(info, str):
        info = {"requires": list(info)}
    unknown = set(info) - {
        "requires", "requires_python", "extras", "tags", "yanked", "sdist", "sdist_only",
        "sdist_backend", "upload_time",
    }
    if unknown:
        raise ValueError(f"{name} {version}: unknown keys {sorted(unknown)!r}")
    extras: Mapping[str, Sequence[str]] = info.get("extras", {})
    requires = list(info.get("requires", []))
    requires += [_extra_requirement(r, extra) for extra, reqs in extras.items() for r in reqs]
    requires_python = info.get("requires_python")
    paths: list[Path] = []
    if not info.get("sdist_only", False):
        for tag in info.get("tags", ["py3-none-any"]):
            paths.append(
                build_wheel(
                    dest_dir, name, version, requires_dist=requires,
                    requires_python=requires_python, provides_extra=list(extras), tag=tag,
                )
            )
    if info.get("sdist_only", False) or info.get("sdist", False):
        paths.append(_sdist(dest_dir, name, version, requires, requires_python, list(extras),
                            info.get("sdist_backend", "setuptools")))
    yanked = info.get("yanked", False)
    upload_time = info.get("upload_time")
    return [IndexFile(p.name, p, yanked, upload_time) for p in paths]


def _sdist(dest_dir: Path, name: str, version: str, requires: list[str],
           requires_python: str | None, extras: list[str], backend: str) -> Path:
    """The sdist of one version: a setuptools one, or one with an in-tree backend (offline)."""
    if backend == "setuptools":
        return build_sdist(dest_dir, name, version, requires_dist=requires,
                           requires_python=requires_python)
    if backend == "in-tree":
        return backend_sdist(dest_dir, name, version, tuple(requires),
                             requires_python=requires_python, provides_extra=extras)
    raise ValueError(f"{name} {version}: sdist_backend must be 'setuptools' or 'in-tree', "
                     f"got {backend!r}")


def build_packages(dest_dir: Path, spec: Mapping[str, Mapping[str, Any]]) -> list[IndexFile]:
    """Build every file a data spec describes and return their index records, in spec order.

    ``spec`` is ``{name: {version: info}}``; ``info`` is ``None``, a list of requirement strings,
    or a mapping with optional keys ``requires`` (list), ``requires_python`` (str), ``extras``
    (``{extra: [requirement]}`` → ``Provides-Extra`` + ``Requires-Dist: r; extra == "extra"``),
    ``tags`` (list of wheel tags, one wheel each; default ``["py3-none-any"]``), ``yanked``
    (bool or reason), ``sdist`` (also build an sdist), ``sdist_only`` (build only an sdist),
    ``sdist_backend`` (``"setuptools"``, the default: :func:`build_sdist`, whose build downloads
    setuptools; ``"in-tree"``: :func:`pm.testing.sdists.backend_sdist`, which builds offline and
    whose metadata is dynamic), ``upload_time`` (ISO 8601). Unknown keys raise ``ValueError``.
    """
    files: list[IndexFile] = []
    for name, versions in spec.items():
        for version, info in versions.items():
            files += _version_files(dest_dir, name, version, info)
    return files
