"""Property-based fuzzing of everything pm parses from others (issue 15): plugin manifests and
declarations, config.yaml (read and edited), and index project pages.

Properties: no exception but the documented ones (an :class:`~pm.base.errors.InputError` for a file,
:class:`~pm.inputs.config_edit.ConfigEditError` for an edit, :class:`~pm.index.base.IndexFailure` for a
page); every message is bounded; an edit pm makes re-reads as exactly the intended selection; and
end to end, ``pm scan`` exits 0 with a hostile plugin beside a good one, which stays a member.
Examples are derandomized, so CI sees the same few thousand cases every run, in seconds.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pm.base import yamlfile as _yaml
from pm.base.errors import InputError
from pm.index._pages import page_digest
from pm.index.base import IndexFailure
from pm.inputs.config import read_config
from pm.inputs.config_edit import ConfigEditError, change_list
from pm.inputs.discover import PluginRoot
from pm.inputs.plugin import inspect

FAST = settings(max_examples=400, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: Longest message pm may write about one bad file or page.
MAX_MESSAGE = 4_000

KEYS = ["name", "kind", "manifest_version", "pip_dependencies", "python_dependencies", "python_runtime",
        "requires_hermes", "description", "pip_dependencie", "plugins", "enabled", "disabled", "memory",
        "provider", "pm", "index_url", "lock_timeout", "exclude_newer", "prereleases", "catalog", "<<"]
REQUIREMENTS = ["alpha", "alpha>=1", "beta[x]==2.*; python_version<'3'", "no good", "pkg @ https://x/y.whl",
                "hermes-pm", "", " ", "a" * 300, "x\x00y", "é>=1"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
    st.sampled_from(REQUIREMENTS), st.text(max_size=30),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner, max_size=5)),
    max_leaves=20,
)
documents = st.dictionaries(st.sampled_from(KEYS), values, max_size=8)


def _yaml_text(data: Any) -> str:
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


#: Raw fragments that have broken pm before: aliases, tabs, BOMs, deep nesting, duplicate keys.
FRAGMENTS = ["a: &x [1, 2]\n", "b: *x\n", "c: *nope\n", "\ufeff", "other:\t1\n", "[" * 70, "]" * 70,
             "plugins:\n  enabled: [a]\n", "plugins:\n  disabled: [b]\n", "- x\n", "{", "}\n", "  - a\n",
             "x: !!python/object:os.system {}\n", "k: 'unterminated\n", "\x00", "\r\n", "# c\n", "&a [*a]\n",
             "pip_dependencies: [alpha]\n", "pip_dependencies: [beta]\n", "name: \"a\\nb\"\n"]
raw_yaml = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=20), max_size=12).map("".join)
yaml_texts = st.one_of(documents.map(_yaml_text), raw_yaml, st.text(max_size=200))


def _problems_are_bounded(exc: InputError) -> None:
    assert exc.problems
    assert all(len(str(p)) < MAX_MESSAGE for p in exc.problems), [str(p)[:200] for p in exc.problems]


def _inspect(files: dict[str, str | bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "plugins" / "fuzzed"
        root.mkdir(parents=True)
        for name, content in files.items():
            data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
            (root / name).write_bytes(data)
        plugin = inspect(PluginRoot("fuzzed", root, "user", root.parent))
        assert all(len(p) < MAX_MESSAGE for p in plugin.problems), [p[:200] for p in plugin.problems]
        if plugin.declaration is not None:
            assert all(len(str(r)) < 100_000 for r in plugin.declaration.requirements)


@FAST
@given(yaml_texts)
def test_any_plugin_yaml_makes_a_plugin_valid_or_invalid_never_raises(text: str) -> None:
    _inspect({"plugin.yaml": text})


@FAST
@given(st.one_of(documents.map(lambda d: json.dumps(d, default=str)),
                 st.lists(st.sampled_from(['{"a": ', "[" * 50, "]", "}", '"x"', "1e999", "NaN", ","]),
                          max_size=20).map("".join)))
def test_any_plugin_json_makes_a_plugin_valid_or_invalid_never_raises(text: str) -> None:
    _inspect({"plugin.json": text})


TOML_VALUES = ["5", "'x'", "true", "[]", "['alpha', 'beta>=2']", "[1, 2]", "{a = 1}", "['dependencies']",
               "'>=3.8'", "'>=='", "[" * 40 + "]" * 40, "'''multi\nline'''", "1979-05-27", "inf", "nan"]
toml_lines = st.tuples(st.sampled_from(["name", "dependencies", "dynamic", "requires-python", "version",
                                        "optional-dependencies", "x"]), st.sampled_from(TOML_VALUES))
pyprojects = st.one_of(
    st.lists(toml_lines, max_size=6).map(
        lambda lines: "[project]\n" + "".join(f"{k} = {v}\n" for k, v in dict(lines).items())),
    st.lists(st.sampled_from(["[project]\n", "[tool.x]\n", "a = 1\n", "a = 1\n", "x = " + "[" * 80,
                              "[[project]]\n", "project = 3\n", "\x00"]) | st.text(max_size=20),
             max_size=8).map("".join),
)


@FAST
@given(pyprojects, st.one_of(st.none(), yaml_texts))
def test_any_pyproject_beside_any_manifest_never_raises(pyproject: str, manifest: str | None) -> None:
    files: dict[str, str | bytes] = {"pyproject.toml": pyproject}
    if manifest is not None:
        files["plugin.yaml"] = manifest
    _inspect(files)


@FAST
@given(yaml_texts)
def test_any_config_reads_or_is_one_config_error(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "config.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            config = read_config(Path(folder))
        except InputError as exc:
            _problems_are_bounded(exc)
            return
        assert all(isinstance(n, str) for n in (*config.enabled, *config.disabled))


@FAST
@given(yaml_texts, st.sampled_from(["enabled", "disabled"]), st.sampled_from(["notes", "tools/b", "a-b", "yes"]),
       st.booleans())
def test_an_edit_is_exact_or_refused(text: str, key: str, name: str, add: bool) -> None:
    try:
        before = _yaml.load(text)
    except _yaml.Error:
        before = None
    try:
        new = change_list(text, key, add=name if add else None, remove=None if add else name)
    except ConfigEditError as exc:
        assert len(str(exc)) < MAX_MESSAGE
        return
    if new == text:
        return
    after = _yaml.load(new) or {}
    assert isinstance(before, dict | type(None))
    plugins = after["plugins"]
    listed = [str(n) for n in plugins.get(key) or []]
    assert (name in listed) is add
    rest = {k: v for k, v in after.items() if k != "plugins"}
    assert rest == {k: v for k, v in (before or {}).items() if k != "plugins"}


ANCHORS = ['<a href="alpha-1.0-py3-none-any.whl#sha256=' + "0" * 64 + '">a</a>', '<a href="/login">sign in</a>',
           '<a href="alpha-1.0.tar.gz" data-requires-python="&gt;=3">s</a>', "<base href='http://other/'>",
           '<a href="alpha-1.0-py3-none-any.whl" data-yanked="">y</a>', "<a>", "</a>", "<a href=", "<!--",
           '<a href="../../etc/passwd.whl">x</a>', '<a href="alpha-x-py3-none-any.whl">bad version</a>']
html_pages = st.lists(st.sampled_from(ANCHORS) | st.text(max_size=20), max_size=15).map(lambda p: "".join(p).encode())
json_files = st.fixed_dictionaries({}, optional={
    "filename": st.sampled_from(["alpha-1.0-py3-none-any.whl", "alpha-1.0.tar.gz", "a/b.whl", "x"]) | st.integers(),
    "url": st.sampled_from(["alpha-1.0-py3-none-any.whl", "", "http://x/a.whl"]) | st.integers(),
    "hashes": st.dictionaries(st.sampled_from(["sha256", "md5"]), st.text(max_size=64)) | st.integers(),
    "requires-python": st.sampled_from([">=3", ">==", ""]) | st.integers(),
    "yanked": st.booleans() | st.text(max_size=5), "core-metadata": st.booleans() | st.integers(),
    "size": st.integers() | st.text(max_size=3), "upload-time": st.text(max_size=5)})
json_pages = st.fixed_dictionaries({"meta": st.fixed_dictionaries({"api-version": st.sampled_from(["1.0", "2.0", "1.1"])}),
                                    "files": st.lists(json_files, max_size=6) | values}).map(
    lambda d: json.dumps(d).encode())
content_types = st.sampled_from(["text/html", "application/vnd.pypi.simple.v1+json", "text/plain", ""])


@FAST
@given(st.one_of(html_pages, json_pages, st.binary(max_size=200)), content_types, st.booleans())
def test_any_project_page_digests_or_is_an_index_failure(body: bytes, content_type: str, tagged: bool) -> None:
    tags = frozenset({"py3-none-any"}) if tagged else None
    try:
        page_digest(body, content_type, "http://index.example/simple/alpha/", tags)
    except IndexFailure as exc:
        assert len(str(exc)) < MAX_MESSAGE


GOOD = "[project]\nname = 'good'\ndependencies = ['alpha>=1']\n"
hostile_roots = st.one_of(
    yaml_texts.map(lambda t: {"plugin.yaml": t}),
    pyprojects.map(lambda t: {"pyproject.toml": t}),
    st.tuples(pyprojects, yaml_texts).map(lambda p: {"pyproject.toml": p[0], "plugin.yaml": p[1]}),
)


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_roots, st.booleans())
def test_pm_scan_survives_a_hostile_plugin_and_keeps_the_good_one(files: dict[str, str], enabled: bool) -> None:
    import contextlib
    import io

    from pm.cli import main

    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        for name, text in {"plugins/good/pyproject.toml": GOOD,
                           **{f"plugins/hostile/{k}": v for k, v in files.items()}}.items():
            (home / name).parent.mkdir(parents=True, exist_ok=True)
            (home / name).write_text(text, encoding="utf-8", errors="surrogatepass")
        (home / "config.yaml").write_text("plugins:\n  enabled: [good" + (", hostile]\n" if enabled else "]\n"))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["scan", "--json", "--home", str(home)])
        assert code == 0, err.getvalue()[:2000]
        assert len(out.getvalue()) + len(err.getvalue()) < 200_000
        receipt_file = home / "pm/receipts/latest.json"
        assert receipt_file.stat().st_size < 200_000
        plugins = {p["name"]: p for p in json.loads(receipt_file.read_text())["inputs"]["plugins"]}
        assert (plugins["good"]["status"], plugins["good"]["requirements"]) == ("member", ["alpha>=1"])
