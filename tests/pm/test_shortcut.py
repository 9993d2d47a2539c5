"""The shortcut (pm.cli.shortcut): an identical ``python -m pm resolve`` over unchanged files and
fresh pages is answered from its last answer; any change of what the inputs were read from, the
environment, the command line or a page is a miss, and the full command decides.

Every run here is a real process, as a user runs pm, against a real local index that sends
PyPI's headers (pages fresh for ten minutes)."""

from __future__ import annotations

import dataclasses
import json
import marshal
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pm.cli import shortcut
from pm.index.cache import Cache
from pm.testing import NO_TOOL_FILES, LocalIndex, add_plugin, make_home
from pm.testing.audit import HOOK
from pm.testing.index import PRESETS
from pm.testing.receipts import assert_valid_receipt

SPEC = {"alpha": {"1.0": ["beta>=1"], "2.0": ["beta>=2"]}, "beta": {"1.0": [], "2.0": []},
        "gamma": {"1.0": []}}
#: What differs between two answers to the same command: when, how long, where the receipt went.
VOLATILE = ("started_at", "finished_at", "seconds", "receipt_path", "shortcut", "reused_resolution")


@dataclasses.dataclass
class Setup:
    home: Path
    index: LocalIndex
    env: dict[str, str]
    cwd: Path

    @property
    def argv(self) -> list[str]:
        return [sys.executable, "-m", "pm", "resolve", "--home", str(self.home), "--index-url", self.index.url,
                "--core", str(self.home.parent / "core.toml"), "--core-lock", str(self.home.parent / "lock.txt")]

    def run(self, *extra: str, ok: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*self.argv, *extra], env=self.env, cwd=self.cwd, capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == ok, done.stderr
        return done

    def latest(self) -> dict[str, Any]:
        receipt: dict[str, Any] = json.loads((self.home / "pm" / "receipts" / "latest.json").read_text())
        assert_valid_receipt(receipt)
        return receipt

    def shortcut_taken(self, *extra: str) -> bool:
        self.run(*extra)
        return bool(self.latest().get("shortcut"))


@pytest.fixture
def setup(tmp_path: Path, make_index: Callable[..., LocalIndex]) -> Setup:
    return _answered_once(tmp_path, make_index(SPEC, **PRESETS["pypi"]))


def _answered_once(tmp_path: Path, index: LocalIndex) -> Setup:
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["maps", "side"]}})
    add_plugin(home / "plugins", "maps", style="manifest", dependencies=["alpha"])
    add_plugin(home / "plugins", "side", style="sidecar")
    add_plugin(home / "plugins", "extra", style="manifest", dependencies=["gamma"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "UV_", "PIP_"))}
    env |= {"HERMES_PM_CACHE_DIR": str(tmp_path / "cache"), "HERMES_BUNDLED_PLUGINS": str(tmp_path / "no-bundled"),
            "PIP_INDEX_URL": "http://127.0.0.1:9/simple/", **NO_TOOL_FILES}
    (tmp_path / "cwd").mkdir()
    made = Setup(home, index, env, tmp_path / "cwd")
    made.run()  # the first answer: resolved, and remembered
    return made


def without(receipt: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in receipt.items() if k not in keys}


def pins(receipt: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["version"] for p in receipt["resolution"]["packages"]}


def test_an_identical_resolve_is_answered_by_the_shortcut_with_the_same_answer(setup: Setup) -> None:
    first = setup.latest()
    full = setup.run("--json")  # another command line: a miss, answered in full
    assert "shortcut" not in json.loads(full.stdout)
    setup.index.reset_log()

    again = setup.run("--json")

    answered = json.loads(again.stdout)
    assert answered["shortcut"] is True and answered["reused_resolution"] is True
    assert setup.index.requests == []
    assert without(answered, *VOLATILE) == without(json.loads(full.stdout), *VOLATILE) == without(first, *VOLATILE)
    assert answered["receipt_path"] != json.loads(full.stdout)["receipt_path"]
    assert without(setup.latest(), *VOLATILE) == without(answered, *VOLATILE)


