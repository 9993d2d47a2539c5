"""``hermes memory setup NAME``: prepare a provider, then ask for its settings and store them.

Order: :func:`prepare_provider` (pm's admission when the provider's requirements are not
installed; a refusal stops setup with the admission's next steps), then load a fresh
instance, read its ``get_config_schema()``, take values from ``--set key=value`` and, on a
terminal, from prompts (:func:`terminal_asker`), validate them all, and only then write:
fields with ``secret: true`` go to ``<home>/.env`` under their ``env_var``
(:func:`agent.secrets.write_secret`), every other field to the provider's ``save_config`` —
secrets never reach ``save_config`` and plain settings never reach ``.env``.
"""

from __future__ import annotations

import difflib
import getpass
import shlex
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.activation import activate, environment_home
from agent.config_schema import ConfigSchemaError, read_config_schema
from agent.context import use_home
from agent.discovery import ProviderInfo
from agent.gate import ProviderReadiness, ready
from agent.loader import load_memory_provider, resolve_provider
from agent.secrets import read_env, write_secret
from pm.env import generations
from pm.inputs.config import read_config
from pm.records.receipt import Receipt

__all__ = ["Preparation", "SetupError", "SetupResult", "collect_values", "parse_sets",
           "prepare_provider", "run_setup", "settings_schema", "terminal_asker"]

Field = dict[str, Any]
#: Asks for one field; returns the typed answer, or ``None`` to leave the field unset.
Asker = Callable[[Field], str | None]

_TRUE = ("1", "true", "yes", "on", "y")
_FALSE = ("0", "false", "no", "off", "n")


class SetupError(ValueError):
    """A value or a field that makes setup stop before anything is written (exit 2)."""


@dataclass(frozen=True)
class Preparation:
    """What :func:`prepare_provider` found: the provider, its readiness, whether ``home``'s
    config selects it, the next steps (``(command, why)``) when it is not ready, and the
    ``receipt`` of the admission or sync that prepared it (None when none ran)."""

    info: ProviderInfo
    readiness: ProviderReadiness
    selected: bool
    next_steps: tuple[tuple[str, str], ...] = ()
    receipt: Receipt | None = None  # of the admission or sync, when one ran

    @property
    def ready(self) -> bool:
        return self.readiness.ready


@dataclass(frozen=True)
class SetupResult:
    """What setup wrote: the ``settings`` keys given to ``save_config``, the ``secrets``
    (environment variable names) written to ``env_file``."""

    provider: str
    settings: tuple[str, ...]
    secrets: tuple[str, ...]
    env_file: Path

    def said(self, config: Path, previous: str | None) -> list[str]:
        """What setup tells a person when it is done (``previous``: the provider
        ``memory.provider`` named before, as :func:`pm.ops.admit.choose_memory_provider` returns it;
        ``config``: the config.yaml it is recorded in)."""
        lines = [f"memory provider {self.provider!r} set up"]
        if self.settings:
            lines.append(f"  settings saved: {', '.join(self.settings)}")
        if self.secrets:
            lines.append(f"  secrets written to {self.env_file}: {', '.join(self.secrets)}")
        if previous != self.provider:
            was = f" (was {previous!r})" if previous else ""
            lines.append(f"  memory.provider: {self.provider} recorded in {config}{was}")
        return lines


def prepare_provider(home: Path, name: str, *, say: Callable[[str], None] = print,
                     activate_here: bool = True, consent: Callable[[Any], bool] | None = None) -> Preparation:
    """Make ``name`` usable for ``home`` before its settings are asked for, through pm's admission.

    When pm's readiness says the provider's declared requirements are not installed: a provider
    the config does not select yet goes through admission (``hermes plugins enable``: resolve,
    refuse on conflict with nothing changed, else build, write config.yaml, select); a selected
    one gets a sync. Only then is the selected generation activated in this process. When
    admission refuses, the steps it printed are returned and nothing was written. Raises the
    loader's errors for unknown or unusable providers. ``activate_here=False``: the provider's code
    runs in another process (the dashboard's child), so this one activates nothing. ``consent``:
    the person's answer to the admission's cargo (the CLI's terminal question), None where no one
    can be asked (a script, the dashboard's request thread).
    """
    info = resolve_provider(home, name)
    assert info is not None  # a name was given
    config = read_config(home)
    selected = name in (config.memory_provider, *config.enabled) or info.key in config.enabled
    readiness = ready(info, home, _selected_generation(home))
    steps: list[tuple[str, str]] = []
    receipt = None
    if not readiness.ready and info.plugin is not None:
        receipt = _admit(home, info.key, selected, say, consent)
        if receipt.exit_code == 0:
            selected = True
        steps = [(s["command"], s["why"]) for s in receipt.next_steps]
        if receipt.exit_code != 0 and receipt.path is not None:
            steps.append((shlex.join(["cat", str(receipt.path)]), "the receipt of the refused preparation"))
        readiness = ready(info, home, _selected_generation(home))
    if readiness.ready and activate_here:
        activate(home)
    elif not steps:
        steps.append((readiness.command or "hermes pm sync", f"install the requirements {info.name!r} declares"))
    return Preparation(info, readiness, selected, tuple(steps), receipt)


