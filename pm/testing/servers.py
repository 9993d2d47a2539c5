"""The package servers teams really run, started on 127.0.0.1 for the fleet tests and benchmark:
devpi-server as a pull-through mirror of a :class:`~pm.testing.index.LocalIndex`, and pypiserver
as a plain private index behind basic auth. Never a stand-in: each is the released program,
installed from PyPI into a virtual environment of its own (:func:`server_venv`, made once per
cache folder) so the test environment stays as it is.

Each server counts the requests that reached it from its own access log (:meth:`requests`), so a
test can tell what pm's conditional requests and caches spared it; :meth:`restart` stops it and
starts it again on the same port and data, as an operator's restart does.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

#: What the servers' venv holds (passlib: pypiserver's password file).
PACKAGES = ("devpi-server>=6", "pypiserver>=2", "passlib>=1.7")
_START_DEADLINE = 60.0


def server_venv(folder: Path, uv: str, python: str) -> Path:
    """A venv under ``folder`` with :data:`PACKAGES` (made once; reused while it works)."""
    venv = folder / "fleet-servers"
    marker = venv / ".installed"
    if marker.is_file() and marker.read_text() == "\n".join(PACKAGES):
        return venv
    subprocess.run([uv, "venv", "--quiet", "--python", python, str(venv)], check=True, timeout=300)
    subprocess.run([uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), *PACKAGES],
                   check=True, timeout=600)
    marker.write_text("\n".join(PACKAGES))
    return venv


def free_port() -> int:
    """A port nothing listens on now (the server binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """One server process on 127.0.0.1; its log is ``log``, and every request it answered is a
    line of it that :attr:`REQUEST` matches."""

    REQUEST: re.Pattern[str]

    def __init__(self, argv: list[str], port: int, log: Path, ready_path: str = "/") -> None:
        self.argv, self.port, self.log, self.ready_path = argv, port, log, ready_path
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        with self.log.open("ab") as sink:
            self.process = subprocess.Popen(self.argv, stdout=sink, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        self._wait_ready()
        return self

    def stop(self) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=20)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def requests(self) -> list[str]:
        """The paths of every request answered so far, oldest first (from the access log)."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return [m.group("path") for m in self.REQUEST.finditer(text)]

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _START_DEADLINE
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.argv[0]} exited with {self.process.returncode}; log: {self.log}")
            try:
                with urllib.request.urlopen(self.root + self.ready_path, timeout=2):
                    return
            except urllib.error.HTTPError:
                return  # answering (401 from an authenticated index is an answer)
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{self.argv[0]} did not answer within {_START_DEADLINE:.0f} s; log: {self.log}")

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class Devpi(Server):
    """devpi-server with one mirror index, ``root/mirror``, of ``upstream`` (a simple index URL):
    what a team runs in front of PyPI. Pages it fetched are kept for ``expiry`` seconds."""

    REQUEST = re.compile(r"\[req\d+\] (?:GET|HEAD|POST|PUT) (?P<path>\S+)")

    def __init__(self, venv: Path, folder: Path, upstream: str, *, expiry: int = 600,
                 port: int | None = None) -> None:
        self.upstream, self.expiry, self.folder = upstream, expiry, folder
        serverdir = folder / "devpi"
        if not serverdir.exists():
            subprocess.run([str(venv / "bin" / "devpi-init"), "--serverdir", str(serverdir), "--no-root-pypi"],
                           check=True, capture_output=True, timeout=120)
            secret = folder / "devpi-secret"
            subprocess.run([str(venv / "bin" / "devpi-gen-secret"), "--secretfile", str(secret)],
                           check=True, capture_output=True, timeout=60)
        port = port or free_port()
        super().__init__([str(venv / "bin" / "devpi-server"), "--serverdir", str(serverdir), "--host", "127.0.0.1",
                          "--port", str(port), "--secretfile", str(folder / "devpi-secret")],
                         port, folder / "devpi.log")

    @property
    def index_url(self) -> str:
        return f"{self.root}/root/mirror/+simple/"

    def start(self) -> Devpi:
        super().start()
        if not self._has_mirror():
            self._create_mirror()
        return self

    def _has_mirror(self) -> bool:
        try:
            with urllib.request.urlopen(self._json_request("GET", "/root/mirror"), timeout=10):
                return True
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return False
            raise

    def _create_mirror(self) -> None:
        with urllib.request.urlopen(self._json_request("POST", "/+login", {"user": "root", "password": ""}),
                                    timeout=10) as answer:
            password = json.loads(answer.read())["result"]["password"]
        auth = base64.b64encode(f"root:{password}".encode()).decode()
        body = {"type": "mirror", "mirror_url": self.upstream, "mirror_cache_expiry": self.expiry}
        with urllib.request.urlopen(self._json_request("PUT", "/root/mirror", body, {"X-Devpi-Auth": auth}),
                                    timeout=10):
            pass

    def _json_request(self, method: str, path: str, body: Any = None,
                      headers: dict[str, str] | None = None) -> urllib.request.Request:
        data = None if body is None else json.dumps(body).encode()
        return urllib.request.Request(self.root + path, data=data, method=method,
                                      headers={"Accept": "application/json", "Content-Type": "application/json",
                                               **(headers or {})})


class PypiServer(Server):
    """pypiserver serving ``packages`` (a folder of wheels) as a private index: every download
    and listing needs ``user``/``password`` (basic auth, an htpasswd file), no fallback to PyPI."""

    REQUEST = re.compile(r"\bREQ (?P<path>\S+)")

    def __init__(self, venv: Path, folder: Path, packages: Path, *, user: str = "fleet",
                 password: str = "s3cret", port: int | None = None) -> None:
        self.user, self.password = user, password
        folder.mkdir(parents=True, exist_ok=True)
        htpasswd = folder / "htpasswd"
        sha1 = base64.b64encode(hashlib.sha1(password.encode()).digest()).decode()  # noqa: S324 - htpasswd's {SHA}
        htpasswd.write_text(f"{user}:{{SHA}}{sha1}\n")
        port = port or free_port()
        super().__init__([str(venv / "bin" / "pypi-server"), "run", "--host", "127.0.0.1", "--port", str(port),
                          "--authenticate", "download,list", "--passwords", str(htpasswd), "--disable-fallback",
                          "--verbose", "--log-req-frmt", "REQ %(PATH_INFO)s", str(packages)],
                         port, folder / "pypiserver.log", ready_path="/health")

    @property
    def index_url(self) -> str:
        """The index URL with its credentials, as a user writes it in pm's settings."""
        return f"http://{self.user}:{self.password}@127.0.0.1:{self.port}/simple/"
