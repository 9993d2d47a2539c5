"""``config_schema.py``: a provider's settings, read from disk, never imported.

The plugin guide lets a provider ship ``config_schema.py`` beside its ``__init__.py`` (folder or
entry-point package); the host reads it as *data*. There is no dashboard here, so ``hermes memory
setup`` prompts from it. The file holds the same list :meth:`MemoryProvider.get_config_schema`
returns, as a Python literal, in one of two shapes::

    CONFIG_SCHEMA = [{"key": "api_key", "secret": True, "env_var": "MY_API_KEY", ...}, ...]

    def get_config_schema():
        return [{"key": "api_key", ...}, ...]

Only literals are accepted (``ast.literal_eval``): anything computed is refused with the file
and line, so reading it can never run plugin code. A file over :data:`MAX_SCHEMA_BYTES` is refused
unread (a schema is a few fields; a huge file must not take the memory of the process reading it).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from pm.base.errors import InputError
from pm.base.files import read_text

__all__ = ["MAX_SCHEMA_BYTES", "SCHEMA_NAMES", "ConfigSchemaError", "read_config_schema"]

#: Top-level names that hold the schema, in the order they are looked for.
SCHEMA_NAMES = ("CONFIG_SCHEMA", "get_config_schema")
#: Largest ``config_schema.py`` read (and largest schema a provider may hand the dashboard).
MAX_SCHEMA_BYTES = 256 * 1024


class ConfigSchemaError(ValueError):
    """``config_schema.py`` exists but holds no usable schema; ``path``, ``line`` (or ``None``)
    and ``problem`` say where and what."""

    def __init__(self, path: Path, problem: str, line: int | None = None) -> None:
        self.path = path
        self.problem = problem
        self.line = line
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {problem}")


def _literal(path: Path, node: ast.expr) -> list[dict[str, Any]]:
    try:
        value = ast.literal_eval(node)
    except ValueError:
        raise ConfigSchemaError(path, "the schema must be a literal list of dicts (it is read, "
                                "never run)", node.lineno) from None
    if not isinstance(value, list) or not all(isinstance(f, dict) for f in value):
        raise ConfigSchemaError(path, f"the schema must be a list of dicts, got {type(value).__name__}",
                                node.lineno)
    return value


def _found(tree: ast.Module, name: str) -> ast.expr | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node.value
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.target.id == name and node.value is not None:
            return node.value
        if isinstance(node, ast.FunctionDef) and node.name == name:
            returns = [n for n in node.body if isinstance(n, ast.Return)]
            if len(returns) == 1 and returns[0].value is not None:
                return returns[0].value
    return None


def read_config_schema(path: Path) -> list[dict[str, Any]]:
    """The schema in ``path`` (see the module docstring). Raises :class:`ConfigSchemaError`."""
    try:
        source = read_text(path, limit=MAX_SCHEMA_BYTES)
    except InputError as exc:
        raise ConfigSchemaError(path, exc.problems[0].message) from exc
    try:
        tree = ast.parse(source.data, filename=str(path))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ConfigSchemaError(path, f"cannot be read: {type(exc).__name__}: {exc}") from exc
    for name in SCHEMA_NAMES:
        node = _found(tree, name)
        if node is not None:
            return _literal(path, node)
    raise ConfigSchemaError(path, f"defines none of {', '.join(SCHEMA_NAMES)}")
