"""The queue sweeps on the configured engine: one branch at a time locally, several at once on Ray."""

from __future__ import annotations

import threading
import time

import pytest

from reviewui.core.errors import SandboxError
from reviewui.core.queue import sweep


def _run(monkeypatch: pytest.MonkeyPatch, engine: str, fail: str | None = None) -> tuple[int, dict[str, str | None], list]:
    lock = threading.Lock()
    now = [0]
    most = [0]
    calls: list = []

    def fake(repo, branch, base, **kw):  # type: ignore[no-untyped-def]
        calls.append((branch, kw["engine"], kw["ray_address"]))
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(0.2)
        with lock:
            now[0] -= 1
        if branch == fail:
            raise SandboxError("no sandbox")
        return None if branch != "agent/b" else "baseline is red"

    monkeypatch.setattr(sweep, "sweep_branch", fake)
    done: dict[str, str | None] = {}
    sweep.sweep_branches("/repo", [f"agent/{c}" for c in "abcdef"], "main", engine=engine,
                         on_done=done.__setitem__, ray_address="10.0.0.1:6379")
    return most[0], done, calls


def test_several_branches_at_once_on_ray_one_at_a_time_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    most, done, calls = _run(monkeypatch, "ray")
    assert most == sweep.RAY_BRANCHES_AT_ONCE
    assert done == {f"agent/{c}": (None if c != "b" else "baseline is red") for c in "abcdef"}
    assert {(e, a) for _, e, a in calls} == {("ray", "10.0.0.1:6379")}  # each on the engine asked for
    most, done, _ = _run(monkeypatch, "local")
    assert most == 1 and len(done) == 6


def test_a_sandbox_error_stops_the_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxError):
        _run(monkeypatch, "local", fail="agent/a")
