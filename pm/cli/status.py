"""``hermes pm status`` and ``hermes pm env``: the selected generation, for people and for the host
(the data: :func:`pm.ops.status.status`).

Both only read (no lock, no inputs, no resolver): ``env`` is what the host runs at boot to find
the interpreter and site-packages to activate.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from pm.base.errors import EXIT_FAILURE, EXIT_OK
from pm.cli._common import home_of
from pm.cli._output import emit_json, say
from pm.env import generations
from pm.ops.status import status


def run(args: argparse.Namespace) -> int:
    data = status(home_of(args))
    if args.json:
        emit_json(data)
        return EXIT_OK
    print(render(data))
    return EXIT_OK


def render(data: dict[str, Any]) -> str:
    current = data["selected"]
    lines = []
    if current is None:
        lines.append(f"{data['home']}: no generation selected (run `hermes pm sync`)")
    else:
        lines += [f"selected generation: {current['id']}", f"  path: {current['path']}",
                  f"  python: {current['python']}", f"  fingerprint: {current['fingerprint']}",
                  f"  packages: {data['packages']}"]
    listed = data["generations"]
    incomplete = sum(1 for g in listed if not g["complete"])
    line = f"generations on disk: {len(listed)}"
    if data["previous"]:
        line += f" (previous: {data['previous']})"
    if incomplete:
        line += f"; {incomplete} incomplete (removed by the next sync or gc)"
    lines.append(line)
    for g in listed:
        if g["leased_by"]:
            lines.append(f"  {g['id']} in use by pid {', '.join(map(str, g['leased_by']))}")
    receipt = data["latest_receipt"]
    if receipt is not None:
        lines.append(f"latest receipt: {receipt['kind']} {receipt['outcome']} at {receipt['finished_at']}  "
                     f"({receipt['path']})")
    return "\n".join(lines)


class Env:
    """``hermes pm env``: the selected generation's interpreter and site-packages, for the host."""

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        current = generations.selected(home_of(args))
        if current is None:
            say("error: no generation is selected; run `hermes pm sync`")
            return EXIT_FAILURE
        if not current.python.exists():
            say(f"error: generation {current.id} is damaged: its interpreter {current.python} is missing; "
                "run `hermes pm sync`")
            return EXIT_FAILURE
        data = {"id": current.id, "python": str(current.python), "site_packages": str(current.site_packages),
                "fingerprint": current.fingerprint}
        if args.json:
            emit_json(data)
        else:
            for key in ("python", "site_packages"):  # shell-quoted: `eval "$(hermes pm env)"` works
                print(f"{key.upper()}={shlex.quote(data[key])}")
            print(f"GENERATION={shlex.quote(current.id)}")
        return EXIT_OK
