"""``hermes plugins validate PATH``: what a plugin's author runs before publishing it.

Reads the folder as pm and the host would and imports nothing: the manifest (validated as
discovery reads it), the declaration (``pyproject.toml``'s ``[project]`` or the manifest's
dependency keys, each requirement parsed), discovery (whether the folder is a plugin root at all,
under a name a plugin can have, and what it would be once enabled: a member whose requirements
are resolved, sidecar-only, or external), and ``config_schema.py`` when it ships one (read as a
literal, :mod:`agent.config_schema`). Every problem names its file and key (or line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pm.base.errors import InputError


@dataclass(frozen=True)
class Validation:
    """What ``validate`` found: the folder, what discovery would make of it (``role``: member,
    sidecar-only, external or None when it is no plugin root), the manifest's ``kind``, the
    declared requirements, the config schema's keys, and every problem (file, key, message)."""

    path: Path
    role: str | None
    kind: str | None = None
    requirements: tuple[str, ...] = ()
    schema_keys: tuple[str, ...] | None = None
    problems: tuple[tuple[str, str, str], ...] = field(default=())
    warnings: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "valid": self.valid, "role": self.role, "kind": self.kind,
                "requirements": list(self.requirements),
                "config_schema": None if self.schema_keys is None else list(self.schema_keys),
                "problems": [{"file": f, "key": k, "message": m} for f, k, m in self.problems],
                "warnings": list(self.warnings)}

    def lines(self) -> list[str]:
        said = [f"{f}: {k}: {m}" if k else f"{f}: {m}" for f, k, m in self.problems]
        said += [f"warning: {w}" for w in self.warnings]
        if self.valid:
            said.append(f"{self.path}: valid ({self.role}" + (f", kind {self.kind}" if self.kind else "")
                        + f", {len(self.requirements)} requirements"
                        + ("" if self.schema_keys is None else f", config schema: {', '.join(self.schema_keys) or '-'}")
                        + ")")
        else:
            said.append(f"{self.path}: {len(self.problems)} problems")
        return said


def validate(path: Path) -> Validation:
    """Validate the plugin folder at ``path`` (module docstring)."""
    from pm.inputs.declaration import read_declaration
    from pm.inputs.discover import is_plugin_name, looks_like_root
    from pm.inputs.manifest import Manifest, read_manifest

    root = path.expanduser().absolute()
    if not root.is_dir():
        return Validation(root, None, problems=((str(root), "", "is not a folder"),))
    if not looks_like_root(root):
        return Validation(root, None, problems=((str(root), "", "is not a plugin root: it holds no plugin.yaml, "
                                                 "plugin.yml, plugin.json or pyproject.toml"),))
    problems: list[tuple[str, str, str]] = []
    if not is_plugin_name(root.name):
        problems.append((str(root), "", f"a folder named {root.name!r} is never discovered (a name starting with "
                                        "'.' or '_' is not a plugin)"))
    manifest: Manifest = Manifest(file=None)
    try:
        manifest = read_manifest(root)
    except InputError as exc:
        problems += _problems(exc)
    try:
        declaration = read_declaration(root, manifest)
    except InputError as exc:
        problems += _problems(exc)
        declaration = None
    role = "external" if manifest.external else "sidecar-only" if declaration is None else "member"
    warnings = (*manifest.warnings, *(declaration.warnings if declaration else ()))
    keys, schema_problems = _schema(root)
    return Validation(root, role, manifest.kind, tuple(str(r) for r in declaration.requirements) if declaration else (),
                      keys, tuple(problems + schema_problems), tuple(warnings))


def _problems(exc: InputError) -> list[tuple[str, str, str]]:
    return [(str(p.file) + (f":{p.line}" if p.line else ""), p.key or "", p.message)
            for p in exc.problems]


def _schema(root: Path) -> tuple[tuple[str, ...] | None, list[tuple[str, str, str]]]:
    """The config schema's keys (None: no config_schema.py), and its problems."""
    from agent.config_schema import ConfigSchemaError, read_config_schema

    path = root / "config_schema.py"
    if not path.is_file():
        return None, []
    try:
        schema = read_config_schema(path)
    except ConfigSchemaError as exc:
        where = f"{exc.path}:{exc.line}" if exc.line else str(exc.path)
        return (), [(where, "", exc.problem)]
    keys, problems = [], []
    for at, item in enumerate(schema):
        if not isinstance(item, dict) or not isinstance(item.get("key"), str) or not item["key"]:
            problems.append((str(path), f"[{at}].key", "each field needs a non-empty string 'key'"))
        else:
            keys.append(item["key"])
    return tuple(keys), problems
