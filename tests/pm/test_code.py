"""pm's own code as a cache key (pm.base.codekey): the shortcut, reusable resolutions and page digests are
keyed on a digest of pm's files, so an edited pm never answers from the old code's records, while
two installs of the same code share them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pm.base import codekey as _code
from pm.testing import NO_TOOL_FILES, LocalIndex, add_plugin, make_home
from pm.testing.index import PRESETS

PM = _code.PACKAGE


def copy_of_pm(into: Path) -> Path:
    """A copy of the pm package (no bytecode) under ``into``: ``into`` goes first on sys.path."""
    shutil.copytree(PM, into / "pm", ignore=shutil.ignore_patterns("__pycache__"))
    return into / "pm"


def test_the_digest_is_of_the_bytes_and_is_kept_under_the_files_signature(tmp_path: Path) -> None:
    copy = copy_of_pm(tmp_path / "a")
    other = copy_of_pm(tmp_path / "b")
    first = _code.digest(tmp_path / "cache", package=copy)
    assert first == _code.digest(tmp_path / "other-cache", package=other)  # same bytes, same key
    kept = list((tmp_path / "cache" / _code.FOLDER).iterdir())
    assert [p.read_text() for p in kept] == [first]

    _code._known.clear()
    kept[0].write_text("f" * 64)  # what the signature names is believed: no reading of the files
    assert _code.digest(tmp_path / "cache", package=copy) == "f" * 64


def test_an_edit_changes_the_digest_even_with_size_and_mtime_put_back(tmp_path: Path) -> None:
    copy = copy_of_pm(tmp_path / "a")
    before = _code.digest(tmp_path / "cache", package=copy)
    module = copy / "resolver" / "provider.py"
    st = module.stat()
    text = module.read_text()
    module.write_text(text.replace("def ", "def_", 1)[: len(text)])  # same size
    os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the old mtime: ctime still moved
    _code._known.clear()
    assert _code.digest(tmp_path / "cache", package=copy) != before


def test_a_bytecode_folder_is_not_code(tmp_path: Path) -> None:
    copy = copy_of_pm(tmp_path / "a")
    before = _code.digest(None, package=copy)
    (copy / "__pycache__").mkdir(exist_ok=True)
    (copy / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    _code._known.clear()
    assert _code.digest(None, package=copy) == before


def test_signatures_kept_are_bounded(tmp_path: Path) -> None:
    copy = copy_of_pm(tmp_path / "a")
    for n in range(_code.KEEP + 4):
        (copy / "data" / "edit.txt").write_text(str(n))
        _code._known.clear()
        _code.digest(tmp_path / "cache", package=copy)
    assert len(list((tmp_path / "cache" / _code.FOLDER).iterdir())) == _code.KEEP


def _resolve(copy_root: Path, home: Path, index: LocalIndex, env: dict[str, str]) -> dict[str, Any]:
    argv = [sys.executable, "-m", "pm", "resolve", "--home", str(home), "--index-url", index.url,
            "--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]
    done = subprocess.run(argv, env=env | {"PYTHONPATH": str(copy_root)}, cwd=home.parent, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    receipt: dict[str, Any] = json.loads((home / "pm" / "receipts" / "latest.json").read_text())
    return receipt


def test_an_edited_pm_answers_afresh_where_the_old_one_was_remembered(
        tmp_path: Path, make_index: Callable[..., LocalIndex]) -> None:
    """The same home, command and fresh pages: the unedited copy answers from its shortcut the
    second time; after one module of the copy is edited (pm.__version__ unchanged) the answer is
    neither the shortcut nor the stored resolution: the edited code resolved it."""
    index = make_index({"alpha": {"1.0": [], "2.0": []}}, **PRESETS["pypi"])
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["maps"]}})
    add_plugin(home / "plugins", "maps", style="manifest", dependencies=["alpha"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "UV_", "PIP_", "PYTHON"))}
    env |= {"HERMES_PM_CACHE_DIR": str(tmp_path / "cache"), "HERMES_BUNDLED_PLUGINS": str(tmp_path / "none"),
            "PYTHONDONTWRITEBYTECODE": "1", **NO_TOOL_FILES}
    copy = copy_of_pm(tmp_path / "code")

    first = _resolve(tmp_path / "code", home, index, env)
    assert not first.get("reused_resolution")
    again = _resolve(tmp_path / "code", home, index, env)
    assert again.get("shortcut") and again.get("reused_resolution")

    resolver = copy / "resolver" / "provider.py"
    resolver.write_text(resolver.read_text() + "\n# an edit: the version stays 0.1.0\n")
    edited = _resolve(tmp_path / "code", home, index, env)
    assert not edited.get("shortcut") and not edited.get("reused_resolution")
    assert [p["version"] for p in edited["resolution"]["packages"]] == ["2.0"]
    assert _resolve(tmp_path / "code", home, index, env).get("shortcut")  # the edited code remembers its own
