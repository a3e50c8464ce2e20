"""`reviewui serve` in a real browser: headless Chromium drives the demo's first story.

The server runs as a user would start it (`reviewui serve BRANCH --port 0` in the
story's repository); Chromium (Debian's, through Selenium and its chromedriver; no
browser is downloaded) opens the printed URL, presses keys, and the test reads the
terminal as xterm.js holds it: a script added before the page's own finds xterm's
Terminal objects, and the test reads their buffer's visible rows. A screenshot is
checked for its size and for having something drawn on it.

Under CI=true a missing chromium, chromedriver or selenium fails the test: `.ci/run`
installs them. Elsewhere the browser tests skip without them.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import pytest

from reviewui.ui.browser_driver import BROWSER_FALLBACKS
from tests.test_browser_glyphs import FONT
from tests.clirun import ROOT

STORY = "01-trim-reasoning"
BRANCH = "agent/trim-reasoning"
WINDOW = (1400, 900)
URL_SHAPE = re.compile(r"^http://127\.0\.0\.1:(\d+)/([A-Za-z0-9_-]{22})/$")

CHROMIUM_FLAGS = (
    "--no-sandbox --headless --disable-gpu --disable-quic --no-first-run --disable-background-networking "
    "--disable-component-update --disable-sync"
).split()

# xterm.js keeps the screen in its buffer (it paints a canvas). Its public Terminal sets
# `this._core` in its constructor; a setter on Object.prototype sees that and keeps the object.
FIND_TERMINALS = """Object.defineProperty(Object.prototype, '_core', {configurable: true,
  set(v) { Object.defineProperty(this, '_core', {value: v, writable: true, configurable: true});
           (window.__reviewuiTerms = window.__reviewuiTerms || []).push(this); }});"""
SCREEN_TEXT = """const t = (window.__reviewuiTerms || []).find(t => typeof t.loadAddon === 'function');
if (!t) return null;
const b = t.buffer.active, rows = [];
for (let y = 0; y < t.rows; y++) { const l = b.getLine(b.viewportY + y); rows.push(l ? l.translateToString(true) : ''); }
return rows.join('\\n');"""


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for var in ("CONFIG", "STATE", "CACHE", "DATA"):
        env[f"XDG_{var}_HOME"] = str(home / var.lower())
    return env


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """The demo's first story, built by `reviewui demo --no-open --dir D`, and an isolated environment."""
    base = tmp_path_factory.mktemp("serve")
    env = _env(base / "home")
    subprocess.run([sys.executable, "-m", "reviewui", "demo", "--no-open", "--dir", str(base / "samples")],
                   cwd=base, env=env, check=True, capture_output=True, timeout=120)
    yield base / "samples" / STORY, env


