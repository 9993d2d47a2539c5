"""file:// answers as a static web server gives them, and a sink that hashes what streams by."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from pm.index.base import IndexFailure
from pm.index.responses import BodyTooLarge, HashingSink, get_file


def test_a_folder_is_its_index_html_and_a_missing_file_is_a_404(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<a href='x'>x</a>")
    answer = get_file(tmp_path.as_uri())
    assert (answer.status, answer.body, answer.headers["content-type"]) == (200, b"<a href='x'>x</a>", "text/html")
    assert get_file((tmp_path / "nope").as_uri(), ok=(200, 404)).status == 404
    with pytest.raises(IndexFailure, match="HTTP 404 Not Found"):
        get_file((tmp_path / "nope").as_uri())


def test_a_file_over_the_limit_is_not_read_and_a_sink_gets_the_bytes_hashed(tmp_path: Path) -> None:
    data = b"x" * 1000
    (tmp_path / "a.whl").write_bytes(data)
    with pytest.raises(BodyTooLarge) as caught:
        get_file((tmp_path / "a.whl").as_uri(), limit=10)
    assert (caught.value.size, caught.value.limit) == (1000, 10)
    out = io.BytesIO()
    sink = HashingSink(out)
    answer = get_file((tmp_path / "a.whl").as_uri(), sink=sink)
    assert answer.body == b"" and out.getvalue() == data
    assert (sink.size, sink.hash.hexdigest()) == (1000, hashlib.sha256(data).hexdigest())
