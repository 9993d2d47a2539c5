"""Build one generation from a resolution with uv: venv, install exactly the pins, verify, record.

uv is told exactly which files to install (URL + sha256 each, ``--no-deps``, ``--require-hashes``,
no index, no builds): it resolves nothing. Selection is the caller's next step.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import generations
from .errors import PmError
from .generations import Generation
from .inputs import Inputs
from .records import resolution_to_json
from .resolver import Resolution
from .store import Store
from .uv import Uv

Progress = Callable[[str], None]

#: Named steps of a build, in order (the crash tests pause at each).
STEPS = ("venv", "install", "verify", "record")


class VerifyError(PmError):
    """A freshly built generation does not hold what was resolved."""


def pause_point(step: str, home: Path) -> None:
    """Test hook: with ``HERMES_PM_PAUSE_AT=<step>``, announce the step and wait to be killed."""
    if os.environ.get("HERMES_PM_PAUSE_AT") != step:
        return
    marker = home / "pm" / f".paused-{step}"
    marker.write_text(str(os.getpid()))
    while True:  # pragma: no cover - ended by SIGKILL from the test
        time.sleep(0.05)


def requirements_text(resolution: Resolution) -> str:
    lines = []
    for pin in resolution.pins:
        if not pin.link.sha256:
            raise PmError(f"{pin.link.url}: the index gave no sha256 for this file; pm installs hashed files only")
        lines.append(f"{pin.name} @ {pin.link.url} --hash=sha256:{pin.link.sha256}")
    return "\n".join(lines) + "\n"


def build(inputs: Inputs, resolution: Resolution, uv: Uv, store: Store, progress: Progress) -> Generation:
    home = inputs.home
    gid = generations.new_id(inputs.fingerprint)
    path = store.mkdir(generations.root(home) / gid)
    venv = path / "venv"
    progress(f"creating generation {gid}")
    pause_point("venv", home)
    uv.run("venv", "--quiet", "--python", inputs.target.python, "--no-project", str(venv))
    python = venv / "bin" / "python"
    requirements = store.write_bytes(path / "requirements.txt", requirements_text(resolution).encode())
    progress(f"installing {len(resolution.pins)} packages")
    pause_point("install", home)
    if resolution.pins:
        uv.run("pip", "install", "--python", str(python), "--no-deps", "--require-hashes", "--no-index",
               "--no-build", "--link-mode", "hardlink", "-r", str(requirements))
    progress("verifying")
    pause_point("verify", home)
    verify(venv, inputs.target.python_version, resolution, uv)
    record = {
        "id": gid,
        "fingerprint": inputs.fingerprint,
        "created_at": datetime.now(timezone.utc).isoformat(),
        "target": inputs.target.to_receipt(),
        "resolution": resolution_to_json(resolution),
        "declared": declared(inputs),
        "uv": uv.version(),
    }
    pause_point("record", home)
    store.write_json(path / generations.GENERATION_FILE, record)
    return Generation(gid, path, record)


def declared(inputs: Inputs) -> list[dict[str, Any]]:
    """Every requirement of the union with its origin, as readiness will check it later."""
    return [{"requirement": str(t.requirement), "origin": t.origin.to_json()} for t in inputs.union.requirements] + [
        {"requirement": f"{name}=={version}", "origin": {"kind": "core"}, "locked": True}
        for name, version in inputs.core.lock
    ]


def verify(venv: Path, python_version: str, resolution: Resolution, uv: Uv) -> None:
    """Every pin present at its version, and ``uv pip check`` content."""
    installed = generations.installed_versions(generations.site_packages(venv, python_version))
    wrong = [f"{p.name}=={p.version} (found {installed.get(p.name, 'nothing')})"
             for p in resolution.pins if installed.get(p.name) != p.version]
    if wrong:
        raise VerifyError(f"{venv}: the new generation does not hold what was resolved: {', '.join(wrong)}")
    uv.run("pip", "check", "--python", str(venv / "bin" / "python"))
