"""Move pm's root modules into their floor packages and rewrite every reference to them.

Usage: python3 scripts/dev/relayout.py [--check]

Idempotent: run it again after merging a branch that was started before the move, and it rewrites
what that branch added (relative imports inside pm/, old dotted names such as ``pm.uv.run`` in code
and strings, old paths such as ``pm/uv.py`` in docs) to the new layout. ``--check`` only lists the
files it would change (exit 1 if any).

The floors, lowest first, are stated in tests/test_layers.py (FLOORS), which this script and the
layout in docs/design.md follow.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Old root module → new module.
MOVES = {
    "errors": "base.errors",
    "_files": "base.files",
    "_toml": "base.tomlwriter",
    "_yaml": "base.yamlfile",
    "_urls": "base.urls",
    "_watch": "base.watch",
    "_code": "base.codekey",
    "names": "base.names",
    "store": "base.store",
    "lock": "base.lock",
    "commands": "base.commands",
    "uv": "base.uv",
    "config": "inputs.config",
    "config_edit": "inputs.config_edit",
    "settings": "inputs.settings",
    "index_settings": "inputs.index_settings",
    "tool_files": "inputs.tool_files",
    "manifest": "inputs.manifest",
    "declaration": "inputs.declaration",
    "discover": "inputs.discover",
    "plugin": "inputs.plugin",
    "selection": "inputs.selection",
    "core": "inputs.core",
    "target": "inputs.target",
    "foreign": "inputs.foreign",
    "union": "inputs.union",
    "catalog": "inputs.catalog",
    "catalog_live": "inputs.catalog_live",
    "inputs": "inputs.collect",
    "receipt": "records.receipt",
    "records": "records.sections",
    "frozen": "records.frozen",
    "reuse": "records.reuse",
    "recheck": "records.recheck",
    "pylock": "records.pylock",
    "export": "records.export",
    "build": "env.build",
    "generations": "env.generations",
    "leases": "env.leases",
    "readiness": "env.readiness",
    "managed": "env.managed",
    "install": "env.plugin_install",
}

#: Old modules whose name is now a package: ``pm.inputs.X`` stays only when X is one of its modules.
PACKAGES = {old for old, new in MOVES.items() if new.split(".")[0] == old}
#: Old modules whose name is also a config key (``pm.core``, ``pm.catalog`` in config.yaml): rewritten
#: only in import statements and with an attribute after them (``pm.core.read_core``).
KEYS = {"core", "catalog"}
#: Files that name the new packages on purpose and must not be rewritten.
SKIP = {"scripts/dev/relayout.py", "tests/test_layers.py"}
TEXT = {".py", ".md", ".toml", ".json", ".yaml", ".yml", ".txt", ".nix", ".cfg", ".ini", ""}


def tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / line for line in out.stdout.splitlines()
            if line not in SKIP and Path(line).suffix in TEXT and (ROOT / line).is_file()]


def submodules(package: str) -> set[str]:
    new = {new.split(".", 1)[1] for old, new in MOVES.items() if new.split(".")[0] == package}
    folder = ROOT / "pm" / package
    if folder.is_dir():
        new |= {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if p.is_dir()}
    return new


def absolute_imports(path: Path, text: str) -> str:
    """Relative imports of a module under pm/ written as absolute ones."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    package = parts[:-1]
    lines = text.splitlines(keepends=True)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.level):
            continue
        anchor = package[: len(package) - (node.level - 1)]
        base = ".".join([*anchor, node.module] if node.module else anchor)
        line = lines[node.lineno - 1]
        head = re.compile(r"from\s+\.+" + re.escape(node.module or "") + r"\s+import")
        lines[node.lineno - 1] = line[: node.col_offset] + head.sub(
            f"from {base} import", line[node.col_offset:], count=1)
    return "".join(lines)


def from_pm_import(text: str) -> str:
    """``from pm import _yaml, generations`` (moved modules by name) → one ``from pm.<floor> import``
    line per floor, each module under its old name (``yamlfile as _yaml``)."""
    def one(match: re.Match[str]) -> str:
        indent, names = match.group(1), [n.strip() for n in match.group(2).split(",")]
        if not any(n.split(" as ")[0] in MOVES for n in names):
            return match.group(0)
        by_package: dict[str, list[str]] = {}
        for item in names:
            name, _, alias = (part.strip() for part in item.partition(" as "))
            package, module = ("", name) if name not in MOVES else MOVES[name].rpartition(".")[::2]
            local = alias or name
            by_package.setdefault(package, []).append(module if local == module else f"{module} as {local}")
        return "\n".join(f"{indent}from pm{'.' + package if package else ''} import {', '.join(items)}"
                         for package, items in sorted(by_package.items()))
    return re.sub(r"(?m)^([ \t]*)from pm import ([\w ,]+?)[ \t]*$", one, text)


def dotted(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        old, rest = match.group(2), match.group(3) or ""
        if (old in KEYS or old in PACKAGES) and not rest and not match.group(1):
            return match.group(0)  # a config key (pm.core), or the new package named in prose (pm.inputs)
        if old in PACKAGES and rest and rest[1:] in submodules(old):
            return match.group(0)
        imported = re.match(r"[ \t]+import[ \t]+(\w+)", match.string[match.end():])
        if old in PACKAGES and not rest and imported and imported.group(1) in submodules(old):
            return match.group(0)  # from pm.records import pylock: the new package already
        return f"{match.group(1) or ''}pm.{MOVES[old]}{rest}"
    names = "|".join(sorted(map(re.escape, MOVES), key=len, reverse=True))
    return re.sub(rf"((?:^|(?<=\n))[ \t]*(?:from|import)[ \t]+)?(?<![\w.])pm\.({names})(?!\w)(\.\w+)?",
                  one, text)


def paths(text: str) -> str:
    names = "|".join(sorted(map(re.escape, MOVES), key=len, reverse=True))
    return re.sub(rf"(?<![\w./-])pm/({names})\.py\b",
                  lambda m: "pm/" + MOVES[m.group(1)].replace(".", "/") + ".py", text)


def rewrite(path: Path, text: str) -> str:
    rel = path.relative_to(ROOT)
    if path.suffix == ".py" and rel.parts[0] == "pm":
        text = absolute_imports(path, text)
    if path.suffix == ".py":
        text = from_pm_import(text)
    return paths(dotted(text))


def move_files() -> None:
    for old, new in MOVES.items():
        source = ROOT / "pm" / f"{old}.py"
        if not source.exists():
            continue
        target = ROOT / "pm" / (new.replace(".", "/") + ".py")
        target.parent.mkdir(exist_ok=True)
        subprocess.run(["git", "mv", str(source), str(target)], cwd=ROOT, check=True)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    changed = []
    if not check:
        # Relative imports are made absolute where the files still are, so they keep their meaning.
        for path in tracked():
            if path.suffix == ".py" and path.relative_to(ROOT).parts[0] == "pm":
                text = path.read_text(encoding="utf-8")
                new = absolute_imports(path, text)
                if new != text:
                    path.write_text(new, encoding="utf-8")
        move_files()
    for path in tracked():
        text = path.read_text(encoding="utf-8")
        new = rewrite(path, text)
        if new != text:
            changed.append(path.relative_to(ROOT))
            if not check:
                path.write_text(new, encoding="utf-8")
    for rel in changed:
        print(rel)
    return 1 if check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
