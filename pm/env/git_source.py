"""The git sources a person types for ``hermes plugins install``, made into the one pm installs.

pm installs a git source only at a full commit (``git+URL@<40 hex>``: a branch or a tag can
move, an installed plugin must be reproducible). Two shorter forms are made into that one, each
pinned once, at install time, and recorded as the commit:

- ``owner/repo[/subdir]``: GitHub's shorthand, ``https://github.com/owner/repo`` (the plugin in
  ``subdir`` of it), when no folder of that name exists;
- ``--ref REF`` with a git URL or the shorthand: the branch or tag ``REF`` resolved to its commit
  by ``git ls-remote`` (a full commit is taken as it is).

The subdirectory travels as ``#subdirectory=SUB`` (pip's spelling) on the pinned source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pm.base.urls import redact_url
from pm.env.plugin_fetch import GIT_SOURCE, InstallError, _run_git, git_access

#: GitHub's ``owner/repo[/subdir]`` (an owner is 1-39 letters, digits and inner hyphens).
SHORTHAND = re.compile(r"^(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?)/(?P<repo>[A-Za-z0-9._-]+)"
                       r"(?:/(?P<subdir>[A-Za-z0-9._/-]+?))?/?$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
SUBDIRECTORY = "#subdirectory="


@dataclass(frozen=True)
class GitSource:
    """A git repository and the plugin's folder in it (empty: its top)."""

    url: str
    subdir: str = ""

    def at(self, commit: str) -> str:
        """The source pm installs: ``git+URL@COMMIT`` (and the subdirectory)."""
        return f"git+{self.url}@{commit}" + (f"{SUBDIRECTORY}{self.subdir}" if self.subdir else "")


def shorthand(spec: str) -> GitSource | None:
    """``owner/repo[/subdir]`` as its GitHub repository, or None (not that form, or a folder of
    that name exists: a folder wins)."""
    match = SHORTHAND.match(spec)
    if match is None or ".." in spec.split("/") or _exists(spec):
        return None
    repo = match["repo"].removesuffix(".git")
    if repo in (".", "") or match["owner"].startswith("-"):
        return None
    return GitSource(f"https://github.com/{match['owner']}/{repo}", match["subdir"] or "")


def pinned_source(spec: str, ref: str | None) -> str:
    """``spec`` as pm installs it (module docstring): unchanged unless it is the shorthand or
    ``ref`` is given; a ``ref`` with a source that is not git is an :class:`InstallError`."""
    source = shorthand(spec)
    if source is None and (spec.startswith("git+") or spec.endswith(".git")) and ref is not None:
        body, _, subdir = spec.removeprefix("git+").partition(SUBDIRECTORY)
        if GIT_SOURCE.match(body):
            raise InstallError(f"{redact_url(spec)}: names its commit already; --ref {ref} is one too many")
        source = GitSource(body, subdir)
    if source is None:
        if ref is not None:
            raise InstallError(f"--ref {ref}: {redact_url(spec)} is not a git source (git+URL, URL.git or owner/repo)")
        return spec
    if ref is None:
        raise InstallError(f"{redact_url(spec)} is {redact_url(source.url)}: give the branch, tag or commit to pin "
                           "with --ref REF (an installed plugin is pinned to one commit)")
    return source.at(resolve_ref(source.url, ref))


def resolve_ref(url: str, ref: str) -> str:
    """The commit ``ref`` (a branch, a tag — an annotated one peeled — or a full commit) names in
    ``url``'s repository."""
    if _COMMIT.match(ref):
        return ref
    if ref.startswith("-"):
        raise InstallError(f"--ref {ref!r}: a ref cannot start with '-'")
    clean, env, shown = git_access(url)  # a token reaches git as a header, never on its command line
    listed = _run_git(["ls-remote", "--", clean, ref, f"refs/tags/{ref}^{{}}"], env, shown)
    found = {name: commit for commit, _, name in (line.partition("\t") for line in listed.splitlines())}
    for name in (f"refs/tags/{ref}^{{}}", f"refs/heads/{ref}", f"refs/tags/{ref}", ref):
        if name in found:
            return found[name]
    raise InstallError(f"--ref {ref}: no branch or tag of that name in {redact_url(url)} (a commit must be given in "
                       "full, 40 hex digits)")


def _exists(spec: str) -> bool:
    try:
        return Path(spec).expanduser().exists()
    except (OSError, ValueError):
        return False
