"""``hermes plugins info|search|validate|doctor``: read-only looks at one plugin, the catalog, an
author's folder and the selected generation. None imports plugin code (manifests, declarations
and ``config_schema.py`` are read as text) and none touches the network (the catalog is its kept
copy). ``info``: the declaration with each requirement's origin, the manifest, the catalog entry,
the installed packages of its requirements and its readiness. ``search``: the catalog's entries
whose name or description holds the term. ``validate``: what an author runs before publishing
(exit 1 on any problem, each naming its file and key). ``doctor``: :mod:`pm.env.doctor` (exit 4
when something is damaged, like ``hermes pm check``).
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from pm.base.errors import EXIT_FAILURE, EXIT_NOT_READY, EXIT_OK, InputError
from pm.base.names import printable
from pm.cli._common import add_common, add_lock_option, add_resolution_options, add_skip_invalid, flags_from, home_of
from pm.cli._output import emit_json, say, table

VERBS = (
    ("info", "one plugin: its declaration, manifest, catalog entry, installed packages and readiness", "NAME"),
    ("search", "the catalog's plugins whose name or description matches", "TERM"),
    ("validate", "check a plugin folder before publishing: manifest, declaration, discovery, config schema "
                 "(nothing imported)", "PATH"),
    ("doctor", "re-hash every installed file of the selected generation against its RECORD and check every pin "
               "(no network)", None),
)


def register(commands: argparse._SubParsersAction[Any]) -> None:
    """Add the verbs to ``hermes plugins``."""
    for name, help_text, argument in VERBS:
        parser = commands.add_parser(name, help=help_text, description=help_text)
        add_common(parser)
        if argument:
            parser.add_argument("name", metavar=argument)
    text = "move one catalog plugin to the pin its entry names now (as `hermes update` does for all), then sync"
    update = commands.add_parser("update", help=text, description=text)
    update.add_argument("name", metavar="NAME")
    update.add_argument("--accept-repin", action="store_true",
                        help="consent to what the new pin brings (new or widened requirements, new capabilities); "
                             "without it, a terminal asks and a script keeps the old pin")
    add_common(update)
    add_resolution_options(update)
    add_lock_option(update)
    add_skip_invalid(update)


def run(args: argparse.Namespace) -> int:
    return {"info": run_info, "search": run_search, "validate": run_validate,
            "doctor": run_doctor, "update": run_update}[args.plugins_command](args)


def run_update(args: argparse.Namespace) -> int:
    """``hermes plugins update NAME``: :func:`pm.ops.update.update` for that plugin alone, with
    the re-pin's consent rule (``--accept-repin``, or a person at a terminal)."""
    import sys

    from agent.plugins_cli import _ask_repin
    from pm.cli._changes import tell_changes
    from pm.cli._common import options_from
    from pm.cli._output import reporter_for
    from pm.cli.sync import report
    from pm.ops.update import update

    ask = _ask_repin if sys.stdin.isatty() and not args.json else None
    done = update(home_of(args), options_from(args), reporter_for(args.json or args.quiet),
                  accept=frozenset([args.name] if args.accept_repin else []), ask=ask, only=args.name)
    tell_changes(args, done.receipt)
    report(done.receipt, json_output=args.json)  # its warnings say what stayed at its pin, and why
    if not args.json and done.code == 0:  # and the command that consents
        from pm.cli._output import tell_steps

        tell_steps(done.receipt.next_steps)
    return done.code


# -- info ------------------------------------------------------------------------------------------

def run_info(args: argparse.Namespace) -> int:
    from pm.env import generations
    from pm.env.readiness import check
    from pm.inputs.collect import gather
    from pm.inputs.settings import environment_home

    home = home_of(args)
    inputs = gather(home, flags_from(args))
    status = inputs.find(args.name)
    if status is None:
        say(f"error: no plugin {args.name!r} in {home} (`hermes plugins list` shows them; "
            f"`hermes plugins search {args.name}` looks in the catalog)")
        return EXIT_FAILURE
    env_home = environment_home(home)
    generation = generations.selected(env_home)
    judged = inputs if env_home == inputs.home else gather(env_home, flags_from(args))
    verdict = check(judged, generation).verdict(status.plugin.key)
    data = info_of(status, home, generation.pins if generation else {}, verdict)
    if args.json:
        emit_json(data)
    else:
        print(_info_text(data))
    return EXIT_OK


def info_of(status: Any, home: Path, pins: dict[str, str], verdict: Any) -> dict[str, Any]:
    """What ``info`` says of one plugin, as data."""
    from pm.env.plugin_install import installed_records

    plugin = status.plugin
    declaration = plugin.declaration
    declared = declaration.requirements if declaration is not None else ()
    requirements = [{"requirement": str(r), "file": str(declaration.file)} for r in declared] \
        if declaration is not None else []
    installed = {canonicalize_name(r.name): pins.get(canonicalize_name(r.name)) for r in declared}
    return {
        "name": plugin.key, "path": str(plugin.root.path), "source": plugin.root.source, "status": str(status.status),
        "reason": status.reason, "manifest": manifest_of(plugin.root.path, plugin.manifest),
        "declaration": None if declaration is None else {"file": str(declaration.file), "style": declaration.style},
        "requirements": requirements,
        "installed": [{"name": n, "version": v} for n, v in installed.items()],
        "catalog": catalog_entry(home, plugin.root.leaf),
        "provenance": installed_records(home).get(plugin.root.leaf),
        "ready": None if verdict is None else verdict.ready,
        "readiness": None if verdict is None else ("ready" if verdict.ready else verdict.reason()),
        "problems": list(plugin.problems),
    }


