"""The shortcut: an identical ``hermes pm resolve``, ``sync`` or ``check`` over unchanged files
answers from its last answer, without parsing anything or loading the resolver.

After a resolve that ended ``ok`` or in a refusal (whose proof and checked remedies were stored
with the pages they read, :func:`pm.records.reuse.remember_refusal`), a sync that found nothing to do, or a check (of the selection
as it is, no ``--with``), :func:`remember` stores, under a key made of the command line, the
working folder, the whole environment, the interpreter running pm (its options and ``sys.path``),
the digest of pm's own code (:mod:`pm.base.codekey`) and whether the output streams are terminals: the
finished receipt, what the command read (every file's bytes, folder listing, real path and
program identity noted by :mod:`pm.base.watch` while it ran: the inputs, and for sync and check the
selection state, the selected generation's record, interpreter and installed metadata) and the
index pages a resolution was read from. :func:`answer` takes the shortcut only when every one of
those observations is made the same way again and every page is still fresh in the cache by its
own max-age (offline: still there) — exactly when the full command would give the same answer —
and then writes a new receipt (new times, the same findings, ``shortcut``) and prints what the
full command prints. Anything else (a changed file, a stale page, an unreadable record, another
command) is a miss: the full command runs, and it decides. Only stdlib modules, :mod:`pm.base.watch`,
:mod:`pm.base.codekey` and what writing a receipt and printing need are loaded here: this runs before
the rest of pm is imported.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pm.base import codekey as _code
from pm.base import watch as _watch
from pm.base.errors import EXIT_FAILURE, PmError

#: Bumped when what a record holds, or what it must match, changes.
FORMAT = 2
FOLDER = "shortcuts-v1"
#: The commands whose answers are remembered.
COMMANDS = ("resolve", "sync", "check")
#: Records kept (the newest); each is a receipt of a few to a few hundred kB.
KEEP = 64


def key(argv: Sequence[str], cache_root: Path, environ: Mapping[str, str] | None = None,
        cwd: str | None = None) -> str:
    """Everything outside the files that can change a resolve's answer or how it is printed, pm's
    own code included (its digest is kept under ``cache_root``). Raises OSError when the working
    folder is gone (no shortcut then)."""
    environ = os.environ if environ is None else environ
    blob = [FORMAT, _code.digest(cache_root), sys.executable, list(argv), os.getcwd() if cwd is None else cwd,
            sorted(environ.items()), _isatty(sys.stdout), _isatty(sys.stderr),
            sys.path, list(sys.flags)]  # python -E, -I, -S or a .pth file: installed metadata read elsewhere
    return hashlib.sha256(json.dumps(blob).encode("utf-8", "surrogateescape")).hexdigest()


def _isatty(stream: Any) -> bool | None:
    """Whether ``stream`` is a terminal; None when it is closed or absent (``>&-``)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return None


#: What a damaged record, a vanished working folder or an odd value can raise while it is read and
#: checked: each is a miss (the full command runs and decides), never a crash.
MISSES = (OSError, ValueError, KeyError, TypeError, AttributeError, RuntimeError, PmError)


def answer(argv: Sequence[str]) -> int | None:
    """Answer ``argv`` from its shortcut and return the exit code, or None (a miss: run it).
    Nothing is printed, and no receipt written, unless the answer is taken."""
    if not any(command in argv for command in COMMANDS):  # the record's key holds the whole command line
        return None
    try:
        return _answer(argv)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)  # as the full command says it
        return EXIT_FAILURE


def _answer(argv: Sequence[str]) -> int | None:
    started = time.perf_counter()
    try:
        from pm.base.cachedir import default_cache_dir
        from pm.index.cache import Cache

        cache = Cache(default_cache_dir())
        record = _load(cache.root / FOLDER / f"{key(argv, cache.root)}.json")
        if record is None or not _still(record, cache):
            return None
        command, data, said = str(record["command"]), dict(record["receipt"]), [str(w) for w in record["said"]]
        home = Path(data["home"])
        if command not in COMMANDS or not home.is_dir():
            return None
        code, path, shown = _write(home, command, data, started, json_output="--json" in argv)
    except MISSES:
        return None
    try:
        _tell(data, said, path, shown)
    except BrokenPipeError:  # e.g. `hermes pm resolve --json | head`, as pm.cli._main.dispatch
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return EXIT_FAILURE
    return code


