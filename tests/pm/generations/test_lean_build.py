"""A sync that must build over fresh cached pages (new inputs, every page still fresh in pm's cache)
sends no request of its own, so it loads nothing of the network, the HTML parser, the archive
readers or the email package: each loads with its first real use (issue 22, builds at uv's pace).
A real ``python -X importtime -m pm sync`` (its stderr lists every module the process imports)
against a real local index, the generation built by real uv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pm.testing import NO_TOOL_FILES, LocalIndex, add_plugin, make_home
from pm.testing.index import PRESETS

SPEC = {"alpha": {"1.0": ["beta>=1"], "2.0": ["beta>=2"]}, "beta": {"1.0": [], "2.0": []}, "gamma": {"1.0": []}}
#: What a command that asks the index nothing, parses no page and opens no archive never needs.
UNUSED = ("http.client", "ssl", "socket", "html.parser", "tarfile", "zipfile", "email.parser")
#: ... nor range reading, proxy lookup, pip config parsing or did-you-mean suggestions.
IDLE = ("pm.index._ranges", "urllib.request", "configparser", "difflib")


def sync(home: Path, index: LocalIndex, env: dict[str, str], command: str = "sync") -> tuple[dict[str, Any], set[str]]:
    """``python -X importtime -m pm <command>``: its receipt, and every module the process imported."""
    argv = [sys.executable, "-X", "importtime", "-m", "pm", command, "--home", str(home), "--index-url", index.url,
            "--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    receipt = json.loads((home / "pm" / "receipts" / "latest.json").read_text())
    return receipt, imported


def test_a_build_over_fresh_pages_loads_no_network_html_archive_or_email_module(
        tmp_path: Path, make_index: Callable[..., LocalIndex]) -> None:
    index = make_index(SPEC, **PRESETS["pypi"])  # max-age: pages stay fresh in pm's cache
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["maps"]}})
    add_plugin(home / "plugins", "maps", style="manifest", dependencies=["alpha"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "UV_", "PIP_"))}
    env |= {"HERMES_PM_CACHE_DIR": str(tmp_path / "cache"), "HERMES_BUNDLED_PLUGINS": str(tmp_path / "no-bundled"),
            **NO_TOOL_FILES}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    first, imported = sync(home, index, env)  # cold: pages and metadata fetched
    assert {"http.client", "ssl", "socket"} <= imported, "the observation sees a module a request loads"

    add_plugin(home / "plugins", "maps", style="manifest", dependencies=["alpha!=0.0.1"])  # new inputs
    index.reset_log()
    built, imported = sync(home, index, env)

    assert built["generation"]["id"] != first["generation"]["id"]  # a new generation was built
    assert not [path for _, path in index.requests if "/simple/" in path]  # no page asked
    assert sorted(imported & {*UNUSED, *IDLE}) == []
    checked, imported = sync(home, index, env, "check")  # the full check of the new generation: offline
    assert checked["readiness"]["ready"] is True and not checked.get("shortcut")
    assert sorted(imported & {*UNUSED, "pm.index.http"}) == []

    add_plugin(home / "plugins", "maps", style="manifest", dependencies=["alpha", "gamma"])  # a page never read
    index.reset_log()
    fetched, imported = sync(home, index, env)
    assert ("GET", "/simple/gamma/") in index.requests and {"http.client", "ssl", "socket"} <= imported
    assert {p["name"]: p["version"] for p in fetched["resolution"]["packages"]} == {
        "alpha": "2.0", "beta": "2.0", "gamma": "1.0"}
