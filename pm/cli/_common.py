"""What every pm command shares: its options on the command line, and the Options they become."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from pm.base.watch import UNWATCHED, Watch
from pm.inputs.settings import Flags, resolve_home
from pm.ops.options import Options
from pm.resolver.preferences import Upgrade


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", help="the HERMES_HOME to use (default: $HERMES_HOME or ~/.hermes)")
    parser.add_argument("--json", action="store_true", help="structured output on stdout")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress, only results and errors")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="say more (repeatable)")


def add_resolution_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("resolution options")
    group.add_argument("--python", help="target interpreter (default: the running one)")
    group.add_argument("--python-version", metavar="X.Y",
                       help="resolve for CPython X.Y (markers and wheel tags computed; resolve and export only)")
    group.add_argument("--platform", "--python-platform", dest="platform", metavar="PLATFORM",
                       help="resolve for another system, by uv's --python-platform names (linux, macos, windows, "
                            "x86_64-unknown-linux-gnu, aarch64-apple-darwin, ...; resolve and export only)")
    group.add_argument("--core", help="the host's pyproject.toml (default: the installed hermes-pm)")
    group.add_argument("--core-lock", help="core's lock: a pylock.toml or name==version lines")
    group.add_argument("--index-url", help="simple index URL (env HERMES_PM_INDEX_URL, config pm.index_url, then "
                       "UV_DEFAULT_INDEX, UV_INDEX_URL, PIP_INDEX_URL, uv.toml, pip.conf)")
    group.add_argument("--extra-index-url", action="append", default=[], metavar="URL",
                       help="another index, searched before --index-url; a project is taken from the first "
                            "index that has it (repeatable; env HERMES_PM_EXTRA_INDEX_URL, config pm.extra_index_urls, then "
                            "UV_INDEX, UV_EXTRA_INDEX_URL, PIP_EXTRA_INDEX_URL, uv.toml, pip.conf)")
    group.add_argument("--find-links", action="append", default=[], metavar="DIR|URL",
                       help="a folder of wheels, or the URL of a page linking to them "
                            "(repeatable; env HERMES_PM_FIND_LINKS, config pm.find_links, then UV_FIND_LINKS, "
                            "PIP_FIND_LINKS, uv.toml, pip.conf)")
    group.add_argument("--no-index", action="store_true",
                       help="use only find-links folders and pages (env HERMES_PM_NO_INDEX, config pm.no_index, "
                            "then UV_NO_INDEX, PIP_NO_INDEX, uv.toml, pip.conf)")
    group.add_argument("--offline", action="store_true",
                       help="never touch the network; use the cache only (env HERMES_PM_OFFLINE, UV_OFFLINE, uv.toml)")
    group.add_argument("--refresh", action="store_true",
                       help="ask the index for every page again, however fresh the cache says it is, and resolve anew")
    group.add_argument("--prereleases", choices=["allow", "pep440"], help="pre-release policy (config pm.prereleases)")
    group.add_argument("--exclude-newer", metavar="DATE", help="ignore files uploaded after DATE or 'N days' ago")
    group.add_argument("--allow-build", action="append", default=[], metavar="NAME",
                       help="allow building NAME from its sdist (config pm.allow_builds)")
    group.add_argument("--constraint", action="append", default=[], metavar="FILE",
                       help="constrain versions by the requirement lines of FILE; adds no package (repeatable; "
                            "env HERMES_PM_CONSTRAINTS, config pm.constraints)")
    group.add_argument("--override", action="append", default=[], metavar="FILE",
                       help="replace every requirement on a project by FILE's requirement lines on it, core's and "
                            "plugins' included; at your own risk (repeatable; env HERMES_PM_OVERRIDES, config "
                            "pm.overrides)")


def add_upgrade_options(parser: argparse.ArgumentParser) -> None:
    """``--upgrade`` and ``--upgrade-package NAME`` (uv's meaning) for the commands that resolve a
    home's selection: without them, the selected generation's pins are kept wherever the
    requirements allow."""
    group = parser.add_argument_group("upgrades")
    group.add_argument("--upgrade", "-U", action="store_true",
                       help="prefer no pin of the selected generation: take the newest versions the requirements allow")
    group.add_argument("--upgrade-package", "-P", action="append", default=[], metavar="NAME",
                       help="let NAME move to its newest allowed version; every other pin is kept where it can be "
                            "(repeatable)")


def upgrade_from(args: argparse.Namespace) -> Upgrade:
    """The upgrade the command line asks for; a usage error for a NAME that is no project name."""
    import re

    from pm.base.errors import UsageError

    names = list(getattr(args, "upgrade_package", None) or ())
    for name in names:
        if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", name):
            raise UsageError(f"--upgrade-package {name!r}: not a project name")
    return Upgrade.of(bool(getattr(args, "upgrade", False)), names)


def add_lock_option(parser: argparse.ArgumentParser) -> None:
    """``--lock-timeout`` for every command that changes a home."""
    from pm.base.lock import LOCK_TIMEOUT

    parser.add_argument("--lock-timeout", type=float, default=None, metavar="SECONDS",
                        help="give up waiting for another pm process after SECONDS "
                             f"(config pm.lock_timeout; default {LOCK_TIMEOUT:g})")


def add_skip_invalid(parser: argparse.ArgumentParser) -> None:
    """``--skip-invalid`` for every command that builds for the selection (pm.ops.invalid)."""
    parser.add_argument("--skip-invalid", action="store_true",
                        help="leave out an enabled plugin whose declaration cannot be read (a warning says so) "
                             "instead of failing; its packages leave the environment")


def add_yes(parser: argparse.ArgumentParser) -> None:
    """``--yes`` for every command that asks consent to its cargo (pm.ops.consent)."""
    parser.add_argument("-y", "--yes", action="store_true",
                        help="consent to what the change brings (new projects, moved pins, scan cautions) without "
                             "being asked; without a terminal it is needed (or pm.assume_yes: true)")


def ask_consent(cargo: object) -> bool:
    """The person's answer at a terminal to the cargo told just before (y/N; end of input: no)."""
    print("go ahead? [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        return input().strip().lower() in ("y", "yes")
    except EOFError:
        return False


def flags_from(args: argparse.Namespace) -> Flags:
    return Flags(
        home=args.home,
        python=getattr(args, "python", None),
        python_version=getattr(args, "python_version", None),
        platform=getattr(args, "platform", None),
        core=getattr(args, "core", None),
        core_lock=getattr(args, "core_lock", None),
        index_url=getattr(args, "index_url", None),
        extra_index_urls=tuple(getattr(args, "extra_index_url", None) or ()),
        find_links=tuple(getattr(args, "find_links", None) or ()),
        no_index=getattr(args, "no_index", False),
        offline=getattr(args, "offline", False),
        refresh=getattr(args, "refresh", False),
        prereleases=getattr(args, "prereleases", None),
        exclude_newer=getattr(args, "exclude_newer", None),
        allow_builds=tuple(getattr(args, "allow_build", None) or ()),
        constraints=tuple(getattr(args, "constraint", None) or ()),
        overrides=tuple(getattr(args, "override", None) or ()),
    )


def home_of(args: argparse.Namespace, *, creates: bool = False) -> Path:
    """The home to act on; it must exist, whether it comes from ``--home``, ``$HERMES_HOME`` or
    the default ``~/.hermes``: a typo never creates a new home. Only a command that makes a home
    (``creates``, e.g. ``plugins install``) may start from the default one when it is absent."""
    return existing_home(args.home, creates=creates)


def existing_home(flag: str | None, *, creates: bool = False, env: Mapping[str, str] | None = None) -> Path:
    """:func:`home_of` for a ``--home`` value: the home, or a :class:`UsageError` naming where the
    missing folder came from."""
    env = os.environ if env is None else env
    home = resolve_home(flag, env)
    if home.is_dir():
        return home
    from pm.base.errors import UsageError

    if flag:
        raise UsageError(f"--home {flag}: no such folder (a home holds config.yaml and plugins/)")
    if env.get("HERMES_HOME"):
        raise UsageError(f"HERMES_HOME={env['HERMES_HOME']}: no such folder (a home holds config.yaml and plugins/)")
    if creates:
        return home
    raise UsageError(f"{home}: no such folder; give --home DIR or set HERMES_HOME, or create it "
                     "(`hermes plugins install` does)")


def shown_home(args: argparse.Namespace) -> Path | None:
    """The --home to repeat in printed commands (None when the user did not give one)."""
    return home_of(args) if args.home else None


def options_from(args: argparse.Namespace, *, watch: Watch = UNWATCHED) -> Options:
    """The operation's Options from the parsed command line; what it reads noted in ``watch``."""
    return Options(flags=flags_from(args), lock_timeout=getattr(args, "lock_timeout", None),
                   shown_home=shown_home(args), watch=watch, skip_invalid=getattr(args, "skip_invalid", False),
                   upgrade=upgrade_from(args), yes=getattr(args, "yes", False), consent=consent_asker(args))


def consent_asker(args: argparse.Namespace) -> Callable[[object], bool] | None:
    """The terminal's question when a person can answer it (stdin a terminal, no ``--json``)."""
    return ask_consent if sys.stdin.isatty() and not getattr(args, "json", False) else None