def remember(argv: Sequence[str], command: str, seen: dict[str, str | None], written: dict[str, Any],
             said: Sequence[str], pages: list[tuple[str, int, str]], *, offline: bool, cache_root: Path) -> None:
    """Store the shortcut of a finished ``command`` (its receipt as ``written``, what it printed
    as warnings in ``said``; the pages a resolution was read from). Never fails the command: a
    cache that cannot be written only costs speed."""
    from pm.base.store import Store

    record = {"format": FORMAT, "command": command, "seen": seen, "stamps": _watch.vouch(seen), "pages": [list(p) for p in pages], "offline": offline,
              "said": list(said), "receipt": written}
    folder = cache_root / FOLDER
    try:
        Store(folder).write_bytes(folder / f"{key(argv, cache_root)}.json",  # 0600: it holds a receipt
                                  json.dumps(record, separators=(",", ":"), default=str).encode(), mode=0o600)
        _prune(folder)
    except MISSES:
        pass


def remember_plain(args: Any, command: str, seen: dict[str, str | None], written: dict[str, Any] | None,
                   said: Sequence[str]) -> None:
    """:func:`remember` an answer that read no index page (a no-op sync, a check), when the
    command was started from a command line pm knows."""
    entry_argv = getattr(args, "entry_argv", None)
    if not entry_argv or written is None:
        return
    from pm.ops.transaction import cache_dir

    remember(entry_argv, command, seen, written, said, [], offline=False, cache_root=cache_dir())


def _prune(folder: Path) -> None:
    """Keep the :data:`KEEP` newest records: the key holds the whole environment, so every new
    terminal session may leave one behind."""
    records = [(entry.stat().st_mtime_ns, entry.path) for entry in os.scandir(folder) if entry.name.endswith(".json")]
    for _, path in sorted(records)[:-KEEP]:
        with contextlib.suppress(FileNotFoundError):  # another pm pruned it first
            os.unlink(path)


def _load(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        return None
    return record


def _still(record: dict[str, Any], cache: Any) -> bool:
    """Every observation made the same way again, every page fresh (or, offline, there)."""
    try:
        pages = [(str(url), int(status), str(sha)) for url, status, sha in record["pages"]]
        stamps = {str(k): str(v) for k, v in dict(record.get("stamps") or {}).items()}
        return (_watch.unchanged(dict(record["seen"]), stamps)
                and cache.pages_current(pages, offline=bool(record["offline"])))
    except (KeyError, TypeError, ValueError, AttributeError):
        return False


def _write(home: Path, command: str, data: dict[str, Any], started: float, *,
           json_output: bool) -> tuple[int, Path, Shown | None]:
    """Write the new receipt: its exit code, its path and what to print (None with --json).
    Raises (a miss) before anything is written when the record does not make a receipt."""
    from pm.ops.receipts import write_data
    from pm.records.receipt import now

    data["started_at"] = now()
    data["seconds"] = round(time.perf_counter() - started, 3)
    if command == "resolve" and not data.get("conflict"):
        data["reused_resolution"] = True
    data["shortcut"] = True  # answered without reading the inputs again: they were checked unchanged
    data["finished_at"] = now()
    code, shown = int(data["exit_code"]), None if json_output else _shown(command, data)
    return code, write_data(home, data), shown  # StoreError: a miss (the full command reports it)


#: What a command prints: data for stdout (or None) and lines for stderr, before its warnings.
Shown = tuple[str | None, list[str]]


def _shown(command: str, data: dict[str, Any]) -> Shown:
    """The same rendering as the full command's, from the receipt."""
    if command == "resolve" and data.get("conflict"):
        return None, []  # told by _tell, as the full command tells a refusal
    if command == "resolve":
        from pm.cli._resolved import render

        return render(data), []
    from pm.cli._summaries import readiness, synced

    return (None, synced(data)) if command == "sync" else (readiness(data), [])


def _tell(data: dict[str, Any], said: list[str], path: Path, shown: Shown | None) -> None:
    """Print the answer as the full command does (after the receipt is written, whatever happens
    while printing is this command's, as in the full command: running that now would write a
    second receipt and print the answer twice)."""
    from pm.cli._output import emit_json, paint, say

    if shown is None:
        emit_json(data | {"receipt_path": str(path)})
        return
    out, lines = shown
    if data.get("conflict"):
        from pm.cli._summaries import tell_refusal

        tell_refusal(data["conflict"], data.get("candidate"), list(data.get("next_steps") or []))
    if out is not None:
        print(out)
    for line in lines:
        say(line)
    for warning in said:
        say(f"{paint('warning', 'yellow', sys.stderr)}: {warning}")
    say(f"receipt: {path}")
