"""Edit the selection lists of ``config.yaml`` in place, keeping comments, key order and line endings.

PyYAML cannot round-trip comments, so the edit is textual and narrow: it touches only the
``plugins.enabled`` / ``plugins.disabled`` sequences (block or flow style), and the result is
re-parsed and compared with the intended data before anything is written. A ``plugins`` mapping
written in flow style (``plugins: {enabled: [a]}``) is rewritten as a block mapping, and so is a
whole document in flow style (``{}``, what ``yaml.safe_dump({})`` writes): the data stays the
same, and comments outside it are kept. A file whose every line ends in CRLF keeps CRLF. When the
file's shape is beyond what can be edited safely, :class:`ConfigEditError` says what to add by hand.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import yaml

from pm.base import yamlfile as _yaml
from pm.base.errors import PmError


class ConfigEditError(PmError):
    kind = "config-edit"


_TOP_PLUGINS = re.compile(r"^plugins:\s*(#.*)?$")
_TOP_KEY = re.compile(r"^[^\s#-][^:]*:")


def change_list(text: str, key: str, *, add: str | None = None, remove: str | None = None) -> str:
    """Append ``add`` to, or drop ``remove`` from, ``plugins.<key>``; other lines (and comments on
    kept items) stay byte-identical. Falls back to rewriting just that list when it is not a
    block sequence."""
    bom = _yaml.BOM if text.startswith(_yaml.BOM) else ""
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    body = text.removeprefix(bom).replace("\r\n", "\n") if crlf else text.removeprefix(bom)
    unterminated = bool(body) and not body.endswith("\n")
    new = _change_list(body + "\n" if unterminated else body, key, add, remove)
    if new == (body + "\n" if unterminated else body):
        return text
    if unterminated and new.endswith("\n"):
        new = new[:-1]  # the file had no final newline; keep it that way
    return bom + (new.replace("\n", "\r\n") if crlf else new)


def _change_list(text: str, key: str, add: str | None, remove: str | None) -> str:
    current = _current(text, key)
    names = [n for n in current if n != remove]
    if add is not None and add not in names:
        names.append(add)
    if names == current:
        return text
    lines = text.splitlines(keepends=True)
    if _is_flow_document(text) or _flow_plugins(lines) is not None:
        return set_list(text, key, names)
    start = _find_plugins(lines)
    span = None if start is None else _find_key(lines, start + 1, _block_end(lines, start + 1), key)
    items = [] if span is None else [i for i in range(span[0] + 1, span[1]) if lines[i].lstrip().startswith("- ")]
    if not names or span is None or not items or lines[span[0]].split(":", 1)[1].split("#")[0].strip():
        return set_list(text, key, names)
    indent = lines[items[0]][: len(lines[items[0]]) - len(lines[items[0]].lstrip())]
    # a removed item with a comment stays as a commented-out line, its comment kept
    new_lines: list[str | None] = [(f"{indent}# {line.lstrip()}" if _comment(line) else None)
                                   if i in items and _item(line) == remove else line for i, line in enumerate(lines)]
    restored = None if add is None or add in current else _commented_out(new_lines, span[0], indent, add)
    if restored is not None and add is not None:  # enabled again where it was: the line (and its comment) come back
        new_lines[restored] = indent + str(new_lines[restored]).lstrip()[2:]
        names = [n for n in names if n != add]
        names.insert(sum(1 for i in items if i < restored and _item(lines[i]) not in (None, remove)), add)
    elif add is not None and add not in current:
        last = max(i for i in items if _item(lines[i]) != remove) if any(_item(lines[i]) != remove for i in items) else span[0]
        new_lines.insert(last + 1, f"{indent}- {_scalar(add)}\n")
    new = "".join(line for line in new_lines if line is not None)
    _verify(text, new, key, names)
    return new


def _comment(line: str) -> str:
    """The comment after a list item (``- name  # why``), empty when it has none."""
    return line.partition(" #")[2].strip() if line.lstrip().startswith("- ") else ""


def _commented_out(lines: list[str | None], start: int, indent: str, name: str) -> int | None:
    """The line in the list at ``start`` that :func:`_change_list` commented out for ``name``."""
    pattern = re.compile(rf"{re.escape(indent)}# - {re.escape(_scalar(name))}( +#.*)?\n?")
    for i in range(start + 1, _block_end([line or "" for line in lines], start + 1)):
        line = lines[i] or ""
        if pattern.fullmatch(line):
            return i
        if line.strip() and not line.lstrip().startswith(("#", "- ")):
            break  # the next key (plugins.disabled after plugins.enabled): its lines are not this list's
    return None


def _load(text: str) -> Any:
    try:
        data = _yaml.load(text) or {}
    except _yaml.Error as exc:
        raise ConfigEditError(f"config.yaml is not valid YAML, so pm cannot edit it: {_yaml.describe(exc)}") from None
    if not isinstance(data, dict):
        raise ConfigEditError("config.yaml is not a mapping at the top level, so pm cannot edit it")
    return data


def _current(text: str, key: str) -> list[str]:
    plugins = _load(text).get("plugins") or {}
    if not isinstance(plugins, dict):
        raise ConfigEditError("config.yaml: plugins is not a mapping, so pm cannot edit it")
    value = plugins.get(key) or []
    if not isinstance(value, list):
        raise ConfigEditError(f"config.yaml: plugins.{key} is not a list, so pm cannot edit it")
    return [str(v) for v in value]


def _item(line: str) -> str | None:
    body = line.strip()[2:].split(" #")[0].strip()
    try:
        value = _yaml.load(body)
    except _yaml.Error:
        return None
    return str(value) if value is not None else None


def set_list(text: str, key: str, names: list[str]) -> str:
    """``text`` with ``plugins.<key>`` set to ``names`` (a block sequence); everything else kept."""
    if _is_flow_document(text):
        return _rewrite_document(text, key, names)
    lines = text.splitlines(keepends=True)
    flow = _flow_plugins(lines)
    if flow is not None:
        return _rewrite_plugins(text, lines, flow, key, names)
    start = _find_plugins(lines)
    rendered = [f"  {key}:\n"] + [f"    - {_scalar(n)}\n" for n in names] if names else [f"  {key}: []\n"]
    if start is None:
        tail = "" if not text or text.endswith("\n") else "\n"
        new = text + tail + "plugins:\n" + "".join(rendered)
    else:
        end = _block_end(lines, start + 1)
        span = _find_key(lines, start + 1, end, key)
        if span is None:
            new = "".join(lines[: start + 1] + rendered + lines[start + 1:])
        else:
            first, last = span
            new = "".join(lines[:first] + rendered + lines[last:])
    _verify(text, new, key, names)
    return new


def _is_flow_document(text: str) -> bool:
    """Whether the document is one flow mapping (``{}``, ``{plugins: {...}}``)."""
    content = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return bool(content) and content[0].lstrip().startswith("{")


def _with_list(text: str, key: str, names: list[str]) -> dict[str, Any]:
    data = dict(_load(text))
    plugins = dict(data.get("plugins") or {})
    plugins[key] = names
    data["plugins"] = plugins
    return data


def _block(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, default_flow_style=False, sort_keys=False, allow_unicode=True)


def _rewrite_document(text: str, key: str, names: list[str]) -> str:
    """A flow-style document as a block mapping with ``plugins.<key>`` set; leading comments kept."""
    lines = text.splitlines(keepends=True)
    lead = []
    for line in lines:
        if line.strip() and not line.lstrip().startswith("#"):
            break
        lead.append(line)
    new = "".join(lead) + _block(_with_list(text, key, names))
    _verify(text, new, key, names)
    return new


def _flow_plugins(lines: list[str]) -> tuple[int, int] | None:
    """The lines of a ``plugins:`` mapping written in flow style, when it is one."""
    for i, line in enumerate(lines):
        if line.startswith("plugins:") and line[len("plugins:"):].split("#")[0].strip().startswith("{"):
            return i, _block_end(lines, i + 1)
    return None


def _rewrite_plugins(text: str, lines: list[str], span: tuple[int, int], key: str, names: list[str]) -> str:
    plugins = _with_list(text, key, names)["plugins"]
    first, last = span
    new = "".join(lines[:first]) + _block({"plugins": plugins}) + "".join(lines[last:])
    _verify(text, new, key, names)
    return new


def _find_plugins(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if _TOP_PLUGINS.match(line.rstrip("\n")):
            return i
        if line.startswith("plugins:"):
            raise ConfigEditError("config.yaml writes 'plugins' in a form pm cannot edit safely "
                                  "(use a block mapping: 'plugins:' on its own line)")
    return None


def _block_end(lines: list[str], i: int) -> int:
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t", "#"))):
        i += 1
    return i


def _find_key(lines: list[str], start: int, end: int, key: str) -> tuple[int, int] | None:
    pattern = re.compile(rf"^(\s+){re.escape(key)}:(.*)$")
    for i in range(start, end):
        match = pattern.match(lines[i].rstrip("\n"))
        if not match:
            continue
        indent = len(match.group(1))
        j = i + 1
        while j < end:
            stripped = lines[j].strip()
            current = len(lines[j]) - len(lines[j].lstrip())
            if stripped and not stripped.startswith("#") and current <= indent and not stripped.startswith("-"):
                break
            if stripped.startswith("-") and current < indent:
                break
            j += 1
        while j > i + 1 and lines[j - 1].strip().startswith("#"):
            j -= 1  # trailing comments belong to what follows
        return i, j
    return None


def _scalar(name: str) -> str:
    plain = re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.\-/]*", name) and name.lower() not in (
        "yes", "no", "on", "off", "true", "false", "null", "y", "n", "~")
    return name if plain else json.dumps(name)


