"""The data of every page, read through what pm and the host already expose: the inputs
(:func:`pm.inputs.collect.gather`, :func:`pm.inputs.collect.plugin_to_json`), readiness
(:func:`pm.env.readiness.check`, as ``hermes plugins list`` judges it: nothing installed, no receipt
written), ``hermes pm status``'s data (:func:`pm.ops.status.status`), the receipts, memory provider discovery and the host's gate.
Nothing here decides anything pm or the host decides; it only reads and arranges.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent.discovery import ProviderInfo, discover_memory_providers, find_memory_provider
from agent.errors import MemoryPluginError
from agent.gate import ready
from agent.secrets import read_env
from pm.env import generations
from pm.env.readiness import check
from pm.inputs.collect import gather, plugin_to_json
from pm.inputs.config import read_config
from pm.inputs.settings import Flags, environment_home
from pm.ops.status import status

__all__ = ["find_plugin", "graph_data", "history", "latest_refusal", "plugins", "provider", "providers",
           "readiness"]

#: Receipt outcomes the refusal page shows: a dependency conflict, or a refusal (managed, catalog …).
REFUSALS = ("conflict", "refused")


def _label(name: str) -> str:
    return name or "home"


def plugins(home: Path, flags: Flags) -> dict[str, Any]:
    """Every plugin root of the environment, as ``hermes pm scan --json`` lists it, with the homes
    (the primary and each profile) whose selection makes it a member."""
    inputs = gather(environment_home(home), flags)
    homes = [(_label(h.name), str(h.home), set(h.members)) for h in inputs.selection.homes]
    rows = []
    for status_ in inputs.selection.plugins:
        row = plugin_to_json(status_)
        row["member_in"] = [label for label, _, members in homes if status_.plugin.key in members]
        rows.append(row)
    notices = list(inputs.selection.notices) + [w for s in inputs.selection.plugins for w in s.plugin.warnings]
    return {"homes": [(label, path) for label, path, _ in homes], "plugins": rows, "notices": notices,
            "fingerprint": inputs.fingerprint}


def find_plugin(home: Path, flags: Flags, name: str) -> dict[str, Any] | None:
    """One plugin's row from :func:`plugins` (by key or leaf name) with its readiness verdict;
    ``None`` when no plugin root has that name."""
    listed = plugins(home, flags)
    row = next((p for p in listed["plugins"] if name in (p["name"], p["name"].rsplit("/", 1)[-1])), None)
    if row is None:
        return None
    verdict = next((v for v in readiness(home, flags)["plugins"] if v["name"] == row["name"]), None)
    return row | {"readiness": verdict, "homes": listed["homes"]}


def readiness(home: Path, flags: Flags) -> dict[str, Any]:
    """``hermes pm check``'s table, judged now from installed metadata (no receipt written)."""
    env_home = environment_home(home)
    generation = generations.selected(env_home)
    judged = check(gather(env_home, flags), generation).to_json()
    return judged | {"generation": generation.id if generation else None}


def history(home: Path) -> dict[str, Any]:
    """``hermes pm status --json``, each generation with its package count and when it was built."""
    env_home = environment_home(home)
    data = status(env_home)
    for row in data["generations"]:
        loaded = generations.load(env_home, row["id"]) if row["complete"] else None
        row["packages"] = len(loaded.pins) if loaded else None
        row["created_at"] = loaded.record.get("created_at") if loaded else None
    return data


def _receipts(home: Path) -> list[Path]:
    folder = environment_home(home) / "pm" / "receipts"
    return sorted((p for p in folder.glob("*.json") if p.name != "latest.json"), reverse=True)


def latest_refusal(home: Path) -> dict[str, Any] | None:
    """The newest receipt whose outcome is a refusal (a conflict, or refused), with its path."""
    for path in _receipts(home):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("outcome") in REFUSALS:
            return data | {"receipt_path": str(path)}
    return None


def graph_data(home: Path) -> dict[str, Any]:
    """The selected resolution's pins (who pulls in what) and the causes of the latest conflict."""
    env_home = environment_home(home)
    generation = generations.selected(env_home)
    packages = generation.record["resolution"]["packages"] if generation else []
    refusal = latest_refusal(home)
    conflict = refusal.get("conflict") if refusal else None
    return {"generation": generation.id if generation else None, "packages": packages,
            "conflict": conflict, "candidate": refusal.get("candidate") if refusal else None,
            "refused_at": refusal.get("finished_at") if refusal else None}


def _verdict(info: Any, home: Path) -> dict[str, Any]:
    """The host's gate on ``info`` against the selected generation (nothing activated here)."""
    try:
        judged = ready(info, home, generations.selected(environment_home(home)))
    except MemoryPluginError as exc:
        return {"ready": False, "reason": str(exc), "unmet": [], "command": exc.command}
    return judged.to_json()


def providers(home: Path) -> dict[str, Any]:
    """Every memory provider discovery finds for ``home``, with the gate's verdict."""
    config = read_config(home)
    rows = []
    for info in discover_memory_providers(home):
        rows.append({"name": info.name, "key": info.key, "source": info.source, "root": str(info.root),
                     "shadowed_by": str(info.shadowed_by) if info.shadowed_by else None,
                     "problems": list(info.problems), "selected": config.memory_provider in (info.name, info.key),
                     "config_schema_file": str(info.config_schema_file) if info.config_schema_file else None,
                     "readiness": _verdict(info, home) if info.shadowed_by is None else None})
    return {"memory_provider": config.memory_provider, "config": str(config.file), "providers": rows}


def _fields(home: Path, info: ProviderInfo) -> list[dict[str, Any]]:
    """The provider's settings fields, never by importing its code here: its ``config_schema.py``
    read as data, else its ``get_config_schema()`` asked in a child process
    (:func:`agent.provider_child.schema`, with a deadline and a size bound)."""
    from agent import provider_child
    from agent.memory_setup import settings_schema

    if info.config_schema_file is not None:
        return settings_schema(home, info.name)
    return provider_child.schema(home, info.name)


def provider(home: Path, name: str) -> dict[str, Any] | None:
    """One provider's settings panel: its fields (:func:`_fields`), which secrets ``.env`` holds
    (names only: a value never reaches a page), and its verdict. ``None`` when no provider has
    that name."""
    from agent.memory_setup import SetupError
    from agent.provider_child import ChildFailed

    info = find_memory_provider(home, name)
    if info is None:
        return None
    data: dict[str, Any] = {"name": info.name, "key": info.key, "source": info.source, "root": str(info.root),
                            "readiness": _verdict(info, home), "fields": [], "schema_error": None,
                            "env_file": str(home / ".env")}
    try:
        data["fields"] = _fields(home, info)
    except (SetupError, MemoryPluginError, ChildFailed) as exc:
        data["schema_error"] = str(exc)
    stored = read_env(home)
    data["stored_secrets"] = sorted(str(f["env_var"]) for f in data["fields"]
                                    if f.get("secret") and f.get("env_var") in stored)
    return data
