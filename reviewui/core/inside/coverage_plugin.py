"""reviewui: label coverage data with the pytest node id and phase of each test."""
from __future__ import annotations

import os
import sys
from typing import Any, Iterator

import pytest

# Read as the plugin is imported, from where the origin plugin keeps it (out of the test's sight).
# Every run loads this plugin; only a measured one (which names where to write) uses coverage.
_out = getattr(sys.modules.get("reviewui_origin"), "HELD", os.environ).get("REVIEWUI_COV_SEEN")
_coverage: Any = None
if _out:
    try:  # taken now: the origin plugin keeps coverage's modules out of sys.modules while tests run
        import coverage as _imported  # type: ignore[import-not-found,unused-ignore]  # the project's own
        _coverage = _imported
    except ImportError:
        pass
_seen: list[str] = []


def _switch(label: str) -> None:
    cov = _coverage.Coverage.current() if _coverage is not None else None
    if cov is not None:
        cov.switch_context(label)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: Any) -> Iterator[None]:
    _seen.append(item.nodeid)
    _switch(item.nodeid + "|setup")
    yield
    _switch("")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Iterator[None]:
    _switch(item.nodeid + "|call")
    yield
    _switch("")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: Any, nextitem: Any) -> Iterator[None]:
    _switch(item.nodeid + "|teardown")
    yield
    _switch("")


def pytest_sessionfinish(session: Any) -> None:
    path = _out
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(_seen))
