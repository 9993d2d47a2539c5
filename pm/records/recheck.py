"""Metadata that the wheel's own hash did not vouch for, checked against the wheel uv installed.

A PEP 658 metadata file is the index's statement of a wheel's METADATA (its own sha256 proves only
that it is the file the page names); an index can serve one that disagrees with the wheel. The
same holds for the metadata read by range requests:

Core metadata read by HTTP range requests (:mod:`pm.index._ranges`) comes out of a few slices of
the wheel, which the file's sha256 cannot cover; uv then installs the whole file and does verify
that sha256. So once a generation is installed, each such pin's installed ``*.dist-info/METADATA``
must state the same Requires-Dist and Requires-Python as the metadata the resolution used;
otherwise the index served other bytes for the ranges than for the file, the resolution may be
wrong, and the build fails naming the file (:class:`MetadataMismatch`), so nothing is selected.

Cost: one METADATA file read and parsed per pin whose metadata came from a metadata file or by
range (about 2 ms for 40 pins); nothing for metadata taken out of a whole, hash-checked wheel.
"""

from __future__ import annotations

from pathlib import Path

from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from pm.index.base import IndexFailure, Metadata
from pm.resolver import Pin, Resolution
from pm.resolver.model import Unverified


class MetadataMismatch(IndexFailure):
    """An installed wheel's metadata differs from what the resolution read by range requests.

    ``url`` names the file; ``field`` is ``"Requires-Dist"``, ``"Requires-Python"`` or
    ``"METADATA"`` (none installed); ``used`` and ``installed`` are the two values as text.
    """

    kind = "metadata-mismatch"

    def __init__(self, url: str, field: str, used: str, installed: str, *, source: str = "range requests") -> None:
        self.field = field
        self.used = used
        self.installed = installed
        self.source = source
        why = ("the index served other bytes for the ranges than for the file" if source == "range requests"
               else "the index's metadata file disagrees with the wheel it describes")
        read = "read by range requests" if source == "range requests" else f"of its {source}"
        super().__init__(url, f"the installed wheel's {field} differs from the metadata {read} "
                              f"when resolving (resolved with {used}; installed: {installed}); {why}, "
                              "so this resolution cannot be trusted")


def check_unverified(site_packages: Path, resolution: Resolution) -> None:
    """Raise :class:`MetadataMismatch` for the first pin whose installed metadata differs from
    the unverified metadata it was resolved with (pins without such metadata are skipped)."""
    pins = [pin for pin in resolution.pins if pin.unverified is not None]
    if not pins:
        return
    from pm.index._metadata import parse_metadata  # (email.parser: loaded only when there is work)

    folders = _dist_info(site_packages)
    for pin in pins:
        folder = folders.get((pin.name, pin.version))
        url = pin.link.url
        try:
            data = (folder / "METADATA").read_bytes() if folder is not None else None
        except OSError:
            data = None
        if data is None:
            raise MetadataMismatch(url, "METADATA", f"{pin.name} {pin.version}", "no *.dist-info/METADATA",
                                   source=_source(pin))
        _compare(pin, parse_metadata(data, url))


def _compare(pin: Pin, installed: Metadata) -> None:
    used = pin.unverified
    assert used is not None
    found = Unverified.of(installed)
    before, after = list(used.requires_dist), list(found.requires_dist)
    if before != after:
        raise MetadataMismatch(pin.link.url, "Requires-Dist", _shown(before), _shown(after), source=_source(pin))
    before_python, after_python = used.requires_python, found.requires_python
    if before_python != after_python:
        raise MetadataMismatch(pin.link.url, "Requires-Python", before_python or "none",
                               after_python or "none", source=_source(pin))


def _source(pin: Pin) -> str:
    return "PEP 658 metadata file" if pin.link.metadata_sha256 is not None else "range requests"


def _shown(requires: list[str]) -> str:
    return ", ".join(repr(r) for r in requires) if requires else "no requirements"


def _dist_info(site_packages: Path) -> dict[tuple[NormalizedName, Version], Path]:
    found: dict[tuple[NormalizedName, Version], Path] = {}
    try:
        folders = [f for f in site_packages.iterdir() if f.name.endswith(".dist-info")]
    except OSError:
        return found
    for folder in folders:
        stem, _, version = folder.name.removesuffix(".dist-info").rpartition("-")
        try:
            found[(canonicalize_name(stem), Version(version))] = folder
        except InvalidVersion:
            continue
    return found
