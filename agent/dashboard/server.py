"""The dashboard's HTTP side: the standard library's threading server on 127.0.0.1, a token
on every request, and the routes.

:class:`App` maps a request (method, path, query, form) to a status and a page, and knows nothing
of sockets; :func:`start` binds it to ``127.0.0.1`` (an ephemeral port by default) behind
:class:`Handler`, which refuses, before any body is read or any route runs, a request with a
``Host`` other than this address (403: a page of another site cannot reach it through DNS
rebinding), without the token in its URL (403; a form posts to a URL that carries it), or, for a
POST, without a usable ``Content-Length`` (411/400/413). The connections themselves are bounded
in number, time and size (:mod:`.connections`). An action that went through answers with a
redirect to its result page (``303``, post/redirect/get), so reloading what the browser shows
reads the result again and never repeats the action (a second rollback would undo the first).
A page never shows a traceback: an error becomes
its message (pm's and the host's errors are sentences), anything else a one-line internal error,
with the traceback on the server's stderr.
"""

from __future__ import annotations

import hmac
import html
import secrets
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from agent.dashboard import actions, reads
from agent.dashboard.connections import MAX_BODY, READ_TIMEOUT, BadLength, BoundedServer, body_length, drain
from agent.dashboard.markup import Html
from agent.dashboard.pages import View
from agent.errors import ActivationError, MemoryPluginError
from pm.base.errors import PmError
from pm.ops.options import Options

__all__ = ["MAX_BODY", "App", "start"]

HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",  # the token is in every URL
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
Form = dict[str, str]
#: Result pages of actions kept for reading after the redirect.
KEPT_RESULTS = 16
Route = Callable[[str, Form], tuple[int, Html]]


@dataclass
class App:
    """The routes over one ``home``; ``options`` are what every action runs with."""

    home: Path
    options: Options = field(default_factory=Options)
    allow_actions: bool = False
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    _acting: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _results: dict[str, Html] = field(default_factory=dict, repr=False)

    def keep_result(self, page: Html) -> str:
        """Keep an action's result page (the newest :data:`KEPT_RESULTS`) under a new id; the path to read it."""
        with self._acting:
            key = secrets.token_urlsafe(12)
            self._results[key] = page
            for old in list(self._results)[:-KEPT_RESULTS]:
                del self._results[old]
        return f"/results/{key}"

    def result(self, key: str, _: Form) -> tuple[int, Html]:
        page = self._results.get(key)
        if page is None:
            return 404, self.view.error("Not found", "no such result (only the newest few are kept)")
        return 200, page

    @property
    def view(self) -> View:
        return View(self.token, str(self.home), self.allow_actions)

    def handle(self, method: str, path: str, form: Form) -> tuple[int, Html]:
        """The status and page for one request whose token was checked."""
        route, rest = self._route(method, path)
        if route is None:
            return 404, self.view.error("Not found", f"no page {path!r}")
        try:
            return route(rest, form)
        except (PmError, MemoryPluginError, ActivationError) as exc:
            return 500, self.view.error("Error", f"error: {exc}")
        except Exception as exc:  # a bug: its message in the page, its traceback on the server's stderr
            traceback.print_exc(file=sys.stderr)
            return 500, self.view.error("Internal error", f"internal error: {type(exc).__name__}: {exc}")

    def _route(self, method: str, path: str) -> tuple[Route | None, str]:
        table: dict[str, Route] = {"/": self.plugins, "/plugins": self.plugins, "/readiness": self.readiness,
                                   "/generations": self.generations, "/refusal": self.refusal, "/graph": self.graph,
                                   "/providers": self.providers} if method == "GET" else {
            "/actions/enable": self.enable, "/actions/disable": self.disable, "/actions/rollback": self.rollback,
            "/actions/step": self.step}
        if path in table:
            return table[path], ""
        named = (("/plugins/", self.plugin), ("/providers/", self.provider), ("/results/", self.result)) \
            if method == "GET" else (
            ("/providers/", self.save_settings),)
        for prefix, route in named:
            if path.startswith(prefix) and len(path) > len(prefix):
                return route, unquote(path[len(prefix):])
        return None, ""

    # -- pages -----------------------------------------------------------------------------------

    def plugins(self, _: str, __: Form) -> tuple[int, Html]:
        return 200, self.view.plugins(reads.plugins(self.home, self.options.flags))

    def plugin(self, name: str, _: Form) -> tuple[int, Html]:
        found = reads.find_plugin(self.home, self.options.flags, name)
        if found is None:
            return 404, self.view.error("Not found", f"no plugin {name!r} in this home")
        return 200, self.view.plugin(found)

    def readiness(self, _: str, __: Form) -> tuple[int, Html]:
        return 200, self.view.readiness(reads.readiness(self.home, self.options.flags))

    def generations(self, _: str, __: Form) -> tuple[int, Html]:
        return 200, self.view.generations(reads.history(self.home))

    def refusal(self, _: str, __: Form) -> tuple[int, Html]:
        return 200, self.view.refusal(reads.latest_refusal(self.home), self.home)

    def graph(self, _: str, __: Form) -> tuple[int, Html]:
        return 200, self.view.graph(reads.graph_data(self.home))

    def providers(self, _: str, __: Form) -> tuple[int, Html]:
        return 200, self.view.providers(reads.providers(self.home))

    def provider(self, name: str, form: Form) -> tuple[int, Html]:
        found = reads.provider(self.home, name)
        if found is None:
            return 404, self.view.error("Not found", f"no memory provider {name!r} in this home")
        return 200, self.view.provider(found)

    def save_settings(self, name: str, form: Form) -> tuple[int, Html]:
        found = reads.provider(self.home, name)
        if found is None:
            return 404, self.view.error("Not found", f"no memory provider {name!r} in this home")
        outcome = self._act(lambda: actions.save_settings(self.home, name, form))
        if outcome.ok:
            found = reads.provider(self.home, name) or found
        return outcome.status, self.view.provider(found, outcome, {} if outcome.ok else _kept(form, found))

    # -- actions ---------------------------------------------------------------------------------

    def _act(self, run: Callable[[], actions.Outcome]) -> actions.Outcome:
        if not self.allow_actions:
            return actions.Outcome(False, ("refused: this dashboard is read-only; start it with "
                                           "`hermes dashboard --allow-actions` to act",), status=403)
        with self._acting:  # one action at a time; pm's home lock guards against every other process
            return run()

    def _done(self, title: str, outcome: actions.Outcome) -> tuple[int, Html]:
        return outcome.status, self.view.result(title, outcome, self.home)

    def enable(self, _: str, form: Form) -> tuple[int, Html]:
        name = form.get("name", "")
        return self._done(f"Enable {name}", self._act(lambda: actions.enable(self.home, name, self.options)))

    def disable(self, _: str, form: Form) -> tuple[int, Html]:
        name = form.get("name", "")
        return self._done(f"Disable {name}", self._act(lambda: actions.disable(self.home, name, self.options)))

    def rollback(self, _: str, __: Form) -> tuple[int, Html]:
        return self._done("Rollback", self._act(lambda: actions.rollback(self.home, self.options)))

    def step(self, _: str, form: Form) -> tuple[int, Html]:
        command = form.get("command", "")
        refusal = reads.latest_refusal(self.home) or {}
        return self._done(command, self._act(
            lambda: actions.run_step(self.home, command, refusal.get("next_steps", []), self.options)))


