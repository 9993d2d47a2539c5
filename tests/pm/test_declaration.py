"""Declarations per docs/design.md: who owns them, how the two manifest lists combine, what is kept out."""

from pathlib import Path

import pytest

from pm.base.errors import InputError
from pm.inputs.declaration import read_declaration
from pm.inputs.manifest import read_manifest


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def declare(root: Path):
    return read_declaration(root, read_manifest(root))


def test_pyproject_with_project_table_owns_the_declaration(tmp_path):
    write(tmp_path, {
        "pyproject.toml": '[project]\nname="p"\nrequires-python=">=3.10"\ndependencies=["a>=1", "b[x]<3"]\n',
        "plugin.yaml": "pip_dependencies: [ignored-package]\n",
    })
    declaration = declare(tmp_path)
    assert declaration.style == "pyproject"
    assert declaration.file == tmp_path / "pyproject.toml"
    assert [str(r) for r in declaration.requirements] == ["a>=1", "b[x]<3"]
    assert str(declaration.requires_python) == ">=3.10"
    assert declaration.warnings == (
        f"{tmp_path / 'plugin.yaml'}: pip_dependencies/python_dependencies are ignored because "
        f"{tmp_path / 'pyproject.toml'} has a [project] table, which owns the declaration",
    )


def test_empty_project_table_is_an_empty_declaration(tmp_path):
    write(tmp_path, {"pyproject.toml": "[project]\nname='p'\n"})
    declaration = declare(tmp_path)
    assert declaration is not None and declaration.requirements == ()


def test_tooling_only_pyproject_declares_nothing_and_manifest_lists_are_used(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "[tool.ruff]\nline-length = 99\n",
        "plugin.yaml": "pip_dependencies: ['a>=1', 'b']\npython_dependencies: ['b', 'c==2.*', 'a>=1']\n",
    })
    declaration = declare(tmp_path)
    assert declaration.style == "manifest"
    assert [str(r) for r in declaration.requirements] == ["a>=1", "b", "c==2.*"]


def test_tooling_only_pyproject_without_manifest_lists_is_sidecar_only(tmp_path):
    write(tmp_path, {"pyproject.toml": "[tool.black]\n", "plugin.yaml": "name: x\n"})
    assert declare(tmp_path) is None


def test_pyproject_below_the_root_is_never_read(tmp_path):
    write(tmp_path, {
        "plugin.yaml": "name: sidecar\n",
        "runtime/pyproject.toml": "[project]\nname='backend'\ndependencies=['torch']\n",
    })
    assert declare(tmp_path) is None


@pytest.mark.parametrize("manifest", ["plugin.yml", "plugin.json"])
def test_other_manifest_names(tmp_path, manifest):
    body = '{"pip_dependencies": ["a"]}' if manifest.endswith("json") else "pip_dependencies: [a]\n"
    write(tmp_path, {manifest: body})
    assert [str(r) for r in declare(tmp_path).requirements] == ["a"]


def test_yaml_wins_over_json(tmp_path):
    write(tmp_path, {"plugin.json": '{"pip_dependencies": ["from-json"]}', "plugin.yaml": "pip_dependencies: [from-yaml]\n"})
    assert [str(r) for r in declare(tmp_path).requirements] == ["from-yaml"]


def test_direct_urls_and_host_requirements_are_kept_out_and_reported(tmp_path):
    write(tmp_path, {"plugin.yaml": "pip_dependencies:\n - a\n - 'b @ https://example.invalid/b.whl'\n - hermes-pm>=0.1\n - Hermes_Agent\n"})
    declaration = declare(tmp_path)
    assert [str(r) for r in declaration.requirements] == ["a"]
    assert [(e.requirement, e.reason) for e in declaration.excluded] == [
        ("b @ https://example.invalid/b.whl", "direct URL requirements are not installed by pm; "
         "publish the package to an index or ask the plugin author"),
        ("hermes-pm>=0.1", "a requirement on the host itself is satisfied by the running host"),
        ("Hermes_Agent", "a requirement on the host itself is satisfied by the running host"),
    ]


def problems(tmp_path, files):
    write(tmp_path, files)
    with pytest.raises(InputError) as caught:
        declare(tmp_path)
    return [str(p) for p in caught.value.problems]


def test_every_problem_of_a_manifest_is_reported_at_once(tmp_path):
    found = problems(tmp_path, {"plugin.yaml": "manifest_version: two\npip_dependencies: [ok, 3]\npython_runtime: docker\n"})
    path = tmp_path / "plugin.yaml"
    assert found == [
        f"{path}:1: manifest_version: must be an integer, got 'two'",  # each with the line of its key
        f"{path}:2: pip_dependencies: must be a list of requirement strings; 3 is a int",
        f"{path}:3: python_runtime: must be one of 'host', 'external', got 'docker'",
    ]


