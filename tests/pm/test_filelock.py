"""Issue 34: locking behind one module (:mod:`pm.base.filelock`), so that the home lock and the
built-in memory store work on Windows (``msvcrt``) as on POSIX (``flock``). The POSIX path runs for
real here; the Windows path's logic runs with ``msvcrt.locking`` swapped for a fake that records
its calls and refuses while "another process" holds the byte (the real call is not on this
machine). And nothing the host imports to start needs ``fcntl``."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.builtin_memory import BuiltinMemoryStore, MemoryOp
from pm.base import filelock
from pm.base.filelock import LK_NBLCK, LK_UNLCK, LOCK_BYTE, WindowsLocks
from pm.base.lock import LockTimeout, home_lock
from pm.base.store import Store


class FakeMsvcrt:
    """``msvcrt.locking`` and ``os.lseek`` as Windows answers them for one file whose byte
    :data:`LOCK_BYTE` another process holds for the first ``busy`` tries."""

    def __init__(self, busy: int = 0, fail: int | None = None) -> None:
        self.calls: list[tuple[object, ...]] = []
        self.busy = busy
        self.fail = fail
        self.position: dict[int, int] = {}

    def seek(self, fd: int, offset: int, whence: int) -> int:
        assert whence == os.SEEK_SET
        self.position[fd] = offset
        self.calls.append(("seek", offset))
        return offset

    def locking(self, fd: int, mode: int, size: int) -> None:
        self.calls.append(("locking", self.position[fd], mode, size))
        if self.fail is not None:
            raise OSError(self.fail, os.strerror(self.fail))
        if mode == LK_NBLCK and self.busy > 0:
            self.busy -= 1
            raise OSError(errno.EACCES, "Permission denied")  # what _locking sets when the byte is held

    def sleep(self, seconds: float) -> None:
        self.calls.append(("sleep", seconds))

    def locks(self) -> WindowsLocks:
        return WindowsLocks(self.locking, self.seek, self.sleep)


def test_the_windows_path_locks_one_byte_past_the_holders_pid() -> None:
    fake = FakeMsvcrt()
    locks = fake.locks()
    assert locks.try_lock(7)
    locks.unlock(7)
    assert fake.calls == [("seek", LOCK_BYTE), ("locking", LOCK_BYTE, LK_NBLCK, 1),
                          ("seek", LOCK_BYTE), ("locking", LOCK_BYTE, LK_UNLCK, 1)]


def test_the_windows_path_waits_by_trying_again() -> None:
    fake = FakeMsvcrt(busy=2)
    locks = fake.locks()
    locks.lock(3)
    assert [c for c in fake.calls if c[0] != "seek"] == [
        ("locking", LOCK_BYTE, LK_NBLCK, 1), ("sleep", filelock.RETRY),
        ("locking", LOCK_BYTE, LK_NBLCK, 1), ("sleep", filelock.RETRY),
        ("locking", LOCK_BYTE, LK_NBLCK, 1)]
    assert not FakeMsvcrt(busy=1).locks().try_lock(3)


def test_the_windows_path_raises_what_is_not_a_held_lock() -> None:
    with pytest.raises(OSError) as err:
        FakeMsvcrt(fail=errno.EBADF).locks().try_lock(3)
    assert err.value.errno == errno.EBADF


def test_the_home_lock_on_the_windows_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The home lock's own logic over the Windows calls: it waits while the byte is held (saying
    so once, naming the holder from the file's first bytes), takes it, writes its identity there,
    and gives up with LockTimeout when the holder keeps it."""
    home = tmp_path / "home"
    (home / "pm").mkdir(parents=True)
    (home / "pm" / "lock").write_text("pid 4242: hermes pm sync")
    fake = FakeMsvcrt(busy=3)
    monkeypatch.setattr(filelock, "LOCKS", fake.locks())
    told: list[str] = []
    with home_lock(home, Store(home), timeout=30, notify=told.append):
        assert (home / "pm" / "lock").read_text().startswith(f"pid {os.getpid()}: ")
    assert told == [f"waiting for another pm process (pid 4242: hermes pm sync) to finish with {home} "
                    f"(lock {home / 'pm' / 'lock'})"]
    assert [c for c in fake.calls if c[0] == "locking"] == [("locking", LOCK_BYTE, LK_NBLCK, 1)] * 4
    monkeypatch.setattr(filelock, "LOCKS", FakeMsvcrt(busy=10**9).locks())
    (home / "pm" / "lock").write_text("pid 4242: hermes pm sync")
    with pytest.raises(LockTimeout, match=r"another pm process \(pid 4242: hermes pm sync\) still holds"):
        with home_lock(home, Store(home), timeout=0.2):
            pass


def test_the_memory_store_on_the_windows_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeMsvcrt(busy=1)
    monkeypatch.setattr(filelock, "LOCKS", fake.locks())
    BuiltinMemoryStore(tmp_path).apply([MemoryOp("add", "memory", "the user likes tea")])
    assert BuiltinMemoryStore(tmp_path).entries("memory") == ["the user likes tea"]
    assert [c[2] for c in fake.calls if c[0] == "locking"] == [LK_NBLCK, LK_NBLCK, LK_UNLCK]


def test_the_posix_path_excludes_another_open_file(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    first, second = (os.open(path, os.O_RDWR | os.O_CREAT) for _ in range(2))
    try:
        assert filelock.try_lock(first) and not filelock.try_lock(second)
        filelock.unlock(first)
        assert filelock.try_lock(second)
        filelock.write_start(second, b"pid 1")
        assert filelock.read_start(first, 200) == b"pid 1"
    finally:
        os.close(first)
        os.close(second)


def test_the_host_starts_without_fcntl() -> None:
    """As on Windows, where there is no ``fcntl``: the host's modules load and ``hermes --help`` runs."""
    code = ("import sys; sys.modules['fcntl'] = None\n"
            "import pm.base.lock, pm.base.filelock, agent.builtin_memory, agent.memory_manager\n"
            "from agent.cli import main\n"
            "sys.exit(main(['--help']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "usage: hermes" in done.stdout


def test_files_are_read_where_the_os_has_no_o_nonblock(tmp_path: Path) -> None:
    """Windows has no ``os.O_NONBLOCK``: pm's one reader of a file must not need it (a child
    interpreter without it reads a file pm reads, and digests it for the watch)."""
    (tmp_path / "config.yaml").write_text("plugins:\n  enabled: [a]\n")
    code = ("import os; del os.O_NONBLOCK\n"
            "from pathlib import Path\n"
            "from pm.base.files import read_text\n"
            "from pm.base.watch import file_digest\n"
            f"path = Path({str(tmp_path / 'config.yaml')!r})\n"
            "print(read_text(path).text, end='')\n"
            "print(len(file_digest(path) or ''))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "plugins:\n  enabled: [a]\n64\n"