def _kept(form: Form, found: dict[str, Any]) -> Form:
    """The values a refused form showed, to show again; never a secret's."""
    secret = {str(f["key"]) for f in found["fields"] if f.get("secret")}
    return {k: v for k, v in form.items() if k != "token" and k not in secret}


class Handler(BaseHTTPRequestHandler):
    """One request: the checks of the module docstring, then :meth:`App.handle`."""

    app: App  # set on the subclass :func:`start` makes
    server_version = "hermes-dashboard"
    sys_version = ""
    timeout = READ_TIMEOUT  # each read from the client (StreamRequestHandler sets it on the socket)

    def do_GET(self) -> None:  # noqa: N802 (http.server's names)
        if self._refused():
            return
        self._arrived()
        self._serve("GET", {})

    def do_POST(self) -> None:  # noqa: N802
        if self._refused():
            return
        try:
            length = body_length(self.headers)
        except BadLength as exc:
            self._refuse(exc.status, exc.problem)
            return
        data = self.rfile.read(length)
        if len(data) < length:  # the client went away, or was cut for slowness
            self.close_connection = True
            return
        self._arrived()
        body = data.decode("utf-8", "replace")
        self._serve("POST", {k: v[-1] for k, v in parse_qs(body, keep_blank_values=True).items()})

    def _arrived(self) -> None:
        cast(BoundedServer, self.server).arrived(self.request)

    def _refused(self) -> bool:
        """Answer 403 for a foreign Host or a missing or wrong token (from the URL); whether it did."""
        port = cast(ThreadingHTTPServer, self.server).server_port
        given = {k: v[-1] for k, v in parse_qs(urlsplit(self.path).query).items()}.get("token")
        if self.headers.get("Host") not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            self._refuse(403, "forbidden: unexpected Host header")
        elif not given or not hmac.compare_digest(given.encode(), self.app.token.encode()):
            self._refuse(403, "forbidden: this dashboard needs the token of the URL `hermes dashboard` printed")
        else:
            return False
        return True

    def _refuse(self, status: int, problem: str) -> None:
        """Answer ``status`` without reading the body, then close (draining what the client sends)."""
        self.close_connection = True
        self._send(status, Html(f"<!doctype html><title>{status}</title><p>{html.escape(problem)}</p>"),
                   close=True)
        self.wfile.flush()
        drain(self.connection)

    def _serve(self, method: str, form: Form) -> None:
        url = urlsplit(self.path)
        status, page = self.app.handle(method, url.path, form)
        if method == "POST" and url.path.startswith("/actions/") and status == 200:
            self._redirect(f"{self.app.keep_result(page)}?{urlencode({'token': self.app.token})}")
        else:
            self._send(status, page)

    def _redirect(self, location: str) -> None:
        self.send_response(303)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        for key, value in HEADERS.items():
            self.send_header(key, value)
        self.end_headers()

    def _send(self, status: int, body: Html, *, close: bool = False) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
        for key, value in HEADERS.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        """Access lines without the query string (it holds the token)."""
        if self.server.verbose:  # type: ignore[attr-defined]
            sys.stderr.write(f"{self.command} {urlsplit(self.path).path} {args[1] if len(args) > 1 else ''}\n")


def start(app: App, port: int = 0, *, verbose: bool = False) -> tuple[BoundedServer, str]:
    """Bind ``app`` to 127.0.0.1:``port`` (0: an ephemeral one); the server (call
    ``serve_forever``) and the URL to open, token included."""
    handler = type("BoundHandler", (Handler,), {"app": app})
    server = BoundedServer(("127.0.0.1", port), handler)
    server.verbose = verbose  # type: ignore[attr-defined]
    return server, f"http://127.0.0.1:{server.server_port}/?token={app.token}"

