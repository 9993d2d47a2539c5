"""agent.activation: a hermes process runs on the generation selected when it started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import agent.activation
from agent.activation import activate, environment_home
from agent.errors import ActivationError
from agent.testing import ROOT, set_config
from pm.env.generations import Generation
from pm.testing.homes import add_plugin, add_profile

USES_SHAREDLIB = '''
import sharedlib
from agent.memory_provider import MemoryProvider


class Charts(MemoryProvider):
    name = "charts"
    def is_available(self): return True
    def initialize(self, session_id, **kwargs): pass
    def get_tool_schemas(self): return []
    def handle_tool_call(self, name, args, **kwargs): return "{}"
    def get_config_schema(self): return []
    def save_config(self, values, hermes_home): pass
    def system_prompt_block(self): return f"sharedlib {sharedlib.__version__} from {sharedlib.__file__}"


def register(ctx):
    ctx.register_memory_provider(Charts())
'''

START_UP = '''
import json, os, sys
from pathlib import Path
from agent.activation import activate
from agent.loader import load_memory_provider
home = Path(sys.argv[1])
generation = activate(home)
loaded = load_memory_provider(home)
lease = home / "pm" / "leases" / f"{os.getpid()}.json"
print(json.dumps({"pid": os.getpid(), "generation": generation.id if generation else None,
                  "block": loaded.provider.system_prompt_block(), "first_path": sys.path[0],
                  "lease": json.loads(lease.read_text()) if lease.exists() else None}))
'''


def _start(home: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", START_UP, str(home)], capture_output=True,
                          text=True, env={**env, "PYTHONPATH": str(ROOT)}, timeout=60, check=False)


def test_a_process_imports_plugin_dependencies_from_its_generation(
        new_home: Callable[..., Path], sync: Callable[..., Generation]) -> None:
    home = new_home({"memory": {"provider": "charts"}})
    add_plugin(home / "plugins", "charts", style="pyproject", dependencies=["sharedlib>=2"],
               manifest={"kind": "memory"}, init_code=USES_SHAREDLIB)
    generation = sync(home, {"sharedlib": "2.1"})
    done = _start(home, dict(os.environ))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    site = generation.site_packages
    assert report["generation"] == generation.id
    assert report["first_path"] == str(site)
    assert report["block"] == f"sharedlib 2.1 from {site}/sharedlib/__init__.py"
    lease = report["lease"]
    assert (lease["pid"], lease["generation"]) == (report["pid"], generation.id)
    assert not (home / "pm" / "leases" / f"{report['pid']}.json").exists()  # released at exit


def test_a_process_without_a_generation_refuses_a_provider_that_needs_one(
        new_home: Callable[..., Path]) -> None:
    home = new_home({"memory": {"provider": "charts"}})
    root = add_plugin(home / "plugins", "charts", style="pyproject", dependencies=["sharedlib>=2"],
                      manifest={"kind": "memory"}, init_code=USES_SHAREDLIB)
    done = _start(home, {**os.environ, "HERMES_HOME": str(home)})
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "agent.errors.ProviderNotReady: memory provider 'charts' is not ready: requires "
        f"sharedlib>=2; no generation is selected (declared in {root}/pyproject.toml); "
        "run `hermes pm sync`")


def test_no_generation_activates_nothing(new_home: Callable[..., Path]) -> None:
    path = list(sys.path)
    assert activate(new_home()) is None
    assert sys.path == path
    assert agent.activation.active() is not None


def test_activation_happens_once_per_process(
        new_home: Callable[..., Path], sync: Callable[..., Generation]) -> None:
    home = new_home({"plugins": {"enabled": ["charts"]}})
    add_plugin(home / "plugins", "charts", style="manifest", dependencies=["sharedlib>=2"])
    first = sync(home, {"sharedlib": "2.1"})
    assert activate(home) == first
    assert sys.path.count(str(first.site_packages)) == 1
    set_config(home, plugins={"enabled": []})
    second = sync(home, {})
    assert second.id != first.id
    assert activate(home) == first  # a newer selection waits for a restart
    assert str(second.site_packages) not in sys.path
    other = new_home(name="other")
    with pytest.raises(ActivationError) as caught:
        activate(other)
    assert str(caught.value) == (
        f"cannot activate the environment of {other}: this process already runs on the "
        f"environment of {home} (one environment per process)")


def test_profiles_share_the_primary_homes_environment(
        new_home: Callable[..., Path], sync: Callable[..., Generation]) -> None:
    home = new_home({"plugins": {"enabled": ["charts"]}})
    add_plugin(home / "plugins", "charts", style="manifest", dependencies=["sharedlib>=2"])
    work = add_profile(home, "work")
    assert environment_home(work) == home
    assert environment_home(home) == home
    generation = sync(home, {"sharedlib": "2.1"})
    assert activate(work) == generation
    assert json.loads((home / "pm" / "leases" / f"{os.getpid()}.json").read_text())["generation"] \
        == generation.id
