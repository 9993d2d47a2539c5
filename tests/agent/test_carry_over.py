"""Plugins of the real ecosystem carry over (issue 36): a ``kind: exclusive`` provider is a memory
provider; a provider written to the older guide samples (``os.environ.get("MY_API_KEY")``) sees the
key ``hermes memory setup`` wrote to its profile's ``.env``; entry-point plugins (both groups) are
listed and judged for readiness without being imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agent.cli import main as hermes_main
from agent.context import use_home
from agent.discovery import find_memory_provider
from agent.memory_cli import main as memory_main
from agent.memory_manager import MemoryManager
from agent.process_env import load_profile_env
from agent.secrets import get_secret
from agent.testing import provider_init
from pm.base.uv import find_uv
from pm.cli import main as pm_main
from pm.testing.wheels import build_wheel

#: A manifest as a real catalog plugin writes it for a provider chosen by memory.provider.
EXCLUSIVE_MANIFEST = "name: soullink\nversion: 0.3.0\nkind: exclusive\ndescription: a memory backend\n"


def _root(home: Path, name: str, manifest: str, init: str) -> Path:
    root = home / "plugins" / name
    root.mkdir(parents=True)
    (root / "plugin.yaml").write_text(manifest)
    (root / "__init__.py").write_text(init)
    return root


def test_a_kind_exclusive_plugin_is_the_memory_provider_its_config_names(
    new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str],
) -> None:
    home = new_home({"memory": {"provider": "soullink"}})
    # its code names nothing the text scan knows: the manifest's kind alone says what it is
    _root(home, "soullink", EXCLUSIVE_MANIFEST, "def register(ctx):\n    pass\n")
    info = find_memory_provider(home, "soullink")
    assert info is not None and (info.source, info.key) == ("user", "soullink")
    assert pm_main(["scan", "--home", str(home), "--json"]) == 0
    scanned = json.loads(capsys.readouterr().out)
    plugin = next(p for p in scanned["plugins"] if p["name"] == "soullink")
    assert (plugin["memory_provider"], plugin["status"]) == (True, "sidecar-only")  # by memory.provider
    assert not [n for n in scanned["notices"] if "is installed" in n], scanned["notices"]


def test_hermes_memory_status_loads_a_kind_exclusive_provider(
    new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str],
) -> None:
    home = new_home({"memory": {"provider": "soullink"}})
    _root(home, "soullink", EXCLUSIVE_MANIFEST, provider_init("soullink"))
    assert memory_main(["status", "--home", str(home)]) == 0, capsys.readouterr().err
    assert "memory provider: soullink (user," in capsys.readouterr().out


# -- a profile's .env reaches a provider written to the older samples (os.environ) -------------------

#: The provider class of the zh and ko guides (000_…, 001_…), as written there: it reads its key
#: from os.environ, not through the secret scope.
SAMPLE_CLASS = '''from agent.memory_provider import MemoryProvider

class MyMemoryProvider(MemoryProvider):
    @property
    def name(self) -> str:
        return "my-provider"

    def is_available(self) -> bool:
        """Check if this provider can activate. NO network calls."""
        return bool(os.environ.get("MY_API_KEY"))

    def initialize(self, session_id: str, **kwargs) -> None:
        """Called once at agent startup.

        kwargs always includes:
          hermes_home (str): Active HERMES_HOME path. Use for storage.
        """
        self._api_key = os.environ.get("MY_API_KEY", "")
        self._session_id = session_id

    # ... implement remaining methods
'''
#: What the author adds: the remaining abstract method, and the guide's schema and register(ctx),
#: as written there.
SAMPLE_REST = '''
    def get_tool_schemas(self):
        return []

    def get_config_schema(self):
        return [
            {
                "key": "api_key",
                "description": "My Provider API key",
                "secret": True,           # → written to .env
                "required": True,
                "env_var": "MY_API_KEY",   # explicit env var name
                "url": "https://my-provider.com/keys",  # where to get it
            },
        ]


def register(ctx) -> None:
    """Called by the memory plugin discovery system."""
    ctx.register_memory_provider(MyMemoryProvider())
'''


def _sample_home(new_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, **config: object) -> Path:
    monkeypatch.delenv("MY_API_KEY", raising=False)
    home = new_home({"memory": {"provider": "my-provider"}, **config})
    _root(home, "my-provider", "name: my-provider\nversion: 1.0.0\n", "import os\n" + SAMPLE_CLASS + SAMPLE_REST)
    return home


def cli_env() -> dict[str, str]:
    """This process's environment, with this checkout on the path of a child Python."""
    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}


def _status_in_a_new_process(home: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent.memory_cli", "status", "--home", str(home), "--json"],
                          env=env, capture_output=True, text=True, timeout=120, check=False)


