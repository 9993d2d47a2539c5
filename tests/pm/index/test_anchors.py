"""pm.index._anchors: the HTML parsers of index pages, loaded only when a page is parsed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pm.index._anchors import NameAnchors, PageAnchors


def test_a_project_page_gives_its_anchors_and_first_base() -> None:
    parser = PageAnchors()
    parser.feed('<base href="/files/"><base href="/other/"><a href="a-1.0.tar.gz" data-yanked="">a &amp; b'
                '</a><p>skip</p><a href="b.whl">b</a>')
    assert parser.base == "/files/"
    assert parser.anchors == [({"href": "a-1.0.tar.gz", "data-yanked": ""}, ["a & b"]), ({"href": "b.whl"}, ["b"])]


def test_a_root_page_gives_the_text_of_its_anchors() -> None:
    parser = NameAnchors()
    parser.feed('<a href="/simple/alpha/"> alpha </a> not a name <a>Beta_Two</a><a> </a>')
    assert parser.names == ["alpha", "Beta_Two"]


def test_html_parser_loads_with_the_first_page_parsed() -> None:
    code = ("import sys\nimport pm.index._pages, pm.index.listing\nbefore = 'html.parser' in sys.modules\n"
            "from pm.index._pages import html_entries\n"
            "entries = html_entries(b'<a href=\"a-1.0.tar.gz#sha256=AB\">a</a>', 'https://i/simple/a/')\n"
            "print(before, 'html.parser' in sys.modules, entries[0][:3])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])})
    assert done.stdout.strip() == "False True ('a-1.0.tar.gz', 'https://i/simple/a/a-1.0.tar.gz', 'ab')"
