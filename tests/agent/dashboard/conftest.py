"""One real home per module (the README's example home, a local index of real wheels on
127.0.0.1, real generations built by ``hermes pm sync``), one real ``hermes dashboard`` process
serving it, and one real headless Chromium (Debian's ``chromium`` and ``chromium-driver``) driven
by Selenium through /usr/bin/chromedriver: nothing is downloaded.

Screenshots go to ``$HERMES_DASHBOARD_SCREENSHOTS`` when set, else to a folder of the run's tmp.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from pm.testing import index_from_spec, without_tool_settings
from pm.testing.homes import add_plugin

ROOT = Path(__file__).resolve().parents[3]
HERMES = str(Path(sys.executable).parent / "hermes")
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")

#: A user memory provider with a secret, a choice, an integer and a boolean (hermes memory setup's cases).
VAULT = '''
import json
from pathlib import Path
from agent.memory_provider import MemoryProvider

SCHEMA = [
    {"key": "api_key", "description": "API key", "secret": True, "env_var": "VAULT_API_KEY", "required": True},
    {"key": "region", "description": "Region", "choices": ["eu", "us"], "default": "eu"},
    {"key": "max_items", "description": "Items per recall", "type": "integer", "required": True},
    {"key": "verbose", "description": "Chatty", "type": "boolean", "default": False},
]


class Vault(MemoryProvider):
    name = "vault"
    def is_available(self): return True
    def initialize(self, session_id, **kwargs): pass
    def get_tool_schemas(self): return []
    def handle_tool_call(self, name, args, **kwargs): return "{}"
    def get_config_schema(self): return [dict(f) for f in SCHEMA]
    def save_config(self, values, hermes_home):
        path = Path(hermes_home) / "memory" / "vault.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values, sort_keys=True))


def register(ctx):
    ctx.register_memory_provider(Vault())
'''


@dataclass(frozen=True)
class Served:
    home: Path
    env: dict[str, str]
    url: str  # the printed URL, token included
    process: subprocess.Popen[str]

    @property
    def base(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def token(self) -> str:
        return urlsplit(self.url).query.removeprefix("token=")

    def at(self, path: str) -> str:
        return f"{self.base}{path}?token={self.token}"

    def receipt(self) -> dict[str, Any]:
        """The latest receipt, with the path of its own file (``receipt_path``, as ``--json`` gives it)."""
        data: dict[str, Any] = json.loads((self.home / "pm/receipts/latest.json").read_text())
        newest = sorted(p for p in (self.home / "pm/receipts").glob("*.json") if p.name != "latest.json")[-1]
        assert json.loads(newest.read_text()) == data
        return data | {"receipt_path": str(newest)}


def hermes(env: dict[str, str], *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([HERMES, *args], env=env, text=True, capture_output=True, check=False, timeout=120)
    assert done.returncode == expect, f"hermes {' '.join(args)}: {done.returncode}\n{done.stdout}{done.stderr}"
    return done


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """The example home with two generations (sync, then `plugins enable calendar`), and the vault
    provider in its plugins; the environment every hermes process of the module runs with."""
    scratch = tmp_path_factory.mktemp("dashboard")
    home = scratch / "home"
    shutil.copytree(ROOT / "scripts" / "example-home", home, symlinks=True)
    add_plugin(home / "plugins", "vault", style="sidecar", manifest={"kind": "memory"}, init_code=VAULT)
    spec = {k: v for k, v in json.loads((ROOT / "scripts" / "example-index.json").read_text()).items()
            if not k.startswith("_")}
    with index_from_spec(scratch / "wheels", spec) as index:
        env = {**without_tool_settings(os.environ), "HERMES_HOME": str(home), "NO_COLOR": "1",
               "HERMES_PM_INDEX_URL": index.url, "HERMES_PM_CACHE_DIR": str(scratch / "cache"),
               "HOME": str(scratch / "user"), "PIP_INDEX_URL": "http://127.0.0.1:9/simple/"}
        hermes(env, "pm", "sync")
        hermes(env, "plugins", "enable", "calendar")
        yield home, env


def serve(home: Path, env: dict[str, str], *flags: str) -> subprocess.Popen[str]:
    return subprocess.Popen([HERMES, "dashboard", "--home", str(home), *flags], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def served(example: tuple[Path, dict[str, str]]) -> Iterator[Served]:
    """``hermes dashboard --allow-actions`` on the example home, as a real process."""
    home, env = example
    process = serve(home, env, "--allow-actions")
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), (url, process.stderr.read() if process.poll() is not None else "")
    yield Served(home, env, url, process)
    process.terminate()
    process.wait(timeout=10)


def _chrome() -> Any:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("the browser tests need Debian's chromium and chromium-driver (/usr/bin/chromium, "
                    "/usr/bin/chromedriver): `apt-get install chromium chromium-driver` (.ci/run does)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the test extra: pip install -e .[test]")
    from selenium.webdriver.chrome.service import Service

    return webdriver, Service


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the module (a fresh profile, no background connections)."""
    webdriver, service = _chrome()
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1280,900",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=service(executable_path=str(CHROMEDRIVER)))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = os.environ.get("HERMES_DASHBOARD_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path
