"""A new generation's folder and venv, started before its build: the venv depends on the target
alone, never on the resolution, so it is made while the resolver works (:func:`start`).

For the running interpreter (pm's own, the usual target) the venv is the standard library's,
made in-process: the layout ``uv pip install --python`` fills, in about 1 ms where a ``uv venv``
process takes about 15. Another interpreter (``--python``) gets ``uv venv``, on a thread of its own.

The venv is made, filled and verified at one path, ``generations/.building/venv``, and moved
into its generation's folder when it is complete (:meth:`Started.move_in`). uv keeps what it
learns of an interpreter (a query that starts the venv's Python, 25-50 ms) in its cache, by
path: at a new path per generation every build paid that query first; at the same path it is
asked once. The venv is relocatable for that (uv's ``relocatable = true`` in ``pyvenv.cfg``):
console scripts find their interpreter beside them (a ``/bin/sh`` preamble, as uv writes for
``uv venv --relocatable``), the activation scripts name the generation's folder.
"""

from __future__ import annotations

import copy
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
    """A new generation's folder, and its venv being made at the building path on a thread of
    its own (:func:`start`), so that the resolver and the venv's making run at the same time."""

    def __init__(self, gid: str, path: Path, venv: Path, make_venv: Callable[[], object]) -> None:
        self.gid, self.path = gid, path
        self.venv = venv  #: where the venv is made, filled and verified, until :meth:`move_in`
        super().__init__(make_venv, "pm-venv")

    def move_in(self, store: Store) -> Path:
        """Move the complete venv into the generation's folder (the building folder goes); its
        path there."""
        moved = store.move(self.venv, self.path / "venv")
        store.remove_tree(self.venv.parent)
        return moved

    def discard(self, store: Store) -> None:
        """Wait for uv, then remove the folder: the build it was started for will not happen."""
        self.settle()
        for path in (self.path, self.venv.parent):
            try:
                store.remove_tree(path)
            except OSError:  # (a StoreError too) left for the next run's clean-up, under the home lock
                pass


def start(inputs: Inputs, uv: Uv, store: Store) -> Started:
    """Create a new generation's folder and start making its venv on another thread;
    :func:`pm.env.build.build` waits for it."""
    from pm.env.build import pause_point

    gid, path = generations.create(inputs.home, store, inputs.fingerprint)
    building = generations.building(inputs.home)
    store.remove_tree(building)  # a venv an interrupted build left
    store.mkdir(building)
    pause_point("venv", inputs.home, store)
    venv = building / "venv"
    return Started(gid, path, venv, venv_maker(inputs.target.python, venv, uv, final=path / "venv"))


def venv_maker(python: str, venv: Path, uv: Uv, *, final: Path | None = None) -> Callable[[], object]:
    """What makes ``venv`` for ``python``, relocatable, to be moved to ``final`` (default: stays
    where it is): the standard library's venv for the running interpreter (when it has its
    ``venv`` module), ``uv venv`` for another."""
    def make() -> None:
        if os.path.realpath(python) == os.path.realpath(sys.executable) and _has_venv_module():
            stdlib_venv(venv, final=final)
        else:
            uv.run("venv", "--quiet", "--relocatable", "--python", python, "--no-project", str(venv))

    return make


def _has_venv_module() -> bool:
    """Whether the standard library's ``venv`` can be imported (some distributions ship it apart)."""
    try:
        import venv  # noqa: F401
    except ImportError:
        return False
    return True


def stdlib_venv(venv: Path, *, final: Path | None = None) -> None:
    """A venv of the running interpreter (symlinks to its base, no pip), as ``python -m venv
    --without-pip`` makes it, without starting a process, relocatable to ``final`` (its
    activation scripts and ``pyvenv.cfg`` name ``final``); raises StoreError naming the folder."""
    try:
        _builder(final or venv).create(str(venv))
    except OSError as exc:
        raise StoreError(venv, f"cannot create the venv: {exc.strerror or exc}") from exc


def _builder(final: Path) -> Any:
    """The standard library's EnvBuilder for a venv that will live at ``final``."""
    import venv as stdlib  # (imports here are absolute)

    class Builder(stdlib.EnvBuilder):
        def replace_variables(self, text: str, context: Any) -> str:  # the activation scripts
            return super().replace_variables(text, _at(context, final))

        def create_configuration(self, context: Any) -> None:
            super().create_configuration(context)
            config = Path(context.cfg_path)
            text = config.read_text(encoding="utf-8").replace(context.env_dir, str(final))
            config.write_text(text + "relocatable = true\n", encoding="utf-8")

    return Builder(symlinks=True)


def _at(context: Any, final: Path) -> Any:
    """``context`` (the EnvBuilder's, a SimpleNamespace) as if the venv were made at ``final``."""
    moved = copy.copy(context)
    moved.env_dir = str(final)
    moved.env_exe = str(final / context.bin_name / os.path.basename(context.env_exe))
    return moved
