"""Values to receipt sections and back: resolutions, conflicts, next steps. Pure; no I/O."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.utils import canonicalize_name
from packaging.version import Version

from pm.base.commands import hermes
from pm.index.base import FileLink
from pm.inputs.union import Origin
from pm.resolver.model import Pin, Resolution

if TYPE_CHECKING:
    from pm.resolver import Conflict, MissingProjects

__all__ = ["conflict_steps", "conflict_to_json", "hermes", "pin_to_json", "resolution_from_json",
           "resolution_to_json"]


def resolution_to_json(resolution: Resolution) -> dict[str, Any]:
    return {"packages": [pin_to_json(p) for p in resolution.pins]} | (
        {"replaced": [r.to_json() for r in resolution.replaced]} if resolution.replaced else {})


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
            | ({"dead_end": f.dead_end.to_json()} if f.dead_end is not None else {})
            for f in conflict.findings
        ],
        "proof": [_proof(f) for f in conflict.findings],
        "message": str(conflict),
    }


def _proof(finding: Any) -> dict[str, Any]:
    """One finding as a derivation from the roots: the statements in order (who requires what,
    then each link of its chain: the versions that state a dead requirement), and the conclusion."""
    ruling = {r for leaf in finding.dead_end.leaves() for r in leaf.roots} if finding.dead_end is not None else set()
    steps = [s for s in dict.fromkeys(c.describe() for c in finding.causes) if s not in ruling]  # those conclude
    if finding.dead_end is not None:
        for parent, needs in finding.dead_end.edges():
            many = len(needs.versions) > 1
            steps.append(f"{parent.package} {', '.join(needs.versions)} require{'' if many else 's'} "
                         f"{needs.dead.requirement}")
        conclusion = finding.detail
    elif finding.kind == "conflict":
        shown = ", ".join(finding.available) or "none"
        conclusion = f"no version of {finding.package} satisfies all of these (available: {shown})"
    else:
        conclusion = finding.detail
    return {"package": finding.package, "kind": finding.kind, "steps": steps, "conclusion": conclusion}


def conflict_steps(conflict: Conflict, home: Path | None, *, admission: bool = False,
                   set_aside: bool = False) -> list[tuple[str, str]]:
    """Next steps for a conflict that need no resolve: the retry after a partner is set aside
    (``set_aside``: a checked step says one can be), and where to look. The remedies themselves
    are checked first (:mod:`pm.ops.fixes`)."""
    steps: list[tuple[str, str]] = []
    candidate = conflict.candidate
    partners = [p for p in conflict.plugins if p != candidate]
    if candidate is not None and partners and set_aside:
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
    return steps


def missing_to_json(error: MissingProjects) -> dict[str, Any]:
    """The receipt's ``failure`` for missing projects: each project, the root requirements that
    lead to it (``required_by``), the versions whose metadata states it (``stated_by``, for a
    transitive one), and a near-match."""
    from pm.resolver.missing import missing_names  # loads the resolver: only for this failure

    projects: dict[str, dict[str, Any]] = {}
    for finding in error.findings:
        for name in dict.fromkeys(missing_names(finding)):
            entry = projects.setdefault(name, {"name": name, "suggestion": error.suggestions.get(name),
                                               "required_by": [], "stated_by": []})
            entry["required_by"] += [c.to_json() for c in finding.causes]
        if finding.dead_end is not None:
            for parent, needs in finding.dead_end.edges():
                if needs.dead.kind == "missing":
                    projects[needs.dead.package.split("[")[0]]["stated_by"].append(
                        {"package": parent.package, "versions": list(needs.versions),
                         "requirement": needs.dead.requirement})
    return {"kind": "missing-project", "message": str(error), "url": None, "projects": list(projects.values()),
            "plugins": list(error.plugins), "searched": list(error.searched)}


def missing_steps(error: MissingProjects, home: Path | None, *, kind: str = "resolve") -> list[tuple[str, str]]:
    """Next steps for missing projects: fix the declaration (or the index), then retry the same
    operation (``kind``: the receipt's); never "disable another plugin", since no other plugin
    collides — only, outside admission, setting aside the plugins whose declarations lead there."""
    steps: list[tuple[str, str]] = [(hermes("pm", "scan", home=home), _missing_why(error))]
    candidate = error.candidate
    retry = {"admit": ("plugins", "enable", candidate or ""), "sync": ("pm", "sync"), "update": ("update",)}.get(
        kind, ("pm", "resolve", "--with", candidate) if candidate else ("pm", "resolve"))
    steps.append((hermes(*retry, home=home), f"then retry {candidate!r}" if candidate else "then try again"))
    if candidate is None:
        for plugin in error.plugins:
            steps.append((hermes("plugins", "disable", plugin, home=home),
                          f"or set plugin {plugin!r} aside until its requirements exist (pm never does this for you)"))
    return steps


def _missing_why(error: MissingProjects) -> str:
    """What to check: the spelling where a declaration names a missing project; the requiring
    versions where a published package's metadata does; in both cases the index."""
    from pm.resolver.missing import missing_names

    declared = {n: f for f in error.findings if f.dead_end is None and all(c.via is None for c in f.causes)
                for n in missing_names(f)}
    parts = []
    if declared:
        names = ", ".join(repr(n) + (f" (did you mean {error.suggestions[n]!r}?)" if n in error.suggestions else "")
                          for n in declared)
        files = sorted({c.origin.file for f in declared.values() for c in f.causes if c.origin.file})
        parts.append(f"check the spelling of {names}" + (f" in {', '.join(files)}" if files else ""))
    if published := [n for n in error.projects if n not in declared]:
        parts.append(f"{', '.join(map(repr, published))} {'is' if len(published) == 1 else 'are'} named by published "
                     "packages the plugins pull in (the chain above), not by a declaration: require versions "
                     "of those packages that do not need it, or ask their maintainers")
    return "; ".join(parts) + "; if a project lives on another index, set it with --index-url or pm.index_url in config.yaml"
