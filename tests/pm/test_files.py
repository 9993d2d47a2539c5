"""pm.base.files, pm.base.yamlfile, pm.base.tomlwriter: the small readers and writers under every pm file format."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pm.base import files as _files
from pm.base import tomlwriter as _toml
from pm.base import yamlfile as _yaml
from pm.base.errors import InputError


def test_read_text_reads_once_with_its_digest(tmp_path: Path) -> None:
    path = tmp_path / "plugin.yaml"
    path.write_bytes(b"name: a\n")
    read = _files.read_text(path)
    assert (read.text, read.data, read.sha256) == ("name: a\n", b"name: a\n", hashlib.sha256(b"name: a\n").hexdigest())


@pytest.mark.parametrize(("data", "limit", "message"), [
    (b"x" * 11, 10, "is 11 bytes; the limit is 10 bytes"),
    (b"\xffname", 100, "is not valid UTF-8 (byte 0: b'\\xff')"),
])
def test_read_text_refuses_with_the_file_named(tmp_path: Path, data: bytes, limit: int, message: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(data)
    with pytest.raises(InputError) as caught:
        _files.read_text(path, limit=limit)
    assert str(caught.value) == f"{path}: {message}"


def test_read_text_refuses_a_symlink_escaping_its_folder(tmp_path: Path) -> None:
    (tmp_path / "outside.yaml").write_text("secret: 1\n")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "plugin.yaml").symlink_to(tmp_path / "outside.yaml")
    with pytest.raises(InputError) as caught:
        _files.read_text(tmp_path / "root" / "plugin.yaml", within=tmp_path / "root")
    assert str(caught.value).endswith(f": is a symlink that escapes {tmp_path / 'root'}")


def test_yaml_errors_name_line_and_column() -> None:
    with pytest.raises(_yaml.Error) as caught:
        _yaml.load("plugins: [a,\n")
    assert _yaml.describe(caught.value).startswith("end of the file, after line 1, in 'plugins': ")  # not "line 2"
    assert _yaml.load("a: [1, 2]\n") == {"a": [1, 2]}


def test_toml_writes_tables_arrays_and_escapes() -> None:
    text = _toml.dumps({"lock-version": "1.0", "packages": [{"name": "a", "tool": {"x": 1}}],
                        "tool": {"hermes-pm": {"note": "tab\there\x01"}}})
    assert text == ('lock-version = "1.0"\n\n[[packages]]\nname = "a"\n\n[packages.tool]\nx = 1\n\n'
                    '[tool.hermes-pm]\nnote = "tab\\there\\u0001"\n')
