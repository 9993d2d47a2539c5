"""Source distributions that build with no download: an in-tree PEP 517 backend.

``backend_sdist`` writes an sdist whose ``pyproject.toml`` names a standard-library-only backend
inside the archive (``backend-path = ["."]``), so ``uv build`` runs offline. Its PKG-INFO is
Metadata-Version 2.1, so its dependencies are only known by building it (dynamic metadata).
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from packaging.utils import canonicalize_name

_BACKEND = '''"""A PEP 517 backend needing only the standard library (hermes-pm tests)."""
import base64, hashlib, os, zipfile

NAME, VERSION, REQUIRES, FAIL = {name!r}, {version!r}, {requires!r}, {fail!r}


def _hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if FAIL:
        raise SystemExit(FAIL)
    escaped = NAME.replace("-", "_")
    info = escaped + "-" + VERSION + ".dist-info"
    metadata = "Metadata-Version: 2.1\\nName: " + NAME + "\\nVersion: " + VERSION + "\\n"
    metadata += "".join("Requires-Dist: " + r + "\\n" for r in REQUIRES)
    files = {{escaped + "/__init__.py": b"", info + "/METADATA": metadata.encode(),
             info + "/WHEEL": b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}}
    record = "".join(p + "," + _hash(d) + "," + str(len(d)) + "\\n" for p, d in files.items())
    files[info + "/RECORD"] = (record + info + "/RECORD,,\\n").encode()
    filename = escaped + "-" + VERSION + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
    return filename
'''


def backend_sdist(dest: Path, name: str, version: str, requires: tuple[str, ...] = (), fail: str = "",
                  build_requires: tuple[str, ...] = ()) -> Path:
    """``{name}-{version}.tar.gz`` with dynamic metadata and an in-tree backend (``fail``: its error;
    ``build_requires``: its ``build-system.requires``, which uv installs before building)."""
    escaped = canonicalize_name(name).replace("-", "_")
    top = f"{escaped}-{version}"
    members = {
        f"{top}/PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{top}/pyproject.toml": (f"[build-system]\nrequires = {list(build_requires)!r}\n"
                                  'build-backend = "backend"\nbackend-path = ["."]\n').encode(),
        f"{top}/backend.py": _BACKEND.format(name=name, version=version, requires=list(requires), fail=fail).encode(),
    }
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"{top}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for member, data in members.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path
