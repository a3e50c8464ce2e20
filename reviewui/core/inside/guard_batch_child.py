"""The guard-batch pytest plugin: many guard reverts graded in one pytest session.

Copied by reviewui into a run's own directory and loaded through
PYTEST_PLUGINS (standard library and pytest only: it runs in the project's
Python, inside the sandbox, like any run). pytest collects the selected
tests once; then, instead of the normal test loop, each guard of the
request gets a fork of that collected session in which the edited
function's code object is swapped in (every reference to the function,
imports included, sees the edit) and only the guard's tests run. The
fork's outcomes are written as JSON; a fork that outlives the guard's time
limit is killed with its whole process group.

reviewui sends only guards whose line runs solely inside test bodies (the
coverage map says so), so swapping the code after import is the same as
importing the edited file. A guard whose function cannot be found or
swapped is answered with `fallback`, and reviewui runs it the ordinary way.
A fork stops at the first test that fails on the edit (as mutation tools
stop at the first kill): that test is the evidence, and the rest would only
add time. After a failure reviewui might excuse (a NameError-like one about
the edit's own missing name, see grade.py) the remaining tests still run.

Request (JSON file named by REVIEWUI_GUARD_BATCH): {"timeout": s, "out": dir,
"guards": [{"id", "module", "path": [[name, first_line, def_line], ...],
"source", "filename", "tests": [node id or file, ...]}], "tail": unix socket (optional: after
its own guards, the session asks it for more, one line each, until it answers `{}`;
guard_tail.py)}. Reply: one file
`<out>/<id>.json` per guard: {"tests": [{"id", "outcome", "message", "detail"}],
"seconds", "stopped"} ("stopped": true when tests were left unrun after a bite) or {"fallback": why} or {"timeout": true, "seconds"}.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import types
from typing import Any

try:
    import reviewui_forks as forks  # type: ignore[import-not-found]  # copied beside this plugin in a run
except ImportError:  # imported by reviewui itself, for its names
    from reviewui.core.inside import forks

REQUEST_VAR = "REVIEWUI_GUARD_BATCH"


class Fallback(Exception):
    """This guard cannot be applied by swapping code: reviewui runs it on its own."""


def _code_at(code: types.CodeType, path: list[list[Any]]) -> types.CodeType:
    for name, first, line in path:
        found = [c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == name
                 and c.co_firstlineno in (first, line)]
        if len(found) != 1:
            raise Fallback(f"no single code object for {name} at line {line}")
        code = found[0]
    return code


def _function_at(module: types.ModuleType, path: list[list[Any]]) -> types.FunctionType:
    obj: Any = module
    for name, _, _ in path[:-1]:
        obj = vars(obj).get(name)
        if not isinstance(obj, type):
            raise Fallback(f"{name} is not a class of the module")
    name = path[-1][0]
    fn = vars(obj).get(name)
    if isinstance(fn, (staticmethod, classmethod)):
        fn = fn.__func__
    elif isinstance(fn, property):
        fn = fn.fget
    seen = 0
    while fn is not None and not (isinstance(fn, types.FunctionType) and fn.__code__.co_name == name) and seen < 20:
        fn = getattr(fn, "__wrapped__", None)
        seen += 1
    if not isinstance(fn, types.FunctionType):
        raise Fallback(f"{name} is not reachable as a plain function")
    return fn


def compiled(guard: dict[str, Any]) -> types.CodeType | Fallback:
    """The guard's edited source compiled (what `apply` swaps in), or why it cannot be.

    Called in the session before the guard's fork: compiling is a pure function of the
    text, and done in the fork every page its parser and compiler allocate is new there.
    """
    try:
        return compile(guard["source"], guard["filename"], "exec", dont_inherit=True)
    except SyntaxError as e:
        return Fallback(f"edited source does not compile: {e}")
    except Exception as e:  # a null byte, a nesting too deep: the session goes on, this guard is run alone
        return Fallback(f"{type(e).__name__}: {e}")


def apply(guard: dict[str, Any], code: types.CodeType | Fallback) -> None:
    """Swap the guard's edited code (`code`: what `compiled(guard)` gave in the session) into the
    live function. Raises Fallback when it cannot."""
    import importlib

    try:
        module = importlib.import_module(guard["module"])
    except Exception as e:
        raise Fallback(f"cannot import {guard['module']}: {type(e).__name__}") from e
    fn = _function_at(module, guard["path"])
    if isinstance(code, Fallback):
        raise code
    new = _code_at(code, guard["path"])
    if new.co_freevars != fn.__code__.co_freevars:
        raise Fallback("the function's closure differs")
    fn.__code__ = new


def native_failure(item: Any, excinfo: Any) -> str:
    """A test's failure as Python prints it (the frames from the test function on, then the
    exception): the text pytest's native style gives, minus its caret lines.

    Forks use it instead of pytest's report: formatting that report filters the traceback
    through pytest's machinery, and in a fresh fork every page it touches is copied (about
    half of a biting guard's time).
    """
    import linecache
    import traceback

    target = getattr(getattr(item, "obj", None), "__code__", None)
    frames = list(traceback.walk_tb(excinfo.tb))
    if not any(frame.f_code is target for frame, _ in frames):
        target = None  # failed outside the test function's own frames: show them all
    rows = ["Traceback (most recent call last):"]
    started = target is None
    for frame, lineno in frames:
        started = started or frame.f_code is target
        if not started or frame.f_locals.get("__tracebackhide__") or frame.f_globals.get("__tracebackhide__"):
            continue
        rows.append(f'  File "{frame.f_code.co_filename}", line {lineno}, in {frame.f_code.co_name}')
        line = linecache.getline(frame.f_code.co_filename, lineno).strip()
        if line:
            rows.append(f"    {line}")
    rows += [row.rstrip("\n") for row in traceback.format_exception_only(excinfo.type, excinfo.value)]
    return "\n".join(rows)


def _first_line(text: str) -> str:
    """The exception's first line from a native (Python-style) traceback, or an `E` line."""
    rows = text.splitlines()
    for row in rows:
        if row.startswith("E   "):
            return row[4:].strip()
    last = max((n for n, r in enumerate(rows) if r.startswith("  File ")), default=-1)
    for row in rows[last + 1:]:
        if row.strip() and not row.startswith(" "):
            return row.strip()
    kept = [r.strip() for r in rows if r.strip()]
    return kept[-1] if kept else ""


