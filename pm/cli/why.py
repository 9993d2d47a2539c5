"""``hermes pm why PACKAGE``: which origins pull a package in, and at which version.

By default the answer comes from the selected generation's record: offline, instant, and about
what is installed. ``--resolve`` resolves the current inputs afresh instead (the index may be
read), which also answers before any sync and for inputs changed since."""

from __future__ import annotations

import argparse

from packaging.utils import canonicalize_name

from pm.base.errors import EXIT_FAILURE, EXIT_OK
from pm.cli._common import home_of, options_from
from pm.cli._output import emit_json, say, tell_failed
from pm.cli.resolve import tell_resolved
from pm.env import generations
from pm.inputs.settings import environment_home
from pm.ops.resolve import resolve


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("package", help="a package name")
    parser.add_argument("--resolve", action="store_true",
                        help="resolve the current inputs afresh (may read the index) instead of "
                             "reading the selected generation")
    parser.set_defaults(candidate=None)


def run(args: argparse.Namespace) -> int:
    return run_resolved(args) if args.resolve else run_selected(args)


def run_selected(args: argparse.Namespace) -> int:
    """The answer of the selected generation's record (no resolver, no network, no receipt:
    a read, like ``status``)."""
    name = canonicalize_name(args.package)
    home = home_of(args)
    current = generations.selected(environment_home(home))
    if current is None:
        say(f"error: no generation is selected for {home}; run `hermes pm sync`, or ask "
            f"`hermes pm why {args.package} --resolve`")
        return EXIT_FAILURE
    pin = next((p for p in current.record["resolution"]["packages"] if canonicalize_name(p["name"]) == name), None)
    if pin is None:
        say(f"error: {name} is not in generation {current.id} (the selected one of {home})")
        return EXIT_FAILURE
    if args.json:
        emit_json({"package": name, "version": pin["version"], "generation": current.id,
                   "required_by": pin["required_by"], "parents": pin.get("parents", [])})
        return EXIT_OK
    origins = [_origin_text(o) for o in pin["required_by"]]
    tell_pin(pin["name"], pin["version"], pin.get("parents", []), origins)
    return EXIT_OK


def _origin_text(origin: dict[str, str]) -> str:
    return "core" if origin.get("kind") == "core" or not origin.get("plugin") else f"plugin {origin['plugin']!r}"


def tell_pin(name: str, version: str, parents: list[str], origins: list[str]) -> None:
    """``name version``, the requirements that pulled it in, then the origins not already named
    by one of them (each origin once)."""
    print(f"{name} {version}")
    for parent in parents:
        print(f"  {parent}")
    rest = [o for o in origins if not any(p.startswith(o.split(" (")[0]) for p in parents)]
    if rest:
        print(f"  (pulled in by: {', '.join(rest)})")


def run_resolved(args: argparse.Namespace) -> int:
    name = canonicalize_name(args.package)
    done = resolve(home_of(args), options_from(args), kind="why", package=name)
    receipt, inputs, resolution, code = done.receipt, done.inputs, done.resolution, done.code
    if inputs is None:
        tell_failed(receipt, args.json)
        return code
    if not args.json:
        tell_resolved(receipt)
    direct = [t for t in inputs.union.requirements if canonicalize_name(t.requirement.name) == name]
    locked = [f"{n}=={v}" for n, v in inputs.core.lock if n == name]
    pin = resolution.by_name().get(name) if resolution is not None else None
    if args.json:
        emit_json({"package": name, "version": str(pin.version) if pin else None,
                   "required_by": [o.to_json() for o in pin.required_by] if pin else [],
                   "parents": [str(p) for p in pin.parents] if pin else [],
                   "declared": [{"requirement": str(t.requirement), "origin": t.origin.to_json()} for t in direct]
                   + [{"requirement": pin_text, "origin": {"kind": "core"}, "locked": True} for pin_text in locked]})
    elif pin is not None:
        tell_pin(pin.name, str(pin.version), [str(p) for p in pin.parents], [str(o) for o in pin.required_by])
    elif direct or locked:
        print(f"{name} is declared but not resolved:")
        for pin_text in locked:
            print(f"  core locks {pin_text}")
        for tagged in direct:
            print(f"  {tagged.origin} requires {tagged.requirement}")
    if pin is None and not direct and not locked and code == EXIT_OK:
        say(f"error: {name} is not part of the resolution of {inputs.home}")
        return EXIT_FAILURE
    return code if pin is None and code != EXIT_OK else EXIT_OK
