"""Data-driven resolver cases through real wheels on the real local index.

``index.json`` is one index (name -> version -> requirements or details, in the format of
:func:`pm.testing.build_packages`); each ``cases/*.json`` says what plugins request and either the
exact pins (``resolved``), the expected ``conflict`` (plugins to blame, packages, kind, and
optionally the whole message), or the ``missing`` projects (a failure, exit 1: projects, plugins,
suggestions, and optionally the whole message), with a ``note`` saying why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm.cli import main
from pm.testing import index_from_spec
from pm.testing.receipts import assert_valid_receipt

HERE = Path(__file__).parent
CASES = sorted((HERE / "cases").glob("*.json"))
CORE_PACKAGES = {"sharedlib", "tinyhttp"}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    spec = json.loads((HERE / "index.json").read_text())
    with index_from_spec(tmp_path_factory.mktemp("dists"), spec) as served:
        yield served


def write_home(root: Path, case: dict) -> tuple[Path, list[str]]:
    home = root / "home"
    candidate = case.get("candidate")
    for name, requirements in case["plugins"].items():
        plugin = home / "plugins" / name
        plugin.mkdir(parents=True)
        (plugin / "plugin.yaml").write_text(json.dumps({"name": name, "pip_dependencies": requirements}))
    enabled = [name for name in case["plugins"] if name != candidate]
    (home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": enabled}, "pm": case.get("options", {})}))
    core = case.get("core", {})
    (root / "core.toml").write_text(f"[project]\nname='host'\ndependencies={json.dumps(core.get('requires', []))}\n")
    (root / "lock.txt").write_text("".join(f"{n}=={v}\n" for n, v in core.get("lock", {}).items()))
    argv = ["--home", str(home), "--core", str(root / "core.toml"), "--core-lock", str(root / "lock.txt")]
    if candidate:
        argv += ["--with", candidate]
    return home, argv


@pytest.mark.parametrize("case_file", CASES, ids=[c.stem for c in CASES])
def test_case(case_file, index, tmp_path, capsys, monkeypatch):
    case = json.loads(case_file.read_text())
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    home, argv = write_home(tmp_path, case)
    code = main(["resolve", "--json", "--index-url", index.url, *argv])
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    assert json.loads((home / "pm/receipts/latest.json").read_text())["outcome"] == receipt["outcome"]
    files = {name: home / "plugins" / name / "plugin.yaml" for name in case["plugins"]}
    if "resolved" in case:
        assert code == 0, receipt.get("conflict") or receipt.get("failure")
        for warning in case.get("warnings", []):
            assert warning.format(**files) in receipt["warnings"], receipt["warnings"]
        pins = {p["name"]: p["version"] for p in receipt["resolution"]["packages"]}
        assert pins == case["resolved"], case["note"]
        return
    if "missing" in case:
        assert_missing(case["missing"], code, receipt, files | {"index": index.url})
        return
    expected = case["conflict"]
    assert code == 3, receipt.get("failure") or receipt.get("resolution")
    conflict = receipt["conflict"]
    assert conflict["plugins"] == expected["plugins"], conflict["message"]
    assert [f["package"] for f in conflict["findings"]] == expected["packages"], conflict["message"]
    assert conflict["findings"][0]["kind"] == expected["kind"], conflict["message"]
    if "message" in expected:
        assert conflict["message"] == expected["message"].format(**files)
    assert receipt["next_steps"], "a refused resolution always says what to run next"


def assert_missing(expected: dict, code: int, receipt: dict, names: dict) -> None:
    """A missing project is a failure about a declaration: exit 1, outcome failed, no conflict."""
    assert code == 1, receipt.get("conflict") or receipt.get("resolution")
    assert receipt["outcome"] == "failed" and receipt["conflict"] is None
    failure = receipt["failure"]
    assert failure["kind"] == "missing-project", failure
    assert [p["name"] for p in failure["projects"]] == expected["projects"], failure["message"]
    assert failure["plugins"] == expected["plugins"], failure["message"]
    assert {p["name"]: p["suggestion"] for p in failure["projects"] if p["suggestion"]} == expected.get("suggestions", {})
    if "message" in expected:
        assert failure["message"] == expected["message"].format(**names)
    assert receipt["next_steps"], "a failed resolution always says what to run next"
