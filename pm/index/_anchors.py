"""The HTML parsers of index pages, apart so that ``html.parser`` (~2 ms of a start) loads only
when a page is parsed: a command over fresh cached pages parses none."""

from __future__ import annotations

from html.parser import HTMLParser


class PageAnchors(HTMLParser):
    """Collects ``<a>`` attributes and text, and the first ``<base href>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.anchors: list[tuple[dict[str, str | None], list[str]]] = []
        self._open: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "base" and self.base is None:
            self.base = dict(attrs).get("href")
        elif tag == "a":
            self._open = []
            self.anchors.append((dict(attrs), self._open))

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open.append(data)


class NameAnchors(HTMLParser):
    """Collects the text of each ``<a>``: the project names of a PEP 503 root page."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._inside = tag == "a"

    def handle_endtag(self, tag: str) -> None:
        self._inside = False

    def handle_data(self, data: str) -> None:
        if self._inside and data.strip():
            self.names.append(data.strip())
