"""DaemonPool: an Executor whose unfinished background work never holds up the process's exit."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pm.index._pool import DaemonPool


def test_results_and_exceptions_reach_the_caller() -> None:
    pool = DaemonPool(2, "t")
    assert pool.submit(lambda a, b=0: a + b, 1, b=2).result(timeout=5) == 3
    with pytest.raises(ZeroDivisionError):
        pool.submit(lambda: 1 / 0).result(timeout=5)
    pool.shutdown()


def test_at_most_the_given_threads_all_daemons() -> None:
    pool = DaemonPool(3, "t")
    started = threading.Barrier(4)
    names: set[str] = set()

    def work() -> None:
        names.add(threading.current_thread().name)
        assert threading.current_thread().daemon
        started.wait(timeout=5)

    futures = [pool.submit(work) for _ in range(3)]
    started.wait(timeout=5)
    for future in futures:
        future.result(timeout=5)
    assert names == {"t-0", "t-1", "t-2"}
    pool.shutdown()


def test_shutdown_cancels_queued_work_and_refuses_more() -> None:
    pool = DaemonPool(1, "t")
    gate = threading.Event()
    running = pool.submit(gate.wait, 5)
    queued = pool.submit(lambda: "never")
    pool.shutdown(wait=False, cancel_futures=True)
    assert queued.cancelled()
    gate.set()
    assert running.result(timeout=5) is True
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)


def test_the_process_exits_without_waiting_for_running_work(tmp_path: Path) -> None:
    script = ("import sys, time; sys.path.insert(0, sys.argv[1]); from pm.index._pool import DaemonPool\n"
              "DaemonPool(1, 't').submit(time.sleep, 30); print('done')")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script, str(Path(__file__).resolve().parents[3])],
                          capture_output=True, text=True, timeout=25, check=True)
    assert done.stdout.strip() == "done" and time.monotonic() - started < 10


def test_a_larger_bound_starts_threads_for_queued_work_at_once() -> None:
    pool = DaemonPool(1, "t")
    started = threading.Barrier(4)
    running = threading.Event()
    futures = [pool.submit(lambda: (running.set(), started.wait(5)))]
    running.wait(timeout=5)
    futures += [pool.submit(started.wait, 5) for _ in range(2)]
    assert pool.threads == 1  # the other two wait in the queue
    pool.resize(5)
    started.wait(timeout=5)  # all three run at once: two more threads, not five
    for future in futures:
        future.result(timeout=5)
    assert pool.workers == 5 and pool.threads == 3
    pool.shutdown()


def test_a_smaller_bound_ends_threads_after_their_task() -> None:
    pool = DaemonPool(4, "t")
    started, gate = threading.Barrier(5), threading.Event()
    futures = [pool.submit(lambda: (started.wait(5), gate.wait(5))) for _ in range(4)]
    started.wait(timeout=5)
    pool.resize(1)
    assert pool.threads == 4  # running tasks are never interrupted
    gate.set()
    for future in futures:
        future.result(timeout=5)
    deadline = time.monotonic() + 5
    while pool.threads > 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pool.threads == 1
    assert pool.submit(lambda: "still works").result(timeout=5) == "still works"
    pool.shutdown()