def _outcome(item: Any, reports: list[Any]) -> dict[str, str]:
    outcome, message, detail = "passed", "", ""
    for rep in reports:
        if rep.failed:
            text = str(rep.longreprtext or "")
            outcome = "failed" if rep.when == "call" else "error"
            message, detail = _first_line(text), text[-4000:]
            break
        if rep.skipped and outcome == "passed":
            outcome = "skipped"
    return {"id": item.nodeid, "outcome": outcome, "message": message, "detail": detail}


_EXCUSABLE = re.compile(r"^(?:E\s+)?(?:[\w.]*\.)?(?:NameError|ImportError|ModuleNotFoundError|AttributeError|"
                        r"UnboundLocalError|TypeError)\b")
"""Failures reviewui may excuse as the edit's own missing name (grade.py): after one of them
the guard's other tests still run, since it may not count as a bite."""


def _bites(outcome: dict[str, str]) -> bool:
    """True for a failure that counts as a bite whatever reviewui's grading excuses."""
    return outcome["outcome"] in ("failed", "error") and not _EXCUSABLE.match(outcome["message"])


def _chosen(items: list[Any], tests: list[str]) -> list[Any]:
    if not tests:
        return list(items)
    wanted = set(tests)
    return [i for i in items if i.nodeid in wanted or i.nodeid.split("::", 1)[0] in wanted]


