"""The host is provided, not installed: every requirement on the host's own distribution
(:data:`~pm.inputs.declaration.HOST_DISTRIBUTIONS`: ``hermes-pm``, and ``hermes-agent``, the name
the real host publishes), declared or stated by a package, meets the running host.

A plugin's declared requirement on the host is kept out of the union (:mod:`pm.inputs.declaration`)
and judged by the selection against the host's version. A *transitive* one (a plugin's package
that ``Requires-Dist: hermes-agent>=0.19``) reaches the resolver; :class:`HostSource` stands in front
of the real sources and answers for the host's names itself, as the ``<python>`` pseudo-package
answers for the interpreter: one version (the running host's), one file that is never fetched,
metadata with no requirements. So such a requirement is met by the running host, or refused with
the resolver's proof naming the host's version, and the index is never asked for the host: a
plugin never gets a second copy of it. The resolution leaves the host's candidate out of its pins
(:func:`is_host_link`), so nothing installs it, and the build's ``uv pip check`` accepts a
complaint about it (:mod:`pm.env.uv_check`): the host is on the path of every process that
activates a generation, not inside the generation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from pm import __version__
from pm.index.base import FileLink, Metadata, Source
from pm.index.multi import project_of
from pm.index.project import Project
from pm.inputs.declaration import HOST_DISTRIBUTIONS

#: The URL scheme of the host's stand-in file: nothing fetches or installs it.
_SCHEME = "hermes-host:"
#: The running host's version (what ``requires_hermes`` and declared host requirements meet too).
HOST_VERSION = Version(__version__)


def is_host(name: str) -> bool:
    """Whether ``name`` is the host's own distribution."""
    return canonicalize_name(name) in HOST_DISTRIBUTIONS


def is_host_link(link: FileLink | None) -> bool:
    """Whether ``link`` is the stand-in file of the running host (never a pin)."""
    return link is not None and link.url.startswith(_SCHEME)


def host_link(name: NormalizedName) -> FileLink:
    """The stand-in file of the running host under ``name``: a wheel for every target."""
    filename = f"{name.replace('-', '_')}-{HOST_VERSION}-py3-none-any.whl"
    return FileLink(filename, f"{_SCHEME}{name}=={HOST_VERSION}", source="the running host")


class HostSource:
    """A :class:`~pm.index.base.Source` that answers for the host's names itself (see the module
    docstring) and passes every other question to ``source``, whose other capabilities it keeps."""

    def __init__(self, source: Source) -> None:
        self.source = source

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)

    def project(self, name: NormalizedName) -> Project:
        if is_host(name):
            link = host_link(canonicalize_name(name))
            return Project(link.name, (HOST_VERSION,), lambda v: (link,) if v == HOST_VERSION else ())
        return project_of(self.source, name)

    def links(self, name: NormalizedName) -> Sequence[FileLink]:
        return (host_link(canonicalize_name(name)),) if is_host(name) else self.source.links(name)

    def metadata(self, link: FileLink) -> Metadata:
        return Metadata(link.name, link.version) if is_host_link(link) else self.source.metadata(link)

    def prefetch(self, names: Iterable[NormalizedName]) -> None:
        self.source.prefetch([n for n in names if not is_host(n)])

    def prefetch_metadata(self, links: Iterable[FileLink]) -> None:
        self.source.prefetch_metadata([link for link in links if not is_host_link(link)])
