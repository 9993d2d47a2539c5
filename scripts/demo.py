"""The main job on the bundled example home, printed as a transcript.

Copies scripts/example-home to a scratch folder (the repository stays clean), then runs the real
`hermes` commands on it, showing each command line and what it printed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scripts" / "example-home"
INDEX_SPEC = ROOT / "scripts" / "example-index.json"
HERMES = Path(sys.executable).parent / "hermes"


def serve_index(scratch: Path):  # type: ignore[no-untyped-def]
    """Build the demo's packages as real wheels and serve them on 127.0.0.1."""
    from pm.testing import index_from_spec

    spec = {k: v for k, v in json.loads(INDEX_SPEC.read_text()).items() if not k.startswith("_")}
    return index_from_spec(scratch / "wheels", spec).start()


def publish_catalog(scratch: Path, home: Path) -> str:
    """A real git repository holding honcho-lite, and a catalog entry pinned to its commit."""
    repo = scratch / "honcho-lite.git"
    shutil.copytree(ROOT / "scripts" / "example-catalog" / "honcho-lite", repo)
    git = ["git", "-c", "user.name=demo", "-c", "user.email=demo@example.invalid"]
    for argv in (["init", "--quiet"], ["add", "."], ["commit", "--quiet", "-m", "honcho-lite 0.2.0"]):
        subprocess.run([*git, *argv], cwd=repo, check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True,
                            text=True).stdout.strip()
    entry = {"name": "honcho-lite", "kind": "memory", "description": "demo provider",
             "source": {"git": str(repo), "commit": commit}}
    (home / "catalog.json").write_text(json.dumps({"entries": [entry], "removed": []}, indent=2))
    # the same entry in the directory form a catalog's maintainers keep (scripts/example-catalog/catalog.d)
    shutil.copytree(ROOT / "scripts" / "example-catalog" / "catalog.d", home / "catalog.d")
    shown = home / "catalog.d" / "honcho-lite.yaml"
    shown.write_text(shown.read_text().replace("file:///filled/in/by/scripts/demo", f"file://{repo}")
                     .replace('"0000000000000000000000000000000000000000"', commit))
    return commit


def show_receipt(home: Path, query: str, pick) -> None:  # type: ignore[no-untyped-def]
    """Print part of the latest receipt, the way `jq` would show it."""
    receipt = json.loads((home / "pm" / "receipts" / "latest.json").read_text())
    print(f"\n$ jq '{query}' $HERMES_HOME/pm/receipts/latest.json")
    print(json.dumps(pick(receipt), indent=2).replace(str(home), "$HERMES_HOME"))


def run(*args: str, env: dict[str, str], expect: int = 0) -> subprocess.CompletedProcess[str]:
    shown = " ".join(args).replace(env["HERMES_HOME"], "$HERMES_HOME")
    print(f"\n$ hermes {shown}", flush=True)
    done = subprocess.run([str(HERMES), *args], env=env, text=True, capture_output=True, check=False)
    output = (done.stdout + done.stderr).replace(env["HERMES_HOME"], "$HERMES_HOME")
    print(output.rstrip(), flush=True)
    if done.returncode != expect:
        print(f"demo: expected exit {expect}, got {done.returncode}", file=sys.stderr)
        sys.exit(1)
    return done


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="hermes-demo-"))
    home = scratch / "home"
    shutil.copytree(EXAMPLE, home, symlinks=True)
    index = serve_index(scratch)
    from pm.testing import without_tool_settings

    # pm honours the uv/pip index settings of this machine (UV_*/PIP_* variables, uv.toml,
    # pip.conf); the demo leaves them out, so that only its own index is used wherever it runs
    env = {**without_tool_settings(os.environ), "HERMES_HOME": str(home), "NO_COLOR": "1",
           "HERMES_PM_INDEX_URL": index.url, "HERMES_PM_CACHE_DIR": str(scratch / "cache")}
    print(f"example home copied to {home}; a local index of real wheels serves {index.url}")
    print("(this machine's UV_*/PIP_* index variables, uv.toml and pip.conf are left out: only that index is used)")
    run("pm", "scan", env=env)
    run("pm", "resolve", env=env)
    run("pm", "sync", env=env)
    run("pm", "sync", env=env)
    run("plugins", "enable", "calendar", env=env)
    run("plugins", "enable", "charts", env=env, expect=3)
    show_receipt(home, "{kind, outcome, exit_code, candidate, blamed: .conflict.plugins, message: .conflict.message, next_steps}",
                 lambda r: {"kind": r["kind"], "outcome": r["outcome"], "exit_code": r["exit_code"],
                            "candidate": r["candidate"], "blamed": r["conflict"]["plugins"],
                            "message": r["conflict"]["message"], "next_steps": r["next_steps"]})
    commit = publish_catalog(scratch, home)
    print(f"\n(the catalog now lists honcho-lite at commit {commit} of a local git repository)")
    run("pm", "catalog", "check", str(home / "catalog.d"), "--platform", "linux", "--platform", "macos", env=env)
    run("update", env=env)
    run("pm", "check", env=env)
    run("plugins", "list", env=env)
    index.stop()
    print(f"\ndemo finished; the scratch home is kept at {home}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
