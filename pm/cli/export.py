"""``hermes pm export --format pylock|requirements``: the resolution as a PEP 751 lock or pins."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import EXIT_OK
from ..export import to_pylock, to_requirements
from ..inputs import gather
from ._common import flags_from, home_of, start_receipt
from ._output import say
from .resolve import resolve_with_receipt

HELP = "the resolution as a PEP 751 pylock.toml or as hashed requirement pins"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=["pylock", "requirements"], default="pylock")
    parser.add_argument("-o", "--output", help="write here instead of stdout (e.g. pylock.toml)")
    parser.set_defaults(candidate=None)


def run(args: argparse.Namespace) -> int:
    inputs = gather(home_of(args), flags_from(args))
    receipt = start_receipt("export", inputs)
    code, resolution = resolve_with_receipt(inputs, receipt, args)
    if resolution is None:
        return code
    text = (to_pylock(resolution, inputs.target, inputs.fingerprint) if args.format == "pylock"
            else to_requirements(resolution))
    if args.output:
        Path(args.output).write_text(text)
        say(f"wrote {args.output} ({len(resolution.pins)} packages)")
    else:
        sys.stdout.write(text)
    return EXIT_OK
