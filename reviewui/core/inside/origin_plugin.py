"""reviewui: the plugin every run loads first (PYTEST_PLUGINS). It takes reviewui's variables out of
the test's sight (`HELD`, read by the other plugins), hides coverage's tracer and modules, starts the
record of who reads the changed files (read_audit.py: what counts as a read is written there) and
tells it which collector, fixture or test phase runs, writes the run's progress (`done total`),
registers the canary (canary_run.py) and at the session's end writes what it saw: where the changed
modules were imported from, who opened a changed data file, who read a changed source file as data."""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Iterator

import pytest

# Imported in every run alike (what is loaded never tells a run's kind); they do nothing until asked.
try:
    import reviewui_canary_run as canary  # type: ignore[import-not-found]  # copied beside this plugin
except ImportError:  # loaded from reviewui's own tree (its tests)
    from reviewui.core.inside import canary_run as canary

# What this run was given for reviewui's plugins is taken out of the test's sight before any
# test module is imported (pytest imports PYTEST_PLUGINS first): every run, baseline, revert or
# guard, measured or not, then shows the same environment. The other reviewui plugins, imported
# after this one, find their values in HELD. COVERAGE_PROCESS_CONFIG (coverage's subprocess
# patch) leaves os.environ only: it stays in the process environment, so subprocesses are measured.
_OURS = ("COVERAGE_RCFILE", "COVERAGE_CORE", "COVERAGE_RUN")
_KEEP = ("REVIEWUI_IN_SANDBOX",)
_PLUGINS = ("reviewui_origin", "reviewui_covctx", "reviewui_guard_batch", "reviewui_revert_batch", "reviewui_witness")
HELD: dict[str, str] = {}
for _k in list(os.environ):
    if (_k.startswith("REVIEWUI_") and _k not in _KEEP) or _k in _OURS:
        HELD[_k] = os.environ.pop(_k)
if "COVERAGE_PROCESS_CONFIG" in os.environ:
    HELD["COVERAGE_PROCESS_CONFIG"] = os.environ._data.pop(  # type: ignore[attr-defined,unused-ignore]
        os.environ.encodekey("COVERAGE_PROCESS_CONFIG"))  # type: ignore[attr-defined,unused-ignore]
_left = [p for p in os.environ.get("PYTEST_PLUGINS", "").split(",") if p.strip() and p.strip() not in _PLUGINS]
if _left:
    os.environ["PYTEST_PLUGINS"] = ",".join(_left)
else:
    os.environ.pop("PYTEST_PLUGINS", None)


def _var(name: str) -> str:
    return HELD.get(name, "")


def _is_coverage(tracer: Any) -> bool:
    owner = getattr(tracer, "__self__", tracer)
    return type(owner).__module__.split(".")[0] == "coverage"


def _hiding(real: Any) -> Any:
    def gettrace() -> Any:
        tracer = real()
        return None if tracer is not None and _is_coverage(tracer) else tracer
    gettrace.__name__, gettrace.__qualname__, gettrace.__doc__ = real.__name__, real.__qualname__, real.__doc__
    return gettrace


# The same in every run: measured by coverage.py or not, a test sees no tracer of coverage's.
sys.gettrace = _hiding(sys.gettrace)  # type: ignore[method-assign,assignment,unused-ignore]
import threading as _threading
if hasattr(_threading, "gettrace"):
    _threading.gettrace = _hiding(_threading.gettrace)
_monitoring = getattr(sys, "monitoring", None)
if _monitoring is not None:
    _get_tool = _monitoring.get_tool

    def _tool(tool_id: int) -> Any:
        name = _get_tool(tool_id)
        return None if name == "coverage.py" else name
    _tool.__name__, _tool.__qualname__ = "get_tool", "get_tool"
    _monitoring.get_tool = _tool  # type: ignore[method-assign,assignment,unused-ignore]

_stashed: dict[str, Any] = {}
"""coverage.py's modules, out of sys.modules while tests run (`pytest_configure`)."""

