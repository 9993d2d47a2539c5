"""An index's list of projects (``/simple/``), read only when it is small.

Used for one thing: a "did you mean" when a requirement names a project the index does not have.
A private index or a local mirror lists a few hundred names in a few kilobytes; PyPI's list is
tens of megabytes, so it is never read: a list whose Content-Length is over :data:`LIMIT` (or
not given) is refused unread by :class:`~pm.index.http.HttpClient` (``limit=``). Best effort: any
failure gives no names, never an error, because the suggestion is a courtesy.
"""

from __future__ import annotations

import json

from packaging.utils import NormalizedName, canonicalize_name

from pm.index.base import IndexFailure
from pm.index.http import HttpClient

#: Largest project list read, in bytes (compressed size as sent).
LIMIT = 256 << 10
_ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"


def small_project_list(client: HttpClient, index_url: str, *, limit: int = LIMIT) -> list[NormalizedName]:
    """The names ``index_url`` lists, or ``[]`` when the list is large, unreadable or absent."""
    try:
        response = client.get(index_url, headers={"Accept": _ACCEPT}, limit=limit)
    except IndexFailure:
        return []
    if len(response.body) > 4 * limit:  # a small gzip can still hold a large list
        return []
    media = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    try:
        if media.endswith("+json"):
            names = [p["name"] for p in json.loads(response.body)["projects"]]
        else:
            names = _html_names(response.body.decode("utf-8", "replace"))
    except (ValueError, KeyError, TypeError):
        return []
    return [canonicalize_name(n) for n in names if isinstance(n, str) and n]


def _html_names(text: str) -> list[str]:
    from pm.index._anchors import NameAnchors

    parser = NameAnchors()
    parser.feed(text)
    return parser.names
