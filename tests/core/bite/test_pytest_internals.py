"""A pytest release that moves a private name the batches lean on turns batching off, and says so."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from reviewui.core.bite import engine
from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from reviewui.core.run.warm_runner import WarmPytest
from tests.core.bite.helpers import feature_repo, load, use_venv_python

SERVER = Path(__file__).resolve().parents[3] / "reviewui" / "core" / "inside" / "warm_server.py"


def _server_module():
    spec = importlib.util.spec_from_file_location("reviewui_warm_server_under_test", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_this_pytest_has_every_internal_the_batches_use() -> None:
    assert _server_module().moved_internals() == []


def test_a_moved_internal_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import _pytest.runner

    monkeypatch.delattr(_pytest.runner, "runtestprotocol")
    assert _server_module().moved_internals() == ["_pytest.runner.runtestprotocol"]


@pytest.mark.slow
def test_a_sweep_with_batching_off_runs_every_item_alone_with_the_same_verdicts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    rb = feature_repo(tmp_path / "r")
    t, d = load(rb.root)
    normal = run_bite(t, d, Settings(), jobs=2, guards=True)
    line = "batching off: pytest 8.4.2 moved `_pytest.runner.runtestprotocol`"
    monkeypatch.setattr(WarmPytest, "batching_off", lambda self: line)
    batched: list[object] = []
    real = engine.revert_batch.batchable
    monkeypatch.setattr(engine.revert_batch, "batchable", lambda pending: batched.append(pending) or real(pending))
    off = run_bite(t, d, Settings(), jobs=2, guards=True)
    assert batched == []  # nothing was dealt to a batch
    assert line in off.selection
    assert [(r.file, r.verdict) for r in off.results] == [(r.file, r.verdict) for r in normal.results]
    assert [[g.verdict for g in r.guards] for r in off.results] == [[g.verdict for g in r.guards] for r in normal.results]
