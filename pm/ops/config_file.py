"""A home's ``config.yaml`` written the one way: under the environment's home lock, through the
config editor (:mod:`pm.inputs.config_edit`, comments and key order kept), checked as pm reads a config
before it is written, atomically, and only if nobody changed the file since it was read.

Admission, ``hermes memory setup`` and the host's ``hermes_cli.config.save_config`` all write here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pm.base.errors import ConfigError, InputError, PmError
from pm.base.files import TextFile, read_text
from pm.base.lock import home_lock
from pm.base.store import Store
from pm.inputs.config import CONFIG_NAME, parse_config
from pm.inputs.settings import environment_home


class ConfigChanged(PmError):
    """``config.yaml`` changed on disk while pm was working; nothing was written."""

    kind = "config-changed"

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"{path} changed while pm was working; nothing was written, retry")


def config_bytes(home: Path) -> bytes:
    """The bytes of ``home``'s config.yaml (``b""`` when there is none), read as pm reads every
    config: a FIFO, a device or a looping symlink is a ConfigError, never a hang."""
    path = home / CONFIG_NAME
    if not path.exists() and not path.is_symlink():
        return b""
    try:
        return read_text(path, within=home).data
    except InputError as exc:
        raise ConfigError(list(exc.problems)) from None


def write_config(home: Path, before: bytes, text: str) -> None:
    """Write ``text`` as ``home``'s config.yaml, unless the file changed since ``before`` was read."""
    if config_bytes(home) != before:
        raise ConfigChanged(home / CONFIG_NAME)
    Store(home).write_bytes(home / CONFIG_NAME, text.encode())


def edit_config(home: Path, edit: Callable[[str], str]) -> bool:
    """Under the environment's home lock, apply ``edit`` to the text of ``home``'s config.yaml and
    write the result when it changed and is a valid config (:func:`pm.inputs.config.parse_config`: a
    :class:`~pm.base.errors.ConfigError` naming file and key otherwise, and nothing written). Returns
    whether it wrote."""
    env_home = environment_home(home)
    with home_lock(env_home, Store.for_home(env_home)):
        before = config_bytes(home)
        text = edit(before.decode())
        if text == before.decode():
            return False
        path = home / CONFIG_NAME
        parse_config(path, TextFile(path, text.encode(), text))
        write_config(home, before, text)
    return True
