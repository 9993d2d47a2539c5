"""Re-pins with consent (issue 23): `hermes update` moves a catalog plugin to its entry's new pin
only through admission, and only with consent when the new pin widens what the plugin brings —
real git repositories, a real local index, the real update operation."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pty
import select
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from pm.env.plugin_install import install, installed_records
from pm.inputs.catalog import load_catalog
from pm.ops.repin import widened
from pm.ops.update import update
from pm.testing import index_from_spec, make_home
from pm.testing.catalogs import plugin_repo, recommit

SPEC = {"tinyhttp": {"1.0": [], "1.5": [], "2.0": []}, "sharedlib": {"1.0": [], "2.0": []}}


def _commit(repo: Path, requirements: list[str]) -> str:
    return recommit(repo, "web", requirements)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("repin-dists"), SPEC) as served:
        yield served


@pytest.fixture
def setup(tmp_path: Path, monkeypatch, index):
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    repo, first = plugin_repo(tmp_path, "web", ["tinyhttp>=1.0,<2"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['sharedlib']\n")
    (tmp_path / "lock.txt").write_text("sharedlib==1.0\n")
    catalog = tmp_path / "catalog.json"
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["web"]}, "pm": {
        "catalog": "../catalog.json", "core": "../core.toml", "core_lock": "../lock.txt", "index_url": index.url}})

    def publish(commit: str) -> None:
        catalog.write_text(json.dumps({"entries": [{"name": "web", "source": {"git": str(repo), "commit": commit}}],
                                       "removed": []}))

    publish(first)
    install(home, "web", load_catalog(catalog))
    return home, repo, publish


def _pin(home: Path) -> str:
    return str(installed_records(home)["web"]["pin"])


def test_a_narrowing_repin_moves_without_asking(setup) -> None:
    home, repo, publish = setup
    before = _pin(home)
    narrower = _commit(repo, ["tinyhttp>=1.5,<2"])
    publish(narrower)
    done = update(home)
    assert done.code == 0, done.receipt.written
    assert _pin(home) == f"commit {narrower}"
    assert done.receipt.extra["repinned"] == [{"name": "web", "from": before, "to": f"commit {narrower}",
                                               "widened": []}]
    assert json.loads((home / "plugins" / "web" / "plugin.yaml").read_text())["pip_dependencies"] == ["tinyhttp>=1.5,<2"]


def test_a_widening_repin_needs_consent_then_moves_with_it(setup) -> None:
    home, repo, publish = setup
    before = _pin(home)
    wider = _commit(repo, ["tinyhttp>=1.0,<3", "sharedlib"])
    publish(wider)
    done = update(home)
    assert done.code == 0 and _pin(home) == before  # kept, said so, and how to consent
    (warning,) = [w for w in done.receipt.warnings if "stays at" in w]
    assert warning == (f"plugin 'web' stays at {before}: its catalog entry moved to commit {wider}, which brings "
                       "'tinyhttp<2,>=1.0' widened to 'tinyhttp<3,>=1.0'; a new requirement 'sharedlib'")
    assert any(s["command"].startswith("hermes update --accept-repin web") for s in done.receipt.next_steps)
    asked: list[tuple[str, list[str]]] = []
    declined = update(home, ask=lambda name, grew: asked.append((name, grew)) is not None)
    assert asked and asked[0][0] == "web" and _pin(home) == before and declined.code == 0
    moved = update(home, accept=frozenset({"web"}))
    assert moved.code == 0 and _pin(home) == f"commit {wider}"
    assert moved.receipt.extra["repinned"][0]["widened"] == [
        "'tinyhttp<2,>=1.0' widened to 'tinyhttp<3,>=1.0'", "a new requirement 'sharedlib'"]


def test_a_repin_that_collides_with_core_keeps_the_old_pin(setup) -> None:
    home, repo, publish = setup
    before = _pin(home)
    colliding = _commit(repo, ["tinyhttp>=1.0,<2", "sharedlib>=2"])
    publish(colliding)
    done = update(home, accept=frozenset({"web"}))
    assert _pin(home) == before
    (warning,) = [w for w in done.receipt.warnings if "stays at" in w]
    assert warning.startswith(f"plugin 'web' stays at {before}: the catalog's new pin commit {colliding} was refused:")
    assert "sharedlib" in warning


def _commit_manifest(repo: Path, manifest: dict[str, object]) -> str:
    from pm.testing.catalogs import GIT

    (repo / "plugin.yaml").write_text(json.dumps({"name": "web", **manifest}))
    subprocess.run([*GIT, "commit", "--quiet", "-am", "new pin"], cwd=repo, check=True)
    return subprocess.run([*GIT, "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_a_repin_that_drops_a_marker_or_python_runtime_external_needs_consent(setup) -> None:
    """Issue 34 finding 2: both moved without consent, since the requirement texts compared
    equal or narrower. A marker that applied on Windows only now applies everywhere; a plugin that
    brought its own interpreter now joins the union."""
    home, repo, publish = setup
    windows_only = _commit(repo, ["tinyhttp>=1.0,<2; sys_platform == 'win32'"])
    publish(windows_only)
    assert update(home).code == 0 and _pin(home) == f"commit {windows_only}"  # narrower: moved, not asked
    everywhere = _commit(repo, ["tinyhttp>=1.0,<2"])
    publish(everywhere)
    done = update(home)
    assert _pin(home) == f"commit {windows_only}"
    (warning,) = [w for w in done.receipt.warnings if "stays at" in w]
    assert warning.endswith("which brings 'tinyhttp<2,>=1.0; sys_platform == \"win32\"' widened to "
                            "'tinyhttp<2,>=1.0' (it now applies on darwin arm64 / Python 3.8.0)")

    external = _commit_manifest(repo, {"pip_dependencies": ["tinyhttp>=1.0,<2"], "python_runtime": "external"})
    publish(external)
    assert update(home, accept=frozenset({"web"})).code == 0 and _pin(home) == f"commit {external}"
    joins = _commit_manifest(repo, {"pip_dependencies": ["tinyhttp>=1.0,<2"]})
    publish(joins)
    done = update(home)
    assert _pin(home) == f"commit {external}"
    (warning,) = [w for w in done.receipt.warnings if "stays at" in w]
    assert warning.endswith("which brings python_runtime: external dropped: it joins the union; "
                            "a new requirement 'tinyhttp<2,>=1.0'")


@pytest.mark.parametrize(("old", "new", "grew"), [
    ("a>=1,<2", "a>=1,<2", False), ("a>=1,<2", "a>=1.5,<2", False), ("a>=1,<2", "a>=1,<3", True),
    ("a==1.0", "a==1.*", True), ("a~=1.4", "a>=1.4,<2", False), ("a>=1", "a", True), ("a", "a>=1", False),
    ("a!=1.3", "a", True), ("a<2", "a<=2", True),
])
def test_what_widens_a_requirement(old, new, grew) -> None:
    assert bool(widened([Requirement(old)], [Requirement(new)])) is grew


def test_a_person_at_a_terminal_is_asked_and_a_yes_moves_it(setup) -> None:
    """A real pseudo-terminal: `hermes update` asks, and the answer decides."""
    home, repo, publish = setup
    wider = _commit(repo, ["tinyhttp>=1.0,<3"])
    publish(wider)
    master, slave = pty.openpty()
    root = Path(__file__).resolve().parents[3]
    proc = subprocess.Popen([sys.executable, "-m", "agent.cli", "update", "--home", str(home)], stdin=slave,
                            stdout=slave, stderr=slave, close_fds=True, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(root)})
    os.close(slave)
    seen = bytearray()
    try:
        deadline = time.monotonic() + 60
        while b"move it? [y/N] " not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if ready:
                seen += os.read(master, 4096)
        assert b"the catalog moved plugin 'web' to a new pin, which brings: 'tinyhttp<2,>=1.0' widened" in seen, seen
        os.write(master, b"y\n")
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        os.close(master)
    assert _pin(home) == f"commit {wider}"


# -- a re-pin fetches the new pin once ---------------------------------------------------------------

def _plugin_archive(folder: Path, version: str, requirements: list[str]) -> Path:
    """The plugin ``web`` as an archive the test index serves (and logs): its folder is named and
    carries a PKG-INFO as a source distribution's would, so the index lists it as one."""
    path = folder / f"web-{version}.tar.gz"
    members = {"PKG-INFO": f"Metadata-Version: 2.1\nName: web\nVersion: {version}\n",
               "plugin.yaml": json.dumps({"name": "web", "pip_dependencies": requirements}), "__init__.py": ""}
    with tarfile.open(path, "w:gz") as archive:
        for name, text in members.items():
            info = tarfile.TarInfo(f"web-{version}/{name}")
            info.size = len(text.encode())
            archive.addfile(info, io.BytesIO(text.encode()))
    return path


