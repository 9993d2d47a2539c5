"""YAML for pm's own files (config.yaml, plugin.yaml, the catalog): one bounded reading for the
reader and the editor, and errors told as line and column.

libyaml's safe loader when present (about 8x faster), else PyYAML's own. Before anything is
constructed the node graph is walked once, without recursion, and refused when it

- nests deeper than :data:`MAX_DEPTH` levels,
- would expand (counting every alias as the copy it stands for) to more than :data:`MAX_NODES`
  nodes — the "billion laughs" alias bomb, and recursive aliases, or
- repeats a key in one mapping (PyYAML keeps the last silently; pm names both lines).

A leading UTF-8 byte order mark is ignored (libyaml skips it; so does the editor).
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

#: libyaml's safe loader when available (about 8x faster), else PyYAML's own.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Error = yaml.YAMLError
BOM = "\ufeff"

#: Deepest nesting of mappings and sequences pm accepts in its YAML files.
MAX_DEPTH = 64
#: Most nodes a document may stand for once aliases are expanded (a plugin.yaml has tens).
MAX_NODES = 100_000


class LimitError(yaml.YAMLError):
    """A document beyond pm's bounds (depth, alias expansion, duplicate keys)."""

    def __init__(self, problem: str, mark: Any = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark
        self.context = None


def load(text: str) -> Any:
    """The data of one YAML document, within pm's bounds; raises :data:`Error` (a
    :class:`LimitError` for the bounds)."""
    loader = LOADER(text.removeprefix(BOM))
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def check(root: Node) -> None:
    """Walk ``root`` as if aliases were expanded, stopping at the first bound crossed."""
    stack: list[tuple[Node, int]] = [(root, 1)]
    seen = 0
    while stack:
        node, depth = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            raise LimitError(f"expands to more than {MAX_NODES} nodes (aliases repeating aliases?); "
                             f"pm refuses such documents", node.start_mark)
        if depth > MAX_DEPTH:
            raise LimitError(f"nests deeper than {MAX_DEPTH} levels", node.start_mark)
        if isinstance(node, SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, MappingNode):
            _check_keys(node)
            for key, value in node.value:
                stack += [(key, depth + 1), (value, depth + 1)]


def _check_keys(node: MappingNode) -> None:
    first: dict[tuple[str, str], Node] = {}
    for key, _value in node.value:
        if not isinstance(key, ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        seen = first.setdefault((key.tag, key.value), key)
        if seen is not key:
            raise LimitError(
                f"duplicate key {excerpt(key.value)} (first on line {seen.start_mark.line + 1}, "
                f"again on line {key.start_mark.line + 1})", key.start_mark)


def excerpt(text: str, limit: int = 60) -> str:
    """``text`` quoted for a message, cut to ``limit`` characters."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"… ({len(text)} characters)"


def describe(exc: yaml.YAMLError) -> str:
    """``line 2, column 12: expected ',' or ']', but got '<stream end>'`` — without PyYAML's
    internal stream names."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"{where}{problem}" + (f" ({context})" if context else "")
