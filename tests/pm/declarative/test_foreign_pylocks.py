"""`hermes pm sync --from` any valid PEP 751 lock (issue 14, "exports that round-trip"): locks the
real uv writes from the loopback index (``uv pip compile --format pylock.toml`` and ``uv export``
of a project with ``environments`` and markers) build a real generation; a lock with packages pm
cannot install, or an invalid one, is refused naming the file and the key, and nothing is built.
:mod:`packaging.pylock` validates and selects; pm checks what it chose."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pm.base.errors import InputError
from pm.base.uv import Uv
from pm.env import generations
from pm.records.pylock import read_lock
from pm.testing import LocalIndex

from .conftest import PINS
from .helpers import installed, latest, pm

#: The home's union, as requirements uv can compile (core: alpha<2; notes: beta>=1; search: gamma[fast]==1.0).
UNION = "alpha<2\nbeta>=1\ngamma[fast]==1.0\n"


@pytest.fixture
def uv(tmp_path: Path) -> Uv:
    return Uv(tmp_path / "uv-cache")


def _compiled(uv: Uv, index: LocalIndex, folder: Path) -> Path:
    """The union locked by ``uv pip compile --format pylock.toml`` against the loopback index."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "requirements.in").write_text(UNION)
    lock = folder / "pylock.toml"
    uv.run("pip", "compile", "--format", "pylock.toml", "--index-url", index.url, "--python", sys.executable,
           str(folder / "requirements.in"), "-o", str(lock))
    return lock


def _exported(uv: Uv, index: LocalIndex, folder: Path, dependencies: list[str], environments: list[str]) -> Path:
    """A project locked by ``uv lock`` and written out by ``uv export --format pylock.toml``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(
        f'[project]\nname = "app"\nversion = "0.1"\nrequires-python = ">=3.11"\ndependencies = {dependencies!r}\n\n'
        f"[tool.uv]\npackage = false\nenvironments = {environments!r}\n")
    uv.run("lock", "--directory", str(folder), "--python", sys.executable, "--default-index", index.url)
    uv.run("export", "--directory", str(folder), "--format", "pylock.toml", "--no-emit-project",
           "--default-index", index.url, "-o", str(folder / "pylock.toml"))
    return folder / "pylock.toml"


def _appended(lock: Path, text: str) -> Path:
    changed = lock.with_name("changed") / "pylock.toml"
    changed.parent.mkdir()
    changed.write_text(lock.read_text() + text)
    return changed


def test_a_lock_uv_compiled_builds_the_same_packages(home: Path, index: LocalIndex, uv: Uv, capsys) -> None:
    lock = _compiled(uv, index, home.parent / "compiled")
    assert 'created-by = "uv"' in lock.read_text() and "[tool.hermes-pm]" not in lock.read_text()

    result = pm(capsys, home, "sync", "--from", str(lock), "--ignore-inputs", "--json")

    assert result.code == 0, result.err
    assert installed(generations.selected(home)) == PINS
    assert result.data["frozen"]["inputs"] == "unrecorded"
    assert {p["file"]["url"] for p in result.data["resolution"]["packages"]} == {
        f"{index.root}/files/{name}-{version}-py3-none-any.whl" for name, version in PINS.items()}


def test_a_uv_lock_that_breaks_core_and_the_plugins_is_refused_even_with_ignore_inputs(
        home: Path, index: LocalIndex, uv: Uv, capsys) -> None:
    folder = home.parent / "other"
    folder.mkdir()
    (folder / "requirements.in").write_text("alpha>=2\n")
    lock = folder / "pylock.toml"
    uv.run("pip", "compile", "--format", "pylock.toml", "--index-url", index.url, "--python", sys.executable,
           str(folder / "requirements.in"), "-o", str(lock))

    result = pm(capsys, home, "sync", "--from", str(lock), "--ignore-inputs", "--json")

    assert (result.code, result.data["failure"]["kind"]) == (1, "unmet-requirements")
    unmet = result.data["failure"]["unmet"]
    assert unmet[0] == f"core requires alpha<2, but {lock} pins alpha 2.0"
    assert [line.split(", but ")[1] for line in unmet[1:]] == [
        f"{lock} pins no beta", f"{lock} pins no gamma"]
    assert generations.all_ids(home) == []


def test_environments_and_markers_of_a_uv_export_select_what_applies_here(home: Path, index: LocalIndex, uv: Uv,
                                                                        capsys) -> None:
    here, elsewhere = sys.platform, "win32" if sys.platform != "win32" else "linux"
    lock = _exported(uv, index, home.parent / "app", [
        "alpha<2", f"delta ; sys_platform == '{elsewhere}'", f"epsilon ; sys_platform == '{here}'"],
        [f"sys_platform == '{here}'", f"sys_platform == '{elsewhere}'"])
    text = lock.read_text()
    assert "environments = [" in text and f"marker = \"sys_platform == '{elsewhere}'\"" in text
    # and a package of a dependency group that is not a default one (PEP 751 markers may name them)
    lock = _appended(lock, f"""