def _child(guard: dict[str, Any], items: list[Any], out: str, code: types.CodeType | Fallback) -> None:
    from _pytest.runner import runtestprotocol

    reply: dict[str, Any]
    start = time.monotonic()
    try:
        os.setpgid(0, 0)
        # Python's own traceback text: pytest's forms look up source and modules per entry,
        # which in a fresh fork costs more than running the tests. Setup and teardown
        # failures (fixtures) keep pytest's native report.
        items[0].config.option.tbstyle = "native"
        import pytest

        pytest.Function.repr_failure = native_failure  # type: ignore[method-assign,assignment]
        apply(guard, code)
        done: list[dict[str, str]] = []
        for n, item in enumerate(items):
            nxt = items[n + 1] if n + 1 < len(items) else None
            done.append(_outcome(item, runtestprotocol(item, log=False, nextitem=nxt)))
            if _bites(done[-1]):
                break  # one test that fails on the edit is the evidence: the rest need not run
        reply = {"tests": done, "seconds": time.monotonic() - start, "stopped": len(done) < len(items)}
    except Fallback as e:
        reply = {"fallback": str(e)}
    except BaseException as e:  # anything else: reviewui runs the guard the ordinary way
        reply = {"fallback": f"{type(e).__name__}: {e}"}
    try:
        with open(out + ".part", "w", encoding="utf-8") as f:
            json.dump(reply, f)
        os.replace(out + ".part", out)
    finally:
        os._exit(0)


def _held() -> Any:
    """reviewui's variables of this run: the origin plugin took them out of os.environ (origin_plugin.py)."""
    return getattr(sys.modules.get("reviewui_origin"), "HELD", os.environ)


def pytest_runtestloop(session: Any) -> bool | None:
    """Run each guard of the request in its own fork of this collected session, then the tail's."""
    path = _held().get(REQUEST_VAR)
    if not path or session.config.option.collectonly:
        return None
    with open(path, encoding="utf-8") as f:
        request = json.load(f)
    import gc
    import inspect

    # pytest's failure report looks each traceback entry's module up, and inspect's first
    # lookup walks every loaded module: done once here, every fork inherits the cache.
    inspect.getmodule(pytest_runtestloop.__code__)
    # The collected session lives as long as the batch: out of the collector's way, the
    # forks neither walk it nor copy its pages.
    gc.collect()
    gc.freeze()
    for guard in request["guards"]:
        _grade_in_fork(session, request, guard)
    if request.get("tail"):
        for guard, channel in _tail(request["tail"], float(request["timeout"])):
            _grade_in_fork(session, request, guard, channel)
    return True


def _tail(address: str, timeout: float) -> Any:
    """The guards reviewui hands out to whichever session is free first, one per request,
    each with the socket (which its fork closes: the tests never hold reviewui's end)."""
    import socket

    try:
        channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        channel.settimeout(timeout)
        channel.connect(address)
    except OSError:
        return  # reviewui stopped serving: it runs what this session did not take
    with channel:
        stream = channel.makefile("rwb")
        while True:
            try:
                stream.write(b"next\n")
                stream.flush()
                guard = json.loads(stream.readline() or b"{}")
            except (OSError, ValueError):
                return
            if not guard:
                return
            yield guard, channel


def _grade_in_fork(session: Any, request: dict[str, Any], guard: dict[str, Any], channel: Any = None) -> None:
    out = os.path.join(request["out"], f"{guard['id']}.json")
    items = _chosen(session.items, guard["tests"])
    if not items:
        with open(out, "w", encoding="utf-8") as f:
            json.dump({"fallback": "none of its tests was collected"}, f)
        return
    code = compiled(guard)
    sys.stdout.flush()
    sys.stderr.flush()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        if channel is not None:
            os.close(channel.fileno())  # the raw descriptor: its stream keeps the socket object open
        _child(guard, items, out, code)
    if forks.wait(pid, float(request["timeout"])) is None:
        with open(out, "w", encoding="utf-8") as f:
            json.dump({"timeout": True, "seconds": time.monotonic() - start}, f)
