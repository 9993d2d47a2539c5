"""Issue 20's three public-index refusals (opt-in: ``scripts/test -m network``): a realistic host
core of exact pins and two wide ranges, and one plugin pinning an old release of a popular
agent-ecosystem package. Each must be refused as uv refuses it (never "too complex"), in seconds,
with a proof and only checked remedies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from pm.cli import main
from pm.testing import make_home
from pm.testing.receipts import assert_valid_receipt

pytestmark = pytest.mark.network

CORE = ["openai==1.55.3", "httpx==0.27.2", "pydantic==2.10.3", "tenacity==9.1.4", "requests==2.32.3",
        "jinja2==3.1.4", "websockets==13.1", "urllib3>=2.7,<3", "fastapi>=0.104,<1", "pyyaml==6.0.2",
        "rich==13.9.4", "anyio==4.7.0"]
PLUGINS = {"langchain==0.0.200": "langchain", "qdrant-client==1.1.0": "qdrant-client", "zep-python==0.30": "zep-python"}
INDEX = "https://pypi.org/simple/"


@pytest.mark.parametrize("pin", list(PLUGINS))
def test_a_public_refusal_is_proved_as_uv_proves_it(pin, tmp_path, monkeypatch, capsys, uv_bin) -> None:
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    (tmp_path / "core.toml").write_text(f"[project]\nname = 'host'\nversion = '1.0'\ndependencies = {json.dumps(CORE)}\n")
    (tmp_path / "lock.txt").write_text("")
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["p"]}})
    (home / "plugins" / "p").mkdir(parents=True)
    (home / "plugins" / "p" / "plugin.yaml").write_text(json.dumps({"pip_dependencies": [pin]}))
    started = time.monotonic()
    code = main(["resolve", "--json", "--home", str(home), "--index-url", INDEX, "--core", str(tmp_path / "core.toml"),
                 "--core-lock", str(tmp_path / "lock.txt")])
    seconds = time.monotonic() - started
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    assert code == 3, receipt["failure"]
    assert receipt["conflict"]["plugins"] == ["p"] and receipt["conflict"]["proof"]
    assert all(s.get("checked", True) is not False or "not checked" in s["why"] for s in receipt["next_steps"])
    assert seconds < 30, seconds

    (tmp_path / "req.in").write_text("\n".join([*CORE, pin]) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_"))}
    env |= {"UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_NO_CONFIG": "1", "NO_COLOR": "1"}
    uv = subprocess.run([uv_bin, "pip", "compile", str(tmp_path / "req.in"), "--index-url", INDEX, "--python",
                         sys.executable, "--no-header"], capture_output=True, text=True, env=env, timeout=300,
                        check=False)
    assert uv.returncode == 1 and "No solution found" in uv.stderr, uv.stderr
    assert PLUGINS[pin] in uv.stderr and PLUGINS[pin] in receipt["conflict"]["message"]

