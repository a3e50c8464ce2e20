"""reviewui: record where the changed modules were imported from, and who opens changed data files."""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Iterator

import pytest

_data = {p for p in os.environ.get("REVIEWUI_DATA_FILES", "").split(os.pathsep) if p}
_opens: dict[str, set[str]] = {}


def _audit(event: str, args: Any) -> None:
    if event != "open" or not _data:
        return
    try:
        path = os.path.realpath(os.fsdecode(args[0]))
    except Exception:
        return
    if path in _data:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        if test:
            _opens.setdefault(path, set()).add(test)


if _data:
    sys.addaudithook(_audit)


_session: list[Any] = []


def pytest_sessionstart(session: Any) -> None:
    _session[:] = [session]


def pytest_collectreport(report: Any) -> None:
    # A run of reverted code is graded by its first collection error alone: the modules
    # after it need not be imported. pytest's own check before the next collector then
    # ends the session as --maxfail does (quietly, exit code 1).
    if (report.failed and os.environ.get("REVIEWUI_QUIET_STOP") and _session
            and not _session[0].config.option.continue_on_collection_errors):
        _session[0].shouldfail = "reviewui: stopped at the first collection error"


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: Any) -> bool | None:
    # A run of reverted code whose collection failed: nothing more is learned by running
    # tests (the revert is graded by the collection error), so end here quietly.
    if (session.testsfailed and os.environ.get("REVIEWUI_QUIET_STOP")
            and not session.config.option.continue_on_collection_errors):
        return True
    return None


def _canary_name() -> str:
    # Read once and removed: neither the environment nor a file left to read names it.
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "canary")
    try:
        with open(path, encoding="utf-8") as f:
            name = f.read().strip()
    except OSError:
        return ""
    try:
        os.unlink(path)
    except OSError:
        pass  # the run may not write here: the name still counts
    return name if name.isidentifier() else ""


_canary: dict[str, Any] = {"name": _canary_name(), "ran": False}


class _Canary:
    """After the test loop: one more test, named at random, that must fail (canary.py reads it)."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session: Any) -> Iterator[None]:
        yield
        name = _canary["name"]
        items = [i for i in session.items if i.getparent(pytest.Module) is not None]
        # Not in an xdist worker: its controller would count the failure in the exit code.
        if not name or not items or _canary["ran"] or hasattr(session.config, "workerinput"):
            return
        module = items[-1].getparent(pytest.Module)
        try:
            obj = module.obj
            scope: dict[str, Any] = {}
            # Made to look like any test of that module: its file, its module, an attribute of it.
            code = compile("def %s():\n    assert 0, 'this test must fail'\n" % name,
                           getattr(obj, "__file__", None) or "<test>", "exec")
            exec(code, {"__name__": obj.__name__}, scope)
            fn = scope[name]
            setattr(obj, name, fn)
            item = pytest.Function.from_parent(module, name=name, callobj=fn)
        except Exception:
            return
        counts = (session.testsfailed, session.shouldfail, session.shouldstop)
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        before = {k: list(v) for k, v in reporter.stats.items()} if reporter is not None else {}
        _canary["ran"] = True
        session.items.append(item)
        writer = getattr(reporter, "_tw", None)
        progress = set(getattr(reporter, "_progress_nodeids_reported", ()))
        try:
            if writer is not None:  # its progress letter is not the project's output
                import io

                try:
                    from _pytest._io import TerminalWriter
                except ImportError:  # a pytest that moved it: the letter shows, nothing else changes
                    writer = None
                else:
                    reporter._tw = TerminalWriter(io.StringIO())
            item.ihook.pytest_runtest_protocol(item=item, nextitem=None)
        finally:
            if writer is not None:
                reporter._tw = writer
                reporter._progress_nodeids_reported = progress
            session.items.remove(item)
        session.testsfailed, session.shouldfail, session.shouldstop = counts
        if reporter is not None:  # the summary counts the project's tests only
            for key in list(reporter.stats):
                reporter.stats[key] = before.get(key, [])
                if not reporter.stats[key]:
                    del reporter.stats[key]


def pytest_configure(config: Any) -> None:
    if _canary["name"]:
        config.pluginmanager.register(_Canary(), "reviewui_canary")


def pytest_sessionfinish(session: Any) -> None:
    out = os.environ.get("REVIEWUI_ORIGIN_OUT")
    if not out:
        return
    found: dict[str, str] = {}
    for name in os.environ.get("REVIEWUI_ORIGIN_MODULES", "").split(","):
        module = sys.modules.get(name) if name else None
        path = getattr(module, "__file__", None) if module is not None else None
        if path:
            found[name] = os.path.realpath(path)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"modules": found, "opens": {k: sorted(v) for k, v in _opens.items()},
                   "canary": _canary["name"] if _canary["ran"] else ""}, f)
