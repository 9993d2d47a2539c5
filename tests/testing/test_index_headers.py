"""LocalIndex's header knobs and presets (real indexes' Cache-Control, validators, PEP 658) and
its count of the body bytes it sent, which the benchmarks report."""

from __future__ import annotations

import http.client
import json
import os
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

from pm.testing import PRESETS, LocalIndex, Transfer, build_packages, build_wheel

JSON = "application/vnd.pypi.simple.v1+json"
WHEEL = "demo_pkg-1.0-py3-none-any.whl"


def _get(url: str, headers: dict[str, str] | None = None,
         method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        connection.request(method, parts.path, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def _files(tmp_path: Path) -> list[Path]:
    return [record.path for record in build_packages(tmp_path, {"demo-pkg": {"1.0": None}})]


def test_default_headers_are_unchanged(tmp_path: Path) -> None:
    with LocalIndex(_files(tmp_path)) as index:
        _, headers, _ = _get(index.project_url("demo-pkg"), {"Accept": JSON})
        _, file_headers, _ = _get(f"{index.root}/files/{WHEEL}")
    assert (headers["Cache-Control"], headers["ETag"].startswith('"')) == (
        "max-age=0, must-revalidate", True)
    assert "Cache-Control" not in file_headers


def test_pypi_preset(tmp_path: Path) -> None:
    with LocalIndex(_files(tmp_path), **PRESETS["pypi"]) as index:
        status, headers, body = _get(index.project_url("demo-pkg"), {"Accept": JSON})
        again = _get(index.project_url("demo-pkg"), {"Accept": JSON,
                                                     "If-None-Match": headers["ETag"]})
        metadata = _get(f"{index.root}/files/{WHEEL}.metadata")
    assert (status, headers["Cache-Control"]) == (200, "max-age=600, public")
    assert json.loads(body)["files"][0]["core-metadata"] is not False
    assert (again[0], again[2], again[1]["ETag"]) == (304, b"", headers["ETag"])
    assert (metadata[0], metadata[1]["Cache-Control"]) == (
        200, "max-age=365000000, immutable, public")


def test_mirror_preset_sends_no_validators_and_ignores_if_none_match(tmp_path: Path) -> None:
    with LocalIndex(_files(tmp_path), **PRESETS["mirror"]) as index:
        status, headers, body = _get(index.project_url("demo-pkg"), {"Accept": JSON})
        again = _get(index.project_url("demo-pkg"), {"Accept": JSON, "If-None-Match": "*"})
        metadata_status = _get(f"{index.root}/files/{WHEEL}.metadata")[0]
    assert status == again[0] == 200
    assert again[2] == body
    assert not {"ETag", "Cache-Control"} & set(headers)
    assert json.loads(body)["files"][0]["core-metadata"] is False
    assert metadata_status == 404


def test_bytes_sent_by_kind(tmp_path: Path) -> None:
    with LocalIndex(_files(tmp_path)) as index:
        page = _get(index.project_url("demo-pkg"), {"Accept": JSON})
        metadata = _get(f"{index.root}/files/{WHEEL}.metadata")[2]
        wheel = _get(f"{index.root}/files/{WHEEL}")[2]
        _get(f"{index.root}/files/{WHEEL}", method="HEAD")
        _get(index.project_url("demo-pkg"), {"Accept": JSON, "If-None-Match": page[1]["ETag"]})
        assert index.bytes_sent() == {"pages": len(page[2]), "metadata": len(metadata),
                                      "files": len(wheel), "other": 0}
        assert {  # in the order the answers completed: threads may finish out of order
            Transfer("HEAD", f"/files/{WHEEL}", 200, 0),
            Transfer("GET", "/simple/demo-pkg/", 304, 0),
        } < set(index.transfers)
        index.reset_log()
        assert index.bytes_sent() == dict.fromkeys(("pages", "metadata", "files", "other"), 0)


def test_hard_links_share_facts_and_static_tree_is_read_once(tmp_path: Path) -> None:
    real = build_wheel(tmp_path, "demo-pkg", "1.0", tag="cp311-cp311-manylinux_2_17_x86_64")
    alias = tmp_path / "demo_pkg-1.0-cp311-cp311-win_amd64.whl"
    os.link(real, alias)
    with LocalIndex([tmp_path], rescan=False) as index:
        served = index.served_files()
        build_wheel(tmp_path, "late", "1.0")
        assert sorted(index.served_files()) == sorted(served) == sorted([real.name, alias.name])
        assert served[alias.name].sha256 == served[real.name].sha256
        assert served[alias.name].record.filename == alias.name
        assert _get(index.url + "late/")[0] == 404
        index.add_files([tmp_path / "late-1.0-py3-none-any.whl"])
        assert _get(index.url + "late/")[0] == 200


def test_wheel_padding_is_stored_and_recorded(tmp_path: Path) -> None:
    path = build_wheel(tmp_path, "big", "1.0", extra_files={"big/_native.bin": b"\1" * 100_000})
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("big/_native.bin")
        record = archive.read("big-1.0.dist-info/RECORD").decode()
    assert (info.compress_type, info.file_size) == (zipfile.ZIP_STORED, 100_000)
    assert "big/_native.bin,sha256=" in record
    assert path.stat().st_size > 100_000
