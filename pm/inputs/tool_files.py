"""The index settings written in the files uv and pip users already have: ``uv.toml`` and
``pip.conf``, found where uv and pip look for them, read within bounds, each value kept with the
file and key it came from.

What is read (everything else in those files is uv's or pip's own business):

- ``pip.conf``: ``index-url``, ``extra-index-url``, ``find-links`` (whitespace-separated),
  ``no-index`` in ``[global]``, overridden by ``[install]``. Files, later ones winning as in pip:
  ``$XDG_CONFIG_DIRS/pip/pip.conf`` (``/etc/xdg``), ``/etc/pip.conf``, ``~/.pip/pip.conf``,
  ``$XDG_CONFIG_HOME/pip/pip.conf`` (``~/.config``), ``$VIRTUAL_ENV/pip.conf``, then
  ``$PIP_CONFIG_FILE``; ``PIP_CONFIG_FILE=/dev/null`` reads none (pip's own switch).
- ``uv.toml`` (top level, not ``[pip]``): ``index-url``, ``extra-index-url``, ``find-links``
  (relative to the file's folder), ``no-index``, ``offline``, and ``[[index]]`` (the one with
  ``default = true`` is the index URL, the others extra indexes searched before
  ``extra-index-url``'s). ``$UV_CONFIG_FILE`` alone when set, else ``$XDG_CONFIG_HOME/uv/uv.toml``
  (``~/.config``) over ``$XDG_CONFIG_DIRS/uv/uv.toml`` and ``/etc/uv/uv.toml``; ``UV_NO_CONFIG``
  reads none.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm.base.errors import InputError, UsageError, quote
from pm.base.files import read_text
from pm.base.tomlfile import load as load_toml
from pm.base.watch import UNWATCHED, Watch

if TYPE_CHECKING:
    import configparser  # (loaded where a pip config file is read: most machines have none)

#: A uv.toml or pip.conf larger than this is refused: both hold a handful of settings.
MAX_TOOL_CONFIG_BYTES = 256 * 1024

_TRUE = ("1", "true", "yes", "on", "y", "t")
_FALSE = ("0", "false", "no", "off", "n", "f")


@dataclass(frozen=True)
class Given:
    """One setting as a place outside pm gives it: ``value`` (a string, a tuple of strings or a
    bool), ``source`` (the variable, or the file and key, named for receipts and messages) and
    ``base`` (the folder a relative find-links entry is relative to; None: the working folder)."""

    value: str | tuple[str, ...] | bool
    source: str
    base: Path | None = None


#: One place's settings (key -> what it gives), and the warnings about what it gives that pm cannot honour.
Layer = dict[str, Given]


def boolish(text: str, where: str) -> bool:
    """A boolean as uv and pip spell it (1/0, true/false, yes/no, on/off); else a usage error
    naming ``where``."""
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise UsageError(f"{where}: {quote(text)} is not a boolean (use 1/0, true/false, yes/no or on/off)")


def _config_home(env: Mapping[str, str]) -> Path:
    return Path(env.get("XDG_CONFIG_HOME") or Path(env.get("HOME") or Path.home()) / ".config")


def _config_dirs(env: Mapping[str, str]) -> list[Path]:
    return [Path(d) for d in (env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep) if d]


def pip_conf_files(env: Mapping[str, str]) -> list[Path]:
    """The pip.conf files pip reads, lowest priority first (module docstring)."""
    chosen = env.get("PIP_CONFIG_FILE")
    if chosen == os.devnull:
        return []
    home = Path(env.get("HOME") or Path.home())
    files = [*(d / "pip" / "pip.conf" for d in reversed(_config_dirs(env))), Path("/etc/pip.conf"),
             home / ".pip" / "pip.conf", _config_home(env) / "pip" / "pip.conf"]
    if env.get("VIRTUAL_ENV"):
        files.append(Path(env["VIRTUAL_ENV"]) / "pip.conf")
    if chosen:
        files.append(Path(chosen).expanduser())
    return files


def uv_toml_files(env: Mapping[str, str]) -> list[Path]:
    """The uv.toml files uv reads, lowest priority first (module docstring)."""
    if env.get("UV_NO_CONFIG", "").strip() and boolish(env["UV_NO_CONFIG"], "UV_NO_CONFIG"):
        return []
    if env.get("UV_CONFIG_FILE"):
        return [Path(env["UV_CONFIG_FILE"]).expanduser()]
    system = [*(d / "uv" / "uv.toml" for d in _config_dirs(env)), Path("/etc/uv/uv.toml")]
    return [*reversed(system), _config_home(env) / "uv" / "uv.toml"]


def _read(path: Path, required: bool, *, watch: Watch = UNWATCHED) -> str | None:
    if not required and not os.path.lexists(path):
        watch.file(path)  # missing: noted, so that creating it is a change
        return None
    return read_text(path, limit=MAX_TOOL_CONFIG_BYTES, watch=watch).text


def pip_conf(env: Mapping[str, str], *, watch: Watch = UNWATCHED) -> tuple[Layer, list[str]]:
    """What the pip.conf files give (later files and ``[install]`` winning), and warnings."""
    layer: Layer = {}
    warnings: list[str] = []
    chosen = env.get("PIP_CONFIG_FILE")
    required = Path(chosen).expanduser() if chosen else None
    for path in pip_conf_files(env):
        text = _read(path, required=path == required, watch=watch)
        if text is not None:
            for section in ("global", "install"):
                _pip_section(path, _pip_parse(path, text), section, layer, warnings)
    if "cert" in layer:
        warnings += [w for w in [cert_warning(layer.pop("cert").source, env)] if w]
    return layer, warnings


def _pip_parse(path: Path, text: str) -> configparser.ConfigParser:
    import configparser

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, source=str(path))
    except configparser.Error as exc:
        raise InputError.one(path, None, f"is not a valid pip config file: {exc.message}") from None
    return parser


def _pip_section(path: Path, parser: configparser.ConfigParser, section: str, layer: Layer,
                 warnings: list[str]) -> None:
    if not parser.has_section(section):
        return
    for raw, text in parser.items(section):
        key = raw.replace("_", "-")
        where = f"{path} [{section}] {raw}"
        if key == "index-url" and text.strip():
            layer["index_url"] = Given(text.strip(), where)
        elif key in ("extra-index-url", "find-links") and text.split():
            layer[key.replace("-", "_") + ("s" if key == "extra-index-url" else "")] = Given(tuple(text.split()), where)
        elif key == "no-index" and text.strip():
            layer["no_index"] = Given(_file_bool(path, f"[{section}] {raw}", text), where)
        elif key == "cert" and text.strip():
            layer["cert"] = Given(text.strip(), f"{where} = {text.strip()}")  # only for cert_warning
        elif key == "keyring-provider" and text.strip() not in ("", "disabled", "auto"):
            warnings.append(keyring_warning(where, text.strip()))


def _file_bool(path: Path, key: str, text: str) -> bool:
    try:
        return boolish(text, key)
    except UsageError:
        raise InputError.one(path, key, f"{quote(text)} is not a boolean (use true/false, yes/no, on/off or 1/0)") from None


def keyring_warning(where: str, value: str) -> str:
    """The one sentence for a keyring provider pm does not use."""
    return (f"{where} = {value}: pm does not ask keyring for index credentials (nor does the uv it runs for "
            "builds); give them in the index URL, ~/.netrc or $NETRC")


def cert_warning(given: str, env: Mapping[str, str]) -> str | None:
    """The one sentence for pip's ``cert`` (``given``: ``PIP_CERT = /x.pem`` or ``<file> [global]
    cert = /x.pem``), which pm does not read; None when that bundle is what pm trusts anyway
    (``SSL_CERT_FILE``, or OpenSSL's default file)."""
    import ssl

    bundle = given.rpartition(" = ")[2]
    trusted = (env.get("SSL_CERT_FILE"), ssl.get_default_verify_paths().openssl_cafile)
    if os.path.realpath(bundle) in {os.path.realpath(t) for t in trusted if t}:
        return None
    return (f"{given}: pm's HTTPS client does not read pip's cert setting; it trusts SSL_CERT_FILE and "
            f"SSL_CERT_DIR, else the system's CAs (SSL_CERT_FILE={bundle} trusts this bundle)")


def uv_toml(env: Mapping[str, str], *, watch: Watch = UNWATCHED) -> tuple[Layer, list[str]]:
    """What the uv.toml files give (the user's over the system's), and warnings."""
    layer: Layer = {}
    warnings: list[str] = []
    required = bool(env.get("UV_CONFIG_FILE"))
    for path in uv_toml_files(env):
        text = _read(path, required=required, watch=watch)
        if text is not None:
            layer.update(_uv_document(path, _toml(path, text), warnings))
    return layer, warnings


def _toml(path: Path, text: str) -> dict[str, Any]:
    return load_toml(path, text)


def _uv_document(path: Path, data: dict[str, Any], warnings: list[str]) -> Layer:
    layer: Layer = {}
    if "index-url" in data:
        layer["index_url"] = Given(_typed(path, "index-url", data["index-url"], str), f"{path} index-url")
    extra = [*_uv_indexes(path, data.get("index", []), layer, warnings)]
    if "extra-index-url" in data:
        extra += _strings(path, "extra-index-url", data["extra-index-url"])
    if extra:
        keys = " and ".join(k for k in ("[[index]]", "extra-index-url") if k.strip("[]") in data)
        layer["extra_index_urls"] = Given(tuple(extra), f"{path} {keys}")
    if "find-links" in data:
        layer["find_links"] = Given(tuple(_strings(path, "find-links", data["find-links"])), f"{path} find-links",
                                    base=path.parent)
    for key in ("no-index", "offline"):
        if key in data:
            layer[key.replace("-", "_")] = Given(_typed(path, key, data[key], bool), f"{path} {key}")
    if data.get("keyring-provider") not in (None, "disabled"):
        warnings.append(keyring_warning(f"{path} keyring-provider", str(data["keyring-provider"])))
    return layer


def _uv_indexes(path: Path, indexes: Any, layer: Layer, warnings: list[str]) -> list[str]:
    """The extra index URLs of ``[[index]]`` in order; the default one goes into ``layer``."""
    extra: list[str] = []
    for number, entry in enumerate(_typed(path, "index", indexes, list), start=1):
        entry = _typed(path, f"index[{number}]", entry, dict)
        url = _typed(path, f"index[{number}].url", entry.get("url"), str)
        where = f"{path} [[index]] {entry.get('name') or number}"
        if entry.get("default") is True:
            layer["index_url"] = Given(url, f"{where} (default = true)")
        elif entry.get("explicit") is True:
            warnings.append(f"{where}: an explicit index serves only packages pinned to it in tool.uv.sources; "
                            "pm has no such pins and does not search it")
        else:
            extra.append(url)
    return extra


def _typed(path: Path, key: str, value: Any, kind: type) -> Any:
    if not isinstance(value, kind):
        raise InputError.one(path, key, f"must be a {kind.__name__}, got {quote(value)}")
    return value


def _strings(path: Path, key: str, value: Any) -> list[str]:
    items = _typed(path, key, value, list)
    for number, item in enumerate(items):
        _typed(path, f"{key}[{number}]", item, str)
    return list(items)
