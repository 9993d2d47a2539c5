"""A provider laid out exactly as the guide shows (no ``kind:``), its ``config_schema.py`` and its
skills through ``skill_view()``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agent.config_schema import MAX_SCHEMA_BYTES, ConfigSchemaError, read_config_schema
from agent.discovery import discover_memory_providers, find_memory_provider
from agent.loader import load_memory_provider
from agent.memory_cli import main as memory_main
from agent.skills import skill_view
from agent.testing import provider_init, spy_init
from pm.cli import main as pm_main

GUIDE_MANIFEST = ('name: my-provider\nversion: 1.0.0\ndescription: "Short description of what this '
                  'provider does."\nhooks:\n  - on_session_end    # list hooks you implement\n')


def _guide_root(home: Path, name: str = "my-provider", init: str | None = None,
                manifest: str = GUIDE_MANIFEST) -> Path:
    root = home / "plugins" / name
    root.mkdir(parents=True)
    (root / "plugin.yaml").write_text(manifest)
    (root / "README.md").write_text("# my-provider\n")
    (root / "__init__.py").write_text(init if init is not None else provider_init(name))
    return root


def test_a_user_provider_without_kind_is_discovered_without_import(
    new_home: Callable[..., Path], tmp_path: Path,
) -> None:
    home = new_home({"memory": {"provider": "my-provider"}})
    marker = tmp_path / "imported"
    _guide_root(home, init=provider_init("my-provider", marker))
    info = find_memory_provider(home, "my-provider")
    assert info is not None and (info.source, info.problems) == ("user", ())
    assert not marker.exists()  # found from text, never imported
    loaded = load_memory_provider(home)
    assert loaded is not None and loaded.provider.name == "my-provider" and marker.exists()


def test_a_general_plugin_or_another_kind_is_not_a_memory_provider(new_home: Callable[..., Path]) -> None:
    home = new_home()
    _guide_root(home, "greeter", init="def register(ctx):\n    ctx.register_tool('hello')\n")
    _guide_root(home, "tooly", manifest="name: tooly\nkind: tool\n",
                init=provider_init("tooly"))  # says what it is: kind wins over the text
    names = {i.name for i in discover_memory_providers(home)}
    assert "greeter" not in names and "tooly" not in names


def test_pm_scan_counts_it_as_the_configured_memory_provider(
    new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str],
) -> None:
    home = new_home({"memory": {"provider": "my-provider"}})
    _guide_root(home, init=spy_init(home / "imported", provider_init("my-provider")))
    assert pm_main(["scan", "--home", str(home), "--json"]) == 0
    plugins = {p["name"]: p for p in json.loads(capsys.readouterr().out)["plugins"]}
    mine = plugins["my-provider"]
    assert (mine["memory_provider"], mine["status"]) == (True, "sidecar-only")  # by memory.provider
    assert not (home / "imported").exists()
    assert memory_main(["status", "--home", str(home)]) == 0
    assert "memory provider: my-provider (user," in capsys.readouterr().out


SCHEMA_FILE = '''"""Settings of my-provider, read by the host as data."""

CONFIG_SCHEMA = [
    {"key": "api_key", "description": "My Provider API key", "secret": True, "required": True,
     "env_var": "MY_API_KEY"},
    {"key": "region", "description": "Server region", "default": "us-east",
     "choices": ["us-east", "eu-west"]},
]
'''

SAVING = provider_init("my-provider").replace(
    "    def save_config(self, values, hermes_home):\n        pass\n",
    "    def save_config(self, values, hermes_home):\n"
    "        import json, pathlib\n"
    "        (pathlib.Path(hermes_home) / 'my-provider.json').write_text(json.dumps(values))\n")


def test_setup_prompts_from_config_schema_py(
    new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str],
) -> None:
    home = new_home({"memory": {"provider": "my-provider"}})
    root = _guide_root(home, init=SAVING)
    (root / "config_schema.py").write_text(SCHEMA_FILE)
    # the provider's own get_config_schema() is [] here: the prompts come from the file
    assert memory_main(["setup", "my-provider", "--home", str(home), "--set", "region=eu-west"]) == 2
    assert "required setting(s) without a value: api_key" in capsys.readouterr().err
    code = memory_main(["setup", "my-provider", "--home", str(home), "--set", "api_key=k1",
                        "--set", "region=eu-west"])
    assert code == 0, capsys.readouterr().err
    assert (home / ".env").read_text() == "MY_API_KEY=k1\n"
    assert json.loads((home / "my-provider.json").read_text()) == {"region": "eu-west"}


def test_config_schema_py_is_read_never_run(tmp_path: Path) -> None:
    path = tmp_path / "config_schema.py"
    path.write_text("def get_config_schema():\n    return [{'key': 'a', 'description': 'A'}]\n")
    assert read_config_schema(path) == [{"key": "a", "description": "A"}]
    path.write_text("import os\nCONFIG_SCHEMA = [{'key': os.getcwd()}]\n")
    with pytest.raises(ConfigSchemaError) as err:
        read_config_schema(path)
    assert str(err.value) == (f"{path}:2: the schema must be a literal list of dicts (it is read, "
                              "never run)")
    path.write_text("X = 1\n")
    with pytest.raises(ConfigSchemaError, match="defines none of CONFIG_SCHEMA, get_config_schema"):
        read_config_schema(path)


def test_an_oversized_config_schema_py_is_refused_unread(
    new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str],
) -> None:
    """Finding 4 of issue 34: a 300 MB config_schema.py was read whole (646 MB peak on one page)."""
    home = new_home({"memory": {"provider": "my-provider"}})
    root = _guide_root(home, init=SAVING)
    path = root / "config_schema.py"
    path.write_text(SCHEMA_FILE + "#" * MAX_SCHEMA_BYTES)
    size = path.stat().st_size
    said = f"{path}: is {size} bytes; the limit is {MAX_SCHEMA_BYTES} bytes"
    with pytest.raises(ConfigSchemaError) as err:
        read_config_schema(path)
    assert str(err.value) == said
    assert memory_main(["setup", "my-provider", "--home", str(home), "--set", "api_key=k1"]) == 2
    assert said in capsys.readouterr().err
    assert not (home / ".env").exists()
    from agent.dashboard.reads import provider

    page = provider(home, "my-provider")
    assert page is not None and (page["fields"], page["schema_error"]) == ([], said)


SKILLED = provider_init("my-provider", extra='''
from pathlib import Path as _P
SKILLS_DIR = _P(__file__).parent / "skills"

def register(ctx):
    ctx.register_memory_provider(Provider("my-provider"))
    ctx.register_skill("maintenance", SKILLS_DIR / "maintenance" / "SKILL.md",
                       "Maintain the provider's memory store")
''')


def test_skill_view_offers_the_active_providers_skills(new_home: Callable[..., Path]) -> None:
    home = new_home({"memory": {"provider": "my-provider"}})
    root = _guide_root(home, init=SKILLED)
    (root / "skills" / "maintenance").mkdir(parents=True)
    (root / "skills" / "maintenance" / "SKILL.md").write_text("# Maintenance\nCompact the store.\n")
    assert json.loads(skill_view("my-provider:maintenance", home=home))["error"]  # not loaded yet
    load_memory_provider(home)
    view = json.loads(skill_view("my-provider:maintenance", home=home))
    assert view == {"name": "my-provider:maintenance", "provider": "my-provider",
                    "description": "Maintain the provider's memory store",
                    "path": str((root / "skills" / "maintenance" / "SKILL.md").resolve()),
                    "content": "# Maintenance\nCompact the store.\n"}
    assert json.loads(skill_view("my-provider:other", home=home)) == {
        "error": "no skill 'my-provider:other' is offered here",
        "available": ["my-provider:maintenance"]}
