"""One failure vocabulary (pm.ops.failures): the same failure reads the same in every receipt,
whichever operation met it — sync, enable, disable, update, install."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.cli import main
from pm.base.errors import ConfigError, PmError, UsageError
from pm.base.lock import LockTimeout
from pm.env import generations
from pm.env.build import HashMismatch
from pm.env.managed import Managed, Manager
from pm.env.plugin_install import InstallError
from pm.index.base import FileLink, IndexFailure, MetadataUnavailable
from pm.index.builds import BuildFailure
from pm.inputs.catalog import CatalogRefusal
from pm.ops.failures import InputsChanged, NotAdmissible, StillEnabled, failure_of
from pm.records.frozen import FileMismatch
from pm.records.recheck import MetadataMismatch
from pm.resolver import TooComplex
from pm.testing import LocalIndex, build_packages
from pm.testing.receipts import assert_valid_receipt

from .conftest import plugin

CORRUPT = "sharedlib-1.4.0-py3-none-any.whl"


@pytest.mark.parametrize(("error", "kind", "outcome", "code"), [
    (Managed(Manager("nix", "marker", "rebuild"), "sync"), "managed", "refused", 1),
    (HashMismatch("detail"), "hash-mismatch", "refused", 1),
    (FileMismatch(Path("/f.whl"), "a" * 64, "b" * 64), "file-mismatch", "refused", 1),
    (InputsChanged("lock.toml", ["plugin 'a' was added"]), "inputs-changed", "refused", 1),
    (InputsChanged("lock.toml", None), "no-inputs", "refused", 1),
    (NotAdmissible("a", "invalid", "bad manifest"), "not-admissible", "refused", 1),
    (StillEnabled("a"), "still-enabled", "refused", 1),
    (InstallError("no such folder"), "install", "refused", 1),
    (CatalogRefusal("removed"), "install", "refused", 1),
    (BuildFailure(FileLink("a-1.0.tar.gz", "https://x/a-1.0.tar.gz"), "exit 1"), "build", "failed", 1),
    (MetadataUnavailable("https://x/a.tar.gz", "dynamic"), "index", "failed", 1),
    (MetadataMismatch("https://x/a.whl", "Requires-Dist", "'b'", "''"), "metadata-mismatch", "failed", 1),
    (IndexFailure("https://x/simple/a/", "HTTP 503"), "index", "failed", 1),
    (TooComplex(100), "too-complex", "failed", 1),
    (LockTimeout(Path("/h/pm/lock"), 0.0, "pid 1"), "lock-timeout", "failed", 1),
    (ConfigError.one(Path("/h/config.yaml"), "plugins", "not a mapping"), "config", "failed", 1),
    (UsageError("bad flag"), "usage", "failed", 2),
    (PmError("anything else"), "error", "failed", 1),
])
def test_each_exception_type_has_one_kind_and_outcome(error: PmError, kind: str, outcome: str, code: int) -> None:
    failure = failure_of(error)
    assert (failure.kind, failure.outcome, failure.exit_code) == (kind, outcome, code)
    assert failure.section["kind"] == kind and failure.section["message"] == str(error)


def test_a_failure_carries_its_data_into_the_receipt() -> None:
    assert failure_of(IndexFailure("https://x/simple/a/", "HTTP 503")).section["url"] == "https://x/simple/a/"
    assert failure_of(ConfigError.one(Path("/h/config.yaml"), "plugins", "not a mapping")).section["problems"] == [
        "/h/config.yaml: plugins: not a mapping"]
    assert failure_of(InputsChanged("l.toml", ["x"])).section["differences"] == ["x"]
    managed = failure_of(Managed(Manager("nix", "marker", "rebuild"), "sync"))
    assert managed.extra == {"managed": {"name": "nix", "evidence": "marker", "how": "rebuild"}}


@pytest.fixture
def corrupt(env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalIndex]:
    """An index that advertises a wrong sha256 for sharedlib 1.4.0's wheel: uv refuses it."""
    files = build_packages(env / "corrupt-dists", {"sharedlib": {"1.4.0": []}})
    with LocalIndex(files, corrupt_hashes={CORRUPT}) as index:
        monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
        yield index


def _home(env: Path, enabled: list[str]) -> Path:
    home = env / "home"
    plugin(home / "plugins", "notes", ["sharedlib==1.4.0"])
    plugin(home / "plugins", "other", [])
    (home / "config.yaml").write_text("plugins:\n  enabled: " + json.dumps(enabled) + "\n")
    return home


def _install_enable(env: Path, home: Path) -> list[str]:
    source = plugin(env / "elsewhere", "fresh", ["sharedlib==1.4.0"])
    return ["plugins", "install", str(source), "--enable"]


@pytest.mark.parametrize(("enabled", "argv", "kind"), [
    (["notes"], lambda env, home: ["pm", "sync"], "sync"),
    ([], lambda env, home: ["plugins", "enable", "notes"], "admit"),
    (["notes", "other"], lambda env, home: ["plugins", "disable", "other"], "disable"),
    (["notes"], lambda env, home: ["update"], "update"),
    ([], _install_enable, "admit"),  # install --enable: the install is ok, its admission meets the failure
], ids=["sync", "enable", "disable", "update", "install"])
def test_the_same_failure_writes_the_same_kind_and_outcome_from_every_operation(
        env: Path, corrupt: LocalIndex, enabled: list[str], argv, kind: str) -> None:
    home = _home(env, enabled)
    code = main([*argv(env, home), "--home", str(home)])
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    assert code == 1
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"]) == (kind, "refused", 1)
    assert receipt["failure"]["kind"] == "hash-mismatch"
    assert receipt["failure"]["message"].startswith("refused: a downloaded file does not match the sha256")
    assert receipt["generation"] is None and generations.all_ids(home) == []


def test_a_held_lock_fails_every_operation_alike(env: Path) -> None:
    """Another failure, met by install and remove too (they do not build): the lock is held."""
    import fcntl

    home = _home(env, ["notes"])
    (home / "pm").mkdir()
    source = plugin(env / "elsewhere", "fresh", [])
    with (home / "pm" / "lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        for argv, kind in ((["pm", "sync"], "sync"), (["plugins", "enable", "other"], "admit"),
                           (["plugins", "disable", "notes"], "disable"), (["update"], "update"),
                           (["plugins", "install", str(source)], "install"),
                           (["plugins", "remove", "other"], "remove")):
            assert main([*argv, "--home", str(home), "--lock-timeout", "0"]) == 1, argv
            receipt = json.loads((home / "pm/receipts/latest.json").read_text())
            assert_valid_receipt(receipt)
            assert (receipt["kind"], receipt["outcome"], receipt["failure"]["kind"]) == (kind, "failed", "lock-timeout")
