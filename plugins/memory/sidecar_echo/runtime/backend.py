"""The sidecar_echo backend: one JSON request per line on stdin, one JSON reply per line on stdout.

Runs with the sidecar environment's interpreter (``python -I backend.py --data FILE``), never the
host's. Requests: ``{"id", "op", ...}`` with op ``hello`` (``protocol``: a version specifier the
host accepts), ``echo`` (``text``), ``store`` (``content``, ``kind``), ``search`` (``query``,
``limit``), ``shutdown``. Replies: ``{"id", "result": ...}`` or ``{"id", "error": "..."}``.
Memories are JSON lines in FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

import packaging
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

PROTOCOL = Version("1.0")


def words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"\w+", text) if len(w) > 2}


class Backend:
    def __init__(self, data: Path) -> None:
        self.data = data
        self.memories: list[dict[str, str]] = []
        if data.exists():
            for line in data.read_text(encoding="utf-8").splitlines():
                try:
                    self.memories.append(json.loads(line))
                except ValueError:
                    continue

    def hello(self, req: dict) -> dict:
        try:
            accepted = SpecifierSet(str(req.get("protocol", "")))
        except InvalidSpecifier:
            raise ValueError(f"hello: protocol {req.get('protocol')!r} is not a version specifier")
        if PROTOCOL not in accepted:
            raise ValueError(f"hello: backend protocol {PROTOCOL} is outside {accepted}")
        return {"protocol": str(PROTOCOL), "python": sys.executable, "prefix": sys.prefix,
                "packaging": packaging.__version__, "hermes_home": os.environ.get("HERMES_HOME")}

    def store(self, req: dict) -> dict:
        content = str(req.get("content", "")).strip()
        if not content:
            raise ValueError("store: 'content' is empty")
        if any(m["content"] == content for m in self.memories):
            return {"stored": False, "count": len(self.memories)}
        memory = {"content": content, "kind": str(req.get("kind", "fact"))}
        self.data.parent.mkdir(parents=True, exist_ok=True)
        with open(self.data, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(memory) + "\n")
        self.memories.append(memory)
        return {"stored": True, "count": len(self.memories)}

    def search(self, req: dict) -> dict:
        wanted = words(str(req.get("query", "")))
        scored = [(len(wanted & words(m["content"])), i, m) for i, m in enumerate(self.memories)]
        hits = sorted((s for s in scored if s[0]), key=lambda s: (-s[0], -s[1]))
        return {"results": [m for _, _, m in hits[: int(req.get("limit", 5))]]}

    def answer(self, req: dict) -> object:
        op = req.get("op")
        if op == "hello":
            return self.hello(req)
        if op == "echo":
            return {"echo": req.get("text")}
        if op == "store":
            return self.store(req)
        if op == "search":
            return self.search(req)
        if op == "shutdown":
            return {"bye": True}
        raise ValueError(f"unknown op {op!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description="sidecar_echo backend")
    parser.add_argument("--data", required=True, type=Path)
    backend = Backend(parser.parse_args().data)
    for line in sys.stdin:
        req: dict = {}
        try:
            req = json.loads(line)
            reply = {"id": req.get("id"), "result": backend.answer(req)}
        except Exception as exc:  # every failure becomes an error reply, the backend goes on
            reply = {"id": req.get("id") if isinstance(req, dict) else None,
                     "error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if req.get("op") == "shutdown":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
