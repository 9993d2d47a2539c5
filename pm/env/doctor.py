"""``hermes plugins doctor``: the selected generation's files and pins, checked against what was
installed. No network, no install, nothing written.

- Every file each ``*.dist-info/RECORD`` of the generation's site-packages lists is re-hashed
  (sha256, as the wheel's RECORD or the installer wrote it): a file whose bytes differ is
  **modified**, one that is gone is **missing** (a RECORD row without a hash, the RECORD itself
  among them, is only checked to exist).
- Every pin of the generation's resolution (its record, as the receipt that built it says) is
  checked against the installed distributions: another version installed is **drift**, none
  installed is a **missing package**.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from pm.env.generations import Generation


@dataclass(frozen=True)
class Damage:
    """One problem: ``kind`` is modified, missing, drift or missing-package; ``distribution``
    (name version), ``path`` (as RECORD writes it) and what was ``expected`` / ``found``."""

    kind: str
    distribution: str
    path: str = ""
    expected: str = ""
    found: str = ""

    def describe(self) -> str:
        if self.kind == "modified":
            return f"{self.distribution}: {self.path} was modified (sha256 {self.found}, RECORD says {self.expected})"
        if self.kind == "missing":
            return f"{self.distribution}: {self.path} is missing"
        if self.kind == "drift":
            return f"{self.distribution}: {self.found} is installed, the generation pins {self.expected}"
        return f"{self.distribution}: pinned by the generation, not installed"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "distribution": self.distribution, "path": self.path, "expected": self.expected,
                "found": self.found}


@dataclass(frozen=True)
class Health:
    generation: str | None
    files: int = 0
    damage: tuple[Damage, ...] = field(default=())

    @property
    def healthy(self) -> bool:
        return self.generation is not None and not self.damage

    def to_json(self) -> dict[str, Any]:
        return {"generation": self.generation, "files_checked": self.files, "healthy": self.healthy,
                "problems": [d.to_json() for d in self.damage]}


def diagnose(generation: Generation | None) -> Health:
    """The health of ``generation`` (module docstring); None: no generation to check."""
    if generation is None:
        return Health(None)
    site = generation.site_packages
    damage: list[Damage] = []
    installed: dict[str, str] = {}
    files = 0
    for info in sorted(site.glob("*.dist-info")):
        name, version = _name_version(info)
        installed[name] = version
        rows = _record_rows(info)
        files += len(rows)
        damage += [d for row in rows if (d := _check(site, f"{name} {version}", row)) is not None]
    for pinned, version in sorted(generation.pins.items()):
        key = canonicalize_name(pinned)
        if key not in installed:
            damage.append(Damage("missing-package", f"{key} {version}", expected=version))
        elif not _same(installed[key], version):
            damage.append(Damage("drift", key, expected=version, found=installed[key]))
    return Health(generation.id, files, tuple(damage))


def _same(a: str, b: str) -> bool:
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def _name_version(info: Path) -> tuple[str, str]:
    """The distribution's name and version from its METADATA (else its folder's name)."""
    name, _, version = info.name.removesuffix(".dist-info").partition("-")
    try:
        text = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return canonicalize_name(name), version
    head = text.split("\n\n", 1)[0]
    fields = dict(line.split(":", 1) for line in head.splitlines() if ":" in line and not line.startswith(" "))
    return canonicalize_name(fields.get("Name", name).strip()), fields.get("Version", version).strip()


def _record_rows(info: Path) -> list[list[str]]:
    try:
        text = (info / "RECORD").read_text(encoding="utf-8")
    except OSError:
        return [[f"{info.name}/RECORD", "", ""]]  # checked to exist: reported missing
    return [row for row in csv.reader(io.StringIO(text)) if row and row[0]]


def _check(site: Path, distribution: str, row: list[str]) -> Damage | None:
    path = (site / row[0]).resolve() if ".." in row[0] else site / row[0]
    expected = row[1] if len(row) > 1 else ""
    try:
        if not expected:
            return None if path.exists() else Damage("missing", distribution, row[0])
        algorithm, _, digest = expected.partition("=")
        data = path.read_bytes()
    except OSError:
        return Damage("missing", distribution, row[0])
    try:
        found = base64.urlsafe_b64encode(hashlib.new(algorithm, data).digest()).rstrip(b"=").decode()
    except ValueError:
        return None  # an algorithm this Python does not have: not judged
    return None if found == digest else Damage("modified", distribution, row[0], digest, found)
