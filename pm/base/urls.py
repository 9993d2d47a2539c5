"""URLs as pm shows them: the one redaction of credentials for every URL that reaches a message,
a receipt, a record or a file (index, find-links, git, archive and pin URLs alike)."""

from __future__ import annotations

from urllib.parse import urlsplit


def redact_url(url: str, *, for_tools: bool = False) -> str:
    """``url`` with the password of a ``user:password@`` part replaced by ``****``, and a token
    standing alone in the user part of an http(s) URL (``https://TOKEN@host/``) hidden whole; a
    login alone in an ssh URL (``git+ssh://git@host/``) is no secret and stays.

    ``for_tools``: for a file pip or uv read (a requirements export), where a masked password
    would be sent as the password: the password and a lone token are dropped instead
    (``https://user@host/``, ``https://host/``), so the tool takes them from netrc or a keyring."""
    try:
        parts = urlsplit(url)
        if "@" not in parts.netloc:
            return url
        user, _, host = parts.netloc.rpartition("@")
        name, colon, _ = user.partition(":")
        if not colon and not parts.scheme.endswith(("http", "https")):
            return url  # ssh://git@host: a login name, not a token
        if for_tools:
            shown = f"{name}@" if colon else ""
        else:
            shown = f"{name}:****@" if colon else "****@"
        return parts._replace(netloc=f"{shown}{host}").geturl()
    except ValueError:
        return "<an unparsable URL>"