@contextmanager
def _serving(repo: Path, env: dict[str, str], branch: str) -> Iterator[str]:
    """`reviewui serve BRANCH --port 0` running in `repo`; yields the URL it printed.

    Everything the server prints after the URL (textual-serve passes on what a failed
    app wrote) is drained into SERVER_OUTPUT, so a full pipe never stalls it and a
    failing test can show it.
    """
    proc = subprocess.Popen([sys.executable, "-m", "reviewui", "serve", branch, "--port", "0"], cwd=repo,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    timer = threading.Timer(60, proc.kill)  # a server that never prints its URL must not hang the suite
    timer.start()
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        timer.cancel()
        found = re.search(r"http://\S+", line)
        assert found, f"no URL printed: {line!r} {proc.stdout.read() if proc.poll() is not None else ''}"
        SERVER_OUTPUT.clear()
        threading.Thread(target=lambda: SERVER_OUTPUT.extend(proc.stdout or ()), daemon=True).start()
        yield found.group(0)
    finally:
        timer.cancel()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def served(story: tuple[Path, dict[str, str]]) -> Iterator[str]:
    """The story's branch served; yields the URL."""
    with _serving(*story, BRANCH) as url:
        yield url


SERVER_OUTPUT: list[str] = []
"""What `reviewui serve` printed after its URL, for failure messages."""


def _get(url: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read() if response.status != 101 else b""
    finally:
        conn.close()


def _status(url: str, path: str, headers: dict[str, str] | None = None) -> int:
    return _get(url, path, headers)[0]


def test_the_url_is_loopback_and_carries_a_random_token(served: str) -> None:
    assert URL_SHAPE.match(served), served


def test_requests_without_the_token_are_refused(served: str) -> None:
    token = URL_SHAPE.match(served).group(2)  # type: ignore[union-attr]
    upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
    assert _status(served, f"/{token}/") == 200
    assert _status(served, f"/{token}/static/js/textual.js") == 200
    for path in ("/", "/ws", "/static/js/textual.js", f"/{wrong}/", f"/{wrong}/ws", f"/{token[:8]}/", "/favicon.ico"):
        assert _status(served, path) == 403, path
        assert _status(served, path, upgrade) == 403, path
    # The right token from another site's page (a websocket any page may try to open) is refused too.
    assert _status(served, f"/{token}/ws", {**upgrade, "Origin": "http://example.com"}) == 403


def test_a_hostile_branch_name_is_escaped_in_the_page(story: tuple[Path, dict[str, str]]) -> None:
    repo, env = story
    hostile = 'agent/<img>"x'  # a valid git branch name
    subprocess.run(["git", "branch", "-f", hostile, BRANCH], cwd=repo, check=True, capture_output=True)
    with _serving(repo, env, hostile) as url:
        status, page = _get(url, urlsplit(url).path)
    assert status == 200
    assert b"agent/<img>" not in page and b"agent/&lt;img&gt;&#34;x" in page


def test_a_taken_port_is_refused_in_one_line(story: tuple[Path, dict[str, str]]) -> None:
    repo, env = story
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "reviewui", "serve", BRANCH, "--port", str(port)],
                              cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and f"port {port}" in proc.stderr and "taken" in proc.stderr, proc.stderr
    assert proc.stdout == ""


def test_a_missing_branch_is_refused_before_serving(story: tuple[Path, dict[str, str]]) -> None:
    repo, env = story
    proc = subprocess.run([sys.executable, "-m", "reviewui", "serve", "no/such-branch", "--port", "0"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "http" not in proc.stdout


def _browser(profile: Path, window: tuple[int, int] = WINDOW, network_log: bool = False) -> Any:
    """Headless Debian Chromium under Selenium; fails under CI=true when it is not installed.

    `network_log`: every request the page makes is kept in the performance log, and no
    name but the loopback one resolves (a request meant for elsewhere is still logged).
    """
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        webdriver = None  # type: ignore[assignment]
    if chromium is None or driver is None or webdriver is None:
        missing = "chromium, chromedriver (apt-get install chromium chromium-driver) and selenium"
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser test needs {missing}; .ci/run installs them")
        pytest.skip(f"needs {missing}")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--window-size={window[0]},{window[1]}",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    if network_log:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
        options.add_argument("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")
    browser = webdriver.Chrome(options=options, service=Service(driver))
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FIND_TERMINALS})
    return browser


def _wait_for(browser: Any, pattern: str, timeout: float) -> str:
    """The terminal's text once `pattern` (a regex) is on it; fails with the screen after `timeout`."""
    deadline = time.monotonic() + timeout
    text = ""
    ended = False
    while time.monotonic() < deadline and not ended:
        text = browser.execute_script(SCREEN_TEXT) or ""
        if re.search(pattern, text, re.MULTILINE):
            return text
        # textual-serve's page marks the body when the app's process has gone.
        ended = browser.execute_script("return document.body.classList.contains('-closed')") or any(
            "failed to start" in line for line in SERVER_OUTPUT)
        time.sleep(0.1)
    server = "".join(SERVER_OUTPUT)[-4000:]
    why = "the served app ended" if ended else f"not there after {timeout} s"
    raise AssertionError(f"{pattern!r} not on the screen ({why}):\n{text}\nserver said:\n{server}")


def _type(browser: Any, keys: str) -> None:
    """Type `keys` as a user's keyboard does: into the element with the focus, xterm.js's own input
    (its helper textarea), focused first as a click on the terminal would.

    Not WebDriver's element `send_keys`: that first checks the element can be interacted with, and
    newer chromedrivers (Debian's 150) call xterm's textarea, transparent and a few pixels wide under
    the cursor, "not interactable".
    """
    from selenium.webdriver.common.action_chains import ActionChains

    browser.execute_script("document.querySelector('.xterm-helper-textarea').focus()")
    ActionChains(browser).send_keys(keys).perform()


def _png_facts(png: bytes) -> tuple[int, int, int]:
    """Width, height and how many distinct rows a PNG (8-bit RGB or RGBA, as Chromium writes) has."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, depth, colour = struct.unpack(">IIBB", png[16:26])
    assert depth == 8 and colour in (2, 6), (depth, colour)
    data, pos = b"", 8
    while pos < len(png):
        size, kind = struct.unpack(">I4s", png[pos:pos + 8])
        if kind == b"IDAT":
            data += png[pos + 8:pos + 8 + size]
        pos += size + 12
    raw = zlib.decompress(data)
    stride = 1 + width * (3 if colour == 2 else 4)
    rows = {raw[y * stride + 1:(y + 1) * stride] for y in range(height)}
    return width, height, len(rows)


def test_the_app_in_a_browser_moves_and_bites(served: str, tmp_path: Path) -> None:
    browser = _browser(tmp_path / "chromium-profile")  # a fresh profile, removed with tmp_path
    from selenium.webdriver.common.keys import Keys

    try:
        browser.get(served)
        first = _wait_for(browser, r"n Next hunk", 60)
        assert f"{STORY}  {BRANCH}" in first and "@@ -44,3 +44,17 @@" in first
        _type(browser, "n")  # the next hunk is the test file's
        _wait_for(browser, r"@@ -0,0 \+1,20 @@", 20)
        _type(browser, "p")
        _wait_for(browser, r"@@ -44,3 \+44,17 @@", 20)

        _type(browser, "b")  # sandboxed bite-check of the hunk and its guards, in the served app's process
        bitten = _wait_for(browser, r"^.*57 .*○.*if msg\.role == \"assistant\"", 120)
        assert re.search(r"toothless", bitten), bitten
        assert "UNSANDBOXED" not in bitten  # the served app ran the branch's code under bubblewrap
        # Icons outside the browser's fonts were swapped for their fallbacks on the way out.
        drawn = set(bitten) & set(BROWSER_FALLBACKS)
        assert not drawn, drawn
        _type(browser, "?")
        helped = _wait_for(browser, r"Review", 20)
        _type(browser, Keys.ESCAPE)
        _wait_for(browser, r"n Next hunk", 20)
        outside = {f"{c} U+{ord(c):04X}" for c in first + bitten + helped if c not in FONT | {"\n"}}
        assert not outside, outside

        png = browser.get_screenshot_as_png()
        (tmp_path / "served.png").write_bytes(png)
        width, height, distinct_rows = _png_facts(png)
        inner = browser.execute_script("return [window.innerWidth, window.innerHeight]")
        assert (width, height) == tuple(inner), (width, height, inner)
        assert distinct_rows > height // 4, distinct_rows  # text on many rows, not a blank page
    finally:
        browser.quit()


PAGE_FACTS = """const d = document.documentElement, q = s => document.querySelector(s);
const term = q('#terminal'), viewport = q('.xterm-viewport'), screen = q('.xterm-screen');
return {page: [d.scrollWidth, d.clientWidth, d.scrollHeight, d.clientHeight],
        viewport: viewport && [viewport.offsetWidth, viewport.clientWidth],
        screen: screen && screen.offsetWidth, terminal: term && term.clientWidth,
        fonts: [...document.fonts].map(f => [f.family, f.status]),
        resources: performance.getEntriesByType('resource').map(r => r.name)};"""


def _requested(browser: Any) -> list[str]:
    """Every URL the page asked for (documents, styles, fonts, scripts, images, websockets), from the performance log."""
    import json

    urls = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
        elif message["method"] == "Network.webSocketCreated":
            urls.append(message["params"]["url"])
    return urls


def _list_layout(text: str) -> str:
    """How the file list is shown on the screen: "hidden", "fit" (its border within 40 % of the
    width) or "wide" (at least half of it: `fit_sidebar`'s shares).

    A refit as evidence comes in moves the border but never changes this class; only `L` does.
    """
    border = _border(text)
    if border < 0:
        return "hidden"
    return "wide" if border >= 0.45 * max(len(ln) for ln in text.splitlines()) else "fit"


def _settled(browser: Any, text: str, quiet: float = 1.5, limit: float = 30.0) -> str:
    """The screen once the file list's border has not moved for `quiet` seconds (at most `limit`)."""
    still = time.monotonic()
    deadline = still + limit
    while time.monotonic() - still < quiet and time.monotonic() < deadline:
        time.sleep(0.1)
        now = browser.execute_script(SCREEN_TEXT) or ""
        if _border(now) != _border(text):
            still = time.monotonic()
        text = now
    return text


def _border(text: str) -> int:
    """The column of the file list's border, or -1 while it is hidden."""
    line = next((ln for ln in text.splitlines() if "Source (" in ln), "")
    return line.find("│")


def _file_list_shown(browser: Any) -> str:
    """The screen once the file list, with its findings count (`⚑1`), is on it.

    `L` cycles the list fitted → wide → hidden. Under load the app can take many seconds to
    answer a key (seen in CI: a key typed again before the first was answered went past the
    wide list), and the evidence (the findings, a stored sweep's results) refits the list as it
    comes in, a move of its border no `L` made (seen in CI: taken for the answer to an `L`, so the
    next was typed too soon and the list ended hidden). So the loop waits on the list's mode, which
    a refit never changes, and types the next `L` only once the mode has answered the last one.
    """
    text = _settled(browser, browser.execute_script(SCREEN_TEXT) or "")
    for _ in range(4):
        if re.search(r"⚑\d", text):
            return text
        before = _list_layout(text)
        _type(browser, "L")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _list_layout(text) == before:
            time.sleep(0.1)
            text = browser.execute_script(SCREEN_TEXT) or ""
        text = _settled(browser, text)
    return _wait_for(browser, r"⚑\d", 1)  # fails with the screen


def test_the_page_asks_nothing_beyond_this_host_draws_its_icons_and_fits_800x500(served: str,
                                                                                  tmp_path: Path) -> None:
    """Walked in Chromium: the page asked fonts.googleapis.com for its web font, ⏎ showed as ¶ and ⚑
    as !, and at 800x500 a scrollbar took a strip of the terminal."""
    browser = _browser(tmp_path / "chromium-profile", window=(800, 500), network_log=True)
    try:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": 800, "height": 500, "deviceScaleFactor": 1, "mobile": False})
        browser.get(served)
        _wait_for(browser, r"n Next hunk", 60)
        text = _file_list_shown(browser)  # its findings count, drawn as itself (not !1)
        origin = f"{urlsplit(served).hostname}:{urlsplit(served).port}"
        asked = [u for u in _requested(browser) if urlsplit(u).scheme in ("http", "https", "ws", "wss")]
        assert any(u.endswith(".ttf") for u in asked), asked  # the page's font, from this host
        assert asked and all(urlsplit(u).netloc == origin for u in asked), asked
        facts = browser.execute_script(PAGE_FACTS)
        assert all(urlsplit(u).netloc == origin for u in facts["resources"]), facts["resources"]
        assert ["Roboto Mono", "loaded"] in facts["fonts"], facts["fonts"]  # the bundled one, under that name
        width, client, height, client_height = facts["page"]
        assert width <= client and height <= client_height, facts  # no scrollbar either way
        assert facts["viewport"][0] == facts["viewport"][1], facts  # no scrollbar strip over the terminal
        assert facts["screen"] <= facts["terminal"], facts
        assert not re.search(r"!\d", text), text
    finally:
        browser.quit()


def test_each_connection_runs_open_with_the_same_arguments() -> None:
    import shlex

    from reviewui.cli_parser import build_parser, open_argv
    from reviewui.ui.serve import DRIVER, served_command

    given = ["serve", "agent/x y", "--base", "release", "--unsandboxed", "--jobs", "2", "--timeout", "1.5",
             "--task", "fix it; rm -rf ~", "--file", "src/a.py", "--theme", "reviewui-light", "--port", "0"]
    served = build_parser("serve").parse_args(given)
    argv = open_argv(served)
    reopened = build_parser("open").parse_args(["open", *argv])
    for dest, value in vars(reopened).items():
        if dest != "command":
            assert getattr(served, dest) == value, dest
    assert reopened.branch == "agent/x y" and reopened.unsandboxed and reopened.jobs == 2
    # The shell textual-serve starts sees this Python, `-m reviewui open`, and the arguments unsplit.
    words = shlex.split(served_command(argv))
    assert words[:5] == [f"TEXTUAL_DRIVER={DRIVER}", "exec", sys.executable, "-m", "reviewui"]
    assert words[5:] == ["open", *argv]


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_a_port_that_is_not_one_is_a_usage_error(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    from reviewui.cli import main

    with pytest.raises(SystemExit) as e:
        main(["serve", "--port", port])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("reviewui: argument --port: ") and err.count("\n") == 1, err


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc)."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def _running(pids: list[int]) -> list[int]:
    """Those of `pids` still running (a zombie has ended)."""
    alive = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.append(pid)
    return alive


def test_ctrl_c_stops_the_server_and_the_apps_it_runs(story: tuple[Path, dict[str, str]]) -> None:
    import asyncio
    import signal

    import aiohttp

    repo, env = story
    proc = subprocess.Popen([sys.executable, "-m", "reviewui", "serve", BRANCH, "--port", "0"], cwd=repo,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        url = re.search(r"http://\S+", proc.stdout.readline()).group(0)  # type: ignore[union-attr]
        threading.Thread(target=lambda: proc.stdout and proc.stdout.read(), daemon=True).start()

        async def connect_then_stop() -> list[int]:
            origin = f"http://{urlsplit(url).netloc}"
            async with aiohttp.ClientSession() as http, http.ws_connect(f"{url}ws?width=80&height=24",
                                                                         origin=origin) as ws:
                first = await asyncio.wait_for(ws.receive(), 60)  # the app's first frame: it is running
                assert first.type == aiohttp.WSMsgType.BINARY, first
                apps = _children(proc.pid)
                proc.send_signal(signal.SIGINT)
                ends = (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR)
                while (await asyncio.wait_for(ws.receive(), 60)).type not in ends:
                    pass  # frames the app drew before it was told to quit; then the server closes
                return apps

        apps = asyncio.run(connect_then_stop())
        assert len(apps) == 1, apps  # one connection, one `reviewui open`
        assert proc.wait(timeout=60) == 0
        # Told to quit, the app finishes on its own a moment after the server (orphaned, then reaped).
        deadline = time.monotonic() + 30
        while _running(apps) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(apps), apps
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
