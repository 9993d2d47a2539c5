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
