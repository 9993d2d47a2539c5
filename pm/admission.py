"""Admission: enabling a plugin is a transaction.

Under the home lock: read ``config.yaml`` (bytes), resolve the proposed selection, and on a
conflict refuse (exit 3) with nothing changed but a new receipt. On success build and verify the
generation, check that ``config.yaml`` still has the bytes read at the start, write it atomically
(comments and key order kept), and only then select the generation. pm never disables another
plugin to make room. ``disable`` always succeeds (a smaller union) and rebuilds.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import Any

from . import generations
from .build import build
from .config import CONFIG_NAME, read_config
from .config_edit import change_list
from .errors import EXIT_FAILURE, EXIT_OK, PmError
from .inputs import Inputs, gather
from .lock import LOCK_TIMEOUT, home_lock
from .receipt import Receipt
from .selection import candidate_home
from .settings import Flags
from .store import Store
from .uv import Uv


class ConfigChanged(PmError):
    pass


def _config_bytes(home: Path) -> bytes:
    try:
        return (home / CONFIG_NAME).read_bytes()
    except FileNotFoundError:
        return b""


def _write_config(home: Path, before: bytes, text: str) -> None:
    if _config_bytes(home) != before:
        raise ConfigChanged(f"{home / CONFIG_NAME} changed while pm was working; nothing was written, retry")
    Store(home).write_bytes(home / CONFIG_NAME, text.encode())


def enable(home: Path, name: str, flags: Flags, args: argparse.Namespace,
           say=print) -> tuple[int, Receipt]:  # type: ignore[no-untyped-def]
    """The admission transaction for ``name``; returns (exit code, finished receipt)."""
    from .cli._common import start_receipt
    from .cli.resolve import check_candidate, resolve_with_receipt

    store = Store.for_home(home)
    with home_lock(home, store, timeout=getattr(args, "lock_timeout", LOCK_TIMEOUT), notify=say):
        owner = candidate_home(home, name)  # a profile's own plugin is enabled in that profile
        before = _config_bytes(owner)
        already = gather(home, flags).find(name)
        inputs = gather(home, flags, candidate=name)
        receipt = start_receipt("admit", inputs, name)
        receipt.extra["config"] = str(owner / CONFIG_NAME)
        receipt.extra["config_sha256"] = hashlib.sha256(before).hexdigest()
        if already is not None and already.is_member:
            receipt.extra["message"] = f"plugin {name!r} is already enabled"
            receipt.finish("ok", EXIT_OK)
            return EXIT_OK, receipt
        try:
            check_candidate(inputs, name)
            found = inputs.find(name)
            assert found is not None
            if found.status not in JOINS:
                raise PmError(f"plugin {name!r} would not join the union: {found.status}: {found.reason}")
            new_text = _enabled_text(before.decode(), found.plugin.key, owner)
        except PmError as refusal:
            receipt.failure = {"kind": "refused", "message": str(refusal), "url": None}
            receipt.finish("refused", EXIT_FAILURE)
            return EXIT_FAILURE, receipt
        code, resolution = resolve_with_receipt(inputs, receipt, args, finish_ok=False)
        if resolution is None:
            return code, receipt
        try:
            generation = _generation_for(inputs, resolution, store, receipt, args)
            _write_config(owner, before, new_text)
            if generation is not None:
                generations.select(home, store, generation)
                receipt.generation = generation.to_receipt(selected=True, restart_required=True)
        except PmError as failure:
            receipt.failure = {"kind": type(failure).__name__, "message": str(failure), "url": None}
            receipt.finish("failed", EXIT_FAILURE)
            generations.remove_incomplete(home, store)
            return EXIT_FAILURE, receipt
        where = "" if owner == home else f" in profile {owner.name!r}"
        receipt.extra["message"] = f"plugin {name!r} enabled{where}"
        receipt.finish("ok", EXIT_OK)
        return EXIT_OK, receipt


#: Statuses with which an enabled plugin is part of the environment's selection.
JOINS = ("member", "sidecar-only", "external")


def _generation_for(inputs: Inputs, resolution: Any, store: Store, receipt: Receipt,
                    args: argparse.Namespace) -> generations.Generation | None:
    """None when the selected generation already fits; an intact one built for these inputs
    before (reused, no build); else a new build — by sync's rule, :func:`generations.reuse`."""
    from .cli._common import cache_dir
    from .cli.sync import progress_for

    generations.remove_incomplete(inputs.home, store)
    found = generations.reuse(inputs.home, inputs.fingerprint)
    if found.current:
        return None
    if found.damaged:
        receipt.warnings.append(found.damaged)
    return found.generation or build(inputs, resolution, Uv(cache_dir() / "uv"), store, progress_for(args))


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


def disable(home: Path, name: str, flags: Flags, args: argparse.Namespace,
            say=print) -> tuple[int, Receipt]:  # type: ignore[no-untyped-def]
    """Disable ``name`` (always allowed) in every home of the union that selects it, then rebuild.

    The union spans the home and its profiles, so a plugin that collides is taken out wherever it
    is selected: removed from ``plugins.enabled``, and listed in ``plugins.disabled`` where it is
    the memory provider.
    """
    from .cli._common import start_receipt
    from .cli.sync import sync

    store = Store.for_home(home)
    with home_lock(home, store, timeout=getattr(args, "lock_timeout", LOCK_TIMEOUT), notify=say):
        inputs = gather(home, flags)
        found = inputs.find(name)
        if found is None:
            from .cli.resolve import unknown_plugin

            raise PmError(unknown_plugin(inputs, name))
        names = {found.plugin.key, found.plugin.root.leaf, name}
        memory_homes = [h.home for h in inputs.selection.homes if h.config.memory_provider in names]
        edited = [str(h.home) for h in inputs.selection.homes if _disable_in(h.home, names)]
        inputs = gather(home, flags)
        receipt = start_receipt("disable", inputs, name)
        receipt.extra["disabled"] = found.plugin.key
        receipt.extra["configs_changed"] = edited
        for where in memory_homes:
            receipt.warnings.append(
                f"MEMORY PROVIDER {found.plugin.key!r} is memory.provider in {where / CONFIG_NAME}: the agent there "
                f"now runs WITHOUT its memory; set another memory.provider, or run `hermes plugins enable "
                f"{found.plugin.key}` to bring it back")
        code = sync(inputs, receipt, store, args)
    return code, receipt


def _disable_in(home: Path, names: set[str]) -> bool:
    before = _config_bytes(home)
    config = read_config(home)
    text = before.decode()
    for entry in config.enabled:
        if entry in names:
            text = change_list(text, "enabled", remove=entry)
    if config.memory_provider in names and not names & set(config.disabled):
        text = change_list(text, "disabled", add=config.memory_provider)
    if text == before.decode():
        return False
    _write_config(home, before, text)
    return True