# Who reads the changed files: the audit hook and its records (read_audit.py), started before any
# test module is imported; the hooks below tell it which collector, fixture or test is running.
try:
    import reviewui_read_audit as reads  # type: ignore[import-not-found]  # copied beside this plugin
except ImportError:  # loaded from reviewui's own tree (its tests)
    from reviewui.core.inside import read_audit as reads
reads.start(HELD, os.path.dirname(os.path.realpath(__file__)))


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: Any) -> Iterator[None]:
    # Collecting imports test modules, conftests and packages: what their top level reads is read
    # for the tests collected under them, what a process it starts reads too.
    with reads.collecting(collector.nodeid):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Iterator[None]:
    with reads.fixture(fixturedef.argname, fixturedef.baseid):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: Any) -> Iterator[None]:
    with reads.phase(item.nodeid):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Iterator[None]:
    with reads.phase(item.nodeid):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: Any) -> Iterator[None]:
    with reads.phase(item.nodeid):
        yield


_session: list[Any] = []
_progress: dict[str, Any] = {"path": _var("REVIEWUI_PROGRESS"), "done": 0, "total": 0, "at": 0.0}


def _say_progress(force: bool = False) -> None:
    # "done total" in the run's own directory, at most every quarter second: reviewui's progress
    # line for long runs, from pytest's own collection count. Every run writes it alike.
    import time

    path = _progress["path"]
    now = time.monotonic()
    if not path or (not force and now - _progress["at"] < 0.25):
        return
    _progress["at"] = now
    try:
        with open(path, "w", encoding="ascii") as f:
            f.write("%d %d\n" % (min(_progress["done"], _progress["total"]), _progress["total"]))
    except OSError:
        _progress["path"] = ""


def pytest_sessionstart(session: Any) -> None:
    _session[:] = [session]


def pytest_collection_finish(session: Any) -> None:
    reads.collected({item.nodeid: frozenset(getattr(item, "fixturenames", ())) for item in session.items})
    _progress["total"] = len(session.items)
    _say_progress(force=True)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    _progress["done"] += 1
    _say_progress()


def pytest_collectreport(report: Any) -> None:
    # A run of reverted code is graded by its first collection error alone: the modules
    # after it need not be imported. pytest's own check before the next collector then
    # ends the session as --maxfail does (quietly, exit code 1).
    if (report.failed and _var("REVIEWUI_QUIET_STOP") and _session
            and not _session[0].config.option.continue_on_collection_errors):
        _session[0].shouldfail = "reviewui: stopped at the first collection error"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: Any) -> None:
    # before Hypothesis's own, which scans the project's modules for constants (read_audit.py)
    reads.hide_from_hypothesis()


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: Any) -> bool | None:
    # A run of reverted code whose collection failed: nothing more is learned by running
    # tests (the revert is graded by the collection error), so end here quietly.
    if (session.testsfailed and _var("REVIEWUI_QUIET_STOP")
            and not session.config.option.continue_on_collection_errors):
        return True
    return None


@pytest.hookimpl(trylast=True)
def pytest_configure(config: Any) -> None:
    # coverage.py's modules (a measured run's, a warm server's preload) are out of sys.modules
    # while tests run, in every run alike, and back before coverage saves its data.
    for name in list(sys.modules):
        if name == "coverage" or name.startswith("coverage."):
            _stashed[name] = sys.modules.pop(name)
    canary.register(config)


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: Any) -> None:
    for name, module in _stashed.items():
        sys.modules.setdefault(name, module)


def pytest_sessionfinish(session: Any) -> None:
    _say_progress(force=True)
    out = _var("REVIEWUI_ORIGIN_OUT")
    if not out:
        return
    found: dict[str, str] = {}
    for name in _var("REVIEWUI_ORIGIN_MODULES").split(","):
        module = sys.modules.get(name) if name else None
        path = getattr(module, "__file__", None) if module is not None else None
        if path:
            found[name] = os.path.realpath(path)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"modules": found, **reads.found(), "canary": canary.ran()}, f)