def _selected_generation(home: Path) -> generations.Generation | None:
    """The generation selected for ``home``'s environment (the primary's, for a profile)."""
    return generations.selected(environment_home(home))


def _admit(home: Path, key: str, selected: bool, say: Callable[[str], None],
           consent: Callable[[Any], bool] | None) -> Receipt:
    """Admission for an unselected provider, a sync for a selected one: pm's operations, on the
    environment of ``home`` (a profile's is its primary's); returns the finished receipt."""
    from pm.inputs.settings import resolve_home
    from pm.ops import Notices
    from pm.ops.admit import enable
    from pm.ops.options import Options
    from pm.ops.sync import sync

    reporter = Notices(say)
    # next steps name this home unless it is the one a bare `hermes` command finds by itself
    options = Options(shown_home=None if Path(home).absolute() == resolve_home(None) else Path(home),
                      consent=consent)

    done = sync(home, options, reporter) if selected else enable(home, key, options, reporter)
    return done.receipt


def parse_sets(items: Sequence[str]) -> dict[str, str]:
    """``["key=value", ...]`` from ``--set`` into a dict (the last repeat wins)."""
    values: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SetupError(f"--set {item!r}: expected KEY=VALUE")
        values[key.strip()] = value
    return values


def _coerce(field: Field, raw: str) -> Any:
    key, kind = field["key"], field.get("type", "text")
    try:
        if kind == "integer":
            value: Any = int(raw)
        elif kind == "number":
            value = float(raw)
        elif kind == "boolean":
            if raw.strip().lower() not in (*_TRUE, *_FALSE):
                raise ValueError(raw)
            value = raw.strip().lower() in _TRUE
        else:
            value = raw
    except ValueError:
        raise SetupError(f"setting {key!r}: expected {kind}, got {raw!r}") from None
    choices = field.get("choices")
    if choices and value not in choices:
        raise SetupError(f"setting {key!r}: {raw!r} is not one of {list(choices)!r}")
    return value


def _check_schema(schema: list[Field], provider: str) -> dict[str, Field]:
    fields: dict[str, Field] = {}
    for field in schema:
        key = field.get("key") if isinstance(field, dict) else None
        if not isinstance(key, str) or not key:
            raise SetupError(
                f"{provider}: get_config_schema() has a field without a key: {field!r}")
        if field.get("secret") and not field.get("env_var"):
            raise SetupError(f"{provider}: secret setting {key!r} has no env_var to store it under")
        fields[key] = field
    return fields


def collect_values(schema: list[Field], presets: Mapping[str, str], ask: Asker | None,
                   provider: str, *, stored_secrets: Collection[str] = ()) -> dict[str, Any]:
    """Every field's value: from ``presets`` (``--set``), else ``ask`` (when given), else its
    default. Unknown preset keys and required fields left empty raise :class:`SetupError`
    naming them all at once; values are coerced to the field's ``type`` and checked against
    ``choices``. Secret fields without a value are left out: the secret already stored under its
    ``env_var`` (listed in ``stored_secrets``) is kept, and satisfies ``required``."""
    fields = _check_schema(schema, provider)
    problems = []
    for key in presets:
        if key not in fields:
            close = difflib.get_close_matches(key, list(fields), n=1)
            known = ", ".join(fields) or "none"
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {known})"
            problems.append(f"{provider} has no setting {key!r}{hint}")
    if problems:
        raise SetupError("; ".join(problems))
    values: dict[str, Any] = {}
    missing = []
    for key, field in fields.items():
        raw = presets.get(key)
        if raw is None and ask is not None:
            raw = ask(field)
        if raw is None or raw == "":
            if field.get("default") is not None and not field.get("secret"):
                values[key] = field["default"]
            elif field.get("required") and field.get("env_var") not in stored_secrets:
                missing.append(key)
            continue
        values[key] = _coerce(field, raw)
    if missing:
        raise SetupError(f"{provider}: required setting(s) without a value: {', '.join(missing)} "
                         "(give them with --set KEY=VALUE)")
    return values


