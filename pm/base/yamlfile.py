"""YAML for pm's own files (config.yaml, plugin.yaml, the catalog): one bounded reading for the
reader and the editor, and errors told as line and column.

libyaml's safe loader when present (about 8x faster), else PyYAML's own. Before anything is
constructed the node graph is walked once, without recursion, and refused when it

- nests deeper than :data:`MAX_DEPTH` levels,
- would expand (counting every alias as the copy it stands for) to more than :data:`MAX_NODES`
  nodes — the "billion laughs" alias bomb, and recursive aliases, or
- repeats a key in one mapping (PyYAML keeps the last silently; pm names both lines).

A leading UTF-8 byte order mark is ignored (libyaml skips it; so does the editor).

A document that is not YAML raises :class:`SyntaxProblem`, its place told as a person counts: the
parsers' marks are 0-based and an error found at the end of the stream sits one line past the
last (``line 6`` of a 5-line file ending in a newline); here it is the end of the file, after its
last line, and the key named is the top-level key whose block holds what was left open.
"""

from __future__ import annotations

import re
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


class SyntaxProblem(yaml.YAMLError):
    """Text that is not YAML: the parser's ``problem`` at ``line``/``column`` (1-based; ``at_end``
    when the parser met the end of the file first, then ``line`` is the file's last), the
    ``context`` it was in and where that started (``context_line``, ``context_column``), and the
    top-level ``key`` whose block holds it (None when there is none)."""

    def __init__(self, problem: str, line: int, column: int, *, at_end: bool = False, context: str | None = None,
                 context_line: int | None = None, context_column: int | None = None, key: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line
        self.column = column
        self.at_end = at_end
        self.context = context
        self.context_line = context_line
        self.context_column = context_column
        self.key = key


def load(text: str) -> Any:
    """The data of one YAML document, within pm's bounds; raises :data:`Error` (a
    :class:`LimitError` for the bounds, a :class:`SyntaxProblem` for text that is not YAML)."""
    return load_located(text)[0]


def load_located(text: str) -> tuple[Any, dict[str, int]]:
    """:func:`load`, and the line (1-based) of each top-level key and of each item of a top-level
    sequence (``pip_dependencies``, ``pip_dependencies[1]``): where a problem with a key is."""
    text = text.removeprefix(BOM)
    loader = LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        check(node)
        return loader.construct_document(node), _key_lines(node)
    except yaml.MarkedYAMLError as exc:
        if isinstance(exc, LimitError) or exc.problem_mark is None:
            raise
        raise located(exc, text) from None
    finally:
        loader.dispose()


def _key_lines(root: Node) -> dict[str, int]:
    lines: dict[str, int] = {}
    if not isinstance(root, MappingNode):
        return lines
    for key, value in root.value:
        if isinstance(key, ScalarNode):
            lines.setdefault(key.value, key.start_mark.line + 1)
            if isinstance(value, SequenceNode):
                for i, item in enumerate(value.value):
                    lines.setdefault(f"{key.value}[{i}]", item.start_mark.line + 1)
    return lines


def located(exc: yaml.MarkedYAMLError, text: str) -> SyntaxProblem:
    """``exc`` (of parsing ``text``) with its place as a person counts it (:class:`SyntaxProblem`)."""
    lines = _LINE_BREAK.split(text)
    if lines[-1] == "":  # the break that ends the last line starts none
        lines.pop()
    mark, opened = exc.problem_mark, exc.context_mark
    assert mark is not None  # load() hands over only errors with a place
    at_end = mark.line >= len(lines) or (mark.line == len(lines) - 1 and mark.column >= len(lines[-1])
                                         and not _LINE_BREAK.search(text[-1:]))
    line, column = (max(len(lines), 1), len(lines[-1]) + 1 if lines else 1) if at_end else (mark.line + 1, mark.column + 1)
    # what was left open names the key, unless that is the document's own top-level block
    anchor = opened.line if opened is not None and opened.column > 0 else min(mark.line, len(lines) - 1)
    started = opened if opened is not None and opened.line < len(lines) else None  # past the end says nothing
    return SyntaxProblem(exc.problem or str(exc).splitlines()[0], line, column, at_end=at_end, context=exc.context,
                         context_line=started.line + 1 if started else None,
                         context_column=started.column + 1 if started else None,
                         key=_top_level_key(lines, anchor))


#: What YAML counts as a line break (str.splitlines also breaks on \v, \f and \x1c-\x1e; YAML does not).
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_KEY = re.compile(r"""(?P<key>[^\s#'"\[\]{},&*!|>%@`?:-][^:#]*?|'[^']*'|"[^"]*")\s*:(?:\s|$)""")


def _top_level_key(lines: list[str], index: int) -> str | None:
    """The top-level key on line ``index`` (0-based) or the nearest one above it."""
    for text in reversed(lines[:index + 1]):
        found = _KEY.match(text)
        if found:
            return found["key"].strip("'\"")
    return None


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
    """``line 2, column 12, in 'pip_dependencies': did not find expected ',' or ']' (while parsing a
    flow sequence started on line 1, column 19)`` — without PyYAML's internal stream names; an error
    met at the end of the file says so (``end of the file, after line 5``)."""
    if isinstance(exc, SyntaxProblem):
        where = f"end of the file, after line {exc.line}" if exc.at_end else f"line {exc.line}, column {exc.column}"
        where += f", in {exc.key!r}" if exc.key else ""
        context = exc.context
        if context and exc.context_line is not None:
            context += f" started on line {exc.context_line}, column {exc.context_column}"
        return f"{where}: {exc.problem}" + (f" ({context})" if context else "")
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"{where}{problem}" + (f" ({context})" if context else "")
