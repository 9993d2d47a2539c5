"""People's messages to stderr, data to stdout; colour only on a terminal and never with NO_COLOR."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, TextIO

_CODES = {"bold": "1", "red": "31", "green": "32", "yellow": "33", "dim": "2"}


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR")


def paint(text: str, style: str, stream: TextIO | None = None) -> str:
    stream = sys.stdout if stream is None else stream
    if not use_colour(stream):
        return text
    return f"\x1b[{_CODES[style]}m{text}\x1b[0m"


#: How :func:`pm.ops.receipts.write` words a receipt it could not write.
NOT_WRITTEN = "receipt not written"


#: How much a person asked to hear: ``-q`` (errors and data only), ``-v`` (steps with timings,
#: cache decisions), ``-vv`` (every HTTP request, every rejected candidate). Set once per command
#: by :func:`configure`; ``errored`` remembers that an error was told, so its next steps are too.
_STATE = {"quiet": False, "verbose": 0, "errored": False}


def configure(*, quiet: bool = False, verbose: int = 0) -> None:
    """Set ``-q`` / ``-v`` for this process: ``-v`` sends pm's log (``pm.*`` loggers) to stderr
    at INFO, ``-vv`` at DEBUG, each line with the seconds since start. ``-q`` wins over ``-v``."""
    _STATE.update(quiet=quiet, verbose=0 if quiet else verbose, errored=False)
    if not _STATE["verbose"]:
        if "logging" in sys.modules:  # a command run earlier in this process asked for -v: undo it
            logger = sys.modules["logging"].getLogger("pm")
            logger.handlers[:], logger.propagate = [], True
            logger.setLevel(sys.modules["logging"].NOTSET)
        return
    if verbose and not quiet:
        import logging  # only when asked: the no-op path never pays for it

        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_Elapsed())
        logger = logging.getLogger("pm")
        logger.handlers[:] = [handler]
        logger.setLevel(logging.INFO if verbose == 1 else logging.DEBUG)
        logger.propagate = False


def _Elapsed() -> Any:
    import logging

    class Elapsed(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return terminal_safe(f"[{record.relativeCreated / 1000:7.3f}s] {record.name}: {record.getMessage()}")

    return Elapsed()


def say(message: str) -> None:
    """A message for a person (stderr), made :func:`terminal_safe`; nothing under ``-q``."""
    if not _STATE["quiet"]:
        print(terminal_safe(message), file=sys.stderr)


def say_error(message: str) -> None:
    """An error for a person (stderr): told even under ``-q``, and so are the next steps after it."""
    _STATE["errored"] = True
    print(terminal_safe(message), file=sys.stderr)


#: The escape sequences :func:`paint` writes; any other control character is untrusted text.
_OWN_CODES = re.compile("(\x1b\\[(?:0|" + "|".join(_CODES.values()) + ")m)")


def terminal_safe(text: str) -> str:
    """``text`` with every control character but newline and tab written as an escape (``\\x1b``),
    keeping only pm's own colour codes: a plugin folder named ``x\\x1b[2J`` quoted in a message
    must not clear the screen."""
    if text.isprintable():
        return text
    parts = _OWN_CODES.split(text)
    return "".join(part if i % 2 else "".join(c if c.isprintable() or c in "\n\t" else repr(c)[1:-1] for c in part)
                   for i, part in enumerate(parts))


def emit_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")


def table(rows: list[list[str]], headers: list[str]) -> str:
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows, strict=True)]
    lines = ["  ".join(h.upper().ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


class TerminalReporter:
    """Progress lines on stderr for long steps (only on a terminal, never with ``--json``);
    notices always on stderr."""

    def __init__(self, show_progress: bool) -> None:
        self.show_progress = show_progress

    def progress(self, message: str) -> None:
        if _STATE["verbose"]:
            import logging

            logging.getLogger("pm.steps").info(message)
        elif self.show_progress:
            say(paint(f"… {message}", "dim", sys.stderr))

    def notice(self, message: str) -> None:
        say(message)


def reporter_for(json_output: bool) -> TerminalReporter:
    return TerminalReporter(not json_output and sys.stderr.isatty())


def tell_failure(receipt: Any) -> None:
    """A failed or refused operation's failure on stderr: ``error: …``, or ``refused: …`` when
    the outcome is a refusal (managed environment, catalog, still enabled …)."""
    from pm.ops.messages import failure_said

    lead, message = failure_said(receipt.outcome, receipt.failure)
    say_error(f"{paint(lead, 'red', sys.stderr)}: {message}")


def tell_steps(steps: list[dict[str, str]], *, header: bool = True) -> None:
    """The commands to run next; under ``-q`` only after an error (they are part of it)."""
    tell = say_error if _STATE["errored"] else say
    if steps and header:
        tell("next steps:")
    for step in steps:
        tell(f"  {step['command']}\n      {step['why']}")


def tell_receipt(receipt: Any) -> None:
    """Where the receipt went; or, when it could not be written (a full disk, a read-only home),
    that it was not, and why — a command never ends without saying which."""
    if receipt.path is not None:
        say(f"receipt: {receipt.path}")
        return
    for warning in receipt.warnings:
        if warning.startswith(NOT_WRITTEN):
            say_error(f"{paint('warning', 'yellow', sys.stderr)}: {warning}")


def failed_early(receipt: Any, json_output: bool) -> bool:
    """Whether the operation failed before its inputs were read (managed environment, lock, broken
    config …); told then as :func:`tell_failed` does, and the caller has nothing more to say."""
    if receipt.failure is None or receipt.inputs is not None:
        return False
    tell_failed(receipt, json_output)
    return True


def tell_failed(receipt: Any, json_output: bool) -> None:
    """A failure before the command's own work: the receipt as data with ``--json``, and the
    message and the receipt's path for a person."""
    if json_output:
        emit_json(receipt.as_written())
    tell_failure(receipt)
    tell_receipt(receipt)
