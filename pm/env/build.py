"""Build one generation from a resolution with uv: venv (started before the resolution, by
:mod:`pm.env.started`), install exactly the pins, verify, move the venv into the generation's
folder, record.

uv is told exactly which files to install (URL + sha256 each, ``--no-deps``, ``--require-hashes``,
no index, no builds): it resolves nothing, and refuses a file whose bytes do not match the sha256
of the resolution. Selection is the caller's next step; until then the generation is incomplete
(no ``generation.json``) and the next run under the home lock removes it. Credentials of a
private index reach uv through a private netrc file (:func:`uv_credentials`), never its argv.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import unquote, urlsplit

from packaging.utils import canonicalize_name

from pm.base.errors import PmError
from pm.base.store import Store
from pm.base.uv import Uv, UvError, uv_version
from pm.env import generations
from pm.env.generations import Generation
from pm.env.started import Background, Started, start
from pm.inputs.collect import Inputs
from pm.inputs.recorded import record_of
from pm.inputs.settings import redact_url
from pm.records.recheck import check_unverified
from pm.records.sections import resolution_to_json
from pm.resolver import Resolution

Progress = Callable[[str], None]

#: Named steps of a build, in order (the crash tests pause at each; ``sync`` adds "select").
STEPS = ("venv", "install", "verify", "record")
PAUSE_ENV = "HERMES_PM_PAUSE_AT"

_HASH_MISMATCH = re.compile(r"hash mismatch", re.IGNORECASE)


class VerifyError(PmError):
    """A freshly built generation does not hold what was resolved."""

    kind = "verify"


class HashMismatch(PmError):
    """uv refused a file whose bytes do not match the sha256 the resolution recorded."""

    kind = "hash-mismatch"
    outcome = "refused"

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__("refused: a downloaded file does not match the sha256 recorded in the resolution "
                         f"(the index served other bytes than it advertised); nothing was selected\n{detail}")


def pause_point(step: str, home: Path, store: Store) -> None:
    """Test hook: with ``HERMES_PM_PAUSE_AT=<step>``, write ``<home>/pm/.paused-<step>`` (our pid)
    and wait to be killed. Costs one environment lookup otherwise."""
    if os.environ.get(PAUSE_ENV) != step:
        return
    store.write_bytes(home / "pm" / f".paused-{step}", str(os.getpid()).encode())
    while True:  # pragma: no cover - ended by SIGKILL from the test
        time.sleep(0.05)


def requirements_text(resolution: Resolution, inputs: Inputs | None = None) -> str:
    """One ``name @ URL --hash=sha256:…`` line per pin. An sdist pin (only ever chosen when
    ``pm.allow_builds`` names it) is installed from the wheel built from it, by its own hash;
    receipts keep the sdist's URL and sha256."""
    lines = []
    for pin in resolution.pins:
        if not pin.link.sha256:
            raise PmError(f"{redact_url(pin.link.url)}: the index gave no sha256 for this file; "
                          "pm installs hashed files only")
        if defects := pin.defects():  # locks are data: a field that would break the line never reaches uv
            raise PmError(f"refused to install {pin.name} {pin.version}: {'; '.join(defects)}")
        if pin.link.is_wheel:
            lines.append(f"{pin.name} @ {pin.link.url} --hash=sha256:{pin.link.sha256}")
        else:
            wheel = _built_wheel(pin.link, inputs)
            lines.append(f"{pin.name} @ {wheel.as_uri()} --hash=sha256:{_sha256(wheel)}")
    return "\n".join(lines) + "\n"


def _built_wheel(link: Any, inputs: Inputs | None) -> Path:
    if inputs is None or link.name not in {canonicalize_name(n) for n in inputs.settings.allow_builds}:
        raise PmError(f"{link.url}: {link.filename} is a source distribution and building {link.name} is not "
                      "allowed (pm.allow_builds)")
    from pm.index.builds import uv_builder

    settings = inputs.settings
    builder = uv_builder(inputs.target.python, settings.index_urls, settings.find_links, offline=settings.offline)
    return builder.build(link)


def _sha256(path: Path) -> str:
    from pm.index.findlinks import file_sha256

    return file_sha256(path)