def test_the_shortcut_prints_what_the_full_command_prints(setup: Setup) -> None:
    (setup.home.parent / "cache" / shortcut.FOLDER).rename(setup.home.parent / "forgotten")
    full = setup.run()
    assert not setup.latest().get("shortcut")
    short = setup.run()
    assert setup.latest()["shortcut"] is True
    head, *table = short.stdout.splitlines()
    assert head.startswith("resolved 2 packages for core + 1 plugin(s) (Python ")
    assert table == full.stdout.splitlines()[1:]
    assert table[1:] == ["alpha    2.0      maps", "beta     2.0      maps"]
    newest = max((setup.home / "pm" / "receipts").glob("*-resolve-*.json"))
    assert short.stderr.splitlines() == [f"receipt: {newest}"]
    assert full.stderr.startswith("receipt: ")


def _enable_extra(setup: Setup) -> None:
    config = setup.home / "config.yaml"
    config.write_text(config.read_text().replace("- side", "- side\n  - extra"))


def _tighten_maps(setup: Setup) -> None:
    add_plugin(setup.home / "plugins", "maps", style="manifest", dependencies=["alpha<2"])


def _declare_in_sidecar(setup: Setup) -> None:
    (setup.home / "plugins" / "side" / "pyproject.toml").write_text(
        "[project]\nname = 'side'\nversion = '1'\ndependencies = ['gamma']\n")


def _new_plugin_folder(setup: Setup) -> None:
    add_plugin(setup.home / "plugins", "later", style="manifest", dependencies=["gamma"])


def _maps_escapes(setup: Setup) -> None:
    outside = setup.home.parent / "elsewhere"
    shutil.move(setup.home / "plugins" / "maps", outside)
    (setup.home / "plugins" / "maps").symlink_to(outside, target_is_directory=True)


