"""Wheels and sdists from pm.testing.wheels are valid, deterministic and installable by uv."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import zipfile
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import pytest

from pm.base.tomlfile import load as load_toml
from pm.testing import IndexFile, build_packages, build_sdist, build_wheel, metadata_bytes


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _headers(data: bytes) -> list[tuple[str, str]]:
    return list(BytesParser().parsebytes(data).items())


def test_wheel_filename_is_escaped_and_version_normalized(tmp_path: Path) -> None:
    path = build_wheel(tmp_path, "My.Pkg-Name", "1.0.0-RC1")
    assert path.name == "my_pkg_name-1.0.0rc1-py3-none-any.whl"
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == [
            "my_pkg_name/__init__.py",
            "my_pkg_name-1.0.0rc1.dist-info/METADATA",
            "my_pkg_name-1.0.0rc1.dist-info/WHEEL",
            "my_pkg_name-1.0.0rc1.dist-info/RECORD",
        ]
        assert archive.read("my_pkg_name/__init__.py") == b'__version__ = "1.0.0rc1"\n'


def test_wheel_metadata_wheel_file_and_record(tmp_path: Path) -> None:
    path = build_wheel(
        tmp_path, "demo", "2.0", requires_dist=["six>=1", 'extra-dep; extra == "x"'],
        requires_python=">=3.8", provides_extra=["x"], tag="py2.py3-none-any", module="demo_mod",
    )
    assert path.name == "demo-2.0-py2.py3-none-any.whl"
    with zipfile.ZipFile(path) as archive:
        metadata = archive.read("demo-2.0.dist-info/METADATA")
        wheel = archive.read("demo-2.0.dist-info/WHEEL")
        record = archive.read("demo-2.0.dist-info/RECORD").decode()
        rows = list(csv.reader(io.StringIO(record)))
        for name, digest, size in rows[:-1]:
            data = archive.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert (digest, int(size)) == ("sha256=" + expected.decode(), len(data))
        assert "demo_mod/__init__.py" in archive.namelist()
    assert rows[-1] == ["demo-2.0.dist-info/RECORD", "", ""]
    assert {row[0] for row in rows} == set(zipfile.ZipFile(path).namelist())
    assert _headers(metadata) == [
        ("Metadata-Version", "2.1"), ("Name", "demo"), ("Version", "2.0"),
        ("Requires-Python", ">=3.8"), ("Provides-Extra", "x"),
        ("Requires-Dist", "six>=1"), ("Requires-Dist", 'extra-dep; extra == "x"'),
    ]
    assert metadata_bytes(path) == metadata
    assert _headers(wheel) == [
        ("Wheel-Version", "1.0"), ("Generator", "hermes-pm-testing (1.0)"),
        ("Root-Is-Purelib", "true"), ("Tag", "py2-none-any"), ("Tag", "py3-none-any"),
    ]


def test_platform_wheel_is_not_purelib(tmp_path: Path) -> None:
    path = build_wheel(tmp_path, "native", "1", tag="cp311-cp311-manylinux_2_17_x86_64")
    assert path.name == "native-1-cp311-cp311-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(path) as archive:
        assert b"Root-Is-Purelib: false\n" in archive.read("native-1.dist-info/WHEEL")


def test_sdist_contents(tmp_path: Path) -> None:
    path = build_sdist(tmp_path, "Some_Pkg", "0.3", requires_dist=["a<2"], requires_python=">=3.9")
    assert path.name == "some_pkg-0.3.tar.gz"
    with tarfile.open(path) as archive:
        names = archive.getnames()
        member = archive.extractfile("some_pkg-0.3/pyproject.toml")
        assert member is not None
        pyproject = load_toml(Path(member.name), member.read().decode())
        assert all(m.mtime == 0 and m.uid == 0 for m in archive.getmembers())
    assert names == ["some_pkg-0.3", "some_pkg-0.3/some_pkg", "some_pkg-0.3/PKG-INFO",
                     "some_pkg-0.3/pyproject.toml", "some_pkg-0.3/some_pkg/__init__.py"]
    assert pyproject["build-system"]["build-backend"] == "setuptools.build_meta"
    assert pyproject["project"] == {"name": "Some_Pkg", "version": "0.3",
                                    "dependencies": ["a<2"], "requires-python": ">=3.9"}
    assert _headers(metadata_bytes(path))[3:] == [("Requires-Python", ">=3.9"),
                                                   ("Requires-Dist", "a<2")]


SPEC: dict[str, dict[str, Any]] = {
    "app": {
        "1.0": ["lib>=1"],
        "2.0": {"requires": ["lib>=2"], "extras": {"fast": ["speedup; python_version >= '3'"]},
                "requires_python": ">=3.8", "yanked": "broken", "upload_time": "2024-05-01"},
    },
    "lib": {"1.0": None, "2.0": {"tags": ["py3-none-any", "py2.py3-none-any"], "sdist": True}},
    "speedup": {"0.1": {"sdist_only": True}},
}


def test_builds_are_byte_identical_across_runs(tmp_path: Path) -> None:
    first = build_packages(tmp_path / "one", SPEC)
    second = build_packages(tmp_path / "two", SPEC)
    assert [f.filename for f in first] == [f.filename for f in second]
    assert [_sha256(f.path) for f in first] == [_sha256(f.path) for f in second]


def test_build_packages_records_and_extras(tmp_path: Path) -> None:
    files = build_packages(tmp_path, SPEC)
    assert [(f.filename, f.yanked, f.upload_time) for f in files] == [
        ("app-1.0-py3-none-any.whl", False, None),
        ("app-2.0-py3-none-any.whl", "broken", "2024-05-01"),
        ("lib-1.0-py3-none-any.whl", False, None),
        ("lib-2.0-py3-none-any.whl", False, None),
        ("lib-2.0-py2.py3-none-any.whl", False, None),
        ("lib-2.0.tar.gz", False, None),
        ("speedup-0.1.tar.gz", False, None),
    ]
    assert files[0] == IndexFile("app-1.0-py3-none-any.whl", tmp_path / "app-1.0-py3-none-any.whl")
    assert _headers(metadata_bytes(files[1].path))[3:] == [
        ("Requires-Python", ">=3.8"), ("Provides-Extra", "fast"), ("Requires-Dist", "lib>=2"),
        ("Requires-Dist", 'speedup; (python_version >= "3") and extra == "fast"'),
    ]


def test_build_packages_rejects_unknown_keys(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^app 1: unknown keys \['requirs'\]$"):
        build_packages(tmp_path, {"app": {"1": {"requirs": ["x"]}}})


def _venv(tmp_path: Path, uv_bin: str, uv_env: dict[str, str]) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([uv_bin, "venv", "--quiet", "--python", sys.executable, str(venv)],
                   env=uv_env, check=True, capture_output=True)
    return venv / "bin" / "python"


def _installed(python: Path, *names: str) -> Any:
    code = (
        "import importlib, importlib.metadata as m, json, sys\n"
        "out = {}\n"
        "for n in sys.argv[1:]:\n"
        "    out[n] = [m.version(n), m.requires(n) or [], importlib.import_module(n).__version__]\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([str(python), "-c", code, *names], check=True, capture_output=True,
                          text=True)
    return json.loads(done.stdout)


def _uv_install(uv_bin: str, env: dict[str, str], python: Path, links: Path, *reqs: str) -> None:
    argv = [uv_bin, "pip", "install", "--python", str(python), "--no-index",
            "--find-links", str(links), *reqs]
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_uv_installs_built_wheel(tmp_path: Path, uv_bin: str, uv_env: dict[str, str]) -> None:
    links = tmp_path / "links"
    build_packages(links, {"Hello.World": {"1.2": ["dep-one>=0.5"]}, "dep-one": {"0.5": None}})
    python = _venv(tmp_path, uv_bin, uv_env)
    _uv_install(uv_bin, uv_env, python, links, "hello-world==1.2")
    assert _installed(python, "hello_world", "dep_one") == {
        "hello_world": ["1.2", ["dep-one>=0.5"], "1.2"],
        "dep_one": ["0.5", [], "0.5"],
    }


def test_uv_installs_extra(tmp_path: Path, uv_bin: str, uv_env: dict[str, str]) -> None:
    links = tmp_path / "links"
    build_packages(links, {"app": {"1.0": {"extras": {"fast": ["speedup==0.1"]}}},
                           "speedup": {"0.1": None, "0.2": None}})
    python = _venv(tmp_path, uv_bin, uv_env)
    _uv_install(uv_bin, uv_env, python, links, "app[fast]==1.0")
    assert _installed(python, "app", "speedup") == {
        "app": ["1.0", ['speedup==0.1; extra == "fast"'], "1.0"],
        "speedup": ["0.1", [], "0.1"],
    }
