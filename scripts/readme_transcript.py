"""The README's demo excerpt, from a real run: ``python scripts/readme_transcript.py`` runs
scripts/demo.py and rewrites the excerpt's blocks (one per ``$ command``) with what the demo printed
for the same commands; ``--check`` only compares (after :func:`normalized`), exit 1 on a drift.

tests/test_doc_commands.py runs the check, so the README cannot drift from what pm prints.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
_START = "excerpt of one run"
#: What differs between two runs of the same demo: ids, times, ports, commits, pids.
_VOLATILE = [
    (re.compile(r"\d{8}T\d{6,12}-[0-9a-f]{6}-[0-9a-f]{10}"), "<generation>"),
    (re.compile(r"\d{8}T\d{6,12}Z-[a-z-]+-\d+\.json"), "<receipt>.json"),
    (re.compile(r"\b[0-9a-f]{40}\b"), "<commit>"),
    (re.compile(r"in \d+(?:\.\d+)?(?:s| ms)"), "in <time>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
]


def normalized(text: str) -> str:
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def blocks(text: str) -> list[tuple[str, str]]:
    """(``$ command``, the lines it printed) for a transcript, in order; a command that runs
    twice (a second ``sync``) is two blocks, matched by their order."""
    found: list[tuple[str, str]] = []
    command, lines = None, list[str]()
    for line in text.splitlines():
        if line.startswith("$ "):
            if command is not None:
                found.append((command, "\n".join(lines).strip("\n")))
            command, lines = line[2:].strip(), []
        elif command is not None:
            lines.append(line)
    if command is not None:
        found.append((command, "\n".join(lines).strip("\n")))
    return found


def _nth(ran: list[tuple[str, str]]) -> dict[tuple[str, int], str]:
    seen: dict[str, int] = {}
    keyed = {}
    for command, text in ran:
        seen[command] = seen.get(command, 0) + 1
        keyed[(command, seen[command])] = text
    return keyed


def excerpt_span(readme: str) -> tuple[int, int]:
    """Where the excerpt's console block starts and ends (character offsets of its body)."""
    start = readme.index("```console\n", readme.index(_START)) + len("```console\n")
    return start, readme.index("\n```", start) + 1


def run_demo() -> str:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py")], capture_output=True, text=True,
                          timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"scripts/demo.py failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout + done.stderr


def drift(readme: str, demo: str) -> list[str]:
    """The excerpt's commands whose output differs from the demo's (``jq`` blocks are abridged)."""
    start, end = excerpt_span(readme)
    ran, stale = _nth(blocks(demo)), []
    for (command, n), text in _nth(blocks(readme[start:end])).items():
        if not command.startswith("jq") and normalized(text) != normalized(ran.get((command, n), "<not run>")):
            stale.append(command if n == 1 else f"{command} (run {n})")
    return stale


def regenerate(readme: str, demo: str) -> str:
    start, end = excerpt_span(readme)
    ran = _nth(blocks(demo))
    parts = []
    for (command, n), text in _nth(blocks(readme[start:end])).items():
        body = text if command.startswith("jq") else ran.get((command, n), text)
        parts.append(f"$ {command}\n" + (f"{body}\n" if body else ""))
    return readme[:start] + "\n".join(parts) + readme[end:]


def main(argv: list[str]) -> int:
    readme, demo = README.read_text(encoding="utf-8"), run_demo()
    if "--check" in argv:
        stale = drift(readme, demo)
        for command in stale:
            print(f"README.md: the output of `$ {command}` differs from the demo's", file=sys.stderr)
        return 1 if stale else 0
    README.write_text(regenerate(readme, demo), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