def _core_changes(setup: Setup) -> None:
    (setup.home.parent / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['gamma']\n")


def _environment_changes(setup: Setup) -> None:
    setup.env["HERMES_PM_HTTP_RETRIES"] = "1"


def _working_folder_changes(setup: Setup) -> None:
    setup.cwd = setup.home.parent


def _page_goes_stale(setup: Setup) -> None:
    cache = Cache(setup.home.parent / "cache")
    header = cache.get_header(setup.index.project_url("beta"))
    assert header is not None
    cache.put_header(dataclasses.replace(header, fetched_at=header.fetched_at - 3600))


def _profile_appears(setup: Setup) -> None:
    make_home(setup.home / "profiles" / "work", config={"plugins": {"enabled": ["extra"]}})


def _same_bytes_rewritten(setup: Setup) -> None:
    manifest = setup.home / "plugins" / "maps" / "plugin.yaml"
    manifest.write_bytes(manifest.read_bytes())
    os.utime(manifest, (1, 1))


MISSES = [_enable_extra, _tighten_maps, _declare_in_sidecar, _new_plugin_folder, _maps_escapes, _core_changes,
          _environment_changes, _working_folder_changes, _page_goes_stale, _profile_appears]


@pytest.mark.parametrize("change", MISSES, ids=[c.__name__.strip("_") for c in MISSES])
def test_any_change_of_what_the_answer_was_read_from_is_a_miss(setup: Setup, change: Callable[[Setup], None]) -> None:
    assert setup.shortcut_taken()
    before = setup.latest()
    change(setup)

    assert not setup.shortcut_taken(), f"{change.__name__}: answered from memory"
    after = setup.latest()
    assert after["inputs"]["fingerprint"] != before["inputs"]["fingerprint"] or change in (
        _new_plugin_folder, _environment_changes, _working_folder_changes, _page_goes_stale)
    assert setup.shortcut_taken(), "the new answer is remembered in turn"


def test_a_page_past_its_max_age_takes_the_full_command_and_a_fresh_one_does_not(
        tmp_path: Path, make_index: Callable[..., LocalIndex]) -> None:
    """Only the clock moves: the page headers in the cache keep their bytes, and the answer is
    taken from memory while each page is fresh by its max-age, then no more."""
    index = make_index(SPEC, **(PRESETS["pypi"] | {"cache_control": "max-age=6, public"}))
    setup = _answered_once(tmp_path, index)
    cache = Cache(tmp_path / "cache")
    headers = [cache.get_header(index.project_url(name)) for name in ("alpha", "beta")]
    assert None not in headers
    files = {path: path.read_bytes() for path in (tmp_path / "cache" / "pages-v2").glob("*/*")}
    index.reset_log()

    assert setup.shortcut_taken(), "fresh: answered from memory"
    assert index.requests == []
    stale_at = min(h.fetched_at + h.max_age for h in headers if h is not None)
    time.sleep(max(0.0, stale_at - time.time()) + 0.1)
    assert {path: path.read_bytes() for path in files} == files  # nothing but the clock moved

    assert not setup.shortcut_taken(), "stale: answered from memory"
    assert sorted(index.requests) == [("GET", "/simple/alpha/"), ("GET", "/simple/beta/")]  # revalidated
    assert {path: path.read_bytes() for path in files} != files
    assert setup.shortcut_taken(), "revalidated, and remembered in turn"


def test_what_the_changes_mean_is_decided_by_the_full_command(setup: Setup) -> None:
    _tighten_maps(setup)
    setup.run()
    assert pins(setup.latest()) == {"alpha": "1.0", "beta": "2.0"}
    _maps_escapes(setup)
    setup.run()
    maps = next(p for p in setup.latest()["inputs"]["plugins"] if p["name"] == "maps")
    assert maps["status"] != "member" and pins(setup.latest()) == {}


def test_rewriting_the_same_bytes_keeps_the_shortcut(setup: Setup) -> None:
    _same_bytes_rewritten(setup)
    assert setup.shortcut_taken()


def test_a_damaged_record_is_a_miss_and_is_written_anew(setup: Setup) -> None:
    for record in (setup.home.parent / "cache" / shortcut.FOLDER).iterdir():
        record.write_text('{"format": 1, "seen": {"f:/": 5}, "pages": "x"')
    assert not setup.shortcut_taken()
    assert setup.shortcut_taken()


@pytest.mark.parametrize("extra", [("--exclude-newer", "3000-01-01"), ("--find-links", "{tmp}")])
def test_no_shortcut_where_the_answer_depends_on_what_is_not_watched(setup: Setup, extra: tuple[str, str]) -> None:
    option, value = extra
    argv = (option, value.format(tmp=setup.home.parent / "no-wheels"))
    (setup.home.parent / "no-wheels").mkdir(exist_ok=True)
    setup.run(*argv)
    assert not setup.shortcut_taken(*argv)


def test_a_refusal_is_answered_from_memory_while_its_inputs_and_pages_are_unchanged(setup: Setup) -> None:
    (setup.home.parent / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['alpha>=2', 'beta<2']\n")
    first = setup.run(ok=3)
    full = setup.latest()
    assert full["outcome"] == "conflict" and not full.get("shortcut") and not full.get("reused_refusal")
    setup.index.reset_log()
    again = setup.run(ok=3)
    answered = setup.latest()
    assert answered["shortcut"] is True and setup.index.requests == []
    assert without(answered, *VOLATILE) == without(full, *VOLATILE)  # the same proof and checked remedies
    assert again.stderr.splitlines()[:-1] == first.stderr.splitlines()[:-1]  # printed the same, receipt aside
    # the shortcut's record gone, the stored proof still answers (the full command, no resolve)
    for record in (setup.home.parent / "cache" / shortcut.FOLDER).iterdir():
        record.unlink()
    setup.run(ok=3)
    assert setup.latest()["reused_refusal"] is True and not setup.latest().get("shortcut")
    setup.run("--refresh", ok=3)  # asks the index again: proved anew
    assert not setup.latest().get("reused_refusal") and setup.latest()["outcome"] == "conflict"
    # a changed declaration is a miss on both: resolved again, and it resolves
    (setup.home.parent / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['alpha>=2']\n")
    setup.run()
    assert setup.latest()["outcome"] == "ok" and not setup.latest().get("shortcut")


AUDIT = HOOK + r'''
from pathlib import Path
from pm.base.watch import Watch
from pm.ops.options import Options
from pm.ops.resolve import resolve
from pm.inputs.settings import Flags
home, index, core, lock = sys.argv[1:5]
flags = Flags(index_url=index, core=core, core_lock=lock)
watch = Watch()
done = resolve(Path(home), Options(flags=flags, watch=watch))
assert done.code == 0, done.receipt.written
print(json.dumps({"seen": sorted(watch.seen), "opened": sorted(opened), "listed": sorted(listed)}))
'''


def test_every_file_opened_and_folder_listed_for_the_inputs_is_watched(setup: Setup) -> None:
    """The guard of the whole idea: whatever the input readers open or list under the home, the
    bundled plugins or beside core, a Watch has noted (caught by an audit hook, in a process of
    its own)."""
    (setup.home.parent / "no-bundled").mkdir()
    add_plugin(setup.home.parent / "no-bundled", "bundled-one", style="manifest", dependencies=["gamma"])
    done = subprocess.run([sys.executable, "-c", AUDIT, str(setup.home), setup.index.url,
                           str(setup.home.parent / "core.toml"), str(setup.home.parent / "lock.txt")],
                          env=setup.env, cwd=setup.cwd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    inputs = (str(setup.home), str(setup.home.parent / "no-bundled"), str(setup.home.parent / "core.toml"),
              str(setup.home.parent / "lock.txt"))
    receipts = str(setup.home / "pm")
    seen = set(found["seen"])
    opened = [p for p in found["opened"] if p.startswith(inputs) and not p.startswith(receipts)]
    listed = [p for p in found["listed"] if p.startswith(inputs) and not p.startswith(receipts)]
    assert opened and listed
    assert [p for p in opened if f"f:{p}" not in seen] == []
    assert [p for p in listed if f"d:{p}" not in seen] == []


def test_hermes_pm_resolve_takes_the_shortcut_too(setup: Setup) -> None:
    argv = [sys.executable, "-m", "agent", "pm", *setup.argv[3:]]
    for _ in range(2):
        done = subprocess.run(argv, env=setup.env, cwd=setup.cwd, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr
    assert setup.latest()["shortcut"] is True
    assert done.stdout.splitlines()[1:] == setup.run().stdout.splitlines()[1:]


# -- review: streams, folders and records the shortcut must survive -------------------------------

def _in_shell(setup: Setup, script: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """The command run by ``sh -c script`` ("$@" is the command line), as a shell user runs it."""
    return subprocess.run(["sh", "-c", script, "sh", *setup.argv, *extra], env=setup.env, cwd=setup.cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def test_a_closed_stdout_neither_crashes_the_full_command_nor_the_shortcut(setup: Setup) -> None:
    for _ in range(2):
        done = _in_shell(setup, 'exec "$@" >&-')
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert setup.latest()["shortcut"] is True


def test_a_working_folder_that_was_removed_is_a_miss_not_a_crash(setup: Setup) -> None:
    """The full command decides what a vanished working folder means (with absolute paths: nothing)."""
    gone = setup.home.parent / "gone"
    answers = []
    for forget in (False, True):
        gone.mkdir()
        if forget:
            shutil.rmtree(setup.home.parent / "cache" / shortcut.FOLDER)
        done = subprocess.run(["sh", "-c", f'cd "{gone}" && rmdir "{gone}" && exec "$@"', "sh", *setup.argv],
                              env=setup.env, cwd=setup.home.parent, capture_output=True, text=True, timeout=120,
                              check=False)
        assert "shortcut.py" not in done.stderr
        answers.append((done.returncode, done.stdout.splitlines()[1:]))
    assert answers[0] == answers[1] and answers[0][0] == 0


def test_a_failing_stderr_never_prints_the_answer_twice(setup: Setup) -> None:
    full = _in_shell(setup, 'exec "$@" 2>/dev/full')  # sh's environment: another key, a miss
    assert _in_shell(setup, 'exec "$@"').returncode == 0  # remembered under that key
    short = _in_shell(setup, 'exec "$@" 2>/dev/full')
    assert setup.latest().get("shortcut") is True, "the shortcut answered, and it alone"
    assert short.returncode == full.returncode != 0
    assert short.stdout.splitlines()[1:] == full.stdout.splitlines()[1:]


def test_a_reader_that_went_away_gets_one_answer_and_one_receipt(setup: Setup) -> None:
    """``hermes pm resolve --json | head``: the shortcut stops as the full command does (exit 1),
    without running the full command after it (a second receipt, a second answer)."""
    setup.run("--json")
    receipts = setup.home / "pm" / "receipts"
    before = set(receipts.glob("*-resolve-*.json"))
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([*setup.argv, "--json"], env=setup.env, cwd=setup.cwd, stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    finally:
        os.close(write)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert len(set(receipts.glob("*-resolve-*.json")) - before) == 1 and setup.latest()["shortcut"] is True


def test_a_record_that_parses_but_is_not_a_record_is_a_miss(setup: Setup) -> None:
    records = list((setup.home.parent / "cache" / shortcut.FOLDER).iterdir())
    good = marshal.loads(records[0].read_bytes())
    for damaged in ({"format": shortcut.FORMAT, "seen": {}, "pages": [], "offline": False},
                    good | {"seen": [1]}, good | {"stamps": None}, good | {"pages": "x"}, good | {"file": 5},
                    good | {"pages": [[None, 600]]}, good | {"refetch": "x"}, good | {"refetch": [["x"]]},
                    good | {"folder": str(setup.home.parent)}, good | {"home": None}, good | {"command": "gc"},
                    [good], good | {"format": shortcut.FORMAT - 1}):
        for record in records:
            record.write_bytes(marshal.dumps(damaged))
        done = setup.run()
        assert "Traceback" not in done.stderr and not setup.latest().get("shortcut"), damaged
    for record in records:
        record.write_bytes(marshal.dumps(good))
    assert setup.shortcut_taken(), "the record as written is taken again"


# -- review: the interpreter --python names ------------------------------------------------------

FAKE_PYTHON = """#!{python}
import contextlib, io, json, sys
out = io.StringIO()
with contextlib.redirect_stdout(out):
    exec(sys.argv[sys.argv.index("-c") + 1])
found = json.loads(out.getvalue())
found["markers"].update(python_full_version="3.99.0", python_version="3.99")
print(json.dumps(found))
"""


def _fake_python(path: Path, *, executable: bool = True) -> Path:
    """An interpreter that answers pm's probe as Python 3.99 (the running one underneath)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FAKE_PYTHON.format(python=sys.executable))
    path.chmod(0o755 if executable else 0o644)
    return path


def test_a_python_link_that_now_leads_elsewhere_is_a_miss(setup: Setup) -> None:
    link = setup.home.parent / "bin" / "py"
    link.parent.mkdir()
    link.symlink_to(sys.executable)  # the running interpreter, by another name
    assert not setup.shortcut_taken("--python", str(link))
    assert setup.shortcut_taken("--python", str(link))
    link.unlink()
    link.symlink_to(_fake_python(setup.home.parent / "fake" / "python3.99"))

    assert not setup.shortcut_taken("--python", str(link))
    assert setup.latest()["target"]["python"] == "3.99.0"


@pytest.mark.parametrize("how", ["appears", "becomes-executable"])
def test_a_python_found_earlier_on_path_is_a_miss(setup: Setup, how: str) -> None:
    early, late = setup.home.parent / "early", setup.home.parent / "late"
    late.mkdir()
    (late / "pyx").symlink_to(sys.executable)
    if how == "becomes-executable":
        _fake_python(early / "pyx", executable=False)
    early.mkdir(exist_ok=True)
    setup.env["PATH"] = os.pathsep.join([str(early), str(late), setup.env.get("PATH", os.defpath)])
    assert not setup.shortcut_taken("--python", "pyx")
    assert setup.shortcut_taken("--python", "pyx")
    if how == "appears":
        _fake_python(early / "pyx")
    else:
        (early / "pyx").chmod(0o755)

    assert not setup.shortcut_taken("--python", "pyx")
    assert setup.latest()["target"]["python"] == "3.99.0"


# -- review: what is installed where the interpreter looks (sys.path) ------------------------------

def _distribution(folder: Path, name: str, *, requires: tuple[str, ...] = (), entry_points: str | None = None) -> Path:
    """A ``.dist-info`` as an installer leaves it (its name carries no dependencies)."""
    info = folder / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", "Version: 0.1.0", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("\n".join(lines) + "\n")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)
    return info


def test_installed_core_metadata_rewritten_in_place_is_a_miss(setup: Setup) -> None:
    """``pip install -e .`` again after editing the dependencies keeps the .dist-info's name."""
    site = setup.home.parent / "site"
    _distribution(site, "hermes-pm")
    setup.env["PYTHONPATH"] = str(site)
    argv = setup.argv[:8]  # no --core, no --core-lock: core is the installed hermes-pm
    for _ in range(2):
        done = subprocess.run(argv, env=setup.env, cwd=setup.cwd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    assert setup.latest()["shortcut"] is True and pins(setup.latest()) == {"alpha": "2.0", "beta": "2.0"}
    _distribution(site, "hermes-pm", requires=("gamma",))

    done = subprocess.run(argv, env=setup.env, cwd=setup.cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not setup.latest().get("shortcut") and "gamma" in pins(setup.latest())


def test_an_interpreter_that_looks_elsewhere_is_a_miss(setup: Setup) -> None:
    """``python -E`` (or -I, -S, a .pth file rewritten) reads another sys.path: another core."""
    site = setup.home.parent / "site"
    _distribution(site, "hermes-pm", requires=("gamma",))
    setup.env["PYTHONPATH"] = str(site)
    argv = setup.argv[:8]
    for _ in range(2):
        done = subprocess.run(argv, env=setup.env, cwd=setup.cwd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    assert setup.latest()["shortcut"] is True and "gamma" in pins(setup.latest())

    subprocess.run([argv[0], "-E", *argv[1:]], env=setup.env, cwd=setup.cwd, capture_output=True, text=True,
                   timeout=120)
    assert not setup.latest().get("shortcut")
    assert setup.latest()["inputs"]["core"] != [{"requirement": "gamma"}]


@pytest.mark.parametrize("how", ["installed", "rewritten"])
def test_a_memory_provider_installed_as_an_entry_point_is_a_miss(setup: Setup, how: str) -> None:
    site = setup.home.parent / "site"
    _distribution(site, "mem-provider", entry_points="" if how == "rewritten" else None)
    setup.env["PYTHONPATH"] = str(site)
    config = setup.home / "config.yaml"
    config.write_text(config.read_text() + "memory:\n  provider: far-memory\n")
    assert not setup.shortcut_taken()
    assert setup.shortcut_taken()
    assert any("far-memory" in notice for notice in setup.latest()["inputs"]["notices"])
    group = "[hermes_agent.memory_providers]\nfar-memory = mem_provider:Provider\n"
    if how == "installed":
        _distribution(site, "other-provider", entry_points=group)
    else:
        _distribution(site, "mem-provider", entry_points=group)

    assert not setup.shortcut_taken()
    assert not any("far-memory" in notice for notice in setup.latest()["inputs"]["notices"])


# -- review: the stored resolution the shortcut stands for ---------------------------------------

#: Loaded at start-up from PYTHONPATH: when ``interleave`` exists, another process's resolution of
#: the same inputs (alpha 1.0) is stored right after this one resolved, before it remembers.
INTERLEAVE = """
import json, os, pathlib
marker = pathlib.Path(os.environ["REVIEW_MARKER"])
if marker.exists():
    marker.unlink()
    import pm.cli.resolve as command
    resolve = command.resolve

    def interleaved(*args, **kwargs):
        done = resolve(*args, **kwargs)
        for entry in pathlib.Path(os.environ["HERMES_PM_CACHE_DIR"], "results-v1").glob("*/*"):
            stored = json.loads(entry.read_text())
            for pin in stored["resolution"]["pins"]:
                if pin["name"] == "alpha":
                    pin["version"] = "1.0"
            entry.write_text(json.dumps(stored))
        return done

    command.resolve = interleaved
"""


def test_a_resolution_stored_by_another_process_meanwhile_is_not_remembered_as_ours(setup: Setup) -> None:
    hooks = setup.home.parent / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(INTERLEAVE)
    marker = setup.home.parent / "interleave"
    setup.env |= {"PYTHONPATH": str(hooks), "REVIEW_MARKER": str(marker)}
    _enable_extra(setup)  # new inputs: resolved in full, not reused
    marker.write_text("")
    setup.run()
    assert pins(setup.latest())["alpha"] == "2.0" and not marker.exists()

    setup.run()  # what the stored resolution says now, as the full command reads it
    assert pins(setup.latest())["alpha"] == "1.0"


def test_a_stored_resolution_that_is_gone_is_a_miss(setup: Setup) -> None:
    """The full command would resolve again (reused_resolution: false): so does the shortcut."""
    assert setup.shortcut_taken()
    shutil.rmtree(setup.home.parent / "cache" / "results-v1")
    assert not setup.shortcut_taken()
    assert setup.latest()["reused_resolution"] is False


def test_a_uv_that_appears_is_a_miss(setup: Setup) -> None:
    """Receipts name the uv pm drives; one that could not be run is not a fact to remember."""
    uv = setup.home.parent / "uv-later"
    setup.env["HERMES_PM_UV"] = str(uv)
    assert not setup.shortcut_taken()
    assert setup.latest()["tool"]["uv"] is None
    uv.write_text("#!/bin/sh\necho 'uv 9.9.9'\n")
    uv.chmod(0o755)

    assert not setup.shortcut_taken()
    assert setup.latest()["tool"]["uv"] == "9.9.9"


def test_an_upgrade_of_the_code_that_answered_is_a_miss(setup: Setup) -> None:
    """packaging (markers, tags, versions) upgraded where pm imports it from, with core given on
    the command line (so no listing of sys.path is noted for core): the full command answers with
    the new code."""
    import packaging

    site = setup.home.parent / "site"
    shutil.copytree(Path(packaging.__file__).parent, site / "packaging")
    (site / f"packaging-{packaging.__version__}.dist-info").mkdir()
    setup.env["PYTHONPATH"] = str(site)
    assert not setup.shortcut_taken()
    assert setup.shortcut_taken()
    # what pip does: new files, and the .dist-info renamed
    (site / f"packaging-{packaging.__version__}.dist-info").rename(site / "packaging-99.0.dist-info")
    init = site / "packaging" / "__init__.py"
    init.write_text(init.read_text().replace(f'__version__ = "{packaging.__version__}"', '__version__ = "99.0"'))
    markers = site / "packaging" / "markers.py"
    markers.write_text(markers.read_text() + "\n_old = default_environment\n"
                       "def default_environment():\n    return {**_old(), 'python_full_version': '3.99.0'}\n")

    assert not setup.shortcut_taken()
    assert setup.latest()["target"]["python"] == "3.99.0"


def test_a_record_is_as_private_as_the_receipt_it_holds(setup: Setup) -> None:
    """Receipts are 0600 (they name index URLs and the user's paths); a record holds one."""
    records = list((setup.home.parent / "cache" / shortcut.FOLDER).glob(f"*{shortcut.SUFFIX}"))
    assert records and all(record.stat().st_mode & 0o077 == 0 for record in records)


def test_receipts_removed_are_written_anew_by_the_shortcut(setup: Setup) -> None:
    shutil.rmtree(setup.home / "pm")
    assert setup.shortcut_taken()
    assert len(list((setup.home / "pm" / "receipts").glob("*-resolve-*.json"))) == 1


def test_records_are_pruned_to_the_newest(setup: Setup) -> None:
    folder = setup.home.parent / "cache" / shortcut.FOLDER
    for number in range(shortcut.KEEP + 5):
        old = folder / f"{number:064x}{shortcut.SUFFIX}"
        old.write_bytes(b"")
        os.utime(old, (1, 1))
    setup.run("--json")  # a new command line: answered in full, remembered
    kept = sorted(folder.iterdir())
    assert len(kept) == shortcut.KEEP
    assert setup.shortcut_taken("--json"), "the newest record is among those kept"


def test_a_deleted_working_folder_is_no_traceback(setup: Setup) -> None:
    gone = setup.home.parent / "gone"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    done = subprocess.run(["sh", "-c", script, "sh", str(gone), *setup.argv], env=setup.env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    relative = [*setup.argv[:-4], "--core", "core.toml", "--core-lock", str(setup.home.parent / "lock.txt")]
    gone.mkdir()
    done = subprocess.run(["sh", "-c", script, "sh", str(gone), *relative], env=setup.env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "the current folder no longer exists" in done.stderr


def test_a_pip_conf_or_uv_toml_that_appears_or_changes_is_a_miss(setup: Setup, tmp_path: Path) -> None:
    """pm reads uv.toml and pip.conf (pm.inputs.tool_files): a file that appears where none was, or whose
    bytes change, is a change of what the answer was read from."""
    xdg = tmp_path / "xdg"
    setup.env = {k: v for k, v in setup.env.items() if k not in NO_TOOL_FILES}
    setup.env |= {"XDG_CONFIG_HOME": str(xdg), "HOME": str(tmp_path / "user"), "XDG_CONFIG_DIRS": str(tmp_path / "etc")}
    setup.run()
    assert setup.shortcut_taken()
    for path, text in ((xdg / "uv" / "uv.toml", "offline = false\n"), (xdg / "pip" / "pip.conf", "[global]\nno-index = no\n"),
                       (xdg / "pip" / "pip.conf", "[global]\nno-index = false\n")):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        assert not setup.shortcut_taken(), f"{path} {text!r}: answered from memory"
        assert setup.shortcut_taken()
