"""`hermes pm catalog check` takes the resolution flags and settings the other commands take
(issue 35): --allow-build and pm.allow_builds (with the builder a source-only package needs),
--constraint and pm.constraints, --extra-index-url; and the hint a refusal prints names a flag
the gate takes. Also: an unquoted all-digit sha in an entry file is told to be quoted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm.cli import main
from pm.testing import LocalIndex, build_packages, make_home
from pm.testing.catalogs import plugin_repo
from pm.testing.sdists import backend_sdist


@pytest.fixture
def gate(tmp_path, monkeypatch):
    """A directory catalog of 'src' (needs onlysrc: a source distribution whose metadata only a
    build tells), 'shared' (sharedlib), 'new' (sharedlib>=2), 'extra' (extrapkg, on a second
    index only), 'fresh' (stamped>=2, uploaded 2024-05-01) and 'pre' (prelib>=1: 1.0, 2.0rc1);
    the gate's arguments."""
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    dists, more = tmp_path / "dists", tmp_path / "more"
    records = build_packages(dists, {"helper": {"1.0": []}, "sharedlib": {"1.0": [], "2.0": []},
                                     "stamped": {"1.0": {"upload_time": "2024-01-10T08:00:00Z"},
                                                 "2.0": {"upload_time": "2024-05-01T00:00:00Z"}},
                                     "prelib": {"1.0": [], "2.0rc1": []}})
    backend_sdist(dists, "onlysrc", "1.0", requires=("helper>=1",))
    build_packages(more, {"extrapkg": {"1.0": []}})
    folder = tmp_path / "catalog.d"
    folder.mkdir()
    for name, requirements in {"src": ["onlysrc"], "shared": ["sharedlib"], "new": ["sharedlib>=2"],
                               "extra": ["extrapkg"], "fresh": ["stamped>=2"], "pre": ["prelib>=1"]}.items():
        repo, commit = plugin_repo(tmp_path / "repos", name, requirements)
        (folder / f"{name}.yaml").write_text(json.dumps({"name": name, "repo": f"file://{repo}", "sha": commit}))
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    with LocalIndex([dists, *records]) as index, LocalIndex([more]) as extra:  # records: upload times
        yield tmp_path, ["catalog", "check", str(folder), "--index-url", index.url, "--core", str(tmp_path / "core.toml"),
                         "--core-lock", str(tmp_path / "lock.txt"), "--json"], extra.url


def _kinds(argv: list[str], capsys, code: int) -> dict[str, dict]:
    assert main(argv) == code
    return {v["entry"]: v for v in json.loads(capsys.readouterr().out)["verdicts"]}


def test_allow_build_by_flag_and_by_setting_builds_what_the_gate_needs(gate, capsys) -> None:
    root, argv, extra = gate
    argv += ["--extra-index-url", extra]
    verdicts = _kinds(argv, capsys, 3)
    assert verdicts["src"]["kind"] == "no-wheel"
    assert "--allow-build onlysrc" in verdicts["src"]["cause"]  # a flag the gate takes: run as told
    assert _kinds([*argv, "--allow-build", "onlysrc"], capsys, 0)["src"]["kind"] == "ok"  # built: its metadata is dynamic
    home = make_home(root / "home", config={"pm": {"allow_builds": ["onlysrc"]}})
    assert _kinds([*argv, "--home", str(home)], capsys, 0)["src"]["kind"] == "ok"
    assert not (home / "pm" / "receipts").exists()


def test_constraints_by_flag_and_by_setting_bind_the_gate_too(gate, capsys) -> None:
    root, argv, extra = gate
    argv += ["--extra-index-url", extra, "--allow-build", "onlysrc"]
    before = _kinds(argv, capsys, 0)
    assert {v["kind"] for v in before.values()} == {"ok"}
    (root / "constraints.txt").write_text("sharedlib<2\n")
    after = _kinds([*argv, "--constraint", str(root / "constraints.txt")], capsys, 3)
    assert after["new"]["verdict"] == "refused alone" and "sharedlib<2" in after["new"]["cause"]
    assert after["shared"]["kind"] == "ok" and after["shared"]["pins_digest"] != before["shared"]["pins_digest"]
    home = make_home(root / "home", config={"pm": {"constraints": ["sharedlib<2"]}})
    assert _kinds([*argv, "--home", str(home)], capsys, 3)["new"]["verdict"] == "refused alone"


def test_an_extra_index_is_searched(gate, capsys) -> None:
    _, argv, extra = gate
    assert _kinds(argv, capsys, 3)["extra"]["kind"] == "missing-project"
    assert _kinds([*argv, "--extra-index-url", extra], capsys, 3)["extra"]["kind"] == "ok"


def test_an_unquoted_all_digit_sha_is_told_to_be_quoted(tmp_path) -> None:
    from pm.base.errors import InputError
    from pm.inputs.catalog import load_catalog

    folder = tmp_path / "catalog.d"
    folder.mkdir()
    (folder / "digits.yaml").write_text(f"name: digits\nrepo: https://example.org/d.git\nsha: {'1234567890' * 4}\n")
    with pytest.raises(InputError) as caught:
        load_catalog(folder)
    assert str(caught.value) == (
        f"{Path(folder / 'digits.yaml')}: sha: must be a non-empty string, got {int('1234567890' * 4)!r} (YAML read "
        "the unquoted value as a number, so its digits may have changed: quote it)")


def test_exclude_newer_and_prereleases_reach_the_gate(gate, capsys) -> None:
    _, argv, extra = gate
    argv += ["--extra-index-url", extra, "--allow-build", "onlysrc"]
    before = _kinds(argv, capsys, 0)
    cut = _kinds([*argv, "--exclude-newer", "2024-03-01"], capsys, 3)
    assert cut["fresh"]["verdict"] == "refused alone" and "stamped" in cut["fresh"]["cause"]
    allowed = _kinds([*argv, "--prereleases", "allow"], capsys, 0)
    assert allowed["pre"]["pins_digest"] != before["pre"]["pins_digest"]  # 2.0rc1 taken, not 1.0
