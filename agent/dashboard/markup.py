"""The dashboard's HTML: one escaping rule and one layout.

Every value reaches a page through :func:`esc` (or a helper that calls it): a plugin folder named
``<script>`` is text, never markup. :class:`Html` marks what is already markup, so nothing is
escaped twice. No template engine: the pages are tables, short lists and forms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape
from urllib.parse import urlencode

__all__ = ["Html", "esc", "form", "join", "link", "page", "table", "tag"]

NAV = (("plugins", "Plugins"), ("readiness", "Readiness"), ("generations", "Generations"),
       ("refusal", "Latest refusal"), ("graph", "Dependency graph"), ("providers", "Memory providers"))

STYLE = """
body{font-family:system-ui,sans-serif;margin:0;color:#1d2330;background:#f7f8fa}
header{background:#1d2330;color:#fff;padding:.6em 1.2em;display:flex;gap:1.2em;align-items:baseline;flex-wrap:wrap}
header a{color:#cfe0ff;text-decoration:none}header a.on{color:#fff;font-weight:600;border-bottom:2px solid #fff}
header .home{margin-left:auto;font-size:.85em;color:#aab}
main{padding:1em 1.4em}table{border-collapse:collapse;margin:.6em 0;background:#fff}
th,td{border:1px solid #d8dce3;padding:.3em .6em;text-align:left;vertical-align:top;font-size:.92em}
th{background:#eef1f6}.member{color:#106b21}.out{color:#8a5a00}.bad{color:#b00020;font-weight:600}
.ok{color:#106b21;font-weight:600}code{font-size:.9em}code .w{white-space:nowrap}.note{color:#555;font-size:.9em}
.notice{border-left:4px solid #3867d6;background:#fff;padding:.5em .8em;margin:.6em 0}
.refused{border-left-color:#b00020}.done{border-left-color:#106b21}
form.inline{display:inline}button{cursor:pointer}label{display:block;margin:.5em 0 .2em;font-weight:600}
input,select{font-size:1em;padding:.2em}pre{background:#fff;border:1px solid #d8dce3;padding:.5em;white-space:pre-wrap}
"""


class Html(str):
    """Text that is already markup (escaped where it had to be)."""


def esc(value: object) -> Html:
    """``value`` as text in a page: escaped unless it is :class:`Html` already."""
    return value if isinstance(value, Html) else Html(escape(str(value), quote=True))


def join(parts: Iterable[object], sep: str = "") -> Html:
    return Html(esc(sep).join(esc(p) for p in parts))


def tag(name: str, /, *children: object, **attrs: object) -> Html:
    """``<name attrs>children</name>``; attribute names take ``_`` for ``-`` and ``cls`` for ``class``."""
    shown = "".join(f' {_attr(k)}="{esc(v)}"' for k, v in attrs.items() if v is not None and v is not False)
    return Html(f"<{name}{shown}>{join(children)}</{name}>")


def command(text: str) -> Html:
    """A command line: it wraps between its words, never inside one (``--home`` stays whole)."""
    return tag("code", join((tag("span", word, cls="w") for word in text.split(" ")), " "))


def _attr(key: str) -> str:
    return "class" if key == "cls" else key.rstrip("_").replace("_", "-")


def link(token: str, path: str, text: object, **query: str) -> Html:
    """A link inside the dashboard: the token travels in every URL."""
    return tag("a", text, href=f"{path}?{urlencode({'token': token, **query})}")


def table(headers: Iterable[str], rows: Iterable[Iterable[object]], **attrs: object) -> Html:
    head = tag("tr", *(tag("th", h) for h in headers))
    body = [tag("tr", *(tag("td", c) for c in row)) for row in rows]
    return tag("table", head, *body, **attrs)


def form(token: str, action: str, button: str, fields: Mapping[str, str] | None = None, *,
         allowed: bool, cls: str = "inline") -> Html:
    """A POST form of hidden ``fields`` and one button, to a URL with the token (the server checks
    it before reading a body); without ``--allow-actions`` the button is disabled and says why (the
    server refuses the POST as well)."""
    hidden = [tag("input", type="hidden", name=k, value=v) for k, v in {"token": token, **(fields or {})}.items()]
    title = None if allowed else "read-only: start `hermes dashboard --allow-actions` to act"
    return tag("form", *hidden, tag("button", button, type="submit", disabled=not allowed, title=title),
               method="post", action=f"{action}?{urlencode({'token': token})}", cls=cls)


def page(title: str, body: object, *, token: str, home: str, active: str = "") -> Html:
    nav = [tag("a", text, href=f"/{key}?{urlencode({'token': token})}", cls="on" if key == active else None)
           for key, text in NAV]
    header = tag("header", tag("strong", "hermes dashboard"), *nav, tag("span", home, cls="home"))
    return Html("<!doctype html>" + tag(
        "html", tag("head", Html('<meta charset="utf-8">'), tag("title", f"{title} · hermes dashboard"),
                    tag("style", Html(STYLE))),
        tag("body", header, tag("main", tag("h1", title), body)), lang="en"))