def test_invalid_pep508_names_file_and_key(tmp_path):
    found = problems(tmp_path, {"plugin.yaml": "python_dependencies: ['good', 'bad>=>1']\n"})
    assert len(found) == 1
    assert found[0].startswith(f"{tmp_path / 'plugin.yaml'}:1: python_dependencies[1]: 'bad>=>1' is not a valid PEP 508 requirement")
    block = problems(tmp_path, {"plugin.yaml": "name: x\npython_dependencies:\n  - good\n  - bad>=>1\n"})
    assert block[0].startswith(f"{tmp_path / 'plugin.yaml'}:4: python_dependencies[1]: 'bad>=>1' is not")  # the item's line


def test_pip_dependencies_must_be_a_list(tmp_path):
    assert problems(tmp_path, {"plugin.yaml": "pip_dependencies: requests>=2\n"}) == [
        f"{tmp_path / 'plugin.yaml'}:1: pip_dependencies: must be a list of requirement strings, got str 'requests>=2'"
    ]


def test_manifest_version_above_supported(tmp_path):
    assert problems(tmp_path, {"plugin.yaml": "manifest_version: 3\n"}) == [
        f"{tmp_path / 'plugin.yaml'}:1: manifest_version: 3 is not supported (this pm reads versions 1 to 2)"
    ]


def test_misspelt_dependency_key_is_an_error_not_a_silent_drop(tmp_path):
    assert problems(tmp_path, {"plugin.yaml": "pip_dependency: [a]\n"}) == [
        f"{tmp_path / 'plugin.yaml'}:1: pip_dependency: unknown key; did you mean 'pip_dependencies'?"
    ]


def test_malformed_yaml(tmp_path):
    (found,) = problems(tmp_path, {"plugin.yaml": "pip_dependencies: [a\nname: x\n"})
    assert found == (f"{tmp_path / 'plugin.yaml'}: is not valid YAML: line 2, column 5, in 'pip_dependencies': did "
                     "not find expected ',' or ']' (while parsing a flow sequence started on line 1, column 19)")


def test_non_mapping_manifest(tmp_path):
    assert problems(tmp_path, {"plugin.yaml": "- a\n- b\n"}) == [
        f"{tmp_path / 'plugin.yaml'}: must be a mapping at the top level, got list"
    ]


def test_malformed_toml(tmp_path):
    (found,) = problems(tmp_path, {"pyproject.toml": "[project\nname='x'\n"})
    assert found.startswith(f"{tmp_path / 'pyproject.toml'}: is not valid TOML: ")


def test_pyproject_problems_name_their_keys(tmp_path):
    found = problems(tmp_path, {"pyproject.toml": "[project]\nrequires-python='3.10+'\ndependencies=['x', 'y[']\n"})
    path = tmp_path / "pyproject.toml"
    assert found[0] == f"{path}: project.requires-python: '3.10+' is not a valid version specifier"
    assert found[1].startswith(f"{path}: project.dependencies[1]: 'y[' is not a valid PEP 508 requirement")


def test_dynamic_dependencies_are_refused(tmp_path):
    assert problems(tmp_path, {"pyproject.toml": "[project]\nname='x'\ndynamic=['dependencies']\n"}) == [
        f"{tmp_path / 'pyproject.toml'}: project.dynamic: lists 'dependencies'; pm reads declarations "
        "statically, so list them in project.dependencies"
    ]


def test_non_utf8(tmp_path):
    assert problems(tmp_path, {"plugin.yaml": b"name: caf\xe9\n"}) == [
        f"{tmp_path / 'plugin.yaml'}: is not valid UTF-8 (byte 9: b'\\xe9')"
    ]


def test_huge_manifest_is_refused_unread(tmp_path):
    big = b"pip_dependencies: []\n" + b"#" * (5 * 1024 * 1024)
    assert problems(tmp_path, {"plugin.yaml": big}) == [
        f"{tmp_path / 'plugin.yaml'}: is {len(big)} bytes; the limit is 1048576 bytes"
    ]


def test_manifest_symlink_escaping_the_root_is_refused(tmp_path):
    outside = tmp_path / "outside.yaml"
    outside.write_text("pip_dependencies: [a]\n")
    root = tmp_path / "plugin"
    root.mkdir()
    (root / "plugin.yaml").symlink_to(outside)
    assert problems(root, {}) == [f"{root / 'plugin.yaml'}: is a symlink that escapes {root}"]


def test_entry_point_groups_are_read_for_the_repin_rule(tmp_path):
    """Issue 34: a new entry point group is something a re-pin brings (pm.ops.widening)."""
    write(tmp_path, {"pyproject.toml": '[project]\nname="p"\ndependencies=[]\n[project.scripts]\np="p:main"\n'
                                       '[project.entry-points."hermes_agent.plugins"]\np="p"\n'})
    assert declare(tmp_path).entry_points == ("hermes_agent.plugins", "console_scripts")
    write(tmp_path, {"pyproject.toml": '[project]\nname="p"\nentry-points = "no"\n'})
    with pytest.raises(InputError) as caught:
        declare(tmp_path)
    assert str(caught.value) == f"{tmp_path / 'pyproject.toml'}: project.entry-points: must be a table of tables, got 'no'"
