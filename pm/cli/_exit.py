"""Leaving the process without tearing the interpreter down, once a command is done.

A normal exit finalizes the interpreter: every module and object pm loaded is torn down one by
one. After a build (about 300 modules) that is ~20-25 ms of a command's wall time that produces
nothing: the receipt, the generation and every cache entry are already on disk (each written
atomically, fsynced where it matters, by :mod:`pm.base.store`). :func:`leave` does what a normal
exit does that can matter — waits for other threads, flushes stdout and stderr, runs the
``atexit`` hooks (logging's flush among them) — and then ends the process with ``os._exit``.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn


def leave(code: int) -> NoReturn:
    """Exit with ``code``, skipping the interpreter's finalization when that is safe: not while
    another non-daemon thread runs (a normal exit waits for it), not under a profiler or tracer
    (``python -m cProfile``, coverage: they write their results at exit), and not when flushing
    fails (a closed pipe is then reported as Python reports it)."""
    if _others_running() or sys.getprofile() is not None or sys.gettrace() is not None or not _flushed():
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()
    _flushed()  # an atexit hook's output that cannot go anywhere is lost; the command's own is out
    os._exit(code)


def _flushed() -> bool:
    """Flush stdout and stderr (either may be None: started with that descriptor closed)."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


def _others_running() -> bool:
    threading = sys.modules.get("threading")  # not loaded: no thread was ever started
    if threading is None:
        return False
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())