def _verify(old: str, new: str, key: str, names: list[str]) -> None:
    if _load(new) != _with_list(old, key, names):
        raise ConfigEditError(f"editing config.yaml would change more than plugins.{key}; "
                              f"set plugins.{key} to {names!r} by hand")


def set_value(text: str, section: str, key: str, value: str) -> str:
    """``text`` with ``<section>.<key>`` (a top-level mapping's scalar) set to ``value``: the line
    is replaced in place (its comment kept), added under an existing ``section:``, or the section
    is appended; every other line stays byte-identical. BOM and CRLF are kept like
    :func:`change_list` keeps them."""
    bom = _yaml.BOM if text.startswith(_yaml.BOM) else ""
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    body = text.removeprefix(bom).replace("\r\n", "\n") if crlf else text.removeprefix(bom)
    section_data = _load(body).get(section)
    if section_data is not None and not isinstance(section_data, dict):
        raise ConfigEditError(f"config.yaml: {section} is not a mapping, so pm cannot set {section}.{key}")
    if (section_data or {}).get(key) == value:
        return text
    expected = dict(_load(body))
    expected[section] = {**(section_data or {}), key: value}
    new = _set_value(body, section, key, value, expected)
    if _load(new) != expected:
        raise ConfigEditError(f"editing config.yaml would change more than {section}.{key}; "
                              f"set `{section}: {{{key}: {value}}}` by hand")
    return bom + (new.replace("\n", "\r\n") if crlf else new)


