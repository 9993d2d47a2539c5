"""The documentation in the repository (issue 14, finding 7): every link resolves inside the
repository, every environment variable the code reads is in the operators' table, and every field
of the receipt schema is described."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_guides_exist():
    for name in ("design.md", "plugin-authors.md", "operators.md", "nix.md"):
        assert (ROOT / "docs" / name).is_file(), name


def test_every_markdown_link_resolves_inside_the_repository():
    broken = []
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)#\s]+)", doc.read_text()):
            if "://" in target:
                continue
            path = (doc.parent / target).resolve()
            if not path.exists() or not path.is_relative_to(ROOT):
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert broken == []
    assert "../shared" not in (ROOT / "README.md").read_text()


def test_every_environment_variable_the_code_reads_is_in_the_operators_table():
    table = (ROOT / "docs" / "operators.md").read_text()
    sources = [p for folder in ("pm", "agent") for p in (ROOT / folder).rglob("*.py") if "testing" not in p.parts]
    read = set()
    for path in sources:
        text = path.read_text()
        read |= set(re.findall(r"environ(?:\.get)?\(\s*\"([A-Z][A-Z0-9_]+)\"", text))
        read |= set(re.findall(r"environ\[\"([A-Z][A-Z0-9_]+)\"\]", text))
        read |= set(re.findall(r"env\.get\(\"([A-Z][A-Z0-9_]+)\"", text))
        read |= set(re.findall(r"_ENV = \"([A-Z][A-Z0-9_]+)\"", text))
        read |= set(re.findall(r"\"((?:HERMES|UV|PIP)_[A-Z0-9_]+)\"", text))
    # what pm sets for the uv it runs, not what it reads
    written = {"UV_NO_CONFIG", "UV_PYTHON_DOWNLOADS", "UV_CACHE_DIR", "UV_NO_PROGRESS", "UV_DEFAULT_INDEX", "UV_INDEX",
               "UV_FIND_LINKS"}
    assert sorted(v for v in read - written if f"`{v}`" not in table) == []


def _undescribed(node: object, path: str) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.get("properties", {}).items():
            if isinstance(value, dict) and "description" not in value:
                found.append(f"{path}.{key}")
            found += _undescribed(value, f"{path}.{key}")
        for key, value in node.items():
            if key != "properties":
                found += _undescribed(value, f"{path}.{key}" if key == "$defs" else path)
    elif isinstance(node, list):
        for item in node:
            found += _undescribed(item, path)
    return found


def test_every_receipt_schema_field_is_described():
    schema = json.loads((ROOT / "pm" / "schemas" / "receipt.schema.json").read_text())
    assert _undescribed(schema, "") == []


def test_every_lock_the_docs_write_or_install_has_a_name_uv_and_pip_accept():
    """Issue 24: docs/nix.md exported ``-o hermes-pylock.toml`` and installed it with ``uv pip
    install -r``, which uv refuses: PEP 751 names a lock ``pylock.toml`` or ``pylock.<name>.toml``."""
    from pm.records.export import PYLOCK_NAME

    used = {(doc.name, name) for doc in DOCS
            for name in re.findall(r"(?:-o|--output|-r|--from|source =)\s+(?:\./)?([\w.-]*\.toml)\b", doc.read_text())
            if "pylock" in name}
    assert ("nix.md", "pylock.hermes.toml") in used
    assert sorted(used_name for used_name in used if not PYLOCK_NAME.fullmatch(used_name[1])) == []