[[packages]]
name = "gamma"
version = "1.0"
marker = "'docs' in dependency_groups"
wheels = [{{ url = "{index.root}/files/gamma-1.0-py3-none-any.whl", hashes = {{ sha256 = "{'0' * 64}" }} }}]
""")

    result = pm(capsys, home, "sync", "--from", str(lock), "--ignore-inputs", "--allow-unmet", "--json")

    assert result.code == 0, result.err
    assert installed(generations.selected(home)) == {"alpha": "1.0", "epsilon": "1.0"}  # never delta nor gamma


def test_a_lock_for_other_environments_is_refused_naming_the_key(home: Path, index: LocalIndex, uv: Uv,
                                                                 capsys) -> None:
    elsewhere = "win32" if sys.platform != "win32" else "linux"
    lock = _exported(uv, index, home.parent / "app", ["alpha<2"], [f"sys_platform == '{elsewhere}'"])

    result = pm(capsys, home, "sync", "--from", str(lock), "--ignore-inputs")

    assert result.code == 1
    assert result.err.splitlines()[0].startswith(
        f"error: {lock}: environments: Provided environment does not satisfy any of the environments specified "
        f"in the lock file (this target: cpython {sys.version.split()[0]} on {sys.platform} ")
    assert generations.all_ids(home) == []


DIRECT = """
[[packages]]
name = "from-git"
vcs = { type = "git", url = "https://example.org/from-git.git", commit-id = "0123456789abcdef0123456789abcdef01234567" }

[[packages]]
name = "from-folder"
directory = { path = "../from-folder" }

[[packages]]
name = "from-archive"
version = "1.0"
archive = { url = "https://example.org/from-archive-1.0.zip", hashes = { sha256 = "%s" } }
""" % ("0" * 64)


def test_vcs_directory_and_archive_packages_are_refused_by_name_and_key(home: Path, index: LocalIndex, uv: Uv,
                                                                       capsys) -> None:
    lock = _appended(_compiled(uv, index, home.parent / "compiled"), DIRECT)
    count = len(read_lock(lock, lock.read_text()).packages)

    result = pm(capsys, home, "sync", "--from", str(lock), "--ignore-inputs")

    assert result.code == 1
    why = ("which pm does not install: pm installs wheels and sdists only, fetched by URL and checked by sha256 "
           "(lock this package from an index, or install it another way)")
    assert result.err.splitlines()[0] == "error: " + "; ".join([
        f"{lock}: packages[{count - 3}].vcs (from-git): locks a git checkout of https://example.org/from-git.git "
        f"at 0123456789abcdef0123456789abcdef01234567, {why}",
        f"{lock}: packages[{count - 2}].directory (from-folder): locks the local directory ../from-folder, {why}",
        f"{lock}: packages[{count - 1}].archive (from-archive): locks the archive "
        f"https://example.org/from-archive-1.0.zip, {why}"])
    assert latest(home)["failure"]["kind"] == "input" and generations.all_ids(home) == []


@pytest.mark.parametrize(("edit", "key", "message"), [
    (lambda t: t.replace("hashes = { sha256 =", "digests = { sha256 =", 1), "packages[0].wheels[0].hashes",
     "Missing required value"),
    (lambda t: t.replace('name = "beta"', 'name = "Beta"', 1), "packages[1].name", "Name 'Beta' is not normalized"),
    (lambda t: t.replace('created-by = "uv"', "created-by = 1", 1), "created-by",
     "Unexpected type int (expected str)"),
])
def test_an_invalid_lock_is_refused_naming_the_file_and_key(home: Path, index: LocalIndex, uv: Uv, capsys,
                                                            edit, key, message) -> None:
    compiled = _compiled(uv, index, home.parent / "compiled")
    lock = compiled.with_name("invalid.toml")
    lock.write_text(edit(compiled.read_text()))
    assert lock.read_text() != compiled.read_text()

    result = pm(capsys, home, "sync", "--from", str(lock), "--ignore-inputs")

    assert result.code == 1
    assert result.err.splitlines()[0] == f"error: {lock}: {key}: {message} (not a valid PEP 751 lock)"
    assert generations.all_ids(home) == []
    with pytest.raises(InputError):
        read_lock(lock, lock.read_text())
