"""Where each index setting comes from, by one rule: a setting is taken whole from the first place
that gives it, in this order:

    the flag > HERMES_PM_* > config.yaml pm.* > UV_* > PIP_* > uv.toml > pip.conf > the default

The settings are ``index_url``, ``extra_index_urls``, ``find_links``, ``no_index`` and
``offline``; each chosen value keeps its source (the flag, the variable, or the file and key), which
the receipt shows so a person can see why an index was used. What pm cannot honour (a keyring
provider for its own index client, an explicit uv index) is a warning naming the variable or key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm.base.watch import UNWATCHED, Watch
from pm.inputs.tool_files import Given, Layer, boolish, cert_warning, keyring_warning, pip_conf, uv_toml

if TYPE_CHECKING:
    from pm.inputs.settings import Flags

KEYS = ("index_url", "extra_index_urls", "find_links", "no_index", "offline")


@dataclass(frozen=True)
class Chosen:
    """The index settings as chosen: key -> :class:`Given` (absent keys were given nowhere), and
    the warnings about what was given but not honoured."""

    given: Mapping[str, Given]
    warnings: tuple[str, ...]

    def value(self, key: str, default: Any = None) -> Any:
        return self.given[key].value if key in self.given else default

    def sources(self) -> dict[str, str]:
        """key -> where it came from, for every setting given somewhere (receipt order)."""
        return {key: self.given[key].source for key in KEYS if key in self.given}


def choose(flags: Flags, pm: Mapping[str, Any], config_file: Path, env: Mapping[str, str], *, watch: Watch = UNWATCHED) -> Chosen:
    """The index settings of one operation (module docstring). Files are read only when a
    setting is still missing after the flags and variables: a home that says everything never
    depends on a broken pip.conf."""
    warnings: list[str] = []
    layers = [flag_layer(flags), hermes_layer(env), config_layer(pm, config_file),
              uv_layer(env, warnings), pip_layer(env, warnings)]
    given = _first(layers)
    if any(key not in given for key in KEYS):
        for read in (uv_toml, pip_conf):
            layer, said = read(env, watch=watch)
            warnings += said
            given = _first([given, layer])
    return Chosen(given, tuple(dict.fromkeys(warnings)))


def _first(layers: list[Layer]) -> Layer:
    chosen: Layer = {}
    for layer in layers:
        for key, given in layer.items():
            chosen.setdefault(key, given)
    return chosen


def flag_layer(flags: Flags) -> Layer:
    layer: Layer = {}
    if flags.index_url:
        layer["index_url"] = Given(flags.index_url, "--index-url")
    if flags.extra_index_urls:
        layer["extra_index_urls"] = Given(tuple(flags.extra_index_urls), "--extra-index-url")
    if flags.find_links:
        layer["find_links"] = Given(tuple(flags.find_links), "--find-links")
    if flags.no_index:
        layer["no_index"] = Given(True, "--no-index")
    if flags.offline:
        layer["offline"] = Given(True, "--offline")
    return layer


def hermes_layer(env: Mapping[str, str]) -> Layer:
    layer: Layer = {}
    _text(layer, "index_url", env, "HERMES_PM_INDEX_URL")
    _split(layer, "extra_index_urls", env, "HERMES_PM_EXTRA_INDEX_URL", None)
    if env.get("HERMES_PM_FIND_LINKS"):
        layer["find_links"] = Given(tuple(split_find_links(env["HERMES_PM_FIND_LINKS"])), "HERMES_PM_FIND_LINKS")
    _bool(layer, "no_index", env, "HERMES_PM_NO_INDEX")
    _bool(layer, "offline", env, "HERMES_PM_OFFLINE")
    return layer


def config_layer(pm: Mapping[str, Any], config_file: Path) -> Layer:
    layer: Layer = {}
    for key in ("index_url", "extra_index_urls", "find_links", "no_index"):
        value = pm.get(key)
        if value in (None, "", []):
            continue
        if key in ("extra_index_urls", "find_links"):
            value = (value,) if isinstance(value, str) else tuple(str(v) for v in value)
        layer[key] = Given(value, f"{config_file} pm.{key}", base=config_file.parent)
    return layer


def uv_layer(env: Mapping[str, str], warnings: list[str]) -> Layer:
    """``UV_DEFAULT_INDEX`` (else ``UV_INDEX_URL``), ``UV_INDEX`` then ``UV_EXTRA_INDEX_URL``
    (space-separated; ``name=url`` entries give their URL), ``UV_FIND_LINKS`` (comma-separated),
    ``UV_NO_INDEX``, ``UV_OFFLINE``."""
    layer: Layer = {}
    _text(layer, "index_url", env, "UV_DEFAULT_INDEX")
    _text(layer, "index_url", env, "UV_INDEX_URL")
    named = [_unnamed(entry) for entry in env.get("UV_INDEX", "").split()]
    plain = env.get("UV_EXTRA_INDEX_URL", "").split()
    if named or plain:
        source = " and ".join(v for v in ("UV_INDEX", "UV_EXTRA_INDEX_URL") if env.get(v, "").split())
        layer["extra_index_urls"] = Given((*named, *plain), source)
    _split(layer, "find_links", env, "UV_FIND_LINKS", ",")
    _bool(layer, "no_index", env, "UV_NO_INDEX")
    _bool(layer, "offline", env, "UV_OFFLINE")
    if env.get("UV_KEYRING_PROVIDER", "disabled").strip() not in ("", "disabled"):
        warnings.append(keyring_warning("UV_KEYRING_PROVIDER", env["UV_KEYRING_PROVIDER"].strip()))
    return layer


def pip_layer(env: Mapping[str, str], warnings: list[str]) -> Layer:
    """``PIP_INDEX_URL``, ``PIP_EXTRA_INDEX_URL`` and ``PIP_FIND_LINKS`` (whitespace-separated, as
    pip reads them), ``PIP_NO_INDEX``; ``PIP_CERT`` and a keyring provider are warnings."""
    layer: Layer = {}
    _text(layer, "index_url", env, "PIP_INDEX_URL")
    _split(layer, "extra_index_urls", env, "PIP_EXTRA_INDEX_URL", None)
    _split(layer, "find_links", env, "PIP_FIND_LINKS", None)
    _bool(layer, "no_index", env, "PIP_NO_INDEX")
    if env.get("PIP_CERT", "").strip():
        warnings += [w for w in [cert_warning(f"PIP_CERT = {env['PIP_CERT'].strip()}", env)] if w]
    if env.get("PIP_KEYRING_PROVIDER", "auto").strip() not in ("", "auto", "disabled"):
        warnings.append(keyring_warning("PIP_KEYRING_PROVIDER", env["PIP_KEYRING_PROVIDER"].strip()))
    return layer


def _text(layer: Layer, key: str, env: Mapping[str, str], variable: str) -> None:
    if key not in layer and env.get(variable, "").strip():
        layer[key] = Given(env[variable].strip(), variable)


def _split(layer: Layer, key: str, env: Mapping[str, str], variable: str, separator: str | None) -> None:
    entries = tuple(e.strip() for e in env.get(variable, "").split(separator) if e.strip())
    if entries:
        layer[key] = Given(entries, variable)


def _bool(layer: Layer, key: str, env: Mapping[str, str], variable: str) -> None:
    if env.get(variable, "").strip():
        layer[key] = Given(boolish(env[variable], variable), variable)


def _unnamed(entry: str) -> str:
    """``name=url`` (uv's named index) as its URL; a bare URL as is."""
    name, sep, url = entry.partition("=")
    return url if sep and name and not any(c in name for c in ":/") else entry


def split_find_links(text: str) -> list[str]:
    """``$HERMES_PM_FIND_LINKS`` as entries, separated by ``os.pathsep``, where a URL keeps its own
    colons (``http://user:pass@host:8080/links/``): while a URL has not reached its path, the next
    piece belongs to it, unless that piece is an absolute folder (starts with one ``/``)."""
    entries: list[str] = []
    for piece in text.split(os.pathsep):
        if entries and _url_unfinished(entries[-1]) and (not piece.startswith("/") or piece.startswith("//")):
            entries[-1] += os.pathsep + piece
        else:
            entries.append(piece)
    return [entry for entry in entries if entry]


def _url_unfinished(text: str) -> bool:
    """Whether ``text`` is a URL cut at a colon before its path: ``http``, ``http://host``."""
    if os.pathsep != ":":
        return False
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text.lower() in ("http", "https", "file")
    return scheme.isalpha() and "/" not in rest
