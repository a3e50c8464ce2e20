"""The canary: after the test loop, one more test, named at random, that must fail (copied into a run as
`reviewui_canary_run`, imported by the origin plugin in every run; see README.md here).

reviewui writes the name into a file `canary` beside the plugins; it is read once, when this module
is imported (before any test module), and the file removed, so neither the environment nor a file
left to read names it. A run whose report shows that test failed was not rewritten by a hook of
the branch's (bite/canary.py reads what `ran` returns). Standard library and pytest only.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

import pytest


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


def register(config: Any) -> None:
    """Register the canary's test-loop wrapper with pytest (nothing when no name was given)."""
    if _canary["name"]:
        config.pluginmanager.register(_Canary(), "reviewui_canary")


def ran() -> str:
    """The canary test's name once it ran, else ""."""
    return str(_canary["name"]) if _canary["ran"] else ""


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
