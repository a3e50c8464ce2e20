"""`reviewui serve`: the review app in a browser, through textual-serve, behind a random token.

Each browser connection runs the same `reviewui open …` command in a subprocess
(textual-serve's design), so every run of the branch's code keeps going through
the sandboxed runner exactly as in a terminal. This process only relays bytes.

Who may connect: every route lives under `/<token>/`, a random 128-bit token
printed once in the URL. Any other path, a wrong token, or a websocket opened from
another origin gets 403, so another local user (or a web page the reviewer visits)
cannot drive the app. Pages are sent with no-referrer and a same-origin content
policy: the token never leaves in a Referer, and the page fetches nothing from
the network: it is textual-serve's page without its web font (`serve_page/`), the
terminal drawn in the DejaVu Sans Mono this package bundles, served from here.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import secrets
import shlex
import signal
import socket
import sys
from pathlib import Path
from typing import Awaitable, Callable, Sequence

from aiohttp import web
from aiohttp.web_runner import GracefulExit
import aiohttp_jinja2
import jinja2
from textual_serve.server import Server

from reviewui.core.errors import ReviewError

PAGE = Path(__file__).resolve().parent / "serve_page"
"""The served page's template (app_index.html) and, under fonts/, the terminal's font."""

DRIVER = "reviewui.ui.browser_driver:BrowserDriver"
"""The Textual driver the served app runs with (textual-serve's, with browser-safe icons)."""

_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def served_command(open_argv: Sequence[str]) -> str:
    """The shell command textual-serve runs per connection: this Python's `reviewui open ARGV…`."""
    argv = [sys.executable, "-m", "reviewui", "open", *open_argv]
    # textual-serve sets TEXTUAL_DRIVER itself; the command's own assignment comes later and wins.
    return f"TEXTUAL_DRIVER={shlex.quote(DRIVER)} exec {shlex.join(argv)}"


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free one).

    Raises ReviewError with one line when the address is taken or cannot be used.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise ReviewError(f"cannot listen on {host}: {e.strerror}") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.bind(address)
        sock.listen(16)
    except OSError as e:
        sock.close()
        if port and e.errno in (98, 48):  # EADDRINUSE (Linux, macOS)
            raise ReviewError(f"port {port} on {host} is taken (pick another with --port, or --port 0 for any free one)") from None
        raise ReviewError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    return sock


def is_loopback(host: str) -> bool:
    """True when `host` names only this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class TokenServer(Server):
    """textual-serve's Server on a socket of ours, every route under a random token."""

    def __init__(self, command: str, sock: socket.socket, title: str) -> None:
        host, port = sock.getsockname()[:2]
        url_host = f"[{host}]" if ":" in host else host
        super().__init__(command, host=host, port=port, title=title, public_url=f"http://{url_host}:{port}")
        self.sock = sock
        self.token = secrets.token_urlsafe(16)
        self.url = f"{self.public_url}/{self.token}/"
        """The address to open: the only one that answers with anything but 403."""
        self._sessions: set[asyncio.Task[object]] = set()

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        # the title is a branch name: autoescape
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(PAGE), autoescape=True)
        prefix = f"/{self.token}"
        app.add_routes([
            web.get(f"{prefix}/", self.handle_index, name="index"),
            web.get(f"{prefix}/ws", self.handle_websocket, name="websocket"),
            web.static(f"{prefix}/static/reviewui", PAGE / "fonts", name="fonts"),  # before the wider prefix
            web.static(f"{prefix}/static", self.statics_path, name="static"),
        ])
        app.on_startup.append(self.on_startup)
        app.on_shutdown.append(self.on_shutdown)
        return app

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One browser connection: its own app process, stopped when the connection or the server ends."""
        task = asyncio.current_task()
        if task is not None:
            self._sessions.add(task)
        try:
            return await super().handle_websocket(request)
        finally:
            self._sessions.discard(task)  # type: ignore[arg-type]

    async def on_shutdown(self, app: web.Application) -> None:
        # aiohttp waits for open websockets on shutdown; cancelling their handlers makes
        # textual-serve tell each app to quit and wait for it, so ctrl+c ends everything at once.
        for task in list(self._sessions):
            task.cancel()

    @web.middleware
    async def _guard(self, request: web.Request, handler: _Handler) -> web.StreamResponse:
        """403 for any request not under the token, and for a websocket opened from another origin."""
        first = request.rel_url.raw_path.split("/", 2)[1]
        if not hmac.compare_digest(first.encode(), self.token.encode()):
            raise web.HTTPForbidden(text="reviewui: this address needs the token `reviewui serve` printed\n")
        origin = request.headers.get("Origin")
        if origin is not None and origin != self.public_url:
            raise web.HTTPForbidden(text="reviewui: not from this page\n")
        response = await handler(request)
        if not response.prepared:
            response.headers["Referrer-Policy"] = "no-referrer"
            response.headers["Cache-Control"] = "no-store"
            response.headers["Content-Security-Policy"] = (
                "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
                "img-src 'self' data:; font-src 'self' data:; connect-src 'self'"
            )
        return response

    async def on_startup(self, app: web.Application) -> None:
        print(f"reviewui: open {self.url}  (ctrl+c stops)", flush=True)

    def serve(self, debug: bool = False) -> None:
        """Serve until ctrl+c or SIGTERM; each browser connection gets its own app process."""
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.request_exit)
        web.run_app(self._make_app(), sock=self.sock, handle_signals=False, loop=loop,
                    print=None, access_log=None)


def serve(open_argv: Sequence[str], host: str, port: int, title: str) -> int:
    """Serve `reviewui open OPEN_ARGV…` on host:port until stopped; return the exit code.

    Raises ReviewError when the address cannot be listened on.
    """
    sock = listen(host, port)
    server = TokenServer(served_command(open_argv), sock, title=title)
    if not is_loopback(host):
        sys.stderr.write(f"reviewui: serving on {host}, beyond this machine: the token travels unencrypted (plain http)\n")
    try:
        server.serve()
    except GracefulExit:
        pass
    return 0