def manifest_of(root: Path, manifest: Any) -> dict[str, Any]:
    """Name, version, description and kind of a plugin, from its manifest (else its pyproject)."""
    import yaml

    about: dict[str, Any] = {}
    if manifest is not None and manifest.file is not None:
        try:
            loaded = yaml.safe_load(manifest.file.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            loaded = None
        about = loaded if isinstance(loaded, dict) else {}
    project: dict[str, Any] = {}
    if (root / "pyproject.toml").is_file():
        try:
            project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            project = {}
    pick = {key: about.get(key, project.get(key)) for key in ("name", "version", "description")}
    return {**{k: None if v is None else str(v) for k, v in pick.items()},
            "kind": manifest.kind if manifest is not None else None,
            "file": str(manifest.file) if manifest is not None and manifest.file is not None else None}


def catalog_entry(home: Path, name: str) -> dict[str, Any] | None:
    """The catalog's entry for ``name`` (source, pin, tier), from the kept copy (no network)."""
    from pm.inputs.catalog import catalog_name
    from pm.ops.install import catalog_for

    try:
        catalog = catalog_for(home, fetch=False)
    except InputError:
        return None
    entry = next((e for e in catalog.entries if catalog_name(e.name) == catalog_name(name)), None)
    if entry is None:
        return None
    return {"name": entry.name, "source": entry.git or entry.archive, "subdir": entry.subdir, "pin": entry.pin,
            "tier": entry.tier, "description": entry.description, "catalog": str(catalog.file),
            "removed": catalog.is_removed(entry.name)}


def _info_text(data: dict[str, Any]) -> str:
    manifest, entry = data["manifest"], data["catalog"]
    lines = [f"plugin {data['name']} ({data['source']}, {data['status']}) at {data['path']}",
             f"manifest: name {manifest['name'] or '-'}, version {manifest['version'] or '-'}, "
             f"kind {manifest['kind'] or '-'}" + (f" ({manifest['file']})" if manifest["file"] else ""),
             f"description: {manifest['description'] or '-'}"]
    lines += ["requirements:"] + [f"  {r['requirement']}  ({r['file']})" for r in data["requirements"]] \
        if data["requirements"] else ["requirements: none declared"]
    lines += ["installed:"] + [f"  {i['name']}=={i['version']}" if i["version"] else f"  {i['name']}: not installed"
                               for i in data["installed"]] if data["installed"] else []
    lines.append("catalog: " + (f"{entry['source']} ({entry['pin']}), tier {entry['tier'] or '-'}" if entry
                                else "not in the catalog"))
    lines.append(f"readiness: {data['readiness'] or '-'}")
    lines += [f"problem: {p}" for p in data["problems"]]
    return "\n".join(printable(line) for line in lines)


# -- search ----------------------------------------------------------------------------------------

def run_search(args: argparse.Namespace) -> int:
    from pm.env.plugin_install import installed_records
    from pm.ops.install import catalog_for

    home = home_of(args)
    catalog = catalog_for(home, fetch=False)
    term = args.name.casefold()
    installed = set(installed_records(home)) | {p.name for p in (home / "plugins").glob("*") if p.is_dir()}
    found: list[dict[str, Any]] = [{"name": e.name, "description": e.description, "tier": e.tier, "installed": e.name in installed,
              "removed": catalog.is_removed(e.name)}
             for e in catalog.entries if term in e.name.casefold() or term in e.description.casefold()]
    if args.json:
        emit_json({"catalog": str(catalog.file), "term": args.name, "plugins": found})
        return EXIT_OK
    if found:
        print(table([[printable(f["name"]), f["tier"] or "-", "yes" if f["installed"] else "no",
                      printable(f["description"])] for f in found], ["plugin", "tier", "installed", "description"]))
    say(f"{len(found)} of {len(catalog.entries)} catalog plugins match {args.name!r} ({catalog.file})")
    return EXIT_OK


# -- validate --------------------------------------------------------------------------------------

def run_validate(args: argparse.Namespace) -> int:
    from agent.plugins_validate import validate

    found = validate(Path(args.name))
    if args.json:
        emit_json(found.to_json())
    else:
        for line in found.lines():
            print(printable(line))
    return EXIT_OK if found.valid else EXIT_FAILURE


# -- doctor ----------------------------------------------------------------------------------------

def run_doctor(args: argparse.Namespace) -> int:
    from pm.env import generations
    from pm.env.doctor import diagnose
    from pm.inputs.settings import environment_home

    health = diagnose(generations.selected(environment_home(home_of(args))))
    if args.json:
        emit_json(health.to_json())
    elif health.generation is None:
        say("no generation is selected: nothing is installed to check (`hermes pm sync` builds one)")
    else:
        for damage in health.damage:
            print(printable(damage.describe()))
        say(f"generation {health.generation}: {health.files} files checked, "
            + ("healthy" if health.healthy else f"{len(health.damage)} problems: not as it was installed"))
    return EXIT_OK if health.healthy else EXIT_NOT_READY
