"""Builders for host-side tests: real installed distributions (with entry points), provider
packages that prove whether they were imported, and config edits.

Like :mod:`pm.testing`, everything here writes plain files exactly as an installer, a plugin
author or a user would; nothing replaces the host's own code.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import importlib.metadata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "plugins" / "memory"


def set_config(home: Path, **sections: Any) -> None:
    """Set top-level ``sections`` of ``home``'s config.yaml (each replaced whole), read and written
    the way pm and the host do: the bounded reader, the one editor, under the home lock."""
    from pm.inputs.config import config_mapping
    from pm.inputs.config_edit import set_mapping
    from pm.ops.config_file import edit_config

    edit_config(home, lambda text: set_mapping(text, {**config_mapping(home), **sections}))


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def install_dist(site: Path, name: str, version: str, files: Mapping[str, str], *,
                 entry_points: Mapping[str, str] | None = None, record: bool = True) -> Path:
    """Write an installed distribution into ``site`` the way an installer does: the package
    ``files`` plus ``<name>-<version>.dist-info`` (METADATA, ``entry_points.txt`` for the group
    ``hermes_agent.memory_providers``, RECORD). Returns the dist-info folder."""
    dist_info = site / f"{name}-{version}.dist-info"
    dist_info.mkdir(parents=True)
    written: dict[str, bytes] = {}
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text, encoding="utf-8")
        written[rel] = text.encode()
    meta = {"METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"}
    if entry_points:
        lines = ["[hermes_agent.memory_providers]"]
        lines += [f"{k} = {v}" for k, v in entry_points.items()]
        meta["entry_points.txt"] = "\n".join(lines) + "\n"
    for fname, text in meta.items():
        (dist_info / fname).write_text(text, encoding="utf-8")
        written[f"{dist_info.name}/{fname}"] = text.encode()
    if record:
        lines = [_record_line(p, d) for p, d in written.items()] + [f"{dist_info.name}/RECORD,,"]
        (dist_info / "RECORD").write_text("\n".join(lines) + "\n", encoding="utf-8")
    importlib.invalidate_caches()
    return dist_info


def spy_init(marker: Path, body: str = "") -> str:
    """An ``__init__.py`` that writes ``marker`` when (and only when) it is executed."""
    return (f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n{body}")


PROVIDER_CLASS = '''
from agent.memory_provider import MemoryProvider


class Provider(MemoryProvider):
    def __init__(self, name):
        self._name = name
    @property
    def name(self):
        return self._name
    def is_available(self):
        return True
    def initialize(self, session_id, **kwargs):
        self.home = kwargs["hermes_home"]
    def get_tool_schemas(self):
        return []
    def handle_tool_call(self, name, args, **kwargs):
        return "{}"
    def get_config_schema(self):
        return []
    def save_config(self, values, hermes_home):
        pass
'''


def provider_init(name: str, marker: Path | None = None, extra: str = "") -> str:
    """An ``__init__.py`` of a working provider called ``name`` (``register`` hands out a fresh
    instance); writes ``marker`` when imported, if given."""
    head = spy_init(marker) if marker else ""
    return (f"{head}{PROVIDER_CLASS}\n\ndef register(ctx):\n"
            f"    ctx.register_memory_provider(Provider({name!r}))\n{extra}")


def wheel_from_installed(name: str, dest: Path) -> Path:
    """A real wheel of the distribution ``name`` installed in this interpreter, rebuilt from its
    installed files and RECORD (bytecode and installer-only files left out), into ``dest``."""
    import zipfile

    from packaging.utils import canonicalize_name

    dist = importlib.metadata.distribution(name)
    escaped = canonicalize_name(dist.metadata["Name"]).replace("-", "_")
    info = f"{escaped}-{dist.version}.dist-info"
    skip = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
    entries: dict[str, bytes] = {}
    wheel_tags: list[str] = []
    for file in dist.files or ():
        posix = file.as_posix()
        installer_only = file.name in skip and ".dist-info/" in posix
        if posix.startswith("..") or posix.endswith(".pyc") or installer_only:
            continue
        data = Path(str(dist.locate_file(file))).read_bytes()
        arcname = f"{info}/{file.name}" if ".dist-info/" in posix else posix
        entries[arcname] = data
        if file.name == "WHEEL" and ".dist-info/" in posix:
            wheel_tags = [line.split(":", 1)[1].strip() for line in data.decode().splitlines()
                          if line.startswith("Tag:")]
    record = [_record_line(path, data) for path, data in entries.items()] + [f"{info}/RECORD,,"]
    entries[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    dest.mkdir(parents=True, exist_ok=True)
    tag = wheel_tags[0] if wheel_tags else "py3-none-any"
    path = dest / f"{escaped}-{dist.version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for arcname, data in entries.items():
            archive.writestr(arcname, data)
    return path
