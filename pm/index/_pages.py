"""Project pages of a simple repository: PEP 691 JSON and PEP 503 HTML into plain entries.

Pure functions: page bytes and the page's final URL in, entries (:data:`~pm.index.project.Entry`)
or links out. Entries are cheap (no URL joining, no name or specifier parsing) so a page of
thousands of files costs little until a version is asked for (see :mod:`pm.index.project`). Relative file URLs are
resolved against the page URL (or an HTML ``<base href>``); files whose names are neither a
wheel nor an sdist name are skipped; a page that cannot be parsed at all raises
:class:`IndexFailure` naming the page URL.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from pm.index.base import SDIST_ENDINGS, FileLink, IndexFailure
from pm.index.project import Digest, Entry, absolute, link_of

JSON_TYPES = ("application/vnd.pypi.simple.v1+json", "application/vnd.pypi.simple.latest+json")
ACCEPT = ("application/vnd.pypi.simple.v1+json, "
          "application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01")


def parse_page(body: bytes, content_type: str, page_url: str, source: str) -> tuple[FileLink, ...]:
    """Links of a project page, by its Content-Type (PEP 691 JSON, else HTML), every file kept."""
    built = (link_of(absolute(e, page_url), source) for e in page_entries(body, content_type, page_url))
    return tuple(link for link in built if link is not None)


def page_entries(body: bytes, content_type: str, page_url: str) -> list[Entry]:
    """The files of a project page as plain entries (URLs possibly relative to the page)."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media in JSON_TYPES:
        return json_entries(body, page_url)
    return html_entries(body, page_url)


def parse_json(body: bytes, page_url: str, source: str) -> tuple[FileLink, ...]:
    """PEP 691 page into links (every file kept; see :func:`json_entries`)."""
    return parse_page(body, JSON_TYPES[0], page_url, source)


def parse_html(body: bytes, page_url: str, source: str) -> tuple[FileLink, ...]:
    """PEP 503 page into links (every file kept; see :func:`html_entries`)."""
    return parse_page(body, "text/html", page_url, source)


def _json_metadata(entry: dict[str, Any]) -> str | None:
    """PEP 714 ``core-metadata`` (else the older ``dist-info-metadata``) as a hash or ``""``."""
    value = entry.get("core-metadata", entry.get("dist-info-metadata", False))
    if isinstance(value, dict):
        sha = value.get("sha256")
        return sha.lower() if isinstance(sha, str) else ""
    return "" if value is True else None


def _json_yanked(value: object) -> str | None:
    if value is True:
        return ""
    return value if isinstance(value, str) and value else None