def _set_value(body: str, section: str, key: str, value: str, expected: dict[str, Any]) -> str:
    lines = body.splitlines(keepends=True)
    if _is_flow_document(body):  # `{}`: rewritten as a block mapping, leading comments kept
        lead = "".join(line for line in lines[:next(i for i, line in enumerate(lines)
                                                    if line.strip() and not line.lstrip().startswith("#"))])
        return lead + _block(expected)
    start = next((i for i, line in enumerate(lines) if re.match(rf"^{re.escape(section)}:\s*(#.*)?$", line.rstrip("\n"))), None)
    flow = next((i for i, line in enumerate(lines) if line.startswith(f"{section}:")), None)
    if start is None and flow is not None:  # `memory: {provider: a}`: that mapping as a block
        return "".join(lines[:flow]) + _block({section: expected[section]}) + "".join(lines[_block_end(lines, flow + 1):])
    if start is None:
        tail = "" if not body or body.endswith("\n") else "\n"
        return body + tail + f"{section}:\n  {key}: {_scalar(value)}\n"
    end = _block_end(lines, start + 1)
    pattern = re.compile(rf"^(\s+){re.escape(key)}:(.*?)(\s+#.*)?$")
    children = [i for i in range(start + 1, end) if lines[i].strip() and not lines[i].lstrip().startswith("#")]
    indent = min((len(lines[i]) - len(lines[i].lstrip()) for i in children), default=2)
    for i in children:
        match = pattern.match(lines[i].rstrip("\n"))
        if match and len(match.group(1)) == indent:
            comment = match.group(3) or ""
            lines[i] = f"{match.group(1)}{key}: {_scalar(value)}{comment}\n"
            return "".join(lines)
    lines.insert(start + 1, f"{' ' * indent}{key}: {_scalar(value)}\n")
    return "".join(lines)


