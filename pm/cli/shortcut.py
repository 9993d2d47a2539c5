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
index pages a resolution was read from (:mod:`pm.cli._recorded_pages`: each page's header file
in the cache by its bytes, with the fetch time and max-age those bytes hold, or what to ask the
index again for a page no max-age lets pm keep). :func:`answer` takes the shortcut only when every
one of those observations is made the same way again and every page is still fresh by its own
max-age (offline: still there) or answered again unchanged (:mod:`pm.cli._refetch`) — exactly
when the full command would give the same answer —
and then writes a new receipt (new times, the same findings, ``shortcut``) and prints what the
full command prints. Anything else (a changed file, a stale page, an unreadable record, another
command) is a miss: the full command runs, and it decides.

This runs before the rest of pm is imported, and a hit imports almost nothing beyond Python's
start-up: :mod:`pm.base.watch`, :mod:`pm.base.codekey` and :mod:`pm.cli._lean` (no typing, pathlib, json, re,
dataclasses or datetime; a resolve's pages too: their freshness is compared, and their header files
hashed, with no reader of the cache loaded). So the answer is prepared
when it is remembered: the record (``marshal``: the builtin serialiser, nothing to import; only
str, int, bool, None, lists and dicts, in the user's own 0600 cache) holds the new receipt's JSON
and what the command prints, rendered by the full command's own code, with markers where the new
times, duration and receipt name go; a hit fills them in and writes the receipt through
:func:`pm.cli._lean.write`.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

from pm.base import codekey as _code
from pm.base import watch as _watch
from pm.cli import _lean

TYPE_CHECKING = False  # typing's costs ~5 ms: only the type checker reads these
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path
    from typing import Any

#: Bumped when what a record holds, or what it must match, changes.
FORMAT = 5
FOLDER = "shortcuts-v2"
#: A record's file name: ``<key>.rec``.
SUFFIX = ".rec"
#: The commands whose answers are remembered.
COMMANDS = ("resolve", "sync", "check")
#: Records kept (the newest); each is a receipt of a few to a few hundred kB.
KEEP = 64


def key(argv: Sequence[str], cache_root: Path | str, environ: Mapping[str, str] | None = None,
        cwd: str | None = None) -> str:
    """Everything outside the files that can change a resolve's answer or how it is printed, pm's
    own code included (its digest is kept under ``cache_root``). Raises OSError when the working
    folder is gone (no shortcut then)."""
    environ = os.environ if environ is None else environ
    blob = [FORMAT, _code.digest(cache_root), sys.executable, list(argv), os.getcwd() if cwd is None else cwd,
            sorted(environ.items()), _isatty(sys.stdout), _isatty(sys.stderr),
            sys.path, list(sys.flags)]  # python -E, -I, -S or a .pth file: installed metadata read elsewhere
    # str, int, bool, None and lists or tuples of them: repr is exact, and needs no json
    return _watch.sha256(repr(blob).encode("utf-8", "surrogateescape")).hexdigest()


def _isatty(stream: Any) -> bool | None:
    """Whether ``stream`` is a terminal; None when it is closed or absent (``>&-``)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return None


#: What a damaged record, a vanished working folder or an odd value can raise while it is read and
#: checked: each is a miss (the full command runs and decides), never a crash.
MISSES = (OSError, ValueError, KeyError, TypeError, AttributeError, RuntimeError, EOFError)


def answer(argv: Sequence[str]) -> int | None:
    """Answer ``argv`` from its shortcut and return the exit code, or None (a miss: run it).
    Nothing is printed, and no receipt written, unless the answer is taken."""
    if not any(command in argv for command in COMMANDS):  # the record's key holds the whole command line
        return None
    try:
        return _answer(argv)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)  # as the full command says it
        return _lean.EXIT_FAILURE


def _answer(argv: Sequence[str]) -> int | None:
    started = time.perf_counter()
    try:
        root = _lean.cache_root()
        record = _load(os.path.join(root, FOLDER, key(argv, root) + SUFFIX))
        if record is None or record["command"] not in COMMANDS or not _still(record):
            return None
        if not os.path.isdir(record["home"]):
            return None
        code, out, err = _write(record, started)
    except MISSES:
        return None
    try:
        print(out, end="")  # as the full command printed them: data on stdout, then stderr
        print(err, end="", file=sys.stderr)
    except BrokenPipeError:  # e.g. `hermes pm resolve --json | head`, as pm.cli._main.dispatch
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return _lean.EXIT_FAILURE
    return code


def _load(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            record = marshal.loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        return None
    if not all(isinstance(record.get(name), str) for name in _TEXTS) or type(record.get("exit_code")) is not int:
        return None
    return record


#: The fields of a record that are text (the rest: ``exit_code``, ``seen``, ``stamps``, ``pages``,
#: ``refetch``, ``request``, ``offline``).
_TEXTS = ("command", "token", "kind", "home", "folder", "file", "out", "err")


def _still(record: dict[str, Any]) -> bool:
    """Every observation made the same way again (a resolve's page headers among them: the same
    bytes), every page fresh by the fetch time and max-age those bytes hold (offline: there), and
    every page no max-age lets pm keep answered again with the same bytes."""
    seen, stamps, pages, refetch = record["seen"], record["stamps"], record["pages"], record["refetch"]
    if not (isinstance(seen, dict) and isinstance(stamps, dict) and isinstance(pages, list)
            and isinstance(refetch, list)):
        return False
    if not (_fresh(pages, offline=bool(record["offline"])) and _watch.unchanged(seen, stamps)):
        return False
    if not refetch:
        return True
    from pm.cli import _refetch  # a bare mirror's pages: asked again, as the full command asks

    return _refetch.same(refetch, record["request"])


def _fresh(pages: list[Any], *, offline: bool) -> bool:
    """Whether every page ``[fetched_at, max_age]`` is fresh now, as
    :meth:`pm.index.cache.PageHeader.is_fresh` decides (no clock is asked offline)."""
    if offline or not pages:
        return True
    now = time.time()
    return all(0 <= now - fetched_at < max_age for fetched_at, max_age in pages)


def _write(record: dict[str, Any], started: float) -> tuple[int, str, str]:
    """Write the new receipt (new times, ``shortcut``) and return the exit code and what to print
    on stdout and stderr. Raises (a miss) before anything is written when the record does not
    make a receipt."""
    marks = _Marks(record["token"])
    started_at = _lean.now()
    seconds = round(time.perf_counter() - started, 3)
    name = f"{started_at.replace(':', '').replace('-', '').replace('.', '')}-{record['kind']}-{os.getpid()}.json"
    values = {marks.started: started_at, marks.finished: _lean.now(), marks.name: name,
              marks.elapsed: _lean.elapsed(seconds)}

    def filled(text: str) -> str:
        text = text.replace(f'"{marks.seconds}"', repr(seconds))  # a number in JSON (repr is json's)
        for mark, value in values.items():
            text = text.replace(mark, value)
        return text.replace(marks.seconds, repr(seconds))

    code, folder = record["exit_code"], record["folder"]
    root = os.path.realpath(os.path.join(record["home"], "pm"))  # where the home's writes may go (pm.base.store)
    receipt = filled(record["file"]).encode()  # ASCII (json's ensure_ascii); utf-8 needs no codec module
    _lean.write(root, os.path.join(folder, name), receipt, mode=0o600)  # 0600, as every receipt
    _lean.write(root, os.path.join(folder, "latest.json"), receipt, mode=0o600)
    _lean.prune(root, folder)
    return code, filled(record["out"]), filled(record["err"])


class _Marks:
    """The placeholders of one record (its own random token: no path or message can hold them)."""

    def __init__(self, token: str) -> None:
        self.started, self.finished, self.seconds, self.name, self.elapsed = (
            f"@{token}:{what}@" for what in ("started", "finished", "seconds", "name", "elapsed"))


def remember(argv: Sequence[str], command: str, seen: dict[str, str | None], written: dict[str, Any],
             said: Sequence[str], pages: list[tuple[str, int, str]], *, offline: bool, cache_root: Path,
             ask_again: bool = True) -> None:
    """Store the shortcut of a finished ``command`` (its receipt as ``written``, what it printed
    as warnings in ``said``; the pages a resolution was read from, which a hit may ask for again
    unless ``ask_again`` is False: the index needs credentials pm's settings hold). Never fails the command: a
    cache that cannot be written only costs speed."""
    from pm.base.errors import PmError
    from pm.base.store import Store
    from pm.cli._recorded_pages import recorded, request_headers

    folder = cache_root / FOLDER
    try:
        found = recorded(pages, cache_root, offline=offline, ask_again=ask_again)
        if found is None:
            return
        seen = {**seen, **found.watched}
        record = _record(command, written, said, json_output="--json" in argv)
        record.update(format=FORMAT, command=command, seen=seen, stamps=_watch.vouch(seen), pages=found.fresh,
                      refetch=found.asked, request=request_headers() if found.asked else {}, offline=bool(offline))
        Store(folder).write_bytes(folder / f"{key(argv, cache_root)}{SUFFIX}",  # 0600: it holds a receipt
                                  marshal.dumps(record), mode=0o600)
        _prune(folder)
    except (*MISSES, PmError):
        pass


def _record(command: str, written: dict[str, Any], said: Sequence[str], *, json_output: bool) -> dict[str, Any]:
    """The answer of a hit, prepared: the receipt's JSON and what the command prints, with
    :class:`_Marks` where a hit puts its own times, duration and receipt name."""
    import json
    from pathlib import Path

    token = os.urandom(8).hex()
    marks = _Marks(token)
    data = json.loads(json.dumps(written, default=str))  # as the receipt file holds it
    data["started_at"] = marks.started
    data["seconds"] = marks.seconds
    if command == "resolve" and not data.get("conflict"):
        data["reused_resolution"] = True
    data["shortcut"] = True  # answered without reading the inputs again: they were checked unchanged
    data["finished_at"] = marks.finished
    home = Path(data["home"])
    folder = home / "pm" / "receipts"
    out, err = _rendered(command, data, [str(w) for w in said], str(folder / marks.name),
                         json_output=json_output, elapsed=marks.elapsed)
    return {"token": token, "kind": str(data["kind"]), "exit_code": int(data["exit_code"]), "home": str(home),
            "folder": str(folder), "out": out, "err": err,
            "file": json.dumps(data, separators=(",", ":"), default=str) + "\n"}  # as pm.ops.receipts writes it


def _rendered(command: str, data: dict[str, Any], said: list[str], path: str, *, json_output: bool,
              elapsed: str) -> tuple[str, str]:
    """What the full command prints (stdout, stderr) for this receipt, by its own code, with the
    colours the streams it prints to get."""
    import io

    class Captured(io.StringIO):
        def __init__(self, stream: Any) -> None:
            super().__init__()
            self.tty = bool(_isatty(stream))

        def isatty(self) -> bool:
            return self.tty

    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err = Captured(sys.stdout), Captured(sys.stderr)
    try:
        _tell(command, data, said, path, json_output=json_output, elapsed=elapsed)
    finally:
        sys.stdout, sys.stderr = streams
    return out.getvalue(), err.getvalue()


def _tell(command: str, data: dict[str, Any], said: list[str], path: str, *, json_output: bool,
          elapsed: str) -> None:
    """Print the answer as the full command does."""
    from pm.cli._output import emit_json, paint, say

    if json_output:
        emit_json(data | {"receipt_path": path})
        return
    if data.get("conflict"):
        from pm.cli._summaries import tell_refusal

        tell_refusal(data["conflict"], data.get("candidate"), list(data.get("next_steps") or []))
    if command == "resolve" and not data.get("conflict"):
        from pm.cli._resolved import render

        print(render(data, elapsed=elapsed))
    elif command == "sync":
        from pm.cli._summaries import synced

        for line in synced(data):
            say(line)
    elif command == "check":
        from pm.cli._summaries import readiness

        print(readiness(data))
    for warning in said:
        say(f"{paint('warning', 'yellow', sys.stderr)}: {warning}")
    say(f"receipt: {path}")


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
    records = [(entry.stat().st_mtime_ns, entry.path) for entry in os.scandir(folder) if entry.name.endswith(SUFFIX)]
    for _, path in sorted(records)[:-KEEP]:
        try:
            os.unlink(path)
        except FileNotFoundError:  # another pm pruned it first
            pass
