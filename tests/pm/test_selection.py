"""Discovery, precedence and selection across a home and its profiles."""

from pathlib import Path

import pytest
from packaging.version import Version

from pm.base.errors import ConfigError
from pm.inputs.discover import PluginSources, discover
from pm.inputs.selection import select


def plugin(folder: Path, name: str, manifest: str = "pip_dependencies: []\n", **files: str) -> Path:
    root = folder / name
    root.mkdir(parents=True)
    if manifest is not None:
        (root / "plugin.yaml").write_text(manifest)
    for filename, text in files.items():
        (root / filename.replace("__", "/").replace("_toml", ".toml")).parent.mkdir(parents=True, exist_ok=True)
        (root / filename.replace("__", "/").replace("_toml", ".toml")).write_text(text)
    return root


def home_with(tmp_path: Path, config: str) -> Path:
    home = tmp_path / "home"
    (home / "plugins").mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(config)
    return home


def run_select(home: Path, bundled: Path | None = None, project: Path | None = None, python="3.11.7", host="0.1.0"):
    return select(
        home,
        python_version=Version(python),
        host_version=Version(host),
        sources=lambda h: PluginSources(home=h, bundled=bundled, project=project),
    )


def statuses(selection):
    return {s.plugin.key: (s.status, s.reason) for s in selection.plugins}


def test_every_status_and_reason(tmp_path):
    home = home_with(tmp_path, """
plugins:
  enabled: [member, sidecar, external, old, toonew, oldpy, broken, category-leaf]
  disabled: [old]
""")
    plugins = home / "plugins"
    plugin(plugins, "member", "pip_dependencies: [a]\n")
    plugin(plugins, "sidecar", "name: sidecar\n", runtime__pyproject_toml="[project]\ndependencies=['x']\n")
    plugin(plugins, "external", "python_runtime: external\npip_dependencies: [torch]\n")
    plugin(plugins, "old", "pip_dependencies: [a]\n")
    plugin(plugins, "idle", "pip_dependencies: [a]\n")
    plugin(plugins, "toonew", "requires_hermes: '>=9'\npip_dependencies: [a]\n")
    plugin(plugins, "oldpy", None, pyproject_toml="[project]\nname='x'\nrequires-python='<3.8'\n")
    plugin(plugins, "broken", "manifest_version: 7\n")
    plugin(plugins / "tools", "category-leaf", "pip_dependencies: [b]\n")
    got = statuses(run_select(home))
    assert got == {
        "broken": ("invalid", f"{plugins / 'broken/plugin.yaml'}:1: manifest_version: 7 is not supported (this pm reads versions 1 to 2)"),
        "external": ("external", "python_runtime: external (brings its own interpreter)"),
        "idle": ("not-enabled", "not in plugins.enabled"),
        "member": ("member", "in plugins.enabled"),
        "old": ("disabled", f"listed in plugins.disabled of {home / 'config.yaml'}"),
        "oldpy": ("sits-out", "requires-python '<3.8' excludes the target Python 3.11.7"),
        "sidecar": ("sidecar-only", "no declaration at the plugin root (no [project] in pyproject.toml, "
                    "no pip_dependencies/python_dependencies in the manifest)"),
        "toonew": ("sits-out", "requires_hermes '>=9' excludes this host (0.1.0)"),
        "tools/category-leaf": ("member", "in plugins.enabled (by leaf name)"),
    }


def test_disabled_by_bare_leaf_name_wins_over_enabled_key(tmp_path):
    home = home_with(tmp_path, "plugins: {enabled: [tools/x], disabled: [x]}\n")
    plugin(home / "plugins" / "tools", "x")
    assert statuses(run_select(home))["tools/x"][0] == "disabled"


def test_host_requirement_that_excludes_this_host_sits_out(tmp_path):
    home = home_with(tmp_path, "plugins: {enabled: [p]}\n")
    plugin(home / "plugins", "p", "pip_dependencies: ['hermes-pm>=2']\n")
    assert statuses(run_select(home))["p"] == ("sits-out", "requires 'hermes-pm>=2' but this host is 0.1.0")


def test_memory_provider_selects_an_existing_provider(tmp_path):
    bundled = tmp_path / "bundled"
    plugin(bundled, "fts")
    home = home_with(tmp_path, "memory: {provider: fts}\n")
    assert statuses(run_select(home, bundled))["fts"] == ("member", "memory.provider")


def test_missing_memory_provider_is_a_notice_not_silence(tmp_path):
    home = home_with(tmp_path, "memory: {provider: honcho}\n")
    selection = run_select(home)
    assert selection.notices == (
        f"{home / 'config.yaml'}: memory.provider names 'honcho', but no memory provider of that name is "
        "installed",  # what installs it is the operations' to say (pm.ops.providers)
    )
    assert [h.missing_provider for h in selection.homes] == ["honcho"]


def test_memory_provider_earlier_source_wins_and_the_shadowed_root_is_reported(tmp_path):
    bundled, project = tmp_path / "bundled", tmp_path / "project"
    plugin(bundled, "mem", "pip_dependencies: [bundled-dep]\n")
    home = home_with(tmp_path, "memory: {provider: mem}\n")
    plugin(home / "plugins", "mem", "kind: memory\npip_dependencies: [user-dep]\n")
    plugin(project, "mem", "kind: memory\npip_dependencies: [project-dep]\n")
    selection = run_select(home, bundled, project)
    got = [(s.plugin.root.source, s.status, s.reason) for s in selection.plugins]
    assert got == [
        ("bundled", "member", "memory.provider"),
        ("user", "shadowed", f"shadowed by {bundled / 'mem'} (same name, earlier source wins)"),
        ("project", "shadowed", f"shadowed by {bundled / 'mem'} (same name, earlier source wins)"),
    ]