def set_mapping(text: str, wanted: dict[str, Any]) -> str:
    """``text`` rewritten to hold ``wanted``, editing only the keys whose values change: a changed
    key's lines are replaced (nested block mappings key by key), a new key is added at the end of
    its mapping, a key ``wanted`` lacks is removed; every other line, comments included, stays
    byte-identical, and BOM and CRLF are kept. When the file's shape is beyond a safe line edit
    (flow style, complex keys), the document is written whole from ``wanted``, leading comments
    kept. ``text`` is read within pm's bounds: a duplicated key is a :class:`ConfigEditError`."""
    bom = _yaml.BOM if text.startswith(_yaml.BOM) else ""
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    body = text.removeprefix(bom).replace("\r\n", "\n") if crlf else text.removeprefix(bom)
    current = _load(body)
    if current == wanted:
        return text
    lines = body.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    new: str | None = None
    if not _is_flow_document(body):
        new = "".join(_edit_block(lines, 0, len(lines), 0, current, wanted) or [])
    if new is None or _load(new) != wanted:
        lead = list(itertools.takewhile(lambda line: not line.strip() or line.lstrip().startswith("#"), lines))
        new = "".join(lead) + (_block(wanted) if wanted else "{}\n")
    return bom + (new.replace("\n", "\r\n") if crlf else new)


_KEY = re.compile(r"^( *)([^\s#\-?{\[&*!|>'\"%@`][^:#]*|\"[^\"]*\"|'[^']*'):(?:\s|$)")


def _keys(lines: list[str], start: int, end: int, indent: int) -> list[tuple[Any, int, int]] | None:
    """(key, first line, end line) of each key at ``indent`` in ``lines[start:end]``; None when a
    line there is not a plain ``key:`` line the editor understands."""
    found: list[tuple[Any, int, int]] = []
    for i in range(start, end):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            continue
        depth = len(lines[i]) - len(lines[i].lstrip(" "))
        if depth > indent or (depth == indent and stripped.startswith("- ") and found):
            continue  # inside the value of the key before (a sequence may sit at the key's indent)
        match = _KEY.match(lines[i])
        if depth < indent or match is None or len(match.group(1)) != indent:
            return None
        try:
            key = _yaml.load(match.group(2) + ": null")
        except _yaml.Error:
            return None
        found.append((next(iter(key)), i, end))
    spans = []
    for n, (key, first, _) in enumerate(found):
        last = found[n + 1][1] if n + 1 < len(found) else end
        while last > first + 1 and (not lines[last - 1].strip() or lines[last - 1].lstrip().startswith("#")):
            last -= 1  # comments and blank lines before the next key belong to it
        spans.append((key, first, last))
    return spans


def _edit_block(lines: list[str], start: int, end: int, indent: int, current: dict[str, Any],
                wanted: dict[str, Any]) -> list[str] | None:
    """``lines[start:end]`` (a block mapping at ``indent`` holding ``current``) edited to hold
    ``wanted``; None when the block is beyond a line edit."""
    spans = _keys(lines, start, end, indent)
    if spans is None or [key for key, _, _ in spans] != list(current):
        return None
    out: list[str] = []
    position = start
    for key, first, last in spans:
        out += lines[position:first]
        position = last
        if key not in wanted:
            continue
        if wanted[key] == current[key]:
            out += lines[first:last]
            continue
        nested = _edit_value(lines, first, last, indent, current[key], wanted[key])
        out += nested if nested is not None else _rendered(key, wanted[key], indent)
    tail = [key for key in wanted if key not in current]
    content_end = max((last for _, _, last in spans), default=end)
    out += lines[position:content_end] if position < content_end else []
    for key in tail:
        out += _rendered(key, wanted[key], indent)
    return out + lines[max(position, content_end):end]


def _edit_value(lines: list[str], first: int, last: int, indent: int, current: Any, wanted: Any) -> list[str] | None:
    """The lines of one key whose block-mapping value changes, edited key by key."""
    if not (isinstance(current, dict) and isinstance(wanted, dict) and current):
        return None
    if lines[first].split(":", 1)[1].split("#")[0].strip():
        return None  # a flow mapping on the key's line
    children = [line for line in lines[first + 1:last] if line.strip() and not line.lstrip().startswith("#")]
    inner = len(children[0]) - len(children[0].lstrip(" ")) if children else 0
    if inner <= indent:
        return None
    edited = _edit_block(lines, first + 1, last, inner, current, wanted)
    return None if edited is None else [lines[first], *edited]


def _rendered(key: Any, value: Any, indent: int) -> list[str]:
    return [" " * indent + line for line in _block({key: value}).splitlines(keepends=True)]
