"""The peer cards of one home: ``<home>/peer_cards/cards.json`` and the settings in
``<home>/peer_cards.json``, read with ``utils.read_json_or_empty`` and written with
``utils.atomic_json_write`` (as the guide says small JSON files are handled). Shared by the
provider and ``cli.py``; every write re-reads the file under a process-wide lock."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from utils import atomic_json_write, read_json_or_empty

NAME = "peer_cards"
DEFAULTS: dict[str, Any] = {"user_peer": "user", "ai_peer": "hermes", "recall_limit": 5}
_LOCK = threading.Lock()


def settings_path(home: Path) -> Path:
    return Path(home) / f"{NAME}.json"


def cards_path(home: Path) -> Path:
    return Path(home) / NAME / "cards.json"


def settings(home: Path) -> dict[str, Any]:
    """The defaults, overridden by what ``<home>/peer_cards.json`` holds."""
    return {**DEFAULTS, **read_json_or_empty(settings_path(home))}


def save_settings(home: Path, values: dict[str, Any]) -> Path:
    with _LOCK:
        return atomic_json_write(settings_path(home), {**read_json_or_empty(settings_path(home)), **values})


def load(home: Path) -> dict[str, Any]:
    data = read_json_or_empty(cards_path(home))
    peers = data.get("peers") if isinstance(data.get("peers"), dict) else {}
    return {"peers": peers, "sessions": data.get("sessions") or {}, "next_id": int(data.get("next_id") or 1)}


def _update(home: Path, change: Any) -> Any:
    with _LOCK:
        data = load(home)
        result = change(data)
        atomic_json_write(cards_path(home), data)
        return result


def add(home: Path, peer: str, fact: str) -> int:
    """Keep ``fact`` on ``peer``'s card; returns its id."""
    def change(data: dict[str, Any]) -> int:
        card_id = data["next_id"]
        data["peers"].setdefault(peer, []).append({"id": card_id, "fact": fact})
        data["next_id"] = card_id + 1
        return card_id
    return int(_update(home, change))


def forget(home: Path, card_id: int) -> bool:
    """Drop the fact ``card_id`` wherever it is; whether there was one."""
    def change(data: dict[str, Any]) -> bool:
        for peer, facts in data["peers"].items():
            kept = [f for f in facts if f["id"] != card_id]
            if len(kept) != len(facts):
                data["peers"][peer] = kept
                return True
        return False
    return bool(_update(home, change))


def note_turn(home: Path, session_id: str) -> None:
    def change(data: dict[str, Any]) -> None:
        data["sessions"][session_id or "-"] = data["sessions"].get(session_id or "-", 0) + 1
    _update(home, change)


def replace_all(home: Path, data: dict[str, Any]) -> None:
    with _LOCK:
        atomic_json_write(cards_path(home), data)


def words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"\w+", text) if len(w) > 2}


def recall(home: Path, query: str, limit: int) -> list[tuple[str, dict[str, Any]]]:
    """``(peer, fact)`` pairs sharing the most words with ``query``, best first."""
    wanted = words(query)
    scored = [(len(wanted & words(f["fact"])), -f["id"], peer, f)
              for peer, facts in load(home)["peers"].items() for f in facts]
    best = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    return [(peer, fact) for _, _, peer, fact in best[:limit]]
