"""A provider can neither silence nor hang a host command (issue 21, item 7): whatever its code
raises at import, in register(ctx) or in is_available() — SystemExit and KeyboardInterrupt
included — is that provider's failure, and a call that never returns times out naming it.
Each case is a real `hermes memory status` process on a real home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pm.testing.homes import add_plugin

PROVIDER = '''
import sys, time
from agent.memory_provider import MemoryProvider
{at_import}

class Trap(MemoryProvider):
    name = "trap"
    def is_available(self):
        {in_available}
        return True
    def initialize(self, session_id, **kwargs): pass
    def get_tool_schemas(self): return []
    def handle_tool_call(self, name, args, **kwargs): return "{{}}"


def register(ctx):
    {in_register}
    ctx.register_memory_provider(Trap())
'''


def status(home: Path, *extra: str, timeout: str = "1") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_PROVIDER_TIMEOUT": timeout}
    return subprocess.run([sys.executable, "-m", "agent", "memory", "status", "--home", str(home), *extra],
                          env=env, capture_output=True, text=True, timeout=60, check=False)


def trap_home(new_home: Callable[..., Path], *, at_import: str = "", in_available: str = "pass",
              in_register: str = "pass") -> Path:
    home = new_home({"memory": {"provider": "trap"}})
    code = PROVIDER.format(at_import=at_import, in_available=in_available, in_register=in_register)
    add_plugin(home / "plugins", "trap", style="sidecar", manifest={"kind": "memory"}, init_code=code)
    return home


@pytest.mark.parametrize(("raised", "shown"), [
    ("raise SystemExit(3)", "SystemExit: 3"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ("raise RuntimeError('boom')", "RuntimeError: boom"),
])
def test_is_available_raising_anything_is_no_with_the_reason(new_home: Callable[..., Path], raised: str,
                                                              shown: str) -> None:
    done = status(trap_home(new_home, in_available=raised))
    assert done.returncode == 4, done.stderr
    assert f"available:       no (is_available() failed: {shown})" in done.stdout
    assert "Traceback" not in done.stderr


def test_is_available_that_hangs_times_out_naming_the_provider(new_home: Callable[..., Path]) -> None:
    home = trap_home(new_home, in_available="time.sleep(600)")
    started = time.monotonic()
    done = status(home, "--json")
    assert time.monotonic() - started < 20
    report = json.loads(done.stdout)
    assert done.returncode == 4 and report["available"] is False
    assert report["unavailable_because"].startswith("is_available() failed: did not return within 1s")


@pytest.mark.parametrize(("where", "code", "shown"), [
    ("at_import", "raise SystemExit(7)", "failed to import from"),
    ("at_import", "time.sleep(600)", "did not return within 1s"),
    ("in_register", "sys.exit(0)", "failed in register(ctx): SystemExit: 0"),
])
def test_a_provider_that_exits_or_hangs_while_loading_is_a_failure_naming_it(
        new_home: Callable[..., Path], where: str, code: str, shown: str) -> None:
    home = trap_home(new_home, **{where: code})
    done = status(home)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "memory provider: trap" in done.stdout  # the status was still printed
    assert "error: memory provider 'trap'" in done.stderr and shown in done.stderr
    assert "Traceback" not in done.stderr
