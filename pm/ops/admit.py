"""Admission: enabling a plugin is a transaction; disabling is its always-allowed reverse.

Under the home lock: read the owner's ``config.yaml`` (bytes), resolve the proposed selection, and
on a conflict refuse (exit 3) with nothing changed but a new receipt. On success obtain the
generation (sync's rule, :func:`pm.ops.sync.obtain`), check that ``config.yaml`` still has the
bytes read at the start, write it atomically (comments, key order and line endings kept), and only
then select the generation. pm never disables another plugin to make room. ``disable`` takes a
plugin out wherever the environment's union selects it, then syncs.

The owner of the edit is the home the plugin belongs to (:func:`pm.inputs.selection.candidate_home`), or
the profile the caller named: the environment (generations, lock, receipts) is always the primary's.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from pm.base.errors import EXIT_OK
from pm.base.files import TextFile
from pm.inputs.collect import Inputs
from pm.inputs.config import CONFIG_NAME, parse_config, read_config
from pm.inputs.config_edit import change_list, set_value
from pm.inputs.selection import candidate_home
from pm.inputs.settings import environment_home
from pm.ops.config_file import config_bytes, edit_config, write_config
from pm.ops.consent import cargo_of, consent_to, pins_before
from pm.ops.invalid import refuse_invalid
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.resolve import check_candidate, resolve_in, unknown_plugin
from pm.ops.sync import obtain, select_generation, sync_in
from pm.ops.transaction import Result, Transaction, transaction


def enable(home: Path, name: str, options: Options | None = None, reporter: Reporter = SILENT) -> Result:
    """The admission transaction for ``name`` (module docstring)."""
    txn = transaction(home, "admit", lambda txn: _admit(txn, _owner(home, txn.home, name), name), options,
                      reporter, candidate=name, command="plugins-enable", gather_inputs=False)
    return Result(txn.receipt, txn.inputs)


def _owner(asked: Path, env_home: Path, name: str) -> Path:
    """Whose config.yaml to edit: the profile the caller named, else where the plugin lives."""
    asked = Path(asked).expanduser().absolute()
    return asked if asked != env_home and environment_home(asked) == env_home else candidate_home(env_home, name)


def _admit(txn: Transaction, owner: Path, name: str) -> None:
    before = config_bytes(owner)
    already = txn.gather().find(name)
    inputs = txn.gather(name, owner=owner)
    txn.draft.record(config=str(owner / CONFIG_NAME))
    txn.draft.record(config_sha256=hashlib.sha256(before).hexdigest())
    if already is not None and already.is_member:
        txn.finish("ok", EXIT_OK, f"plugin {name!r} is already enabled")
        return
    check_candidate(inputs, name)
    found = inputs.find(name)
    assert found is not None
    if not found.status.joins:
        from pm.ops.failures import NotAdmissible

        raise NotAdmissible(name, found.status, found.reason)
    refuse_invalid(txn, inputs)  # another enabled plugin that cannot be read would leave the environment
    new_text = _enabled_text(before.decode(), found.plugin.key, owner)
    inputs = _as_written(inputs, owner, new_text)
    resolution = resolve_in(txn, name)
    if resolution is None:
        return
    consent_to(txn, cargo_of(pins_before(txn), resolution), f"enabling plugin {name!r}", ("plugins", "enable", name))
    obtained = obtain(txn, inputs, lambda: resolution)
    if obtained is None:
        return
    write_config(owner, before, new_text)
    where = "" if owner == txn.home else f" in profile {owner.name!r}"
    select_generation(txn, obtained, f"plugin {name!r} enabled{where}")


def _as_written(inputs: Inputs, owner: Path, text: str) -> Inputs:
    """``inputs`` with the owner's config as admission will write it (``text``): the selection a new
    generation records (:mod:`pm.inputs.recorded`) is the file's, not the proposal's."""
    path = owner / CONFIG_NAME
    config = parse_config(path, TextFile(path, text.encode(), text))
    homes = tuple(replace(h, config=config) if h.home == owner else h for h in inputs.selection.homes)
    return replace(inputs, selection=replace(inputs.selection, homes=homes))


def _enabled_text(text: str, key: str, owner: Path) -> str:
    config = read_config(owner)
    leaf = key.rsplit("/", 1)[-1]
    if key in config.disabled:
        text = change_list(text, "disabled", remove=key)
    if leaf in config.disabled:
        text = change_list(text, "disabled", remove=leaf)
    if key not in config.enabled and leaf not in config.enabled:
        text = change_list(text, "enabled", add=key)
    return text


def disable(home: Path, name: str, options: Options | None = None, reporter: Reporter = SILENT) -> Result:
    """Disable ``name`` (always allowed) in every home of the union that selects it, then sync.

    The union spans the home and its profiles, so a plugin that collides is taken out wherever it
    is selected: removed from ``plugins.enabled``, and listed in ``plugins.disabled`` where it is
    the memory provider.
    """
    txn = transaction(home, "disable", lambda txn: _disable(txn, name), options, reporter, candidate=name,
                      command="plugins-disable", gather_inputs=False)
    return Result(txn.receipt, txn.inputs)


def _disable(txn: Transaction, name: str) -> None:
    inputs = txn.gather()
    found = inputs.find(name)
    if found is None:
        raise unknown_plugin(inputs, name)
    names = {found.plugin.key, found.plugin.root.leaf, name}
    refuse_invalid(txn, inputs, spared=names)  # before config.yaml is edited: the rebuild would drop another
    memory_homes = [h.home for h in inputs.selection.homes if h.config.memory_provider in names]
    edited = [str(h.home) for h in inputs.selection.homes if _disable_in(h.home, names)]
    txn.gather()
    draft = txn.draft
    draft.record(disabled=found.plugin.key)
    draft.record(configs_changed=edited)
    for where in memory_homes:
        draft.warnings.append(
            f"MEMORY PROVIDER {found.plugin.key!r} is memory.provider in {where / CONFIG_NAME}: the agent there "
            f"now runs WITHOUT its memory; set another memory.provider, or run `hermes plugins enable "
            f"{found.plugin.key}` to bring it back")
    sync_in(txn)


def _disable_in(home: Path, names: set[str]) -> bool:
    before = config_bytes(home)
    config = read_config(home)
    text = before.decode()
    for entry in config.enabled:
        if entry in names:
            text = change_list(text, "enabled", remove=entry)
    if config.memory_provider in names and not names & set(config.disabled):
        text = change_list(text, "disabled", add=config.memory_provider)
    if text == before.decode():
        return False
    write_config(home, before, text)
    return True


def choose_memory_provider(home: Path, name: str) -> str | None:
    """Record ``memory.provider: name`` in ``home``'s config.yaml through the config editor, under
    the environment's home lock (comments and the other lines kept); returns the provider it
    named before (None when unset), or ``name`` itself when nothing changed."""
    previous: list[str | None] = []

    def edit(text: str) -> str:
        previous.append(read_config(home).memory_provider)
        return set_value(text, "memory", "provider", name)

    edit_config(home, edit)
    return previous[0]
