"""The target: the interpreter an environment is built for (version, platform tags, markers).

Read once per interpreter: in-process for the running one, through one subprocess for another
(``--python PATH``), which runs a small script with this process's ``packaging`` on its path.
What was read is kept in pm's cache (``targets-v1``) under the interpreter's path, the size and
modification time of the file it resolves to, and the version of ``packaging``: a later command
on the same interpreter reads a small file instead of probing again (~20 ms in-process, ~130 ms
through a subprocess).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import packaging

from pm.base import codekey as _code
from pm.base.errors import TargetError, UsageError
from pm.base.watch import UNWATCHED, Watch

_PROBE = """
import json, platform, sys, sysconfig
sys.path.insert(0, {packaging_parent!r})
from packaging import markers, tags
print(json.dumps({{
    "python": sys.executable,
    "markers": dict(markers.default_environment()),
    "platform": sysconfig.get_platform(),
    "tags": [str(t) for t in tags.sys_tags()],
}}))
"""


@dataclass(frozen=True)
class Target:
    """One interpreter's identity as the resolver sees it."""

    python: str
    markers: tuple[tuple[str, str], ...]
    platform: str
    tags: tuple[str, ...]
    foreign: bool = False  # computed for another system or Python (pm.inputs.foreign): resolved, never built

    @property
    def environment(self) -> dict[str, str]:
        """The PEP 508 marker environment (without ``extra``)."""
        return dict(self.markers)

    @property
    def python_version(self) -> str:
        return self.environment["python_version"]

    @property
    def python_full_version(self) -> str:
        return self.environment["python_full_version"]

    @property
    def implementation(self) -> str:
        return self.environment["implementation_name"]

    def digest(self) -> str:
        """A short stable digest of everything that changes a resolution for this target."""
        blob = json.dumps([self.markers, self.platform, self.tags], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def to_receipt(self) -> dict[str, object]:
        return {
            "python": self.python_full_version,
            "executable": self.python,
            "platform": self.platform,
            "implementation": self.implementation,
            "markers": self.environment,
        }


def running_environment(extra: str | None = None) -> dict[str, str]:
    """The running interpreter's PEP 508 marker environment (plus ``extra`` when given)."""
    from packaging.markers import default_environment

    environment = {key: str(value) for key, value in default_environment().items()}
    if extra is not None:
        environment["extra"] = extra
    return environment


def current_target(*, watch: Watch = UNWATCHED) -> Target:
    """The running interpreter."""
    return _probe(sys.executable, watch=watch)


def target_for(python: str | None, *, watch: Watch = UNWATCHED) -> Target:
    """The interpreter ``python`` names (see :func:`find_python`), or the running one."""
    if python is not None:
        python = find_python(python, watch=watch)
        watch.stat(python)  # what that path leads to now: a link retargeted is a change (pm.base.watch)
    if python is None or os.path.realpath(python) == os.path.realpath(sys.executable):
        return current_target(watch=watch)
    return _probe(python, watch=watch)


_VERSION_REQUEST = re.compile(r"\d+(\.\d+){0,2}")


def find_python(request: str, *, watch: Watch = UNWATCHED) -> str:
    """The interpreter ``--python`` means, found as uv finds it: a path (anything with a ``/`` or
    an existing file) as given; a version (``3.12``) as ``python3.12`` on PATH; a name
    (``python3.12``, ``pypy3``) on PATH; else whatever ``uv python find`` answers (installed,
    never downloaded). Raises :class:`UsageError` naming what was tried when nothing matches.
    Where it looked is noted in ``watch``: a file that appears (or becomes executable)
    earlier in that search is a change."""
    watch.stat(request)  # a file of that name in the working folder is taken as given
    if os.sep in request or os.path.isfile(request):
        return request
    import shutil

    name = f"python{request}" if _VERSION_REQUEST.fullmatch(request) else request
    found = shutil.which(name)
    _note_search(name, found, watch=watch)
    if found is not None:
        return found
    watch.unwatchable(f"uv python find {request}")  # uv's own search: not looked at again
    from pm.base.cachedir import default_cache_dir
    from pm.base.uv import Uv, UvError

    try:
        answer = Uv(default_cache_dir()).run("python", "find", request).strip().splitlines()
    except UvError:
        answer = []
    if answer and os.path.isfile(answer[-1]):
        return answer[-1]
    raise UsageError(f"--python {request}: no such interpreter ({name!r} is not on PATH and "
                     "`uv python find` found none installed)")


def _note_search(name: str, found: str | None, *, watch: Watch = UNWATCHED) -> None:
    """Every place ``shutil.which(name)`` looks before ``found`` (all of them when not found)."""
    path = os.environ.get("PATH")
    if path is None:
        path = getattr(os, "confstr", lambda _: None)("CS_PATH") or os.defpath
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder, name)
        watch.stat(candidate)
        if candidate == found:
            return


def _probe(python: str, *, watch: Watch = UNWATCHED) -> Target:
    watch.stat(python)  # the target is this interpreter as it is now (pm.base.watch)
    return _probed(python)


@functools.lru_cache(maxsize=8)
def _probed(python: str) -> Target:
    key = _cache_key(python)
    if key is not None and (known := _cached(key)) is not None:
        return known
    found = _read(python)
    if key is not None:
        _remember(key, found)
    return found


def _cache_key(python: str) -> str | None:
    try:
        real = os.stat(os.path.realpath(python))
    except OSError:
        return None  # the probe says what is wrong
    from pm.base.cachedir import default_cache_dir

    blob = json.dumps([1, os.path.abspath(python), real.st_size, real.st_mtime_ns, packaging.__version__,
                       sys.executable if python == sys.executable else None,
                       _code.digest(default_cache_dir())])  # the probe's code is pm's
    return hashlib.sha256(blob.encode()).hexdigest()


def _cached(key: str) -> Target | None:
    from pm.index.cache import Cache

    data = Cache().get_target(key)
    if data is None:
        return None
    try:
        fields = json.loads(data)
        return Target(python=str(fields["python"]), markers=tuple((str(k), str(v)) for k, v in fields["markers"]),
                      platform=str(fields["platform"]), tags=tuple(str(t) for t in fields["tags"]))
    except (ValueError, KeyError, TypeError):
        return None


def _remember(key: str, target: Target) -> None:
    from pm.index.cache import Cache

    Cache().put_target(key, json.dumps({"python": target.python, "markers": target.markers,
                                        "platform": target.platform, "tags": target.tags}).encode())


def _read(python: str) -> Target:
    if python == sys.executable:
        import sysconfig

        from packaging import tags

        return Target(
            python=sys.executable,
            markers=tuple(sorted(running_environment().items())),
            platform=sysconfig.get_platform(),
            tags=tuple(str(t) for t in tags.sys_tags()),
        )
    import subprocess  # only for another interpreter

    script = _PROBE.format(packaging_parent=str(Path(packaging.__file__).resolve().parent.parent))
    try:
        done = subprocess.run(
            [python, "-I", "-c", script], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TargetError(python, str(exc)) from exc
    if done.returncode != 0:
        raise TargetError(python, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}")
    data = json.loads(done.stdout)
    return Target(
        python=data["python"],
        markers=tuple(sorted(data["markers"].items())),
        platform=data["platform"],
        tags=tuple(data["tags"]),
    )