def test_general_plugin_later_source_wins(tmp_path):
    bundled, project = tmp_path / "bundled", tmp_path / "project"
    home = home_with(tmp_path, "plugins: {enabled: [tool]}\n")
    plugin(home / "plugins", "tool")
    plugin(project, "tool")
    got = [(s.plugin.root.source, s.status) for s in run_select(home, bundled, project).plugins]
    assert got == [("user", "shadowed"), ("project", "member")]


def test_names_starting_with_dot_or_underscore_are_not_plugins(tmp_path):
    home = home_with(tmp_path, "")
    for name in (".staging-1", "_cache", ".voice-sidecar", "real"):
        plugin(home / "plugins", name)
    assert [r.key for r in discover(PluginSources(home=home, bundled=None))] == ["real"]


def test_category_folder_with_its_own_manifest_is_a_plugin_not_a_category(tmp_path):
    home = home_with(tmp_path, "")
    outer = plugin(home / "plugins", "outer")
    plugin(outer, "inner")
    assert [r.key for r in discover(PluginSources(home=home, bundled=None))] == ["outer"]


def test_root_symlink_escaping_the_home_is_refused_and_others_still_scanned(tmp_path):
    elsewhere = plugin(tmp_path / "elsewhere", "evil", "pip_dependencies: [evil]\n")
    home = home_with(tmp_path, "plugins: {enabled: [evil, good]}\n")
    (home / "plugins" / "evil").symlink_to(elsewhere)
    plugin(home / "plugins", "good")
    got = statuses(run_select(home))
    assert got["evil"] == ("invalid", f"{home / 'plugins/evil'}: is a symlink that escapes {home / 'plugins'}; refused")
    assert got["good"][0] == "member"


def test_plugin_keys_with_dotdot_or_absolute_paths_are_refused(tmp_path):
    plugin(tmp_path / "home" / "plugins" / "..", "escapee")  # exists at <home>/escapee
    home = home_with(tmp_path, "plugins: {enabled: ['../escapee', '/etc/passwd']}\n")
    selection = run_select(home)
    assert [s.plugin.key for s in selection.plugins] == []
    assert selection.notices == (
        f"{home / 'config.yaml'}: plugin key '../escapee' refused: it contains '..' or is an absolute path",
        f"{home / 'config.yaml'}: plugin key '/etc/passwd' refused: it contains '..' or is an absolute path",
    )


def test_profiles_join_the_union_and_one_plugin_in_two_homes_is_one_member(tmp_path):
    bundled = tmp_path / "bundled"
    plugin(bundled, "fts")
    home = home_with(tmp_path, "memory: {provider: fts}\n")
    work = home / "profiles" / "work"
    (work / "plugins").mkdir(parents=True)
    (work / "config.yaml").write_text("memory: {provider: fts}\nplugins: {enabled: [journal]}\n")
    plugin(work / "plugins", "journal", "pip_dependencies: [md]\n")
    selection = run_select(home, bundled)
    assert [(s.plugin.key, s.status, s.homes) for s in selection.members] == [
        ("fts", "member", (str(home), str(work))),
        ("journal", "member", (str(work),)),
    ]
    assert [h.members for h in selection.homes] == [("fts",), ("journal", "fts")]


def test_unreadable_profile_is_skipped_with_a_notice(tmp_path):
    home = home_with(tmp_path, "plugins: {enabled: [a]}\n")
    plugin(home / "plugins", "a")
    broken = home / "profiles" / "broken"
    broken.mkdir(parents=True)
    (broken / "config.yaml").write_text("plugins: [oops\n")
    selection = run_select(home)
    assert [s.plugin.key for s in selection.members] == ["a"]
    assert len(selection.notices) == 1
    assert selection.notices[0].startswith(f"profile 'broken' skipped: {broken / 'config.yaml'}: is not valid YAML: ")


def test_unreadable_primary_config_is_an_error(tmp_path):
    home = home_with(tmp_path, "plugins:\n  enabled: yes-please\npm:\n  index_ur: http://x\n")
    with pytest.raises(ConfigError) as caught:
        run_select(home)
    assert [str(p) for p in caught.value.problems] == [
        f"{home / 'config.yaml'}: plugins.enabled: must be a list of plugin names, got str 'yes-please'",
        f"{home / 'config.yaml'}: pm.index_ur: unknown key; did you mean 'index_url'?",
    ]


def test_project_plugins_only_when_enabled_by_environment(tmp_path):
    home = tmp_path / "home"
    assert PluginSources.for_home(home, env={}, cwd=tmp_path).project is None
    sources = PluginSources.for_home(home, env={"HERMES_ENABLE_PROJECT_PLUGINS": "1"}, cwd=tmp_path)
    assert sources.project == tmp_path / ".hermes" / "plugins"
    assert PluginSources.for_home(home, env={"HERMES_BUNDLED_PLUGINS": "/x"}).bundled == Path("/x")


def test_status_is_a_closed_set_with_named_predicates():
    from pm.inputs.selection import STATUSES, Status

    assert STATUSES == tuple(Status) and Status.MEMBER == "member"
    assert {s for s in Status if s.joins} == {Status.MEMBER, Status.SIDECAR_ONLY, Status.EXTERNAL}
    assert {s for s in Status if s.enabled} == {Status.MEMBER, Status.SIDECAR_ONLY, Status.EXTERNAL, Status.SITS_OUT}
    assert {s for s in Status if s.named} - {s for s in Status if s.enabled} == {Status.DISABLED}
    assert {s for s in Status if not s.can_join} == {Status.INVALID, Status.SITS_OUT, Status.SHADOWED}