def build(inputs: Inputs, resolution: Resolution, uv: Uv, store: Store, progress: Progress,
          started: Started | None = None) -> Generation:
    """Fill (after :func:`start`, unless ``started`` is given), verify and record a new generation;
    raises UvError, VerifyError, HashMismatch or StoreError, leaving at most an incomplete folder
    behind (never a selected one)."""
    home = inputs.home
    started = started or start(inputs, uv, store)
    gid, path = started.gid, started.path
    venv = started.venv  # filled and verified at the building path, then moved in
    progress(f"creating generation {gid}")
    try:
        requirements = store.write_bytes(path / "requirements.txt", requirements_text(resolution, inputs).encode(),
                                         mode=0o600,  # file URLs: private, as the generation's record
                                         durable=False)  # the generation is complete only with generation.json
    except BaseException:
        started.settle()  # uv is done with the folder before the caller removes it
        raise
    started.wait()
    pause_point("install", home, store)
    said = install(venv, requirements, resolution, uv, progress, offline=inputs.settings.offline,
                   index_urls=(*inputs.settings.index_urls, *inputs.settings.find_link_pages))
    progress("verifying")
    pause_point("verify", home, store)
    verify(venv, inputs.target.python_version, resolution, uv, uv_check=spoke(said))
    started.move_in(store)
    record = {
        "id": gid,
        "fingerprint": inputs.fingerprint,
        "declared_fingerprint": inputs.declared_fingerprint,
        "created_at": datetime.now(timezone.utc).isoformat(),
        "target": inputs.target.to_receipt(),
        "resolution": resolution_to_json(resolution),
        "declared": declared(inputs),
        "members": members(inputs),
        "uv": uv_version(),
        "selection": record_of(inputs.selection),  # what `hermes pm rollback` writes back
    }
    pause_point("record", home, store)
    store.write_json(path / generations.GENERATION_FILE, record, mode=0o600)
    return Generation(gid, path, record)


def install(venv: Path, requirements: Path, resolution: Resolution, uv: Uv, progress: Progress,
            *, offline: bool = False, index_urls: tuple[str, ...] = ()) -> str:
    """Install exactly the pinned files: from uv's cache alone first, then (unless ``offline``)
    downloading what is missing, with the credentials written in ``index_urls`` (the indexes and
    find-links pages the files came from). Returns what uv said.

    ``--strict``: once installed, uv validates the environment as ``uv pip check`` does (every
    installed distribution's requirements met) and warns about what is not (:func:`spoke`).

    The first uv run has ``--offline``: uv takes every file from its cache, still checking each
    against the sha256 of the resolution, and fails before installing anything when one is not
    there. Only then does a second run go to the network. Without this, uv revalidates every
    cached direct URL with the server (re-downloading it from a server that sends no cache
    headers, as many private indexes do): about 200 ms for 40 wheels from a local index. The URL
    and sha256 fix the bytes, so there is nothing to revalidate. The second run's outcome is the
    one reported: a file whose cached bytes do not match gets fetched again and checked again.
    """
    if not resolution.pins:
        return ""
    size = sum(p.link.size or 0 for p in resolution.pins)
    shown = f" ({size / 1e6:.1f} MB)" if size else ""
    progress(f"downloading and installing {len(resolution.pins)} packages{shown}")
    argv = ("pip", "install", "--python", str(venv / "bin" / "python"), "--no-deps", "--require-hashes",
            "--no-index", "--no-build", "--link-mode", "hardlink", "--strict", "-r", str(requirements))
    try:
        return uv.run(*argv, "--offline")
    except UvError as failure:
        if offline:
            _raise_refused(failure)
    with uv_credentials(index_urls) as env:
        try:
            return uv.run(*argv, env=env)
        except UvError as failure:
            _raise_refused(failure)


def spoke(said: str) -> bool:
    """Whether uv warned about anything while installing: its ``--strict`` validation of the
    environment found a problem, or something else deserves a look. Then ``uv pip check`` gives
    the verdict (:func:`verify`); a silent install was validated already, by the same code."""
    return any(line.lstrip().lower().startswith("warning") for line in said.splitlines())


