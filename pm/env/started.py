"""A new generation's folder and venv, started before its build: the venv depends on the target
alone, never on the resolution, so it is made while the resolver works (:func:`start`).

For the running interpreter (pm's own, the usual target) the venv is the standard library's,
made in-process: the layout ``uv pip install --python`` fills, in about 1 ms where a ``uv venv``
process takes about 15. Another interpreter (``--python``) gets ``uv venv``, on a thread of its own.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from pm.base.store import Store, StoreError
from pm.base.uv import Uv
from pm.env import generations
from pm.inputs.collect import Inputs


class Background:
    """One call on a thread of its own (a uv run: the thread waits on uv, the GIL is free);
    :meth:`wait` hands its failure to the waiting thread."""

    def __init__(self, call: Callable[[], object], name: str) -> None:
        self._failure: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, args=(call,), name=name)
        self._thread.start()

    def _run(self, call: Callable[[], object]) -> None:
        try:
            call()
        except BaseException as failure:  # handed to the thread that waits
            self._failure.append(failure)

    def wait(self) -> None:
        """Block until the call is done; raise what it raised."""
        self._thread.join()
        if self._failure:
            raise self._failure[0]

    def settle(self) -> None:
        """Block until the call is done, whatever came of it (before a failure goes on)."""
        self._thread.join()


class Started(Background):
    """A new generation's folder whose venv uv is making on a thread of its own (:func:`start`),
    so that the resolver and ``uv venv`` run at the same time."""

    def __init__(self, gid: str, path: Path, make_venv: Callable[[], object]) -> None:
        self.gid, self.path = gid, path
        super().__init__(make_venv, "pm-venv")

    def discard(self, store: Store) -> None:
        """Wait for uv, then remove the folder: the build it was started for will not happen."""
        self.settle()
        try:
            store.remove_tree(self.path)
        except OSError:  # (a StoreError too) left for the next run's clean-up, under the home lock
            pass


def start(inputs: Inputs, uv: Uv, store: Store) -> Started:
    """Create a new generation's folder and start making its venv on another thread;
    :func:`pm.env.build.build` waits for it."""
    from pm.env.build import pause_point

    gid, path = generations.create(inputs.home, store, inputs.fingerprint)
    pause_point("venv", inputs.home, store)
    return Started(gid, path, venv_maker(inputs.target.python, path / "venv", uv))


def venv_maker(python: str, venv: Path, uv: Uv) -> Callable[[], object]:
    """What makes ``venv`` for ``python``: the standard library's venv for the running
    interpreter (when it has its ``venv`` module), ``uv venv`` for another."""
    def make() -> None:
        if os.path.realpath(python) == os.path.realpath(sys.executable) and _has_venv_module():
            stdlib_venv(venv)
        else:
            uv.run("venv", "--quiet", "--python", python, "--no-project", str(venv))

    return make


def _has_venv_module() -> bool:
    """Whether the standard library's ``venv`` can be imported (some distributions ship it apart)."""
    try:
        import venv  # noqa: F401
    except ImportError:
        return False
    return True


def stdlib_venv(venv: Path) -> None:
    """A venv of the running interpreter (symlinks to its base, no pip), as ``python -m venv
    --without-pip`` makes it, without starting a process; raises StoreError naming the folder."""
    import venv as builder  # the standard library's (imports here are absolute)

    try:
        builder.EnvBuilder(symlinks=True).create(str(venv))
    except OSError as exc:
        raise StoreError(venv, f"cannot create the venv: {exc.strerror or exc}") from exc
