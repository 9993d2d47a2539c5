"""Core metadata: parsed from its email-header text, read out of wheels and sdists.

Everything here is pure (bytes or a file in, values out) and raises :class:`IndexFailure`
naming the file's URL for anything unusable, so a bad file upstream is a failure, never a
silent "no dependencies".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from pm.base.headers import header_items
from pm.index.base import IndexFailure, Metadata, MetadataUnavailable

if TYPE_CHECKING:
    import tarfile  # (tarfile and zipfile are imported where an archive is opened: most commands open none)

_WHEEL_METADATA = re.compile(r"([^/]+)\.dist-info/METADATA")
_SDIST_PKG_INFO = re.compile(r"[^/]+/PKG-INFO")
#: Fields that must be static for an sdist's PKG-INFO to stand for the built wheel (PEP 643).
_NEEDED_STATIC = frozenset({"requires-dist", "requires-python", "provides-extra"})

__all__ = ["MetadataUnavailable"]  # re-exported: defined, and public, in pm.index.base


def _unfold(value: str) -> str:
    """A header value with folded continuation lines joined by one space."""
    return re.sub(r"\s*\n\s*", " ", value).strip()


def _header_part(data: bytes) -> bytes:
    """``data`` up to and including its first blank line: all the header parser reads. The body
    (a long description, often most of the file) is cut off before it is decoded and scanned."""
    ends = [end + len(blank) for blank in (b"\n\n", b"\r\n\r\n") if (end := data.find(blank)) != -1]
    return data[:min(ends)] if ends else data


def _headers(data: bytes, url: str) -> dict[str, list[str]]:
    """Header name (lower case) -> values in order; the body (description) is ignored."""
    text = _header_part(data).decode("utf-8", errors="replace")
    fields: dict[str, list[str]] = {}
    for key, value in header_items(text):
        fields.setdefault(key.lower(), []).append(_unfold(str(value)))
    if not fields:
        raise IndexFailure(url, "core metadata is empty or not in email-header format")
    return fields


def _one(fields: dict[str, list[str]], key: str, url: str) -> str:
    values = fields.get(key.lower())
    if not values or not values[0]:
        raise IndexFailure(url, f"core metadata has no {key} field")
    return values[0]


@functools.lru_cache(maxsize=16384)
def _requirement(line: str) -> Requirement:
    """One Requires-Dist line parsed, remembered: the versions of a project (and projects of one
    family) repeat the same lines, a big resolution reads ~10x more lines than it has distinct
    ones. Shared objects: callers never modify them."""
    return Requirement(line)


def parse_metadata(data: bytes, url: str) -> Metadata:
    """Parse METADATA / PKG-INFO text into :class:`Metadata`.

    MUST hold: every Requires-Dist line is a valid PEP 508 requirement, Version is PEP 440, and
    Requires-Python (when present) is a valid specifier set; otherwise :class:`IndexFailure`
    naming ``url`` and quoting the offending value. Cost: one pass over the headers.
    """
    fields = _headers(data, url)
    name = _one(fields, "Name", url)
    version_text = _one(fields, "Version", url)
    try:
        version = Version(version_text)
    except InvalidVersion:
        raise IndexFailure(url, f"invalid Version {version_text!r} in core metadata") from None
    requires: list[Requirement] = []
    for line in fields.get("requires-dist", []):
        try:
            requires.append(_requirement(line))
        except InvalidRequirement as exc:
            raise IndexFailure(url, f"invalid Requires-Dist {line!r}: {exc}") from None
    requires_python = None
    if text := (fields.get("requires-python") or [""])[0]:
        try:
            requires_python = SpecifierSet(text)
        except InvalidSpecifier:
            raise IndexFailure(url, f"invalid Requires-Python {text!r} in core metadata") from None
    extras = frozenset(canonicalize_name(e) for e in fields.get("provides-extra", []) if e)
    return Metadata(canonicalize_name(name), version, tuple(requires), requires_python, extras)


def is_static(data: bytes, url: str) -> bool:
    """Whether sdist PKG-INFO ``data`` states its dependencies reliably (PEP 643)."""
    fields = _headers(data, url)
    try:
        metadata_version = Version((fields.get("metadata-version") or ["1.0"])[0])
    except InvalidVersion:
        return False
    dynamic = {d.lower() for d in fields.get("dynamic", [])}
    return metadata_version >= Version("2.2") and not dynamic & _NEEDED_STATIC


def metadata_entry(names: Iterable[str], project: str | None) -> str | None:
    """Which archive entry is the wheel's ``*.dist-info/METADATA`` (None: there is none).

    When several top-level ``.dist-info`` folders exist, the one named after ``project`` wins.
    """
    found = [(m.group(1), entry) for entry in names if (m := _WHEEL_METADATA.fullmatch(entry))]
    if project is not None and len(found) > 1:
        wanted = canonicalize_name(project)
        found = [f for f in found if canonicalize_name(f[0].split("-")[0]) == wanted] or found
    return found[0][1] if found else None


def wheel_metadata(archive: str | IO[bytes], url: str, project: str | None = None) -> bytes:
    """The ``*.dist-info/METADATA`` bytes of a wheel (a path or a seekable binary file).

    When several top-level ``.dist-info`` folders exist, the one named after ``project``
    wins. Raises :class:`IndexFailure` for a file that is no zip or carries no METADATA.
    """
    import zipfile

    try:
        with zipfile.ZipFile(archive) as wheel:
            entry = metadata_entry(wheel.namelist(), project)
            if entry is None:
                raise IndexFailure(url, "wheel has no *.dist-info/METADATA")
            return wheel.read(entry)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise IndexFailure(url, f"not a readable wheel (zip): {exc}") from None


def _open_tar(archive: str | IO[bytes]) -> tarfile.TarFile:
    import tarfile

    if isinstance(archive, str):
        return tarfile.open(archive, "r:*")
    return tarfile.open(fileobj=archive, mode="r:*")


def sdist_pkg_info(archive: str | IO[bytes], filename: str, url: str) -> bytes:
    """The top-level ``PKG-INFO`` of an sdist (``.zip``, or a tar however compressed that Python reads)."""
    import tarfile
    import zipfile

    try:
        if filename.endswith(".zip"):
            with zipfile.ZipFile(archive) as zipped:
                for entry in zipped.namelist():
                    if _SDIST_PKG_INFO.fullmatch(entry):
                        return zipped.read(entry)
        else:
            with _open_tar(archive) as tarred:
                for member in tarred:
                    if member.isfile() and _SDIST_PKG_INFO.fullmatch(member.name):
                        extracted = tarred.extractfile(member)
                        if extracted is not None:
                            return extracted.read()
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as exc:
        raise IndexFailure(url, f"not a readable sdist: {exc}") from None
    raise IndexFailure(url, "sdist has no top-level PKG-INFO")


def archive_metadata(archive: str | IO[bytes], filename: str, url: str) -> bytes:
    """Raw core metadata of a wheel (METADATA) or sdist (PKG-INFO), static or not.

    Pass sdist results through :func:`require_static` before trusting them.
    """
    if filename.endswith(".whl"):
        return wheel_metadata(archive, url, filename.split("-")[0])
    return sdist_pkg_info(archive, filename, url)


def require_static(data: bytes, url: str) -> bytes:
    """``data`` when it is static sdist metadata; else :class:`MetadataUnavailable`."""
    if not is_static(data, url):
        raise MetadataUnavailable(
            url, "the dependencies of this sdist are only known by building it "
                 "(its PKG-INFO is older than Metadata-Version 2.2 or marks them Dynamic)")
    return data