@contextlib.contextmanager
def uv_credentials(index_urls: Iterable[str]) -> Iterator[dict[str, str]]:
    """The environment that gives uv the credentials written in ``index_urls`` (indexes and
    find-links pages, ``user:pass@``),
    never on its command line: a netrc file (``NETRC``) in a private temporary folder (0700, the
    file 0600), removed afterwards. uv sends them to those hosts for the pinned file URLs, which
    pm keeps free of credentials. Empty when no URL carries any."""
    entries = _netrc_entries(index_urls)
    if not entries:
        yield {}
        return
    import shutil  # only with credentials: tempfile loads shutil, random and the compression modules
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="hermes-pm-auth-"))  # mkdtemp: mode 0700
    try:
        netrc = folder / "netrc"
        fd = os.open(netrc, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.writelines(f"machine {h} login {u} password {p}\n" for h, u, p in entries)
            handle.write(_users_netrc())  # after ours (first match wins): uv still sees the user's own
        yield {"NETRC": str(netrc)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _users_netrc() -> str:
    """The netrc uv would read without pm (``$NETRC``, else ``~/.netrc``), so that pointing
    ``NETRC`` elsewhere hides none of the user's own credentials; empty when there is none."""
    path = Path(os.environ.get("NETRC") or Path.home() / ".netrc")
    try:
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return ""
    return "\n" + text if text else ""


def _netrc_entries(index_urls: Iterable[str]) -> list[tuple[str, str, str]]:
    entries = []
    for url in index_urls:
        parts = urlsplit(url)
        if parts.username is None or not parts.hostname:
            continue
        user, password = unquote(parts.username), unquote(parts.password or "")
        if any(c.isspace() or c in "\"'#" for c in user + password) or not user:
            raise PmError(f"{redact_url(url)}: the user name or password holds a space, quote or '#', which "
                          "uv's netrc cannot carry; use a token without them")
        entries.append((parts.hostname, user, password))
    return entries


def _raise_refused(failure: UvError) -> NoReturn:
    """Raise HashMismatch when uv refused a file for its sha256, else ``failure`` itself."""
    lines = [line.strip() for line in failure.output.splitlines() if line.strip()]
    if any(_HASH_MISMATCH.search(line) for line in lines):
        start = next((i for i, line in enumerate(lines) if line.startswith("error:")), 0)
        raise HashMismatch("\n".join(lines[start:start + 12])) from failure
    raise failure


def declared(inputs: Inputs) -> list[dict[str, Any]]:
    """Every requirement of the union with its origin, as readiness will check it later."""
    return [{"requirement": str(t.requirement), "origin": t.origin.to_json()} for t in inputs.union.requirements] + [
        {"requirement": f"{name}=={version}", "origin": {"kind": "core"}, "locked": True}
        for name, version in inputs.core.lock
    ]


def members(inputs: Inputs) -> list[dict[str, Any]]:
    """Each member's declaration file and sha256: readiness names the plugins whose declaration
    changed since this generation was built."""
    found = []
    for member in inputs.union.members:
        declaration = member.plugin.declaration
        if declaration is not None:
            found.append({"name": member.plugin.key, "file": str(declaration.file), "sha256": declaration.sha256})
    return found


def verify(venv: Path, python_version: str, resolution: Resolution, uv: Uv, *, uv_check: bool = True) -> None:
    """Every pin present at its version and nothing else installed, metadata read by range equal to what was installed
    (:mod:`pm.records.recheck`; a mismatch is an IndexFailure naming the file), and (``uv_check``: the
    install's own validation spoke) ``uv pip check`` content. uv checks on another thread while pm
    checks its part; pm's failure is told first."""
    if not uv_check:
        _verify_pins(venv, python_version, resolution)
        return
    from pm.env import uv_check as _uv_check

    check = Background(lambda: _uv_check.uv_check(uv, venv, resolution), "pm-check")
    try:
        _verify_pins(venv, python_version, resolution)
    except BaseException:
        check.settle()
        raise
    check.wait()


def _verify_pins(venv: Path, python_version: str, resolution: Resolution) -> None:
    site = generations.site_packages(venv, python_version)
    installed = generations.installed_versions(site)
    wrong = [f"{p.name}=={p.version} (found {installed.get(p.name, 'nothing')})"
             for p in resolution.pins if installed.get(p.name) != p.version]
    pinned = {p.name for p in resolution.pins}
    wrong += [f"{name} {version} (not in the resolution)" for name, version in sorted(installed.items())
              if name not in pinned]
    if wrong:
        raise VerifyError(f"{venv}: the new generation does not hold exactly what was resolved: {', '.join(wrong)}")
    check_unverified(site, resolution)
