"""pm.base.yamlfile: one bounded YAML reading — depth, alias expansion and duplicate keys refused."""

from __future__ import annotations

import time

import pytest

from pm.base import yamlfile as _yaml

BOMB = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True))


def describe(text: str) -> str:
    with pytest.raises(_yaml.Error) as caught:
        _yaml.load(text)
    return _yaml.describe(caught.value)


def test_an_alias_bomb_is_refused_quickly() -> None:
    started = time.monotonic()
    assert "expands to more than 100000 nodes" in describe(BOMB)
    assert time.monotonic() - started < 1


def test_a_recursive_alias_is_refused() -> None:
    assert "nests deeper than 64 levels" in describe("a: &a [*a]\n")


def test_deep_nesting_is_refused_without_recursion() -> None:
    assert describe("x: " + "[" * 100_000) .startswith("line 1")
    assert describe("x: " + "[" * 200 + "]" * 200) == "line 1, column 67: nests deeper than 64 levels"


def test_duplicate_keys_name_both_lines() -> None:
    text = "pip_dependencies: [a]\nname: x\npip_dependencies: [b]\n"
    assert describe(text) == "line 3, column 1: duplicate key 'pip_dependencies' (first on line 1, again on line 3)"


def test_ordinary_anchors_merge_keys_and_a_bom_still_read() -> None:
    assert _yaml.load("\ufeffa: &x {k: 1}\nb:\n  <<: *x\n  j: 2\n") == {"a": {"k": 1}, "b": {"k": 1, "j": 2}}
    assert _yaml.load("") is None


def test_an_excerpt_is_bounded() -> None:
    assert _yaml.excerpt("x" * 1000) == repr("x" * 60) + "… (1000 characters)"


def test_an_error_met_at_the_end_of_the_file_names_its_last_line_and_what_was_left_open() -> None:
    """Issue 32, finding 4: "line 6" of a 5-line plugin.yaml. The parsers' marks are 0-based and an
    error met at the end of the stream sits past the final newline, on a line the file does not have."""
    text = "name: pdf-tools\nkind: tool\npip_dependencies: [pillow==13.0.0,\n  pypdf==7.1.1\nversion: '1'\n"
    assert len(text.splitlines()) == 5
    assert describe(text) == ("line 5, column 8, in 'pip_dependencies': did not find expected ',' or ']' "
                              "(while parsing a flow sequence started on line 3, column 19)")
    unclosed = "name: pdf-tools\nkind: tool\npip_dependencies:\n  - pillow==13.0.0\n  - \"pypdf==7.1.1\n"
    assert describe(unclosed) == ("end of the file, after line 5, in 'pip_dependencies': found unexpected end of "
                                  "stream (while scanning a quoted scalar started on line 5, column 5)")
    assert describe("a: [1, 2") == ("end of the file, after line 1, in 'a': did not find expected ',' or ']' "
                                     "(while parsing a flow sequence started on line 1, column 4)")
    crlf = "a: 1\r\nb: [x,\r\n"
    assert describe(crlf).startswith("end of the file, after line 2, in 'b': ")


def test_a_broken_indentation_names_the_line_and_the_key_whose_block_it_breaks() -> None:
    text = "name: pdf-tools\npip_dependencies:\n  - pillow==13.0.0\n  - pypdf==7.1.1\n  description: x\n"
    found = _load_error(text)
    assert (found.line, found.column, found.key, found.at_end) == (5, 3, "pip_dependencies", False)
    assert describe(text).startswith("line 5, column 3, in 'pip_dependencies': ")


def _load_error(text: str) -> _yaml.SyntaxProblem:
    with pytest.raises(_yaml.SyntaxProblem) as caught:
        _yaml.load(text)
    return caught.value
