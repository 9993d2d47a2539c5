"""``hermes pm why PACKAGE``: which origins pull a package in, and at which version."""

from __future__ import annotations

import argparse

from packaging.utils import canonicalize_name

from ..errors import EXIT_FAILURE, EXIT_OK
from ..ops.resolve import resolve
from ._common import home_of, options_from
from ._output import emit_json, say, tell_failed
from .resolve import tell_resolved


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("package", help="a package name")
    parser.set_defaults(candidate=None)


def run(args: argparse.Namespace) -> int:
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
        print(f"{pin.name} {pin.version}")
        for parent in pin.parents:
            print(f"  {parent}")
        roots = ", ".join(str(o) for o in pin.required_by)
        print(f"  (pulled in by: {roots})")
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
