"""A discovered plugin root after its files were read: manifest, declaration, problems, precedence."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pm.base.errors import InputError
from pm.base.watch import UNWATCHED, Watch
from pm.inputs.declaration import Declaration, read_declaration
from pm.inputs.discover import PluginRoot
from pm.inputs.manifest import Manifest, read_manifest


@dataclass(frozen=True)
class Plugin:
    """One plugin root with what its files say. ``problems`` non-empty means invalid."""

    root: PluginRoot
    manifest: Manifest | None
    declaration: Declaration | None
    problems: tuple[str, ...] = ()
    shadowed_by: Path | None = None
    registers_memory_provider: bool = False  # its top-level code text mentions the provider API


    @property
    def key(self) -> str:
        return self.root.key

    @property
    def is_memory(self) -> bool:
        """Memory providers: the bundled ones; user/project ones of category memory or of a
        memory kind (:data:`MEMORY_KINDS`: ``memory``, and ``exclusive``, the kind the real host's
        manifests give single-select providers chosen by ``memory.provider``); and,
        as the plugin guide lays them out (its ``plugin.yaml`` has no ``kind``), a root without a
        ``kind`` whose top-level Python files mention ``register_memory_provider`` or
        ``MemoryProvider`` (read as text by :func:`inspect`, never imported)."""
        kind = self.manifest.kind if self.manifest is not None else None
        return (
            self.root.source == "bundled"
            or self.root.category == "memory"
            or kind in MEMORY_KINDS
            or (kind is None and self.registers_memory_provider)
        )

    @property
    def provider_name(self) -> str:
        """The name ``memory.provider`` and collisions use: the folder's leaf name."""
        return self.root.leaf

    @property
    def warnings(self) -> tuple[str, ...]:
        found: tuple[str, ...] = ()
        if self.manifest is not None:
            found += self.manifest.warnings
        if self.declaration is not None:
            found += self.declaration.warnings
        return found


#: Manifest kinds that make a plugin root a memory provider: ``memory``, and ``exclusive`` (the
#: real host's kind for a provider selected through ``memory.provider``, one at a time).
MEMORY_KINDS = frozenset({"memory", "exclusive"})
#: Text that marks a memory provider's code (the guide's ``register(ctx)`` and base class).
_PROVIDER_MARKS = (b"register_memory_provider", b"MemoryProvider")
_SCAN_LIMIT = 1 << 20  # bytes read per file: a provider's registration is near the top


def _registers_memory_provider(root: Path, *, watch: Watch = UNWATCHED) -> bool:
    """Whether a top-level ``*.py`` of ``root`` (``__init__.py`` first) mentions the memory
    provider API. Reads text only; never follows a file out of the root."""
    watch.folder(root)
    try:
        files = sorted(root.glob("*.py"), key=lambda p: (p.name != "__init__.py", p.name))
    except OSError:
        return False
    for path in files:
        if path.is_symlink() or not path.is_file():
            continue
        try:
            with path.open("rb") as handle:
                text = handle.read(_SCAN_LIMIT)
        except OSError:
            watch.file(path)
            continue
        watch.file(path, text)
        if any(mark in text for mark in _PROVIDER_MARKS):
            return True
    return False


def inspect(root: PluginRoot, *, watch: Watch = UNWATCHED) -> Plugin:
    """Read a root's manifest and declaration; a bad file makes the plugin invalid, never raises."""
    if root.escapes:
        return Plugin(root, None, None, (f"{root.path}: is a symlink that escapes {root.plugins_dir}; refused",))
    try:
        manifest = read_manifest(root.path, watch=watch)
    except InputError as exc:
        return Plugin(root, None, None, tuple(str(p) for p in exc.problems))
    provider = root.source != "bundled" and manifest.kind is None and _registers_memory_provider(root.path, watch=watch)
    try:
        declaration = read_declaration(root.path, manifest, watch=watch)
    except InputError as exc:
        return Plugin(root, manifest, None, tuple(str(p) for p in exc.problems), registers_memory_provider=provider)
    return Plugin(root, manifest, declaration, registers_memory_provider=provider)


def apply_precedence(plugins: list[Plugin]) -> list[Plugin]:
    """Mark roots that lose a name collision as shadowed (reported, never dropped).

    Memory providers: the earlier source wins (bundled > user > project), compared by provider
    name. Other plugins: the later source wins (project > user > bundled), compared by key, so a
    user can override a bundled general plugin but never silently replace a memory provider.
    """
    winners: dict[tuple[bool, str], Plugin] = {}
    for plugin in plugins:
        slot = (plugin.is_memory, plugin.provider_name if plugin.is_memory else plugin.key)
        current = winners.get(slot)
        if current is None or (not plugin.is_memory):
            winners[slot] = plugin
    result = []
    for plugin in plugins:
        slot = (plugin.is_memory, plugin.provider_name if plugin.is_memory else plugin.key)
        winner = winners[slot]
        result.append(plugin if winner is plugin else replace(plugin, shadowed_by=winner.root.path))
    return result