def test_a_repin_fetches_the_new_pin_once(tmp_path: Path, monkeypatch, make_index) -> None:
    """Read for what it brings, checked by admission, then installed: one download of the new pin."""
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    served = make_index(SPEC)
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['sharedlib']\n")
    (tmp_path / "lock.txt").write_text("sharedlib==1.0\n")
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["web"]}, "pm": {
        "catalog": "../catalog.json", "core": "../core.toml", "core_lock": "../lock.txt", "index_url": served.url}})
    (tmp_path / "dists").mkdir()

    def publish(version: str, requirements: list[str]) -> str:
        archive = _plugin_archive(tmp_path / "dists", version, requirements)
        served.add_files([archive])
        source = {"archive": f"{served.root}/files/{archive.name}", "sha256": hashlib.sha256(archive.read_bytes()).hexdigest()}
        (tmp_path / "catalog.json").write_text(json.dumps({"entries": [
            {"name": "web", "source": source, "subdir": f"web-{version}"}], "removed": []}))
        return f"/files/{archive.name}"

    publish("1.0", ["tinyhttp>=1.0,<2"])
    install(home, "web", load_catalog(tmp_path / "catalog.json"))
    new = publish("2.0", ["tinyhttp>=1.5,<2"])
    served.reset_log()

    done = update(home)

    assert done.code == 0, done.receipt.written
    assert done.receipt.extra["repinned"][0]["to"] == _pin(home) != "sha256 None"
    assert json.loads((home / "plugins" / "web" / "plugin.yaml").read_text())["pip_dependencies"] == ["tinyhttp>=1.5,<2"]
    assert [request for request in served.requests if request[1] == new] == [("GET", new)]
    assert not [p for p in (home / "plugins").iterdir() if p.name.startswith(".staging-")]
