"""Source distributions that build with no download: an in-tree PEP 517 backend.

``backend_sdist`` writes an sdist whose ``pyproject.toml`` names a standard-library-only backend
inside the archive (``backend-path = ["."]``), so ``uv build`` runs offline. Its PKG-INFO is
Metadata-Version 2.1 (Name, Version and, when given, Requires-Python — what an index publishes as
``data-requires-python``), so its dependencies are only known by building it (dynamic metadata).
The wheel it builds is ``py3-none-any`` and its METADATA carries Requires-Python, Provides-Extra
and Requires-Dist. Same arguments, same bytes (gzip and tar headers carry mtime 0, sorted members).
"""

from __future__ import annotations

import gzip
import io
import tarfile
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

_BACKEND = '''"""A PEP 517 backend needing only the standard library (hermes-pm tests)."""
import base64, hashlib, os, zipfile

NAME, ESCAPED, VERSION, FAIL = {name!r}, {escaped!r}, {version!r}, {fail!r}
REQUIRES_PYTHON, EXTRAS, REQUIRES = {requires_python!r}, {extras!r}, {requires!r}


def _hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if FAIL:
        raise SystemExit(FAIL)
    info = ESCAPED + "-" + VERSION + ".dist-info"
    metadata = "Metadata-Version: 2.1\\nName: " + NAME + "\\nVersion: " + VERSION + "\\n"
    metadata += "Requires-Python: " + REQUIRES_PYTHON + "\\n" if REQUIRES_PYTHON else ""
    metadata += "".join("Provides-Extra: " + e + "\\n" for e in EXTRAS)
    metadata += "".join("Requires-Dist: " + r + "\\n" for r in REQUIRES)
    files = {{ESCAPED + "/__init__.py": b"", info + "/METADATA": metadata.encode(),
             info + "/WHEEL": b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}}
    record = "".join(p + "," + _hash(d) + "," + str(len(d)) + "\\n" for p, d in files.items())
    files[info + "/RECORD"] = (record + info + "/RECORD,,\\n").encode()
    filename = ESCAPED + "-" + VERSION + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
    return filename
'''


def backend_sdist(
    dest: Path,
    name: str,
    version: str,
    requires: tuple[str, ...] = (),
    fail: str = "",
    build_requires: tuple[str, ...] = (),
    *,
    requires_python: str | None = None,
    provides_extra: Iterable[str] = (),
) -> Path:
    """Write ``{escaped name}-{normal version}.tar.gz`` into ``dest`` and return its path.

    ``requires``: the built wheel's Requires-Dist (extra-conditional ones carry their
    ``extra == "…"`` marker); ``provides_extra``: its Provides-Extra; ``requires_python``: its
    Requires-Python and the PKG-INFO's; ``fail``: the error the backend exits with instead of
    building; ``build_requires``: its ``build-system.requires``, which uv installs before building.
    """
    escaped = canonicalize_name(name).replace("-", "_")
    version = str(Version(version))
    top = f"{escaped}-{version}"
    pkg_info = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    pkg_info += f"Requires-Python: {requires_python}\n" if requires_python else ""
    backend = _BACKEND.format(name=name, escaped=escaped, version=version, fail=fail,
                              requires_python=requires_python or "", extras=list(provides_extra),
                              requires=list(requires))
    members = {
        f"{top}/PKG-INFO": pkg_info.encode(),
        f"{top}/pyproject.toml": (f"[build-system]\nrequires = {list(build_requires)!r}\n"
                                  'build-backend = "backend"\nbackend-path = ["."]\n').encode(),
        f"{top}/backend.py": backend.encode(),
    }
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"{top}.tar.gz"
    path.write_bytes(_targz(top, members))
    return path


def _targz(top: str, members: dict[str, bytes]) -> bytes:
    """A gzipped tar of ``members`` under directory ``top``, with fixed headers."""
    raw = io.BytesIO()
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as compressed,
        tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as archive,
    ):
        archive.addfile(_tar_info(top, 0, tarfile.DIRTYPE, 0o755))
        for member in sorted(members):
            data = members[member]
            archive.addfile(_tar_info(member, len(data), tarfile.REGTYPE, 0o644), io.BytesIO(data))
    return raw.getvalue()


def _tar_info(name: str, size: int, kind: bytes, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.type, info.mode, info.mtime = size, kind, mode, 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info
