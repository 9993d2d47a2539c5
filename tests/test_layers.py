"""The import rules, checked mechanically: an AST walk over pm/ and agent/ that also reads imports
inside functions (where the lazy, upward ones used to hide).

pm is built in floors, one package each, listed in FLOORS lowest first: read that table first. A
module imports only from its own floor and the floors below it (so no two floors import each other:
no cycle between packages); no module lives loose at pm's root but the package face and the
``python -m pm`` entry point; pm.testing (real wheels, indexes and homes for tests) stands beside
the floors and none of them imports it. The operations print nothing; argparse lives in the CLIs;
pm runs subprocesses through pm/base/uv.py only, plus the exceptions listed here with their reasons.
And every pm module is imported by a test.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: pm's floors, lowest first: (package, what it holds). A floor may import the floors above it in
#: this table, never one below it.
FLOORS = (
    ("pm.base", "errors, bounded reading of files, YAML/TOML, names, atomic store, the home's lock, "
                "the cache folder, what was read (watch), pm's code as a key, the one uv runner"),
    ("pm.index", "package indexes: pages, metadata, the HTTP client, the cache, find-links, builds"),
    ("pm.inputs", "the home read: config and its editor, settings, manifests, declarations, "
                  "discovery, selection, core, target, union, catalog"),
    ("pm.resolver", "the resolution over the inputs, and the proof of a refusal"),
    ("pm.records", "receipts and their sections, reused resolutions, frozen locks, exports"),
    ("pm.env", "environments on disk: builds, generations, leases, readiness, plugin installs"),
    ("pm.ops", "the operations: one transaction each, printing nothing"),
    ("pm.cli", "hermes pm: parse, run an operation, print"),
)
#: What may live at pm's root beside the floors.
ROOT_MODULES = {"pm", "pm.__main__"}

#: Modules that may run a subprocess besides pm/uv.py, and why.
SUBPROCESS_EXCEPTIONS = {
    "pm.inputs.target": "asks another interpreter for its markers and tags (one probe per interpreter)",
    "pm.index.installed": "asks an interpreter for its site-packages folders (one probe)",
    "pm.env.plugin_fetch": "git clone/checkout of a pinned commit for plugins install",
    "agent.provider_child": "a provider's get_config_schema()/save_config in a child interpreter: the dashboard "
                            "never imports plugin code (one child per page or save, a deadline, a bounded answer)",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(*packages: str) -> list[Path]:
    return sorted(p for package in packages for p in (ROOT / package).rglob("*.py"))


def imports(path: Path) -> Iterator[tuple[str, int]]:
    """Every module ``path`` imports (absolute names; ``from x import y`` yields x and x.y), with
    its line, wherever the import statement is (module level, function, class, if-block)."""
    yield from imports_in(path.read_bytes(), module_name(path), is_package=path.name == "__init__.py")


def imports_in(source: bytes, name: str, *, is_package: bool = False) -> Iterator[tuple[str, int]]:
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield base, node.lineno
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def is_under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(paths: list[Path], forbidden: str) -> list[str]:
    return [f"{p.relative_to(ROOT)}:{line}: imports {name}" for p in paths for name, line in imports(p)
            if is_under(name, forbidden)]


def is_cli(path: Path) -> bool:
    rel = path.relative_to(ROOT)
    return rel.parts[:2] == ("pm", "cli") or rel == Path("agent/cli.py") or (
        rel.parts[0] == "agent" and rel.stem.endswith("_cli"))


def floor_of(name: str) -> int | None:
    """The index of ``name``'s floor in FLOORS (None for pm's root, pm.testing and other packages)."""
    return next((i for i, (package, _) in enumerate(FLOORS) if is_under(name, package)), None)


def test_every_module_is_on_a_floor() -> None:
    loose = [module_name(p) for p in modules("pm") if floor_of(module_name(p)) is None
             and module_name(p) not in ROOT_MODULES and not is_under(module_name(p), "pm.testing")
             and not is_under(module_name(p), "pm.data")]
    assert loose == []


def test_floors_import_only_downward() -> None:
    upward = []
    for path in modules("pm"):
        own = floor_of(module_name(path))
        if own is None:
            continue
        for name, line in imports(path):
            other = floor_of(name)
            if is_under(name, "pm.testing") or (other is not None and other > own):
                upward.append(f"{path.relative_to(ROOT)}:{line}: imports {name} ({FLOORS[own][0]} is below it)")
    assert upward == []


def test_the_floor_rule_sees_an_upward_import() -> None:
    assert floor_of("pm.base.uv") == 0 and floor_of("pm.cli.sync") == len(FLOORS) - 1
    found = {name for name, _ in imports_in(b"def f():\n    from ..index.cache import Cache\n", "pm.base.uv")}
    assert any(floor_of(name) == 1 for name in found)


def test_the_host_calls_operations_never_the_cli() -> None:
    """agent/ reaches pm through pm.ops; only its own CLI modules (the ``hermes`` command and the
    ``*_cli`` groups, which mount ``hermes pm`` and render receipts) import pm.cli."""
    host = [p for p in modules("agent") if not is_cli(p)]
    assert violations(host, "pm.cli") == []


#: Modules outside the CLIs that still use argparse, and why. A to-do list, not a way out.
ARGPARSE_EXCEPTIONS = {
    "agent/logs.py": "log_event (used by the host) and the `hermes logs` command share one module; the command "
                     "half belongs in agent/logs_cli.py",
}


def test_argparse_only_in_the_clis() -> None:
    others = [p for p in modules("pm", "agent") if not is_cli(p)
              and str(p.relative_to(ROOT)) not in ARGPARSE_EXCEPTIONS]
    assert violations(others, "argparse") == []


def test_the_operations_print_nothing() -> None:
    ops = modules("pm/ops")
    assert violations(ops, "pm.cli") == []
    printing = []
    for path in ops:
        for node in ast.walk(ast.parse(path.read_bytes())):
            call = node.func if isinstance(node, ast.Call) else None
            if isinstance(call, ast.Name) and call.id == "print":
                printing.append(f"{path.relative_to(ROOT)}:{node.lineno}: print()")
            if isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr") and \
                    isinstance(node.value, ast.Name) and node.value.id == "sys":
                printing.append(f"{path.relative_to(ROOT)}:{node.lineno}: sys.{node.attr}")
    assert printing == []


def test_subprocesses_only_through_the_choke_point() -> None:
    allowed = {"pm.base.uv", *SUBPROCESS_EXCEPTIONS}
    others = [p for p in modules("pm", "agent") if module_name(p) not in allowed
              and not module_name(p).startswith("pm.testing")]
    assert violations(others, "subprocess") == []


def test_the_rules_see_imports_inside_functions() -> None:
    """The walk reads what the old upward imports looked like: relative, inside a function."""
    source = b"def enable():\n    from .cli.sync import sync\n    from ..cli import _common\n"
    found = {name for name, _ in imports_in(source, "pm.ops.admit")}
    assert {"pm.ops.cli.sync", "pm.cli", "pm.cli._common"} <= found
    found = {name for name, _ in imports_in(b"def f():\n    from .cli.sync import sync\n", "pm.admission")}
    assert "pm.cli.sync" in found


def reexports() -> dict[str, str]:
    """``package.name`` -> the submodule a package's ``__init__`` takes ``name`` from (eagerly, or
    under TYPE_CHECKING for a lazily loaded name): importing the name tests that submodule."""
    found: dict[str, str] = {}
    for init in modules("pm"):
        if init.name != "__init__.py":
            continue
        package = module_name(init)
        for node in ast.walk(ast.parse(init.read_bytes())):
            if isinstance(node, ast.ImportFrom) and node.module and is_under(node.module, package):
                for alias in node.names:
                    found[f"{package}.{alias.asname or alias.name}"] = node.module
    return found


def commands() -> set[str]:
    """The command modules pm.cli loads by name (its TABLE): a test running ``main([cmd, …])``
    through pm.cli (or the host's CLI) exercises them."""
    from pm.cli import TABLE

    return {f"pm.cli.{module}" for module, *_ in TABLE.values()}


#: pm modules no test imports yet, and why. Keep this short; it is a to-do list, not a way out.
NOT_IMPORTED_BY_A_TEST = {
    "pm.__main__": "the `python -m pm` entry point: tests/pm/generations run it as a real process",
}


@pytest.fixture(scope="module")
def imported_by_tests() -> set[str]:
    names: set[str] = set()
    for path in modules("tests"):
        names.update(name for name, _ in imports(path))
    through = reexports()
    names |= {through[name] for name in names if name in through}
    if any(is_under(name, "pm.cli") or name == "agent.cli" for name in names):
        names |= commands() | {"pm.cli._common", "pm.cli._output"}  # what every command shares
    return names


def test_every_pm_module_is_imported_by_a_test(imported_by_tests: set[str]) -> None:
    untested = [module_name(p) for p in modules("pm") if module_name(p) not in imported_by_tests]
    assert sorted(set(untested) - set(NOT_IMPORTED_BY_A_TEST)) == []
    assert sorted(set(NOT_IMPORTED_BY_A_TEST) - set(untested)) == [], "tested now: take it off the list"
