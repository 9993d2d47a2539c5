"""Externally managed installs: every mutating command refuses at once (exit 1, outcome refused,
naming the manager and the declarative way); read-only commands keep working."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli import main as hermes
from pm.env import generations
from pm.env.managed import MARKER, Managed, check

from .helpers import latest, pm

READ_ONLY = "Read-only commands still work: scan, resolve, check, why, status, export, outdated, generations, diff"
NIX_HOW = "change the plugin set in your Nix configuration (services.hermes.plugins) and rebuild"
#: Every mutating command as typed, the way it is shown, and its receipt kind.
MUTATING = [
    (["pm", "sync"], "hermes pm sync", "sync"),
    (["pm", "sync", "--from", "receipt.json"], "hermes pm sync", "sync"),
    (["pm", "gc"], "hermes pm gc", "gc"),
    (["pm", "rollback"], "hermes pm rollback", "rollback"),
    (["pm", "rollback", "--to", "previous"], "hermes pm rollback", "rollback"),
    (["plugins", "enable", "notes"], "hermes plugins enable", "admit"),
    (["plugins", "disable", "notes"], "hermes plugins disable", "disable"),
    (["plugins", "install", "./somewhere"], "hermes plugins install", "install"),
    (["plugins", "remove", "notes"], "hermes plugins remove", "remove"),
    (["update"], "hermes update", "update"),
]


def _snapshot(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*"))
            if p.is_file() and "receipts" not in p.parts}


@pytest.mark.parametrize(("argv", "shown", "kind"), MUTATING, ids=[" ".join(m[0]) for m in MUTATING])
def test_every_mutating_command_refuses_when_the_environment_says_so(home: Path, argv, shown, kind, capsys,
                                                                      monkeypatch) -> None:
    monkeypatch.setenv("HERMES_PM_MANAGED", "nixos")
    before = _snapshot(home)
    code = hermes([*argv, "--home", str(home)])
    err = capsys.readouterr().err
    message = (f"`{shown}` would change this environment, which is managed by nixos (set by the environment "
               f"variable HERMES_PM_MANAGED); {NIX_HOW}. {READ_ONLY}")
    receipt = latest(home)
    assert code == 1
    (written,) = (home / "pm" / "receipts").glob(f"*-{kind}-*.json")
    assert err == f"refused: {message}\nreceipt: {written}\n"
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"]) == (kind, "refused", 1)
    assert receipt["failure"] == {"kind": "managed", "message": message, "url": None}
    assert receipt["managed"] == {"name": "nixos", "evidence": "set by the environment variable HERMES_PM_MANAGED",
                                  "how": NIX_HOW}
    assert _snapshot(home) == before, "nothing but the receipt was written (not even the lock)"


def test_read_only_commands_keep_working_under_a_marker_file(home: Path, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    marker = generations.root(home) / MARKER
    marker.write_text("hermes-image\nrebuild the image with plugins listed in image.toml\n")
    assert [pm(capsys, home, *argv).code for argv in (["scan"], ["resolve"], ["check"], ["why", "alpha"],
                                                      ["status"], ["export", "--format", "nix"], ["outdated"],
                                                      ["generations"], ["diff", "selected", "selected"])] == [0] * 9
    refused = pm(capsys, home, "gc")
    assert refused.code == 1
    assert refused.err.splitlines()[0] == (
        f"refused: `hermes pm gc` would change this environment, which is managed by hermes-image (marker file "
        f"{marker}); rebuild the image with plugins listed in image.toml. {READ_ONLY}")


def test_a_marker_naming_no_way_gets_a_generic_one_and_an_empty_marker_still_counts(home: Path, capsys) -> None:
    marker = generations.root(home) / MARKER
    marker.parent.mkdir(parents=True)
    marker.write_text("ansible\n")
    assert "which is managed by ansible (marker file " in pm(capsys, home, "sync").err
    assert ("change the plugin set where ansible declares it and let ansible rebuild the environment. "
            in latest(home)["failure"]["message"])
    marker.write_bytes(b"")
    assert pm(capsys, home, "sync").code == 1
    assert latest(home)["managed"]["name"] == "an external manager"


def test_the_manager_itself_passes_and_no_one_else_does(home: Path, capsys, monkeypatch) -> None:
    """The NixOS activation builds from its committed lock under the marker it wrote."""
    lock = home.parent / "pylock.toml"
    assert pm(capsys, home, "export", "--format", "pylock", "-o", str(lock)).code == 0
    marker = generations.root(home) / MARKER
    marker.parent.mkdir(parents=True)
    marker.write_text("nixos\n")
    monkeypatch.setenv("HERMES_PM_MANAGER", "home-manager")
    assert pm(capsys, home, "sync", "--from", str(lock)).code == 1
    monkeypatch.setenv("HERMES_PM_MANAGER", "nixos")
    result = pm(capsys, home, "sync", "--from", str(lock), "--json")
    assert result.code == 0 and result.data["frozen"]["inputs"] == "match", result.err
    assert generations.selected(home) is not None and marker.read_text() == "nixos\n"


def _read_only_mount_argv(folder: Path) -> list[str]:
    """argv prefix running a command with ``folder`` bind-mounted read-only in a private mount
    namespace (as root; else in a user namespace); skips where the kernel refuses."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare (util-linux) is not installed: cannot make a read-only mount")
    namespaces = ["--mount"] if os.geteuid() == 0 else ["--user", "--map-root-user", "--mount"]
    script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"'
    argv = [unshare, *namespaces, "sh", "-c", script, "sh", str(folder)]
    probe = subprocess.run([*argv, "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a read-only mount here: {probe.stderr.strip()}")
    return argv


def _pm_process(argv: list[str], env: dict[str, str], home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*argv, sys.executable, "-m", "pm", *args, "--home", str(home)], env=env,
                          capture_output=True, text=True, check=False, timeout=60)


