"""What :class:`~pm.testing.index.LocalIndex` serves, as data: the media types it negotiates, the
header presets of real indexes, one served file, one transfer, and the pages' HTML."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime
from email.parser import BytesParser
from typing import Any

from packaging.utils import InvalidWheelFilename, NormalizedName, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from pm.index.base import SDIST_ENDINGS, split_sdist
from pm.testing.wheels import IndexFile, metadata_bytes

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_TYPE = "application/vnd.pypi.simple.v1+html"
TEXT_HTML = "text/html; charset=utf-8"
SERVED_TYPES = {  # Accept media type -> (format, Content-Type answered)
    JSON_TYPE: ("json", JSON_TYPE),
    "application/vnd.pypi.simple.latest+json": ("json", JSON_TYPE),
    HTML_TYPE: ("html", HTML_TYPE),
    "application/vnd.pypi.simple.latest+html": ("html", HTML_TYPE),
    "text/html": ("html", TEXT_HTML),
    "*/*": ("html", TEXT_HTML),
}
SUFFIXES = (".whl", *SDIST_ENDINGS)

#: Header modes of real indexes, as ``LocalIndex`` knobs (``LocalIndex(files, **PRESETS[name])``).
#: ``pypi``: pages fresh for 10 minutes with an ETag, PEP 658 metadata files, immutable files.
#: ``mirror``: a bare static mirror (no Cache-Control, no validators, no metadata files; clients
#: must read metadata from the wheel itself, by range requests, which it honours).
PRESETS: dict[str, dict[str, Any]] = {
    "pypi": {
        "cache_control": "max-age=600, public",
        "validators": True,
        "metadata_files": True,
        "file_cache_control": "max-age=365000000, immutable, public",
        "ranges": True,
    },
    "mirror": {
        "cache_control": None,
        "validators": False,
        "metadata_files": False,
        "file_cache_control": None,
        "ranges": True,
    },
}



def project_version(filename: str) -> tuple[NormalizedName, Version] | None:
    """The project and version a wheel's or sdist's file name gives; None for another name."""
    if not filename.endswith(".whl"):  # legacy sdist names too, read as uv and pm read them
        sdist = split_sdist(filename)
        return None if sdist is None else (canonicalize_name(sdist[0]), Version(sdist[1]))
    try:
        project, version, _, _ = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return None
    return project, version

@dataclasses.dataclass(frozen=True)
class ServedFile:
    """One file as the index publishes it: its record plus facts read once from its bytes."""

    record: IndexFile
    project: NormalizedName
    version: str
    sha256: str
    size: int
    requires_python: str | None  # from the file's own core metadata
    metadata: bytes | None  # the PEP 658 ``.metadata`` file; wheels only

    @classmethod
    def read(cls, record: IndexFile) -> ServedFile | None:
        """Describe ``record``; ``None`` when its name is no wheel or sdist name."""
        named = project_version(record.filename)
        if named is None:
            return None
        project, version = named
        data, metadata = record.path.read_bytes(), metadata_bytes(record.path)
        requires_python = BytesParser().parsebytes(metadata, headersonly=True)["Requires-Python"]
        wheel_metadata = metadata if record.filename.endswith(".whl") else None
        return cls(record, project, str(version), hashlib.sha256(data).hexdigest(), len(data),
                   requires_python, wheel_metadata)


@dataclasses.dataclass(frozen=True)
class Transfer:
    """One answered request: what was asked (``range`` is the Range header or None), the status
    and the body bytes the socket took (headers not counted). Tests read it by field name."""

    method: str
    path: str
    status: int
    body_bytes: int
    range: str | None = None

    @property
    def kind(self) -> str:
        """``pages`` (``/simple/…``), ``metadata`` (``….metadata``), ``files`` (any other
        ``/files/…``) or ``other``: see :func:`path_kind`."""
        return path_kind(self.path)


def path_kind(path: str) -> str:
    """``pages``, ``metadata``, ``files`` or ``other``: how :class:`Transfer` sorts a path."""
    path = path.split("?", 1)[0]
    if path.startswith("/simple"):
        return "pages"
    if path.startswith("/files/"):
        return "metadata" if path.endswith(".metadata") else "files"
    return "other"


def negotiate(accept: str | None, *, allow_json: bool = True) -> tuple[str, str]:
    """Pick ``(format, content_type)`` for an Accept header by q-value (PEP 691).

    Equal q-values keep the client's order; no acceptable type (or no header) means HTML.
    """
    choices: list[tuple[float, int, str]] = []
    for position, part in enumerate((accept or "").split(",")):
        media, *params = (piece.strip().lower() for piece in part.split(";"))
        quality = 1.0
        for key, _, value in (param.partition("=") for param in params):
            if key.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        served = SERVED_TYPES.get(media)
        if served and quality > 0 and (allow_json or served[0] != "json"):
            choices.append((-quality, position, media))
    return SERVED_TYPES[min(choices)[2] if choices else "text/html"]


def upload_time(text: str | None) -> str | None:
    if not text:
        return None
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def html_page(title: str, links: Iterable[str]) -> bytes:
    body = "\n".join(f"    {link}<br/>" for link in links)
    return (f'<!DOCTYPE html>\n<html>\n  <head>\n    <meta name="pypi:repository-version" '
            f'content="1.1">\n    <title>{title}</title>\n  </head>\n  <body>\n'
            f"    <h1>{title}</h1>\n{body}\n  </body>\n</html>\n").encode()
