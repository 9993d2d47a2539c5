"""Trust boundaries of ``hermes plugins install`` (issue 21, items 3-6): a git source follows the
link rules archives follow, its credentials never reach a record, a receipt or a message, what a
killed install or remove left is swept by the next one under the lock, and an archive is streamed
to disk within a size and a time bound. Real git repositories, a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import base64
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.cli import main
from pm.env import plugin_fetch as fetch_module
from pm.testing.receipts import assert_valid_receipt

from .conftest import git, plugin


def repo_with_provider(env: Path, name: str = "repo") -> Path:
    repo = env / name
    repo.mkdir()
    git("init", "--quiet", cwd=repo)
    plugin(repo / "providers", "honcho", ["extra-lib>=1"], kind="memory")
    return repo


def commit(repo: Path) -> str:
    git("add", "-A", cwd=repo)
    git("commit", "--quiet", "-m", "x", cwd=repo)
    return git("rev-parse", "HEAD", cwd=repo)


def home_with(env: Path, entry: dict[str, object] | None = None) -> Path:
    home = env / "home"
    (home / "plugins").mkdir(parents=True, exist_ok=True)
    if entry is None:
        (home / "config.yaml").write_text("{}\n")
        return home
    catalog = env / "catalog.json"
    catalog.write_text(json.dumps({"entries": [{"name": "honcho", "kind": "memory", **entry}], "removed": []}))
    (home / "config.yaml").write_text(f"pm:\n  catalog: {catalog}\n")
    return home


def receipt_of(home: Path) -> dict:
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    return receipt


# -- item 4: links ---------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["/etc", "../../config.yaml", "../../../outside"])
def test_a_git_source_with_a_link_out_of_the_plugin_is_refused(env: Path, capsys, target: str) -> None:
    repo = repo_with_provider(env)
    (repo / "providers/honcho/escape").symlink_to(target)
    pinned = commit(repo)
    home = home_with(env, {"subdir": "providers/honcho", "source": {"git": str(repo), "commit": pinned}})
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 1
    message = receipt_of(home)["failure"]["message"]
    assert f"escape is a link to {target!r}, outside the plugin; refused" in message
    assert sorted(p.name for p in (home / "plugins").iterdir() if not p.name.startswith(".")) == []


def test_a_link_inside_the_plugin_is_kept(env: Path) -> None:
    repo = repo_with_provider(env)
    (repo / "providers/honcho/README.md").write_text("docs\n")
    (repo / "providers/honcho/LINK.md").symlink_to("README.md")
    pinned = commit(repo)
    home = home_with(env, {"subdir": "providers/honcho", "source": {"git": str(repo), "commit": pinned}})
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 0
    assert os.readlink(home / "plugins/honcho/LINK.md") == "README.md"


def test_a_catalog_subdir_that_is_a_link_out_is_refused(env: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-plugin"
    plugin(outside.parent, outside.name, ["x"], kind="memory")
    repo = env / "repo"
    repo.mkdir()
    git("init", "--quiet", cwd=repo)
    (repo / "providers").mkdir()
    (repo / "providers" / "honcho").symlink_to(outside)
    pinned = commit(repo)
    home = home_with(env, {"subdir": "providers/honcho", "source": {"git": str(repo), "commit": pinned}})
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 1
    assert "subdir 'providers/honcho' passes through a symlink" in receipt_of(home)["failure"]["message"]
    assert not (home / "plugins/honcho").exists()


def test_a_folder_source_with_a_link_out_is_refused(env: Path, tmp_path: Path) -> None:
    folder = tmp_path / "src" / "maps"
    plugin(folder.parent, "maps", ["x"])
    (folder / "secrets").symlink_to(env / "home" / "config.yaml")
    home = home_with(env)
    assert main(["plugins", "install", str(folder), "--home", str(home)]) == 1
    assert "secrets is a link to" in receipt_of(home)["failure"]["message"]


# -- item 3: credentials ---------------------------------------------------------------------------

class _GitOverHttp(http.server.SimpleHTTPRequestHandler):
    """git's "dumb" HTTP protocol (plain files of a bare repository), behind basic auth."""

    expected = ""

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        if self.headers.get("Authorization") != self.expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def git_server(env: Path) -> Iterator[tuple[str, str]]:
    """A repository served over HTTP with basic auth: (URL with credentials, commit)."""
    repo = repo_with_provider(env, "work")
    (repo / "providers/honcho/plugin.yaml").write_text("name: honcho\nkind: memory\npip_dependencies: []\n")
    pinned = commit(repo)
    bare = env / "served" / "r.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(repo), str(bare)], check=True)
    subprocess.run(["git", "update-server-info"], cwd=bare, check=True)
    handler = type("Handler", (_GitOverHttp,), {"expected": "Basic " + base64.b64encode(b"me:TOKEN-123").decode()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: handler(*a, directory=str(env / "served")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://me:TOKEN-123@127.0.0.1:{server.server_address[1]}/r.git", pinned
    finally:
        server.shutdown()
        server.server_close()


def test_git_credentials_reach_git_but_no_record_receipt_or_message(env: Path, git_server: tuple[str, str],
                                                                    capsys) -> None:
    url, pinned = git_server
    home = home_with(env, {"subdir": "providers/honcho", "source": {"git": url, "commit": pinned}})
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 0, capsys.readouterr().err
    assert (home / "plugins/honcho/plugin.yaml").is_file()
    for path in [*(home / "plugins").glob(".*.json"), *(home / "pm").rglob("*.json")]:
        assert "TOKEN-123" not in path.read_text(), path
    assert json.loads((home / "plugins/.install-metadata.json").read_text())["honcho"]["git"].startswith(
        "http://me:****@127.0.0.1:")
    assert "TOKEN-123" not in capsys.readouterr().err


def test_a_failing_git_source_names_the_url_without_its_token(env: Path, git_server: tuple[str, str],
                                                              capsys) -> None:
    url, _ = git_server
    home = home_with(env)
    assert main(["plugins", "install", f"git+{url}@{'0' * 40}", "--home", str(home)]) == 1
    text = capsys.readouterr().err + json.dumps(receipt_of(home))
    assert "TOKEN-123" not in text and "me:****@127.0.0.1" in text


# -- item 5: leftovers of a killed install or remove ------------------------------------------------

def test_leftovers_of_a_killed_run_are_swept_by_the_next_install(env: Path, tmp_path: Path) -> None:
    home = home_with(env)
    plugins = home / "plugins"
    for leftover in (".staging-0123456789ab/src", ".removing-0123456789ab/old"):
        (plugins / leftover).mkdir(parents=True)
        (plugins / leftover / "big.bin").write_bytes(b"x" * 1000)
    plugin(plugins, ".backup-maps-1234abcd", ["x"])  # a --force replace killed between its renames
    folder = tmp_path / "src" / "notes"
    plugin(folder.parent, "notes", ["x"])

    assert main(["plugins", "install", str(folder), "--home", str(home)]) == 0

    assert sorted(p.name for p in plugins.iterdir()) == [".install-metadata.json", "maps", "notes"]
    warning = " ".join(receipt_of(home)["warnings"])
    assert ".staging-0123456789ab" in warning and ".backup-maps-1234abcd (put back as maps)" in warning


def test_an_interrupted_remove_is_finished_by_running_it_again(env: Path, tmp_path: Path) -> None:
    home = home_with(env)
    folder = tmp_path / "src" / "notes"
    plugin(folder.parent, "notes", ["x"])
    assert main(["plugins", "install", str(folder), "--home", str(home)]) == 0
    os.rename(home / "plugins/notes", home / "plugins/.removing-0123456789ab")  # killed right after this

    assert main(["plugins", "remove", "notes", "--home", str(home)]) == 0

    assert sorted(p.name for p in (home / "plugins").iterdir()) == [".install-metadata.json"]
    assert json.loads((home / "plugins/.install-metadata.json").read_text()) == {}


KILL_DURING_CHECKOUT = r'''
import sys
from pathlib import Path
from pm.env import plugin_fetch as install
install.GIT_DEADLINE = 120
install._run_git(["-c", "core.fsmonitor=" + sys.argv[2], "status"], {"PATH": "/usr/bin:/bin"}, "repo",
                 cwd=Path(sys.argv[1]))
'''


def test_git_dies_with_pm(env: Path, tmp_path: Path) -> None:
    """pm killed with SIGKILL while git runs: git is killed by the kernel, not left orphaned."""
    repo = repo_with_provider(env)
    commit(repo)
    hook = tmp_path / "slow-hook"
    pidfile = tmp_path / "git.pid"
    hook.write_text(f"#!/bin/sh\necho $PPID > {pidfile}\nsleep 60\n")
    hook.chmod(0o755)
    pm_process = subprocess.Popen([sys.executable, "-c", KILL_DURING_CHECKOUT, str(repo), str(hook)])
    deadline = time.monotonic() + 30
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    git_pid = int(pidfile.read_text())
    os.kill(pm_process.pid, signal.SIGKILL)
    pm_process.wait()
    for _ in range(100):
        try:
            os.kill(git_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(git_pid, signal.SIGKILL)
    raise AssertionError("git outlived pm")


# -- item 6: archives streamed within bounds --------------------------------------------------------

class _Drip(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        for _ in range(40):  # bounded: 40 bytes over ~8 s, then the test is long over
            try:
                self.wfile.write(b"x")
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.2)

    def log_message(self, *args: object) -> None:
        pass


def test_a_slow_drip_archive_hits_the_deadline_and_frees_the_lock(env: Path, monkeypatch) -> None:
    monkeypatch.setattr(fetch_module, "ARCHIVE_DEADLINE", 1.0)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Drip)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/honcho.tar.gz"
    try:
        home = home_with(env, {"subdir": ".", "source": {"archive": url, "sha256": "0" * 64}})
        started = time.monotonic()
        assert main(["plugins", "install", "honcho", "--home", str(home)]) == 1
        assert time.monotonic() - started < 10
        assert f"{url}: still downloading after 1s; given up" in receipt_of(home)["failure"]["message"]
        assert main(["plugins", "install", "honcho", "--home", str(home), "--lock-timeout", "0"]) == 1  # lock free
        assert "lock" not in receipt_of(home)["failure"]["message"].lower()
    finally:
        server.shutdown()
        server.server_close()


def test_an_archive_over_the_size_bound_is_refused_without_holding_it(env: Path, tmp_path: Path,
                                                                      monkeypatch) -> None:
    monkeypatch.setattr(fetch_module, "MAX_ARCHIVE_BYTES", 1024)
    big = tmp_path / "big.tar"
    big.write_bytes(b"\0" * 4096)
    home = home_with(env, {"subdir": ".", "source": {"archive": str(big), "sha256": "0" * 64}})
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 1
    assert "larger than 1024 bytes; refused" in receipt_of(home)["failure"]["message"]
