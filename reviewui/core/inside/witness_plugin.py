"""The witness pytest plugin: the tests' arguments (seeds), and the hook a search run takes over.

Copied by reviewui into a run's own directory and loaded through
PYTEST_PLUGINS in every run (standard library and pytest only: it runs in
the project's Python, inside the sandbox). Inert without its request, as
every reviewui plugin is; what it always does is the same in every run: it
imports its values helper (`reviewui_witness_values`, witness_values.py), and
neither `sys.getprofile` (nor threading's) nor `sys.monitoring.get_tool` ever
shows the capture's watcher.

Capture (REVIEWUI_WITNESS_SEEDS names the request, witness/seeds.py): in a
search run, before the search, a fork of the collected session runs the
tests with a watcher on (sys.monitoring's PY_START on Python 3.12+, which
stops asking about a function once it is not wanted; else a profile
function, which sees every call), then is gone; in any other run the watcher
watches the whole run. It sees each call of the functions the request names
(file, name, first lines) and keeps its arguments, rendered as Python
source the moment the call starts (before the function can change them),
at most `max_seeds` distinct ones per function, each at most `max_bytes`
long (longer ones are kept shortened: long strings and containers cut, a
seed only has to be a plausible input). At the end it writes
{"targets": {id: {"params": [[name, kind]], "seeds": [{"values": [source per
param], "imports": [[module, attribute, alias]]}], "seen": calls, "dropped":
unrenderable, "why": a reason}}, "red": [tests that did not pass: then
"targets" is empty]}. Only plain JSON strings leave the run: no pickle, and
reviewui checks every source against a small grammar before it shows or keeps
one (core/witness/literal.py); the search reads the same file (its answers
are checked again).

Search (REVIEWUI_WITNESS): the test loop is replaced by the search of
witness_search.py, imported only then.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import types
from typing import Any

import pytest

try:
    import reviewui_witness_values as values  # type: ignore[import-not-found]  # copied beside this plugin
except ImportError:  # imported by reviewui itself, for its names
    from reviewui.core.inside import witness_values as values

SEEDS_VAR = values.SEEDS_VAR
SEARCH_VAR = values.SEARCH_VAR

# --- the watcher is never seen ----------------------------------------------------------

TOOL_NAME = "reviewui-witness"
"""The sys.monitoring tool the capture registers as (Python 3.12+), hidden from get_tool."""
_ours: list[Any] = []
"""The capture's profile function while it runs (empty otherwise)."""


def _hiding(real: Any) -> Any:
    def getprofile() -> Any:
        found = real()
        return None if _ours and found is _ours[0] else found
    getprofile.__name__, getprofile.__qualname__, getprofile.__doc__ = real.__name__, real.__qualname__, real.__doc__
    return getprofile


sys.getprofile = _hiding(sys.getprofile)  # type: ignore[method-assign,assignment,unused-ignore]
if hasattr(threading, "getprofile"):
    threading.getprofile = _hiding(threading.getprofile)
_monitoring = getattr(sys, "monitoring", None)
if _monitoring is not None:
    _get_tool = _monitoring.get_tool

    def _tool(tool_id: int) -> Any:
        name = _get_tool(tool_id)
        return None if name == TOOL_NAME else name
    _tool.__name__, _tool.__qualname__ = "get_tool", "get_tool"
    _monitoring.get_tool = _tool  # type: ignore[method-assign,assignment,unused-ignore]


# --- capture -----------------------------------------------------------------------------


def _held() -> Any:
    """reviewui's variables of this run: the origin plugin took them out of os.environ (origin_plugin.py)."""
    return getattr(sys.modules.get("reviewui_origin"), "HELD", os.environ)


