"""The shortcut for ``sync`` (``--from FILE`` too) and ``check`` (pm.cli.shortcut): once a full
``python -m pm sync`` found nothing to do, or a full ``check`` judged the selected generation, the
identical command over the same inputs, the same selection and the same installed generation
answers from memory; anything it read that changed (a declaration, ``state.json``, the
generation's record, its site-packages, its interpreter, FILE, a ``--find-links`` file FILE's
pins took) is a miss, and the full command decides.

Every run is a real process against a real local index; the generation is built by real uv."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pm.testing import NO_TOOL_FILES, LocalIndex, add_plugin, make_home
from pm.testing.audit import HOOK
from pm.testing.index import PRESETS
from pm.testing.receipts import assert_valid_receipt

SPEC = {"alpha": {"1.0": ["beta>=1"], "2.0": ["beta>=2"]}, "beta": {"1.0": [], "2.0": []},
        "gamma": {"1.0": []}}
VOLATILE = ("started_at", "finished_at", "seconds", "receipt_path", "shortcut")


@dataclass
class Home:
    home: Path
    index: LocalIndex
    env: dict[str, str]

    def argv(self, command: str) -> list[str]:
        return [sys.executable, "-m", "pm", command, "--home", str(self.home), "--index-url", self.index.url,
                "--core", str(self.home.parent / "core.toml"), "--core-lock", str(self.home.parent / "lock.txt")]

    def run(self, command: str, *extra: str, ok: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*self.argv(command), *extra], env=self.env, cwd=self.home.parent,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == ok, done.stderr
        return done

    def latest(self) -> dict[str, Any]:
        receipt: dict[str, Any] = json.loads((self.home / "pm" / "receipts" / "latest.json").read_text())
        assert_valid_receipt(receipt)
        return receipt

    def answered_from_memory(self, command: str, ok: int = 0) -> bool:
        self.run(command, ok=ok)
        return bool(self.latest().get("shortcut"))

    @property
    def site(self) -> Path:
        return Path(self.latest()["generation"]["site_packages"])


@pytest.fixture
def home(tmp_path: Path, make_index: Callable[..., LocalIndex]) -> Home:
    index = make_index(SPEC, **PRESETS["pypi"])
    path = make_home(tmp_path / "home", config={"plugins": {"enabled": ["maps"]}})
    add_plugin(path / "plugins", "maps", style="manifest", dependencies=["alpha"])
    add_plugin(path / "plugins", "extra", style="manifest", dependencies=["gamma"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "UV_", "PIP_"))}
    env |= {"HERMES_PM_CACHE_DIR": str(tmp_path / "cache"), "HERMES_BUNDLED_PLUGINS": str(tmp_path / "no-bundled"),
            "PIP_INDEX_URL": "http://127.0.0.1:9/simple/", **NO_TOOL_FILES}
    made = Home(path, index, env)
    made.run("sync")  # built and selected
    return made


def without(receipt: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in receipt.items() if k not in keys}


def test_a_no_op_sync_is_answered_from_memory_as_the_full_command_answers_it(home: Home) -> None:
    full, full_receipt = home.run("sync"), home.latest()  # after the build, the full no-op: remembered
    assert not full_receipt.get("shortcut") and full_receipt["message"] == "already in sync"
    home.index.reset_log()

    short = home.run("sync")

    answered = home.latest()
    assert answered["shortcut"] is True and home.index.requests == []
    assert without(answered, *VOLATILE) == without(full_receipt, *VOLATILE)
    assert short.stderr.splitlines()[:-1] == full.stderr.splitlines()[:-1]
    assert short.stderr.splitlines()[-1] == f"receipt: {max((home.home / 'pm' / 'receipts').glob('*-sync-*.json'))}"
    assert short.stderr.splitlines()[0].startswith("already in sync: generation ")


def test_check_is_answered_from_memory_with_the_same_table(home: Home) -> None:
    full, full_receipt = home.run("check"), home.latest()
    short = home.run("check")
    assert home.latest()["shortcut"] is True
    assert without(home.latest(), *VOLATILE) == without(full_receipt, *VOLATILE)
    assert short.stdout == full.stdout and short.stdout.startswith("ready: generation ")
    assert "maps" in short.stdout and "1 requirement satisfied" in short.stdout


def test_json_answers_are_the_receipt(home: Home) -> None:
    home.run("check", "--json")
    answered = json.loads(home.run("check", "--json").stdout)
    assert answered["shortcut"] is True and answered["readiness"]["ready"] is True
    assert answered["receipt_path"] == str(max((home.home / "pm" / "receipts").glob("*-check-*.json")))


def _remove_a_distribution(home: Home) -> None:
    shutil.rmtree(next(home.site.glob("beta-*.dist-info")))


def _lose_the_interpreter(home: Home) -> None:
    python = Path(home.latest()["generation"]["python"])
    python.rename(python.with_name("gone"))


def _select_nothing(home: Home) -> None:
    (home.home / "pm" / "state.json").write_text(json.dumps({"selected": None, "previous": None}))


def _edit_the_generation_record(home: Home) -> None:
    record = Path(home.latest()["generation"]["path"]) / "generation.json"
    data = json.loads(record.read_text())
    data["fingerprint"] = "sha256:" + "0" * 64
    record.write_text(json.dumps(data))


def _enable_a_plugin(home: Home) -> None:
    config = home.home / "config.yaml"
    config.write_text(config.read_text().replace("- maps", "- maps\n  - extra"))


def _leave_an_unfinished_generation(home: Home) -> None:
    (home.home / "pm" / "generations" / "20990101T000000000000-000000-unfinished").mkdir()


CHANGES = [_remove_a_distribution, _lose_the_interpreter, _select_nothing, _edit_the_generation_record,
           _enable_a_plugin]
#: What only sync reads: the generations folder (an unfinished one is removed first). Check does
#: not look there, and its full answer is the same with or without it.
SYNC_ONLY = [_leave_an_unfinished_generation]
CASES = [("sync", c) for c in CHANGES + SYNC_ONLY] + [("check", c) for c in CHANGES]


@pytest.mark.parametrize(("command", "change"), CASES, ids=[f"{c}-{f.__name__.strip('_')}" for c, f in CASES])
def test_any_change_of_what_the_answer_read_is_a_miss(home: Home, command: str,
                                                      change: Callable[[Home], None]) -> None:
    home.run(command)
    assert home.answered_from_memory(command)
    before = home.latest()
    change(home)

    done = subprocess.run(home.argv(command), env=home.env, cwd=home.home.parent, capture_output=True, text=True,
                          timeout=120, check=False)

    after = home.latest()
    assert not after.get("shortcut"), f"{change.__name__}: answered from memory"
    assert done.returncode in (0, 4), done.stderr
    if command == "sync":
        assert after["message"] != "already in sync" or change is _leave_an_unfinished_generation
        assert after["warnings"] != before["warnings"] or change is not _leave_an_unfinished_generation
    else:
        assert after["readiness"] != before["readiness"] or after["generation"] != before["generation"]


def test_metadata_the_answer_never_read_keeps_the_shortcut(home: Home) -> None:
    """A generation whose pins are all installed is judged from the .dist-info names alone: a
    METADATA file rewritten in place is not read by the full check either."""
    home.run("check")
    metadata = next(home.site.glob("alpha-*.dist-info")) / "METADATA"
    metadata.write_text(metadata.read_text().replace("Requires-Dist: beta>=2", "Requires-Dist: gamma"))
    assert home.answered_from_memory("check")


def test_a_check_with_a_candidate_is_never_answered_from_memory(home: Home) -> None:
    for _ in range(2):
        home.run("check", "--with", "extra", ok=4)
        assert not home.latest().get("shortcut")


AUDIT = HOOK + r'''
from pathlib import Path
from pm.base.watch import Watch
from pm.ops.options import Options
from pm.inputs.settings import Flags
command, home, index, core, lock = sys.argv[1:6]
flags = Flags(index_url=index, core=core, core_lock=lock)
if command in ("sync", "sync-skip-invalid", "sync-missing-provider"):
    from pm.ops.sync import sync as run
elif command == "sync-from":
    from pm.ops.sync import sync_from
    run = lambda home, options: sync_from(home, sys.argv[6], options)
else:
    from pm.ops.check import check as run
watch = Watch()
done = run(Path(home), Options(flags=flags, watch=watch, skip_invalid=command == "sync-skip-invalid"))
assert done.code == 0, done.receipt.written
print(json.dumps({"seen": sorted(watch.seen), "opened": sorted(opened), "listed": sorted(listed)}))
'''


@pytest.mark.parametrize("command", ["sync", "check", "sync-from", "sync-skip-invalid", "sync-missing-provider"])
def test_every_file_opened_and_folder_listed_under_the_home_is_watched(home: Home, command: str) -> None:
    """The guard of the idea for sync, check and ``sync --from FILE``: whatever they open or list
    under the home (generations included) but their own receipts and lock, and FILE, a Watch has
    noted. ``sync-skip-invalid``: the no-op of ``sync --skip-invalid`` with an enabled plugin that
    cannot be read (its manifest is an input of the answer too). ``sync-missing-provider``: a
    memory.provider nothing provides, whose hint reads the home's catalog."""
    if command == "sync-missing-provider":
        config = home.home / "config.yaml"
        config.write_text(config.read_text() + "memory:\n  provider: ghost\n")
        (home.home / "catalog.json").write_text(json.dumps({"entries": [], "removed": []}))
        config.write_text(config.read_text().replace("plugins:", "pm:\n  catalog: catalog.json\nplugins:", 1))
        home.run("sync")
        assert any("has no entry 'ghost'" in w for w in home.latest()["warnings"])
    if command == "sync-skip-invalid":
        _break_maps(home)
        home.run("sync", "--skip-invalid")
    home.run("sync", *(["--skip-invalid"] if command == "sync-skip-invalid" else []))  # the next sync is a no-op
    frozen = home.home.parent / "pylock.toml"
    home.run("export", "--output", str(frozen))
    done = subprocess.run([sys.executable, "-c", AUDIT, command, str(home.home), home.index.url,
                           str(home.home.parent / "core.toml"), str(home.home.parent / "lock.txt"), str(frozen)],
                          env=home.env, cwd=home.home.parent, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    own = (str(home.home / "pm" / "receipts"), str(home.home / "pm" / "lock"))
    inputs = (str(home.home), str(home.home.parent / "core.toml"), str(home.home.parent / "lock.txt"), str(frozen))
    seen = set(found["seen"])
    opened = [p for p in found["opened"] if p.startswith(inputs) and not p.startswith(own)]
    listed = [p for p in found["listed"] if p.startswith(inputs) and not p.startswith(own)
              and p != str(home.home / "pm")]  # the sweep of stale temporary files: housekeeping, no answer
    assert any("generations" in p for p in opened) and any("site-packages" in p for p in listed)
    assert [p for p in opened if f"f:{p}" not in seen] == []
    assert [p for p in listed if f"d:{p}" not in seen] == []


# -- what a hit costs: the modules it loads ----------------------------------------------------------

#: All a hit may load beyond Python's start-up (and ``-m``'s runpy): no typing, pathlib, json, re,
#: dataclasses, inspect, datetime or hashlib's OpenSSL (the builtin sha256 instead).
LEAN = {"pm", "pm.base", "pm.cli", "pm.cli.shortcut", "pm.base.watch", "pm.base.codekey", "pm.cli._lean", "pm.base.atomic", "__future__", "_sha256", "_sha2"}


def _loaded_after(stderr: str, first: str) -> set[str]:
    """The modules ``-X importtime`` reports as imported after ``first`` finished loading."""
    names = [line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")]
    return set(names[names.index(first) + 1:])


@pytest.mark.parametrize("command", ["sync", "check", "resolve"])  # resolve: its pages' freshness too
def test_a_hit_of_python_m_pm_loads_only_the_shortcut(home: Home, command: str) -> None:
    home.run(command)  # the full command: remembered
    done = subprocess.run([sys.executable, "-X", "importtime", *home.argv(command)[1:]], env=home.env,
                          cwd=home.home.parent, capture_output=True, text=True, timeout=120, check=True)
    assert home.latest()["shortcut"] is True
    assert _loaded_after(done.stderr, "runpy") <= LEAN, done.stderr


def test_hermes_pm_reaches_the_shortcut_as_cheaply(home: Home) -> None:
    hermes = Path(sys.executable).with_name("hermes")  # the console script, as installed
    argv = [str(hermes), "pm", *home.argv("check")[3:]]
    env = home.env | {"PYTHONPROFILEIMPORTTIME": "1"}
    first = subprocess.run(argv, env=env, cwd=home.home.parent, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0 and not home.latest().get("shortcut"), first.stderr
    done = subprocess.run(argv, env=env, cwd=home.home.parent, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and home.latest()["shortcut"] is True, done.stderr
    assert done.stdout == first.stdout
    assert _loaded_after(done.stderr, "site") <= LEAN | {"agent", "agent.cli"}, done.stderr


def test_a_receipts_folder_leading_out_of_the_home_is_never_written_by_a_hit(home: Home, tmp_path: Path) -> None:
    home.run("check")
    receipts, outside = home.home / "pm" / "receipts", tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(receipts)
    receipts.symlink_to(outside, target_is_directory=True)
    done = home.run("check")  # a miss: the full command decides (and refuses to write there too)
    assert list(outside.iterdir()) == []
    assert "receipt not written" in done.stderr


# -- sync --from FILE: declarative builds run it at every activation ------------------------------------


def _lock(home: Home) -> Path:
    lock = home.home.parent / "pylock.toml"
    home.run("export", "--output", str(lock))
    return lock


def test_a_frozen_no_op_is_answered_from_memory_as_the_full_command_answers_it(home: Home) -> None:
    lock = _lock(home)
    full = home.run("sync", "--from", str(lock))
    full_receipt = home.latest()
    assert not full_receipt.get("shortcut") and full_receipt["message"] == "already in sync"

    short = home.run("sync", "--from", str(lock))

    answered = home.latest()
    assert answered["shortcut"] is True
    assert without(answered, *VOLATILE) == without(full_receipt, *VOLATILE)
    assert short.stderr.splitlines()[:-1] == full.stderr.splitlines()[:-1]


def test_a_changed_lock_is_a_miss(home: Home) -> None:
    lock = _lock(home)
    home.run("sync", "--from", str(lock))
    lock.write_text(lock.read_text() + "# edited\n")  # the same files: the full command is a no-op too
    home.run("sync", "--from", str(lock))
    assert not home.latest().get("shortcut") and home.latest()["message"] == "already in sync"
    lock.write_text(lock.read_text().replace('version = "2.0"', 'version = "1.0"'))  # other pins
    home.run("sync", "--from", str(lock), ok=1)
    assert not home.latest().get("shortcut") and home.latest()["outcome"] != "ok"


def test_a_find_links_file_with_other_bytes_is_a_miss(home: Home, tmp_path: Path) -> None:
    lock = _lock(home)
    folder = tmp_path / "wheels"
    folder.mkdir()
    (beta,) = (f.record.path for name, f in home.index.served_files().items() if name.startswith("beta-2.0-"))
    shutil.copy(beta, folder / beta.name)
    for _ in range(2):  # another fingerprint (find-links folders are inputs): built, then a full no-op
        home.run("sync", "--from", str(lock), "--find-links", str(folder))
    assert home.latest()["frozen"]["local_files"] == [beta.name]
    home.run("sync", "--from", str(lock), "--find-links", str(folder))
    assert home.latest()["shortcut"] is True
    (folder / beta.name).write_bytes(b"not the wheel the lock names")
    done = home.run("sync", "--from", str(lock), "--find-links", str(folder), ok=1)
    assert not home.latest().get("shortcut") and "does not match the sha256" in done.stderr


def _break_maps(home: Home) -> Path:
    manifest = home.home / "plugins" / "maps" / "plugin.yaml"
    manifest.write_text("pip_dependencies: [alpha\n")
    return manifest


def test_a_sync_failed_for_an_unreadable_declaration_is_never_answered_by_a_remembered_no_op(home: Home) -> None:
    """Issue 32: the no-op remembered before the typo, or the one of ``--skip-invalid``, never
    answers a plain sync while an enabled plugin cannot be read; ``--skip-invalid`` is part of the
    command line a record is kept under."""
    home.run("sync")  # the full no-op: remembered
    manifest = _break_maps(home)
    home.run("sync", ok=1)
    failed = home.latest()
    assert not failed.get("shortcut") and failed["failure"]["kind"] == "invalid-declaration"
    home.run("sync", "--skip-invalid")  # built without maps
    home.run("sync", "--skip-invalid")  # its no-op: remembered under its own command line
    home.run("sync", "--skip-invalid")
    assert home.latest()["shortcut"] is True and home.latest()["skipped_invalid"] == ["maps"]
    home.run("sync", ok=1)
    assert not home.latest().get("shortcut") and home.latest()["failure"]["kind"] == "invalid-declaration"
    manifest.write_text("pip_dependencies: [alpha]\n")  # fixed: --skip-invalid's record no longer holds
    home.run("sync", "--skip-invalid")
    assert not home.latest().get("shortcut") and "skipped_invalid" not in home.latest()
