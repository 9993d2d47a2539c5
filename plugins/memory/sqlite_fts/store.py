"""A small full-text memory store on SQLite FTS5 (standard library only).

One database file, one FTS5 table ``memories(content, kind, session_id, created_at)``. Every
operation opens its own connection (WAL journal, busy timeout), so the store may be used from the
agent's thread and the manager's sync thread at once. Queries are built from the words of the
text only: FTS5 operators typed by a user or a model are never interpreted.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FtsStore", "Hit", "fts5_available", "match_expression"]

SCHEMA_VERSION = 1
MAX_QUERY_WORDS = 32

# Words too common to say anything about relevance when recalling from a free-text prompt.
_STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
        "had", "has", "have", "how", "i", "if", "in", "is", "it", "its", "me", "my", "no", "not",
        "of", "on", "or", "our", "so", "that", "the", "their", "them", "then", "there", "these",
        "they", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who", "why",
        "will", "with", "you", "your"
    }
)


@dataclass(frozen=True)
class Hit:
    """One stored memory returned by a search, best match first."""

    id: int
    content: str
    kind: str
    session_id: str
    created_at: float
    snippet: str

    def to_dict(self) -> dict[str, object]:
        """The JSON-ready form used in tool results."""
        return {
            "id": self.id,
            "content": self.content,
            "kind": self.kind,
            "session_id": self.session_id,
            "created_at": self.created_at,
        }


_FTS5: bool | None = None


def fts5_available() -> bool:
    """Whether this interpreter's SQLite has FTS5 (checked once, in memory, no I/O)."""
    global _FTS5
    if _FTS5 is None:
        try:
            with closing(sqlite3.connect(":memory:")) as conn:
                conn.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
            _FTS5 = True
        except sqlite3.Error:
            _FTS5 = False
    return _FTS5


def match_expression(text: str, *, drop_stopwords: bool = False) -> str | None:
    """An FTS5 MATCH expression that ORs the quoted words of ``text`` (ranking then prefers rows
    matching more and rarer words), or ``None`` when ``text`` has no usable word."""
    words = [w.lower() for w in re.findall(r"\w+", text)]
    if drop_stopwords:
        words = [w for w in words if w not in _STOPWORDS and len(w) > 1]
    unique = list(dict.fromkeys(words))[:MAX_QUERY_WORDS]
    if not unique:
        return None
    return " OR ".join(f'"{w}"' for w in unique)


class FtsStore:
    """The memories of one profile, in the SQLite file ``path`` (created on :meth:`ensure`)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            yield conn
        finally:
            conn.close()

    def ensure(self) -> None:
        """Create the folder, the database and the table if missing. Idempotent."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS memories USING fts5("
                "content, kind UNINDEXED, session_id UNINDEXED, created_at UNINDEXED, "
                "tokenize = 'unicode61 remove_diacritics 2')"
            )
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def add(self, content: str, *, kind: str, session_id: str = "") -> tuple[int, bool]:
        """Store ``content``; returns ``(id, created)``. Exactly the same content (any kind) is
        stored once: a repeat returns the existing id and ``False``."""
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT rowid FROM memories WHERE content = ? LIMIT 1", (content,)
                ).fetchone()
                if row is not None:
                    conn.execute("COMMIT")
                    return int(row[0]), False
                cur = conn.execute(
                    "INSERT INTO memories(content, kind, session_id, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (content, kind, session_id, time.time()),
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return int(cur.lastrowid or 0), True

    def search(self, text: str, *, limit: int, drop_stopwords: bool = False) -> list[Hit]:
        """Up to ``limit`` memories matching the words of ``text``, best (bm25) first."""
        expression = match_expression(text, drop_stopwords=drop_stopwords)
        if expression is None or limit <= 0:
            return []
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT rowid, content, kind, session_id, created_at, "
                "snippet(memories, 0, '', '', ' … ', 24) "
                "FROM memories WHERE memories MATCH ? ORDER BY rank LIMIT ?",
                (expression, limit),
            ).fetchall()
        return [Hit(int(r[0]), r[1], r[2], r[3] or "", float(r[4]), r[5]) for r in rows]

    def count(self) -> int:
        """How many memories are stored."""
        with self._connect() as conn:
            return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
