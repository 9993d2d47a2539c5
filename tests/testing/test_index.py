"""LocalIndex speaks PEP 503/691/658 over real HTTP, to a stdlib client and to real uv."""

from __future__ import annotations

import hashlib
import http.client
import json
import subprocess
import sys
import time
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from pm.testing import LocalIndex, build_wheel, metadata_bytes
from pm.testing._handler import _Server
from pm.testing._pages import negotiate, path_kind

JSON = "application/vnd.pypi.simple.v1+json"
SPEC = {
    "demo-pkg": {
        "1.0": {"requires_python": ">=3.8", "upload_time": "2024-01-02T03:04:05Z"},
        "1.1": {"yanked": "broken <build>", "sdist": True},
    },
}
MakeIndex = Callable[..., LocalIndex]


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.anchors: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.anchors.append({key: value or "" for key, value in attrs})


def _get(
    url: str, headers: dict[str, str] | None = None, method: str = "GET"
) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        connection.request(method, parts.path, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def _anchors(body: bytes) -> list[dict[str, str]]:
    parser = _Anchors()
    parser.feed(body.decode())
    return parser.anchors


def _file_sha(index: LocalIndex, filename: str) -> str:
    return hashlib.sha256(_get(f"{index.root}/files/{filename}")[2]).hexdigest()


def test_json_project_page(make_index: MakeIndex) -> None:
    index = make_index(SPEC)
    status, headers, body = _get(index.project_url("demo-pkg"), {"Accept": JSON})
    assert (status, headers["Content-Type"]) == (200, JSON)
    page = json.loads(body)
    assert (page["meta"], page["name"], page["versions"]) == ({"api-version": "1.1"},
                                                              "demo-pkg", ["1.0", "1.1"])
    by_name = {f["filename"]: f for f in page["files"]}
    assert sorted(by_name) == ["demo_pkg-1.0-py3-none-any.whl", "demo_pkg-1.1-py3-none-any.whl",
                               "demo_pkg-1.1.tar.gz"]
    for entry in by_name.values():
        content = _get(entry["url"])[2]
        assert entry["hashes"] == {"sha256": hashlib.sha256(content).hexdigest()}
        assert entry["size"] == len(content)
    wheel = by_name["demo_pkg-1.0-py3-none-any.whl"]
    metadata = _get(wheel["url"] + ".metadata")[2]
    assert metadata == metadata_bytes(index.served_files()[wheel["filename"]].record.path)
    assert wheel["core-metadata"] == wheel["dist-info-metadata"] == {
        "sha256": hashlib.sha256(metadata).hexdigest()}
    assert (wheel["requires-python"], wheel["yanked"], wheel["upload-time"]) == (
        ">=3.8", False, "2024-01-02T03:04:05.000000Z")
    sdist = by_name["demo_pkg-1.1.tar.gz"]
    assert (sdist["yanked"], sdist["core-metadata"], "requires-python" in sdist) == (
        "broken <build>", False, False)


def test_html_project_page(make_index: MakeIndex) -> None:
    index = make_index(SPEC)
    status, headers, body = _get(index.project_url("demo-pkg"), {"Accept": "text/html"})
    assert (status, headers["Content-Type"]) == (200, "text/html; charset=utf-8")
    assert b'data-requires-python="&gt;=3.8"' in body
    anchors = {a["href"].rsplit("/", 1)[1].split("#")[0]: a for a in _anchors(body)}
    for filename, anchor in anchors.items():
        assert anchor["href"].endswith(f"#sha256={_file_sha(index, filename)}")
    wheel = anchors["demo_pkg-1.0-py3-none-any.whl"]
    metadata = _get(f"{index.root}/files/demo_pkg-1.0-py3-none-any.whl.metadata")[2]
    expected = "sha256=" + hashlib.sha256(metadata).hexdigest()
    assert (wheel["data-requires-python"], wheel["data-core-metadata"],
            wheel["data-dist-info-metadata"], "data-yanked" in wheel) == (
        ">=3.8", expected, expected, False)
    sdist = anchors["demo_pkg-1.1.tar.gz"]
    assert (sdist["data-yanked"], "data-core-metadata" in sdist) == ("broken <build>", False)


def test_project_list_in_both_formats(make_index: MakeIndex) -> None:
    index = make_index({**SPEC, "Other.Thing": {"2": None}})
    assert json.loads(_get(index.url, {"Accept": JSON})[2])["projects"] == [
        {"name": "demo-pkg"}, {"name": "other-thing"}]
    assert [a["href"] for a in _anchors(_get(index.url)[2])] == [
        "/simple/demo-pkg/", "/simple/other-thing/"]


@pytest.mark.parametrize(("accept", "expected"), [
    (None, "html"),
    (JSON, "json"),
    (f"{JSON};q=0.1, text/html", "html"),
    (f"text/html;q=0.01, application/vnd.pypi.simple.v1+html;q=0.2, {JSON}", "json"),
    ("application/vnd.pypi.simple.latest+json", "json"),
    (f"{JSON};q=0, text/html;q=0.5", "html"),
    ("application/xml", "html"),
])
def test_negotiation(accept: str | None, expected: str) -> None:
    assert negotiate(accept)[0] == expected
    assert negotiate(accept, allow_json=False)[0] == "html"


def test_html_only_mode_and_no_metadata_files(make_index: MakeIndex) -> None:
    index = make_index(SPEC, json=False, metadata_files=False)
    status, headers, body = _get(index.project_url("demo-pkg"), {"Accept": JSON})
    assert (status, headers["Content-Type"]) == (200, "text/html; charset=utf-8")
    assert all("data-core-metadata" not in a for a in _anchors(body))
    assert _get(f"{index.root}/files/demo_pkg-1.0-py3-none-any.whl.metadata")[0] == 404


def test_redirects_and_not_found(make_index: MakeIndex) -> None:
    index = make_index(SPEC)
    for path in ("/simple/Demo.Pkg/", "/simple/demo_pkg", "/simple/demo-pkg"):
        status, headers, _ = _get(index.root + path)
        assert (status, headers["Location"]) == (301, "/simple/demo-pkg/")
    assert _get(index.url + "nothing-here/")[0] == 404
    assert _get(index.root + "/files/nothing-1.0-py3-none-any.whl")[0] == 404
    assert _get(index.root + "/elsewhere")[0] == 404


def test_etag_revalidation(make_index: MakeIndex, tmp_path: Path) -> None:
    index = make_index(SPEC)
    status, headers, _ = _get(index.project_url("demo-pkg"), {"Accept": JSON})
    assert (status, headers["Cache-Control"]) == (200, "max-age=0, must-revalidate")
    etag = headers["ETag"]
    assert _get(index.project_url("demo-pkg"), {"Accept": JSON, "If-None-Match": etag})[:1] == (
        304,)
    assert _get(index.project_url("demo-pkg"), {"If-None-Match": etag})[0] == 200  # HTML differs
    index.add_files([build_wheel(tmp_path / "late", "demo-pkg", "3.0")])
    status, headers, body = _get(index.project_url("demo-pkg"),
                                 {"Accept": JSON, "If-None-Match": etag})
    assert (status, json.loads(body)["versions"]) == (200, ["1.0", "1.1", "3.0"])
    assert headers["ETag"] != etag


def test_served_directory_is_rescanned(tmp_path: Path) -> None:
    build_wheel(tmp_path / "dir", "first", "1.0")
    with LocalIndex([tmp_path / "dir"]) as index:
        assert _get(index.url + "second/")[0] == 404
        build_wheel(tmp_path / "dir", "second", "1.0")
        assert _get(index.url + "second/")[0] == 200
    with pytest.raises(RuntimeError, match="not started"):
        _ = index.url


def test_failure_knobs_and_request_log(make_index: MakeIndex) -> None:
    index = make_index({**SPEC, "fine": {"1": None}}, fail_projects={"Demo_Pkg": 503},
                       corrupt_hashes={"fine-1-py3-none-any.whl"})
    assert _get(index.project_url("demo-pkg"))[0] == 503
    page = json.loads(_get(index.project_url("fine"), {"Accept": JSON})[2])
    assert page["files"][0]["hashes"]["sha256"] != _file_sha(index, "fine-1-py3-none-any.whl")
    status, headers, body = _get(index.project_url("fine"), method="HEAD")
    assert (status, body, int(headers["Content-Length"]) > 0) == (200, b"", True)
    assert index.requests == [
        ("GET", "/simple/demo-pkg/"), ("GET", "/simple/fine/"),
        ("GET", "/files/fine-1-py3-none-any.whl"), ("HEAD", "/simple/fine/"),
    ]
    index.reset_log()
    index.delay = 0.2
    started = time.monotonic()
    _get(index.url)
    assert time.monotonic() - started >= 0.2
    assert index.requests == [("GET", "/simple/")]


@pytest.mark.parametrize(("asked", "status", "content_range", "body"), [
    ("bytes=-4", 206, "bytes 6-9/10", b"6789"),
    ("bytes=2-4", 206, "bytes 2-4/10", b"234"),
    ("bytes=7-", 206, "bytes 7-9/10", b"789"),
    ("bytes=-50", 206, "bytes 0-9/10", b"0123456789"),  # a suffix longer than the file: all of it
    ("bytes=8-99", 206, "bytes 8-9/10", b"89"),
    ("bytes=10-", 416, "bytes */10", b""),
    ("bytes=-0", 416, "bytes */10", b""),
    ("bytes=0-1,4-5", 200, None, b"0123456789"),  # several ranges: ignored, whole file
    ("lines=1-2", 200, None, b"0123456789"),
    (None, 200, None, b"0123456789"),
])
def test_range_answers(tmp_path: Path, asked: str | None, status: int, content_range: str | None,
                       body: bytes) -> None:
    from pm.testing.ranges import answer_range

    found_status, found_body, headers = answer_range(b"0123456789", asked)
    assert (found_status, headers.get("Content-Range"), found_body) == (status, content_range, body)
    assert headers["Accept-Ranges"] == "bytes"


def test_ranges_over_http_and_the_no_ranges_knob(make_index: MakeIndex) -> None:
    index = make_index(SPEC)
    url = f"{index.root}/files/demo_pkg-1.0-py3-none-any.whl"
    whole = _get(url)[2]
    status, headers, body = _get(url, {"Range": "bytes=-100"})
    assert (status, body) == (206, whole[-100:])
    assert headers["Content-Range"] == f"bytes {len(whole) - 100}-{len(whole) - 1}/{len(whole)}"
    index.ranges = False
    status, headers, body = _get(url, {"Range": "bytes=-100"})
    assert (status, body, "Accept-Ranges" in headers) == (200, whole, False)
    path = "/files/demo_pkg-1.0-py3-none-any.whl"
    deadline = time.monotonic() + 5
    while len(index.transfers) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    # Logged when each answer is written, so in any order (each _get has its own connection).
    assert sorted((t.path, t.method, t.range or "", t.status, t.body_bytes) for t in index.transfers) == [
        (path, "GET", "", 200, len(whole)), (path, "GET", "bytes=-100", 200, len(whole)),
        (path, "GET", "bytes=-100", 206, 100)]


DIAMOND = {
    "top": {"1.0": ["left", "right"]},
    "left": {"1.0": ["base>=1.0"], "2.0": ["base>=2.0"]},
    "right": {"1.0": ["base<2.0"]},
    "base": {"1.0": None, "1.5": None, "2.0": None},
}
DIAMOND_PINS = ["base==1.5", "left==1.0", "right==1.0", "top==1.0"]


def _compile(index: LocalIndex, uv_bin: str, env: dict[str, str], *reqs: str) -> list[str]:
    argv = [uv_bin, "pip", "compile", "-", "--index-url", index.url, "--python", sys.executable,
            "--no-header", "--no-annotate", "--quiet"]
    done = subprocess.run(argv, input="\n".join(reqs), env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("knobs", [{}, {"json": False}, {"json": False, "metadata_files": False}])
def test_uv_resolves_diamond(make_index: MakeIndex, uv_bin: str, uv_env: dict[str, str],
                             knobs: dict[str, bool]) -> None:
    index = make_index(DIAMOND, **knobs)
    assert _compile(index, uv_bin, uv_env, "top") == DIAMOND_PINS
    fetched = [path for _, path in index.requests if path.startswith("/files/")]
    if knobs.get("metadata_files", True):
        assert fetched and all(path.endswith(".whl.metadata") for path in fetched)
    else:
        assert fetched and not any(path.endswith(".metadata") for path in fetched)


@pytest.mark.parametrize("json_pages", [True, False])
def test_uv_skips_yanked_and_incompatible_python(make_index: MakeIndex, uv_bin: str,
                                                 uv_env: dict[str, str], json_pages: bool) -> None:
    spec = {**DIAMOND, "base": {"1.0": None, "1.5": {"yanked": "bad build"},
                                "1.8": {"requires_python": ">=99"}, "2.0": None}}
    index = make_index(spec, json=json_pages)
    assert _compile(index, uv_bin, uv_env, "top") == ["base==1.0", *DIAMOND_PINS[1:]]
    assert _compile(index, uv_bin, uv_env, "base==1.5") == ["base==1.5"]  # pinned: allowed


def test_the_server_queues_many_connections_and_paths_are_told_apart() -> None:
    """Resolvers open many connections at once; a backlog of 5 would drop SYNs (a one-second retransmit)."""
    assert _Server.request_queue_size >= 128
    assert [path_kind(p) for p in ("/simple/a/", "/files/a.whl", "/files/a.whl.metadata", "/links/")] == [
        "pages", "files", "metadata", "other"]
