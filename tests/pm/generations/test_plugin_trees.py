"""Invariant 2: nothing under `<home>/plugins/**` changes on sync, rebuild, gc or rollback, and the
one write helper refuses any path outside `<home>/pm` (symlinks included)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pm.base.store import Store, StoreError
from pm.env import generations
from pm.testing import add_plugin, tree_digest

from .helpers import pm, remove_dist


@pytest.fixture
def furnished(home: Path, uv_bin: str, uv_env: dict[str, str]) -> Path:
    """The home's plugins/ also holds a sidecar-only plugin (runtime/pyproject + .venv marker), a
    wrapper folder with a real uv venv of its own and a marker file, and symlinks."""
    plugins = home / "plugins"
    add_plugin(plugins, "voice", style="sidecar", dependencies=["torch>=2"])
    wrapper = plugins / ".voice-sidecar"
    wrapper.mkdir()
    (wrapper / "MARKER").write_text("managed by the voice plugin\n")
    subprocess.run([uv_bin, "venv", "--quiet", str(wrapper / "venv")], env=uv_env, check=True, capture_output=True)
    (plugins / "voice" / "sidecar").symlink_to(wrapper)
    (plugins / "notes" / "shared").symlink_to("../search")
    return plugins


def test_sync_rebuild_gc_and_rollback_never_touch_plugin_trees(home: Path, furnished: Path, capsys) -> None:
    before = tree_digest(furnished)
    assert {"voice/runtime/.venv/pyvenv.cfg", ".voice-sidecar/MARKER", ".voice-sidecar/venv/pyvenv.cfg",
            ".voice-sidecar/venv/bin/python", "voice/sidecar", "notes/shared"} <= set(before)

    steps = []
    assert pm(capsys, home, "sync").code == 0
    steps.append(("sync", tree_digest(furnished)))
    remove_dist(generations.selected(home), "beta")
    assert pm(capsys, home, "sync").code == 0  # a rebuild of a damaged generation
    steps.append(("rebuild", tree_digest(furnished)))
    (home / "config.yaml").write_text("plugins:\n  enabled: [notes, search, voice]\n  disabled: [search]\n")
    assert pm(capsys, home, "sync").code == 0  # a rebuild for another selection
    steps.append(("sync after config change", tree_digest(furnished)))
    assert pm(capsys, home, "gc").code == 0
    steps.append(("gc", tree_digest(furnished)))
    assert pm(capsys, home, "rollback").code == 0
    steps.append(("rollback", tree_digest(furnished)))
    assert pm(capsys, home, "check").code == 0  # the rollback wrote back the selection it was built from
    steps.append(("check", tree_digest(furnished)))
    assert [name for name, digest in steps if digest != before] == []
    assert len(generations.all_ids(home)) == 2


def test_the_store_refuses_paths_outside_home_pm(home: Path) -> None:
    store = Store.for_home(home)
    pm_root = (home / "pm").resolve()
    target = home / "plugins" / "notes" / "pyproject.toml"
    original = target.read_bytes()

    with pytest.raises(StoreError) as refused:
        store.write_bytes(target, b"[project]\n")
    assert str(refused.value) == f"{target}: refusing to write outside {pm_root}"

    (home / "pm").mkdir()
    (home / "pm" / "escape").symlink_to(home / "plugins" / "notes")
    through_link = home / "pm" / "escape" / "pyproject.toml"
    for attempt in (lambda: store.write_bytes(through_link, b"x"), lambda: store.mkdir(home / "pm" / "escape" / "d"),
                    lambda: store.remove_tree(home / "pm" / "escape"), lambda: store.unlink(through_link)):
        with pytest.raises(StoreError, match="refusing to write outside"):
            attempt()
    with pytest.raises(StoreError, match="refusing to write outside"):
        store.write_bytes(home / "pm" / ".." / "plugins" / "x", b"x")
    assert target.read_bytes() == original
    assert sorted(p.name for p in (home / "plugins" / "notes").iterdir()) == ["__init__.py", "plugin.yaml",
                                                                              "pyproject.toml"]


def test_gc_ignores_a_symlink_among_generations_that_points_into_plugins(home: Path, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    before = tree_digest(home / "plugins")
    (generations.root(home) / "20000101T000000000000-evil").symlink_to(home / "plugins")
    assert pm(capsys, home, "gc").code == 0
    assert pm(capsys, home, "sync").code == 0
    assert tree_digest(home / "plugins") == before
    assert (generations.root(home) / "20000101T000000000000-evil").is_symlink()
