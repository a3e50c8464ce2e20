"""reviewui: label coverage data with the pytest node id and phase of each test."""
from __future__ import annotations

import os
from typing import Any, Iterator

import pytest

_seen: list[str] = []


def _switch(label: str) -> None:
    import coverage  # type: ignore[import-not-found,unused-ignore]  # the project's own, when it measures
    cov = coverage.Coverage.current()
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
    path = os.environ.get("REVIEWUI_COV_SEEN")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(_seen))
