"""`hermes pm scan` end to end: a home with one plugin of each kind and every bad input."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pm.cli import main

ROOT = Path(__file__).resolve().parents[2]


def make(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())


TRAP = "open({marker!r}, 'w').write('imported')\nraise RuntimeError('plugin code ran')\n"


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    marker = tmp_path / "IMPORTED"
    enabled = ["pyproj", "legacy", "sidecar", "ext", "bad-yaml", "bad-toml", "not-mapping", "bad-list",
               "bad-pep508", "bad-version", "latin1", "huge", "escape", "trap", "retired"]
    config = "memory: {provider: fts}\nplugins:\n  enabled: [" + ", ".join(enabled) + ", '../up']\n  disabled: [retired]\n"
    make(home, {
        "config.yaml": config,
        "plugins/pyproj/pyproject.toml": "[project]\nname='p'\ndependencies=['alpha>=1', 'beta; python_version<\"3\"']\n",
        "plugins/legacy/plugin.yaml": "pip_dependencies: [gamma]\npython_dependencies: [gamma, delta==2.*]\n",
        "plugins/sidecar/plugin.yaml": "name: sidecar\n",
        "plugins/sidecar/runtime/pyproject.toml": "[project]\nname='b'\ndependencies=['zeta']\n",
        "plugins/.sidecar-env/pyvenv.cfg": "home = /usr\n",
        "plugins/ext/plugin.yaml": "python_runtime: external\npip_dependencies: [torch]\n",
        "plugins/bad-yaml/plugin.yaml": "pip_dependencies: [a\n",
        "plugins/bad-toml/pyproject.toml": "[project\n",
        "plugins/not-mapping/plugin.yaml": "[1, 2]\n",
        "plugins/bad-list/plugin.yaml": "pip_dependencies: {a: 1}\n",
        "plugins/bad-pep508/plugin.yaml": "pip_dependencies: ['ok', 'no good']\n",
        "plugins/bad-version/plugin.yaml": "manifest_version: \"two\"\npip_dependencies: []\n",
        "plugins/latin1/plugin.yaml": b"description: caf\xe9\npip_dependencies: []\n",
        "plugins/huge/plugin.yaml": b"pip_dependencies: []\n" + b"#" * (5 * 1024 * 1024),
        "plugins/trap/plugin.yaml": "pip_dependencies: [eta]\n",
        "plugins/trap/__init__.py": TRAP.format(marker=str(marker)),
        "plugins/retired/plugin.yaml": "pip_dependencies: [theta]\n",
        "bundled/fts/plugin.yaml": "pip_dependencies: []\n",
        "bundled/fts/__init__.py": TRAP.format(marker=str(marker)),
        "outside/evil/plugin.yaml": "pip_dependencies: [evil]\n",
    })
    (home / "plugins/escape").symlink_to(home / "outside/evil")
    return home


def first_line(capsys) -> str:
    return capsys.readouterr().err.splitlines()[0]


def scan_json(home: Path, *extra: str) -> dict:
    env = {**os.environ, "HERMES_BUNDLED_PLUGINS": str(home / "bundled"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "pm", "scan", "--json", "--home", str(home), *extra],
                          capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_scan_reports_each_status_and_reason_and_never_imports(home, tmp_path):
    data = scan_json(home)
    plugins = {p["name"]: p for p in data["plugins"]}
    status = {name: p["status"] for name, p in plugins.items()}
    assert status == {
        "fts": "member", "pyproj": "member", "legacy": "member", "trap": "member",
        "sidecar": "sidecar-only", "ext": "external", "retired": "disabled",
        "bad-yaml": "invalid", "bad-toml": "invalid", "not-mapping": "invalid", "bad-list": "invalid",
        "bad-pep508": "invalid", "bad-version": "invalid", "latin1": "invalid", "huge": "invalid", "escape": "invalid",
    }
    p = home / "plugins"
    reasons = {name: plugins[name]["reason"] for name in status if status[name] == "invalid"}
    assert reasons["bad-list"] == f"{p}/bad-list/plugin.yaml:1: pip_dependencies: must be a list of requirement strings, got dict {{'a': 1}}"
    assert reasons["bad-pep508"].startswith(f"{p}/bad-pep508/plugin.yaml:1: pip_dependencies[1]: 'no good' is not a valid PEP 508 requirement")
    assert reasons["bad-version"] == f"{p}/bad-version/plugin.yaml:1: manifest_version: must be an integer, got 'two'"
    assert reasons["latin1"] == f"{p}/latin1/plugin.yaml: is not valid UTF-8 (byte 16: b'\\xe9')"
    assert reasons["huge"].startswith(f"{p}/huge/plugin.yaml: is 5242901 bytes; the limit is 1048576 bytes")
    assert reasons["escape"] == f"{p}/escape: is a symlink that escapes {p}; refused"
    assert reasons["bad-yaml"].startswith(f"{p}/bad-yaml/plugin.yaml: is not valid YAML")
    assert reasons["bad-toml"].startswith(f"{p}/bad-toml/pyproject.toml: is not valid TOML")
    assert reasons["not-mapping"] == f"{p}/not-mapping/plugin.yaml: must be a mapping at the top level, got list"
    assert f"{home / 'config.yaml'}: plugin key '../up' refused: it contains '..' or is an absolute path" in data["notices"]
    plugin_union = [(u["requirement"], u["origin"].get("plugin")) for u in data["union"] if u["origin"]["kind"] == "plugin"]
    assert plugin_union == [
        ("alpha>=1", "pyproj"), ('beta; python_version < "3"', "pyproj"),
        ("gamma", "legacy"), ("delta==2.*", "legacy"), ("eta", "trap"),
    ]
    assert plugins["legacy"]["declaration"]["file"] == f"{p}/legacy/plugin.yaml"
    assert not (tmp_path / "IMPORTED").exists()


def test_fingerprint_changes_with_declaration_bytes_and_selection(home):
    first = scan_json(home)["fingerprint"]
    assert scan_json(home)["fingerprint"] == first
    (home / "plugins/legacy/plugin.yaml").write_text("pip_dependencies: [gamma]\npython_dependencies: [delta==3.*]\n")
    second = scan_json(home)["fingerprint"]
    assert second != first
    (home / "plugins/sidecar/runtime/pyproject.toml").write_text("[project]\nname='b'\ndependencies=['other']\n")
    assert scan_json(home)["fingerprint"] == second  # never read, never counted
    config = (home / "config.yaml").read_text().replace("disabled: [retired]", "disabled: [retired, legacy]")
    (home / "config.yaml").write_text(config)
    assert scan_json(home)["fingerprint"] != second


def test_core_and_core_lock_override(home, tmp_path):
    make(tmp_path, {
        "host/pyproject.toml": "[project]\nname='host'\ndependencies=['sharedlib>=1', 'requests']\n",
        "host/pins.txt": "# core lock\nsharedlib==1.4.0\nrequests==2.31.0\n",
    })
    data = scan_json(home, "--core", str(tmp_path / "host/pyproject.toml"), "--core-lock", str(tmp_path / "host/pins.txt"))
    assert data["core"]["requirements"] == [{"requirement": "sharedlib>=1"}, {"requirement": "requests"}]
    assert data["core"]["lock"] == ["requests==2.31.0", "sharedlib==1.4.0"]


def test_unreadable_primary_config_exits_1_naming_file_and_key(tmp_path, capsys):
    make(tmp_path, {"config.yaml": "plugins: {disabled: 3}\n"})
    assert main(["scan", "--home", str(tmp_path)]) == 1
    receipt = json.loads((tmp_path / "pm/receipts/latest.json").read_text())
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"]) == ("scan", "failed", 1)
    assert first_line(capsys) == (
        f"error: {tmp_path / 'config.yaml'}: plugins.disabled: must be a list of plugin names, got int 3"
    )


def test_bad_core_lock_line_is_named(tmp_path, capsys):
    make(tmp_path, {"lock.txt": "ok==1.0\nnot a pin\n"})
    assert main(["scan", "--home", str(tmp_path), "--core-lock", str(tmp_path / "lock.txt")]) == 1
    assert first_line(capsys) == (
        f"error: {tmp_path / 'lock.txt'}: line 2: must be a pin 'name==version', got name='not a pin' version=None"
    )


def test_human_table(home, capsys, monkeypatch):
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(home / "bundled"))
    assert main(["scan", "--home", str(home)]) == 0
    out = capsys.readouterr().out
    assert "PLUGIN" in out and "sidecar-only" in out
    assert f"  alpha>=1  <- plugin 'pyproj' ({home / 'plugins/pyproj/pyproject.toml'})" in out


def test_yaml_booleans_as_plugin_names_get_a_hint(tmp_path, capsys):
    make(tmp_path, {"config.yaml": "plugins: {enabled: [on]}\n"})
    assert main(["scan", "--home", str(tmp_path)]) == 1
    assert first_line(capsys) == (
        f"error: {tmp_path / 'config.yaml'}: plugins.enabled: must be a list of plugin names; True is not one "
        "(YAML reads bare on/off/yes/no as booleans: quote the name)"
    )


def test_a_typo_in_a_selection_key_is_an_error_with_did_you_mean(tmp_path, capsys):
    make(tmp_path, {"config.yaml": "plugins: {disabeld: [weather]}\nmemory: {provder: x, enabled: true}\n"})
    assert main(["scan", "--home", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"error: {tmp_path / 'config.yaml'}: plugins.disabeld: unknown key; did you mean plugins.disabled?" in err
    assert f"{tmp_path / 'config.yaml'}: memory.provder: unknown key; did you mean memory.provider?" in err