def test_a_read_only_store_refuses_with_a_receipt_beside_it(home: Path, env: dict[str, str], capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    store = generations.root(home)
    mounted = _read_only_mount_argv(store)
    done = _pm_process(mounted, env, home, "sync", "--json")
    assert done.returncode == 1, done.stderr
    message = (f"`hermes pm sync` would change this environment, which is managed by a read-only file system "
               f"({store} is on a read-only mount); change the plugin set where that file system is built, "
               f"and rebuild it. {READ_ONLY}")
    assert done.stderr.splitlines()[0] == f"refused: {message}"
    assert latest(home)["failure"]["message"] == message and latest(home)["outcome"] == "refused"
    checked = _pm_process(mounted, env, home, "check", "--json")
    assert checked.returncode == 0 and json.loads(checked.stdout)["outcome"] == "ok", checked.stderr


def test_nothing_writable_means_no_receipt_and_still_a_clear_refusal(home: Path, env: dict[str, str],
                                                                    capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    receipts = sorted((home / "pm" / "receipts").iterdir())
    done = _pm_process(_read_only_mount_argv(home / "pm"), env, home, "rollback")
    assert done.returncode == 1
    refusal, warning = done.stderr.splitlines()
    assert refusal == (
        f"refused: `hermes pm rollback` would change this environment, which is managed by a read-only file "
        f"system ({generations.root(home)} is on a read-only mount); change the plugin set where that file "
        f"system is built, and rebuild it. {READ_ONLY}")
    assert warning.startswith(f"warning: receipt not written: {home / 'pm' / 'receipts'}/")  # said, not silent
    assert warning.endswith(": cannot write: Read-only file system")
    assert sorted((home / "pm" / "receipts").iterdir()) == receipts


def test_the_host_can_guard_its_own_mutating_commands(home: Path) -> None:
    """``hermes memory setup`` runs outside pm's dispatch; the host calls the same check."""
    with pytest.raises(Managed) as caught:
        check(home, "memory-setup", env={"HERMES_PM_MANAGED": "nixos"})
    assert str(caught.value) == (f"`hermes memory setup` would change this environment, which is managed by nixos "
                                 f"(set by the environment variable HERMES_PM_MANAGED); {NIX_HOW}. {READ_ONLY}")
    assert caught.value.exit_code == 1
    check(home, "scan", env={"HERMES_PM_MANAGED": "nixos"})  # read-only: never refused
    check(home, "memory-setup", env={})  # not managed