def terminal_asker(stdin: Any = None, stderr: Any = None) -> Asker | None:
    """An asker that prompts on the terminal (``input()``; ``getpass`` for secrets), or
    ``None`` when stdin is not a TTY (then defaults and ``--set`` are all there is)."""
    stdin = stdin or sys.stdin
    if not stdin.isatty():
        return None

    def ask(field: Field) -> str | None:
        label = field.get("description") or field["key"]
        hints = []
        if field.get("choices"):
            hints.append("/".join(str(c) for c in field["choices"]))
        if field.get("default") is not None and not field.get("secret"):
            hints.append(f"default {field['default']}")
        if field.get("url"):
            hints.append(field["url"])
        prompt = f"{field['key']} — {label}" + (f" [{'; '.join(hints)}]" if hints else "") + ": "
        try:
            if field.get("secret"):
                return getpass.getpass(prompt, stream=stderr or sys.stderr)
            print(prompt, end="", file=stderr or sys.stderr, flush=True)
            return input()
        except EOFError:
            return None

    return ask


def _schema_of(info: ProviderInfo, provider: Any, home: Path) -> list[Field]:
    """``config_schema.py`` beside the provider's ``__init__.py`` when it ships one (read as data,
    :mod:`agent.config_schema`), else the provider's ``get_config_schema()``."""
    if info.config_schema_file is not None:
        try:
            return read_config_schema(info.config_schema_file)
        except ConfigSchemaError as exc:
            raise SetupError(str(exc)) from exc
    with use_home(home):
        return list(provider.get_config_schema())


def settings_schema(home: Path, name: str) -> list[Field]:
    """The fields of provider ``name``'s settings panel, as setup asks for them: its
    ``config_schema.py`` read as data when it ships one (nothing imported), else a freshly loaded
    provider's ``get_config_schema()`` (the loader refuses a provider that is not ready). Raises
    :class:`SetupError` for a schema setup could not use, and the loader's errors."""
    info = resolve_provider(home, name)
    assert info is not None  # a name was given
    if info.config_schema_file is not None:
        schema = _schema_of(info, None, home)
    else:
        loaded = load_memory_provider(home, name=name)
        assert loaded is not None
        schema = _schema_of(loaded.info, loaded.provider, home)
    _check_schema(schema, name)
    return schema


def _saved(provider: Any, home: Path) -> dict[str, Any]:
    """What the provider's ``load_config`` says it saved for ``home`` ({} when it has none, or it
    fails: setup then offers the schema's defaults, and can still repair a broken settings file)."""
    load = getattr(provider, "load_config", None)
    if load is None:
        return {}
    try:
        with use_home(home):
            found = load(str(home))
    except Exception:  # noqa: BLE001 - a provider's own read; setup goes on from the schema
        return {}
    return dict(found) if isinstance(found, Mapping) else {}


def with_saved(schema: list[Field], saved: Mapping[str, Any]) -> list[Field]:
    """``schema`` with each non-secret field's ``default`` replaced by its ``saved`` value, when
    that value still fits the field (its type and choices): re-running setup offers what was
    saved, and a person pressing Enter (or a script giving no ``--set``) keeps it."""
    kept = []
    for field in schema:
        key = field.get("key") if isinstance(field, dict) else None
        value = saved.get(key) if isinstance(key, str) else None
        if value is not None and not field.get("secret") and _fits(field, value):
            field = {**field, "default": value}
        kept.append(field)
    return kept


def _fits(field: Field, value: Any) -> bool:
    kind = field.get("type", "text")
    typed = {"integer": isinstance(value, int) and not isinstance(value, bool),
             "number": isinstance(value, (int, float)) and not isinstance(value, bool),
             "boolean": isinstance(value, bool)}.get(kind, isinstance(value, str))
    choices = field.get("choices")
    return typed and (not choices or value in choices)


def run_setup(home: Path, name: str, presets: Mapping[str, str], ask: Asker | None) -> SetupResult:
    """Load a fresh ``name`` (ready per :func:`prepare_provider`), collect and validate every
    value (the provider's saved settings are the defaults, :func:`with_saved`), then write
    secrets to ``<home>/.env`` and the rest through ``save_config``."""
    loaded = load_memory_provider(home, name=name)
    assert loaded is not None
    provider = loaded.provider
    schema = with_saved(_schema_of(loaded.info, provider, home), _saved(provider, home))
    env = read_env(home)
    stored = [str(f["env_var"]) for f in schema if f.get("secret") and f.get("env_var") in env]
    values = collect_values(schema, presets, ask, name, stored_secrets=stored)
    fields = {f["key"]: f for f in schema}
    secrets = {fields[k]["env_var"]: str(v) for k, v in values.items() if fields[k].get("secret")}
    settings = {k: v for k, v in values.items() if not fields[k].get("secret")}
    if settings:
        with use_home(home):
            try:
                provider.save_config(settings, str(home))
            except ValueError as exc:
                raise SetupError(str(exc)) from exc
    env_file = home / ".env"
    for env_var, value in secrets.items():
        env_file = write_secret(home, env_var, value)
    return SetupResult(name, tuple(settings), tuple(secrets), env_file)
