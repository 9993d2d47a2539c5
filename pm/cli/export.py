"""``hermes pm export --format pylock|requirements|nix [--selected] [-o FILE]``: parses, runs
:func:`pm.ops.export.export` and prints (the text on stdout, or written to FILE and told on
stderr). What is exported and how is the operation's (:mod:`pm.ops.export`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pm.base.errors import EXIT_FAILURE, EXIT_OK
from pm.cli._common import home_of, options_from
from pm.cli._output import say
from pm.cli.resolve import tell_resolved
from pm.ops.export import FORMATS, export, write_output


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=list(FORMATS), default="pylock")
    parser.add_argument("-o", "--output", help="write here instead of stdout (pylock.toml or pylock.<name>.toml, "
                        "the names PEP 751 gives a lock; requirements.txt; hermes-wheels.nix)")
    parser.add_argument("--selected", action="store_true",
                        help="the selected generation's recorded resolution (no resolving)")
    parser.set_defaults(candidate=None)


def run(args: argparse.Namespace) -> int:
    exported = export(home_of(args), args.format, options_from(args), selected=args.selected)
    if exported.text is None:
        tell_resolved(exported.result.receipt)
        return exported.result.code
    if not args.output:
        sys.stdout.write(exported.text)
        return EXIT_OK
    failed, notes = write_output(Path(args.output), exported.text, args.format)
    if failed:
        say(f"error: cannot write {args.output}: {failed}")
        return EXIT_FAILURE
    say(f"wrote {args.output} ({exported.packages} packages)")
    for note in notes:
        say(note)
    return EXIT_OK