def page_digest(body: bytes, content_type: str, page_url: str, tags: frozenset[str] | None) -> Digest:
    """What a project page means for a target with ``tags`` (see :class:`~pm.index.project.Digest`);
    a JSON page's files are turned into entries only when kept."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media in JSON_TYPES:
        return Digest.build_from(json_checked(json_files(body, page_url), page_url), _json_entry, page_url, tags)
    return Digest.build(project_html_entries(body, page_url), page_url, tags)


#: Endings of the files a PEP 503 project page links to (wheels, sdists and older formats).
_FILE_ENDINGS = (".whl", *SDIST_ENDINGS, ".egg", ".exe", ".msi", ".rpm")


def project_html_entries(body: bytes, page_url: str) -> list[Entry]:
    """:func:`html_entries` of a page that answered for one project, checked to be a project page:
    JSON sent as ``text/html``, or a page linking to no file at all (a captive portal, a login
    page, an error page with status 200) is an :class:`IndexFailure`, never an empty project —
    which would read as "no such version" or a conflict."""
    start = body.lstrip()[:1]
    if start in (b"{", b"["):
        raise IndexFailure(page_url, "answered JSON labelled text/html: not a PEP 503 or PEP 691 project page "
                                     "(check the index URL, or a proxy in between)")
    entries = html_entries(body, page_url)
    if not any(e[0].lower().endswith(_FILE_ENDINGS) for e in entries):
        raise IndexFailure(page_url, f"answered a page that links to no distribution file ({len(body)} bytes, "
                                     f"{len(entries)} links): not a project page (a captive portal or login "
                                     "page?); check the index URL and the network")
    return entries


def json_entries(body: bytes, page_url: str) -> list[Entry]:
    """PEP 691: ``files[]`` with url, hashes, requires-python, yanked, core-metadata, size…"""
    return [_json_entry(item) for _, item in json_items(body, page_url)]


def json_items(body: bytes, page_url: str) -> list[tuple[str, dict[str, Any]]]:
    """The ``files[]`` of a PEP 691 page as (file name, entry), checked: a page whose files name a
    path or lack a URL is no valid page."""
    return list(json_checked(json_files(body, page_url), page_url))


def json_files(body: bytes, page_url: str) -> list[Any]:
    """The ``files`` list of a PEP 691 page, its API version checked (the files are not)."""
    try:
        page = json.loads(body)
        version = str(page.get("meta", {}).get("api-version", "1.0"))
        files = page["files"]
    except (ValueError, AttributeError, KeyError, TypeError) as exc:
        raise IndexFailure(page_url, f"invalid PEP 691 JSON page ({str(exc)[:200]})") from None
    except RecursionError:  # the json module recurses once per level of nesting
        raise IndexFailure(page_url, "invalid PEP 691 JSON page (it nests too deeply)") from None
    if version.split(".")[0] != "1":
        raise IndexFailure(page_url, f"unsupported simple API version {version!r} (1.x only)")
    if not isinstance(files, list):
        raise IndexFailure(page_url, f"invalid PEP 691 JSON page ('files' is a {type(files).__name__}, not a list)")
    return files


def json_checked(files: list[Any], page_url: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(file name, entry) of each file that has a name, checked as it is reached (see
    :func:`json_items`); files without a name are skipped."""
    for item in files:
        filename = item.get("filename") if type(item) is dict else None
        if type(filename) is not str:
            continue
        if "/" in filename or "\\" in filename:
            raise IndexFailure(page_url, f"invalid PEP 691 JSON page: file name {filename!r} is a path")
        url = item.get("url")
        if type(url) is not str or not url or url.isspace():  # as ``not url.strip()``, without a copy
            raise IndexFailure(page_url, f"invalid PEP 691 JSON page: file {filename!r} has no url")
        yield filename, item


def _json_entry(item: dict[str, Any]) -> Entry:
    filename, hashes, url = item["filename"], item.get("hashes"), item["url"]
    sha = hashes.get("sha256") if isinstance(hashes, dict) else None
    size, requires_python, uploaded = item.get("size"), item.get("requires-python"), item.get("upload-time")
    return (filename, url, sha.lower() if isinstance(sha, str) and sha else None,
            size if isinstance(size, int) and not isinstance(size, bool) else None,
            requires_python if isinstance(requires_python, str) else None,
            _json_yanked(item.get("yanked")), uploaded if isinstance(uploaded, str) else None,
            _json_metadata(item))


def _html_metadata(attrs: dict[str, str | None]) -> str | None:
    """``data-core-metadata`` (else ``data-dist-info-metadata``): "true" or "sha256=<hex>"."""
    value = attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata"))
    if value is None or value.strip().lower() == "false":
        return None
    algorithm, _, digest = value.strip().partition("=")
    return digest.lower() if algorithm.lower() == "sha256" and digest else ""


def html_entries(body: bytes, page_url: str) -> list[Entry]:
    """PEP 503: anchors with ``#sha256=`` fragments and ``data-*`` attributes (PEP 592/658/714)."""
    from pm.index._anchors import PageAnchors

    parser = PageAnchors()
    try:
        parser.feed(body.decode("utf-8", errors="replace"))
        parser.close()
    except AssertionError as exc:  # html.parser's way of giving up
        raise IndexFailure(page_url, f"unparsable HTML page ({exc})") from None
    base = urljoin(page_url, parser.base) if parser.base else page_url
    entries: list[Entry] = []
    for attrs, text in parser.anchors:
        href = attrs.get("href")
        if not href:
            continue
        url, fragment = urldefrag(urljoin(base, href))
        algorithm, _, digest = fragment.partition("=")
        filename = unquote(url.rsplit("/", 1)[-1] or "".join(text).strip())
        entries.append((filename, url, digest.lower() if algorithm == "sha256" and digest else None, None,
                        attrs.get("data-requires-python"), attrs.get("data-yanked"), None,
                        _html_metadata(attrs)))
    return entries
