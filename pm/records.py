"""Values to receipt sections and back: resolutions, conflicts, next steps. Pure; no I/O."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import Version

from .commands import hermes
from .index.base import FileLink
from .resolver import Conflict, Pin, Resolution
from .union import Origin

__all__ = ["conflict_steps", "conflict_to_json", "hermes", "pin_to_json", "resolution_from_json",
           "resolution_to_json"]


def resolution_to_json(resolution: Resolution) -> dict[str, Any]:
    return {"packages": [pin_to_json(p) for p in resolution.pins]}


def pin_to_json(pin: Pin) -> dict[str, Any]:
    link = pin.link
    return {
        "name": pin.name,
        "version": str(pin.version),
        "extras": sorted(pin.extras),
        # Plugins by name only: their declaration files are listed once, in inputs.plugins; repeating
        # the paths for every pin made a 200-plugin receipt several times larger.
        "required_by": [_by_name(o).to_json() for o in pin.required_by],
        "parents": [str(replace(p, origin=_by_name(p.origin)) if p.origin else p) for p in pin.parents],
        "dependencies": list(pin.dependencies),
        "file": {
            "url": link.url,
            "filename": link.filename,
            "sha256": link.sha256,
            "size": link.size,
            "requires_python": link.requires_python,
            "upload_time": link.upload_time.isoformat() if link.upload_time else None,
            "index": link.source or None,
        },
    }


def resolution_from_json(data: dict[str, Any]) -> Resolution:
    """Rebuild a Resolution from a receipt's ``resolution`` section (for export, why, frozen syncs)."""
    pins = []
    for item in data["packages"]:
        f = item["file"]
        link = FileLink(f["filename"], f["url"], sha256=f["sha256"], size=f.get("size"),
                        requires_python=f.get("requires_python"), source=f.get("index") or "")
        origins = tuple(Origin(o.get("plugin"), o.get("file")) for o in item["required_by"])
        pins.append(Pin(canonicalize_name(item["name"]), Version(item["version"]), link,
                        frozenset(item.get("extras", ())), origins, (),
                        tuple(item.get("dependencies", ()))))
    return Resolution(tuple(pins))


def _by_name(origin: Origin) -> Origin:
    return Origin(origin.plugin, None)


def conflict_to_json(conflict: Conflict) -> dict[str, Any]:
    return {
        "plugins": list(conflict.plugins),
        "causes": [c.to_json() for c in conflict.causes],
        "findings": [
            {"kind": f.kind, "package": f.package, "detail": f.detail, "causes": [c.to_json() for c in f.causes]}
            for f in conflict.findings
        ],
        "message": str(conflict),
    }


def conflict_steps(conflict: Conflict, home: Path | None, *, admission: bool = False) -> list[tuple[str, str]]:
    """Next steps for a conflict: commands that run as printed, each with why."""
    steps: list[tuple[str, str]] = []
    candidate = conflict.candidate
    partners = [p for p in conflict.plugins if p != candidate]
    for partner in partners:
        steps.append((hermes("plugins", "disable", partner, home=home),
                      f"plugin {partner!r} collides" + (f" with {candidate!r}" if candidate else "")
                      + "; disabling it makes room (pm never does this for you)"))
    if candidate is not None and partners:
        retry = ("plugins", "enable", candidate) if admission else ("pm", "resolve", "--with", candidate)
        steps.append((hermes(*retry, home=home), f"then retry {candidate!r}"))
    for finding in conflict.findings:
        package = finding.package.split("[")[0]
        if finding.kind == "conflict":
            plugin_causes = [c for c in finding.causes if c.origin.plugin is not None]
            for cause in plugin_causes[:2]:
                steps.append((hermes("pm", "why", package, home=home),
                              f"see who pulls in {package}; the author of plugin {cause.origin.plugin!r} "
                              f"may relax {cause.requirement!r}"))
        elif finding.kind == "sdist-only":
            steps.append((hermes("pm", "resolve", "--allow-build", package, home=home),
                          f"{package} has no wheel; building it runs its build backend (opt-in)"))
    return steps