class Capture:
    """The arguments of the request's functions, as source, as the tests call them."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.out = str(request["out"])
        self.max_seeds = int(request.get("max_seeds", 16))
        self.max_bytes = int(request.get("max_bytes", 2048))
        self.wanted = {(os.path.realpath(str(t["filename"])), str(t["name"]), int(line)): str(t["id"])
                       for t in request.get("targets", []) for line in t.get("lines", [])}
        self.names = frozenset(name for _, name, _ in self.wanted)
        self.by_code: dict[int, tuple[Any, str | None]] = {}
        self.found: dict[str, dict[str, Any]] = {}
        self.full: set[str] = set()
        self.real: dict[str, str] = {}
        self.red: list[str] = []
        """Tests that did not pass in the capture (then nothing of it is kept)."""

    def target(self, code: types.CodeType) -> str | None:
        """The request's id for `code`, or None (answered once per code object)."""
        known = self.by_code.get(id(code))
        if known is not None and known[0] is code:
            return known[1]
        found: str | None = None
        if code.co_name in self.names:
            path = self.real.get(code.co_filename)
            if path is None:
                path = self.real[code.co_filename] = os.path.realpath(code.co_filename)
            found = self.wanted.get((path, code.co_name, code.co_firstlineno))
        self.by_code[id(code)] = (code, found)  # the code object kept: its id is not reused
        return found

    def profile(self, frame: Any, event: str, arg: Any) -> None:
        """sys.setprofile's callback (Python 3.11): every call of every function comes by here."""
        if event != "call":
            return
        ident = self.target(frame.f_code)
        if ident is None or ident in self.full:
            return
        self.keep(ident, frame)

    def started(self, code: types.CodeType, offset: int) -> Any:
        """sys.monitoring's PY_START callback (3.12+): a function not wanted, or full, is never seen again."""
        ident = self.target(code)
        if ident is None or ident in self.full:
            return _DISABLE
        self.keep(ident, sys._getframe(1))
        return None

    def keep(self, ident: str, frame: Any) -> None:
        """Keep this call's arguments: among the first `max_seeds` distinct calls, or, up to twice as many,
        one that gives a new set of parameters something (the test of a new option comes late in a file)."""
        entry = self.found.setdefault(ident, {"params": values.params_of(frame.f_code), "seeds": [], "seen": 0,
                                              "dropped": 0, "why": "", "keys": set(), "shapes": set()})
        entry["seen"] += 1
        local = frame.f_locals
        args = [local.get(name) for name, _ in entry["params"]]
        shape = frozenset(n for n, v in enumerate(args) if _given(v))
        if len(entry["seeds"]) >= self.max_seeds and shape in entry["shapes"]:
            return  # nothing new: not worth rendering
        try:
            seed = self.seed(args)
        except values.Unrenderable as e:
            entry["dropped"] += 1
            entry["why"] = str(e)[:200]
            return
        except Exception as e:  # a __repr__, a property: the project's code, whatever it does
            entry["dropped"] += 1
            entry["why"] = f"{type(e).__name__} while rendering"[:200]
            return
        key = tuple(seed["values"])
        if key not in entry["keys"]:
            entry["keys"].add(key)
            entry["shapes"].add(shape)
            entry["seeds"].append(seed)
        if len(entry["seeds"]) >= 2 * self.max_seeds:
            self.full.add(ident)
            if len(self.full) >= len(set(self.wanted.values())):
                _stop()  # every function has its seeds: nothing more to watch

    def seed(self, args: list[Any]) -> dict[str, Any]:
        for short in (False, True):
            names = values.Names()
            sources = [values.render(v, names, short) for v in args]
            if sum(len(s) for s in sources) <= self.max_bytes:
                return {"values": sources, "imports": names.imports()}
        raise values.Unrenderable(f"longer than {self.max_bytes} characters even shortened")

    def write(self) -> None:
        targets = {ident: {k: v for k, v in e.items() if k not in ("keys", "shapes")} for ident, e in self.found.items()}
        with open(self.out, "w", encoding="utf-8") as f:
            json.dump({"targets": {} if self.red else targets, "red": self.red[:20]}, f)


def _given(v: Any) -> bool:
    """An argument that gives its parameter something (not None, False, 0 or empty)."""
    if v is None or v is False:
        return False
    if type(v) in (int, float, complex):
        return bool(v)
    if type(v) in (str, bytes, tuple, list, dict, set, frozenset):
        return len(v) > 0
    return True


_DISABLE = getattr(_monitoring, "DISABLE", None)
_watching: list[int] = []
"""The sys.monitoring tool id the capture holds (empty under setprofile, or when stopped)."""


def _start_capture() -> Capture | None:
    path = _held().get(SEEDS_VAR)
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            capture = Capture(json.load(f))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if _monitoring is not None:  # each function that is not wanted costs one event, once
        for free in (4, 3):
            try:
                _monitoring.use_tool_id(free, TOOL_NAME)
            except ValueError:  # held by another tool: the next, else the profile function
                continue
            _monitoring.register_callback(free, _monitoring.events.PY_START, capture.started)
            _monitoring.set_events(free, _monitoring.events.PY_START)
            _watching[:] = [free]
            return capture
    profile = capture.profile  # one bound method: the object getprofile would hand back
    _ours[:] = [profile]
    sys.setprofile(profile)
    return capture


def _stop() -> None:
    if _watching and _monitoring is not None:
        tool = _watching.pop()
        _monitoring.set_events(tool, 0)
        _monitoring.register_callback(tool, _monitoring.events.PY_START, None)
        _monitoring.free_tool_id(tool)
    elif _ours:
        sys.setprofile(None)


_capture = None if _held().get(SEARCH_VAR) else _start_capture()
"""A capture watching the whole run; in a search run the capture is made in a fork instead (_capture_in_fork)."""


def pytest_sessionfinish(session: Any) -> None:
    if _capture is None:
        return
    _stop()
    _capture.write()


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: Any) -> bool | None:
    """In a witness search run, the search instead of the tests (witness_search.py)."""
    path = _held().get(SEARCH_VAR)
    if not path or session.config.option.collectonly:
        return None
    import importlib

    seeds = _held().get(SEEDS_VAR)
    if seeds:
        _capture_in_fork(session, seeds)
    importlib.import_module(values.SEARCH_MODULE).search(path)
    return True


def _capture_in_fork(session: Any, request_path: str) -> None:
    """The tests' own arguments, captured in a fork that runs the collected tests and is then gone: the
    search after it starts from the session as collected, no test having run. A test that does not
    pass there (it passed in the baseline) leaves no seed: the reply names it instead."""
    try:
        import reviewui_forks as forks  # type: ignore[import-not-found]  # copied beside this plugin
    except ImportError:
        from reviewui.core.inside import forks
    try:
        with open(request_path, encoding="utf-8") as f:
            timeout = float(json.load(f).get("timeout", 60.0))
    except (OSError, ValueError, TypeError, AttributeError):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            from _pytest.runner import runtestprotocol

            capture = _start_capture()
            red: list[str] = []
            items = list(session.items)
            for n, item in enumerate(items):
                reports = runtestprotocol(item, log=False, nextitem=items[n + 1] if n + 1 < len(items) else None)
                if any(r.failed for r in reports):
                    red.append(item.nodeid)
            _stop()
            if capture is not None:
                capture.red = red or ([] if items else ["(no test collected)"])
                capture.write()
        finally:
            os._exit(0)
    forks.wait(pid, timeout)