def test_the_old_sample_becomes_available_once_setup_wrote_its_key(
    new_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    home = _sample_home(new_home, monkeypatch)
    assert memory_main(["status", "--home", str(home)]) == 4
    assert "available:       no (is_available() is false)" in capsys.readouterr().out
    assert memory_main(["setup", "my-provider", "--home", str(home), "--set", "api_key=k-123"]) == 0
    assert (home / ".env").read_text() == "MY_API_KEY=k-123\n"
    assert os.environ["MY_API_KEY"] == "k-123"  # this process serves that profile: it sees it at once
    capsys.readouterr()
    env = {k: v for k, v in cli_env().items() if k != "MY_API_KEY"}
    started = _status_in_a_new_process(home, env)  # a new process: the .env is read at start-up
    assert started.returncode == 0, started.stderr
    assert json.loads(started.stdout)["available"] is True


def test_the_real_environment_wins_over_the_profiles_env(
    new_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = _sample_home(new_home, monkeypatch)
    (home / ".env").write_text("MY_API_KEY=from-the-file\nOTHER_KEY=o\n")
    monkeypatch.setenv("MY_API_KEY", "from-the-shell")
    assert load_profile_env(home) == ("OTHER_KEY",)
    assert os.environ["MY_API_KEY"] == "from-the-shell"
    assert os.environ["OTHER_KEY"] == "o"
    started = _status_in_a_new_process(home, {**cli_env(), "MY_API_KEY": ""})  # set, though empty: it wins
    assert json.loads(started.stdout)["available"] is False, started.stderr


def test_no_value_leaks_from_one_profile_to_another(
    new_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = _sample_home(new_home, monkeypatch)
    (first / ".env").write_text("MY_API_KEY=first-profile\n")
    second = first / "profiles" / "second"
    second.mkdir(parents=True)
    (second / "config.yaml").write_text("memory:\n  provider: my-provider\n")
    assert load_profile_env(first) == ("MY_API_KEY",)
    assert load_profile_env(second) == () and "MY_API_KEY" not in os.environ  # the first's value withdrawn
    assert load_profile_env(first) == ("MY_API_KEY",)
    MemoryManager(first, multi_profile=True)  # a gateway serves several profiles: none in os.environ
    assert "MY_API_KEY" not in os.environ and load_profile_env(first) == ()
    with use_home(first):
        assert get_secret("MY_API_KEY") == "first-profile"  # there, the secret scope is the way


# -- entry-point plugins: discovered without import, listed, judged for readiness ------------------

def _entry_point_wheel(wheels: Path, name: str, group: str, entry: str, requires: list[str]) -> Path:
    module = name.replace("-", "_")
    return build_wheel(wheels, name, "1.0", requires_dist=requires, module=module, extra_files={
        f"{module}-1.0.dist-info/entry_points.txt": f"[{group}]\n{entry} = {module}.plugin:register\n".encode(),
        f"{module}/plugin.py": b"raise SystemExit('an entry-point plugin was imported')\n"})


def _uv_install(target: Path, *wheels: Path) -> None:
    subprocess.run([find_uv(), "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(target),
                    *map(str, wheels)], check=True, capture_output=True, timeout=300)


def _listed(home: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    assert hermes_main(["plugins", "list", "--home", str(home), "--json"]) == 0
    return {p["name"]: p for p in json.loads(capsys.readouterr().out)["plugins"]}


def test_entry_point_plugins_are_listed_and_judged_without_being_imported(
    new_home: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    _uv_install(site, _entry_point_wheel(wheels, "acme-greeter", "hermes_agent.plugins", "greeter",
                                         ["tinylib>=2", "hermes-agent>=0.1"]),
                _entry_point_wheel(wheels, "acme-cloudmem", "hermes_agent.memory_providers", "cloudmem", []))
    monkeypatch.syspath_prepend(str(site))
    home = new_home({"plugins": {"enabled": ["greeter"]}, "memory": {"provider": "cloudmem"}})
    listed = _listed(home, capsys)
    greeter, cloudmem = listed["greeter"], listed["cloudmem"]
    assert (greeter["source"], greeter["status"], greeter["ready"], greeter["memory_provider"]) == (
        "entry_point", "enabled", False, False)
    assert greeter["reason"] == "requires tinylib>=2, which is not installed"  # the host requirement is met
    assert greeter["entry_point"] == {"group": "hermes_agent.plugins", "value": "acme_greeter.plugin:register",
                                      "distribution": "acme-greeter", "version": "1.0"}
    assert (cloudmem["source"], cloudmem["status"], cloudmem["ready"], cloudmem["memory_provider"]) == (
        "entry_point", "enabled", True, True)
    assert pm_main(["scan", "--home", str(home), "--json"]) == 0  # plugins.enabled names an installed package
    assert [n for n in json.loads(capsys.readouterr().out)["notices"] if "greeter" in n] == []
    _uv_install(site, build_wheel(wheels, "tinylib", "2.0"))
    assert _listed(home, capsys)["greeter"]["ready"] is True
    assert not [m for m in sys.modules if m.startswith(("acme_greeter", "acme_cloudmem"))]  # never imported
