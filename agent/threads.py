"""Threads that carry the caller's context (active home, secret scope).

In Python 3.11 a new :class:`threading.Thread` starts with an *empty* :mod:`contextvars` context:
it sees the default home and no secret scope, whatever profile started it. Work done on behalf of
a profile therefore starts through :func:`spawn_context_thread`, or is queued to a
:class:`SerialWorker`, both of which run it in a copy of the caller's context.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["SerialWorker", "spawn_context_thread"]

logger = logging.getLogger(__name__)


def spawn_context_thread(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    daemon: bool = True,
) -> threading.Thread:
    """Return a thread, **not started**, that runs ``fn(*args, **kwargs)`` in a *copy* of the
    caller's context (``contextvars.copy_context().run``) taken now, at this call: the active
    home and the secret scope bound here travel with it, whenever it is started. Changes the
    thread makes to context variables stay in its copy. The caller starts it (``t.start()``), as
    the plugin guide's pattern does::

        self._sync_thread = spawn_context_thread(_sync, name="myprovider-sync")
        self._sync_thread.start()

    A bare ``threading.Thread`` starts with an empty context instead: it sees the default home
    and no secret scope. Exceptions raised by ``fn`` go to :func:`threading.excepthook`, as with
    any thread.
    """
    ctx = contextvars.copy_context()
    call_kwargs = dict(kwargs or {})

    def _run() -> None:
        ctx.run(fn, *args, **call_kwargs)

    return threading.Thread(target=_run, name=name, daemon=daemon)


class SerialWorker:
    """Runs submitted jobs one at a time, in submission order, on one background thread that is
    started lazily (by the first :meth:`submit`) in a copy of the *submitter's* context.

    :meth:`submit` never blocks. A job that raises is logged (``logger.exception``) and the
    worker goes on with the next one. :meth:`close` stops accepting jobs, lets queued ones
    finish and joins the thread.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._pending = 0
        self._idle = threading.Condition()
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (later submissions are refused)."""
        return self._closed

    def submit(self, job: Callable[[], None]) -> bool:
        """Queue ``job``; ``False`` (job dropped) once the worker is closed."""
        with self._idle:
            if self._closed:
                return False
            self._pending += 1
            self._jobs.put(job)
            if self._thread is None:
                self._thread = spawn_context_thread(self._drain, name=self._name)
                self._thread.start()
        return True

    def _drain(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                job()
            except Exception:  # one bad job must not stop the queue
                logger.exception("a job of %s failed", self._name)
            finally:
                job = None  # drop the closure before blocking on the next get()
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until every queued job has run; ``False`` if ``timeout`` seconds passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Refuse new jobs, let queued ones run, join the thread. ``True`` when the thread ended
        within ``timeout`` (or never started). Idempotent."""
        with self._idle:
            already, self._closed = self._closed, True
            thread = self._thread
        if thread is None:
            return True
        if not already:
            self._jobs.put(None)
        thread.join(timeout)
        return not thread.is_alive()
