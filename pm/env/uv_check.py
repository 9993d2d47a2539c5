"""``uv pip check`` on a new generation, knowing the operator's overrides.

uv validates every installed distribution's Requires-Dist. An override (:mod:`pm.inputs.overrides`)
replaced some of those on purpose, so uv's complaint about exactly such a requirement (``lib``
requires ``numpy<1.25``, and the override put numpy 1.26 in its place) is what was asked for;
any other complaint still fails the build. So is a complaint about a requirement on the host itself
(:mod:`pm.resolver.host`): the running host provides it from outside the generation.
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from pm.base.uv import Uv, UvError
from pm.resolver.host import is_host
from pm.resolver.model import Resolution

#: uv's line for one unmet requirement: "The package `lib` requires `numpy<1.25`, but ...".
_COMPLAINT = re.compile(r"^The package `(?P<package>[^`]+)` requires `(?P<requirement>[^`]+)`")


def uv_check(uv: Uv, venv: Path, resolution: Resolution) -> None:
    """``uv pip check`` of ``venv``; a failure whose every complaint is a requirement an override
    replaced passes."""
    try:
        uv.run("pip", "check", "--python", str(venv / "bin" / "python"))
    except UvError as failure:
        if not _all_accepted(failure.output, resolution):
            raise


def _all_accepted(output: str, resolution: Resolution) -> bool:
    """Whether uv complained about something, and only about requirements the overrides replaced
    in a pinned package's Requires-Dist, or requirements on the host (provided, never installed)."""
    replaced = {(canonicalize_name(r.package.split()[0]), _project(r.requirement))
                for r in resolution.replaced if r.package}
    complaints = [m for line in output.splitlines() if (m := _COMPLAINT.match(line.strip()))]
    return bool(complaints) and all(
        is_host(_project(m["requirement"])) or (canonicalize_name(m["package"]), _project(m["requirement"])) in replaced
        for m in complaints)


def _project(text: str) -> str:
    try:
        return canonicalize_name(Requirement(text).name)
    except InvalidRequirement:
        return text
