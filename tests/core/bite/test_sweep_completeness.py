"""Every planned hunk and guard comes back: an executor that drops one shows as `error`, never a gap."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.bite import engine
from reviewui.core.bite.engine import LOST, run_bite
from reviewui.core.bite.executor_local import LocalExecutor
from reviewui.core.bite.plan import GuardItem, RevertItem
from reviewui.core.bite.report import HunkResult
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    use_venv_python(monkeypatch)
    test = ("from pkg.calc import add, clamp\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
            "def test_clamp():\n    assert clamp(-1) == 0\n")
    return make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n"},
                     {"pkg/calc.py": "def add(a, b):\n    return a + b\n\n\ndef clamp(x):\n    if x < 0:\n"
                                     "        return 0\n    return x\n", "tests/test_calc.py": test})


def test_a_hunk_the_executor_drops_is_an_error(repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine.revert_batch, "batchable", lambda pending: ([], pending))  # every revert alone
    t, d = load(repo.root)
    rep = run_bite(t, d, Settings(warm_runner=False), jobs=1, engine=_lossy(RevertItem))
    assert rep.baseline.status == "green", rep.baseline.output
    assert [(r.verdict, r.reason) for r in rep.results if r.verdict != "not-code"] == [("error", LOST)]


def test_a_guard_the_executor_drops_is_an_error_and_its_hunk_still_comes(repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine.guard_batch, "batchable", lambda jobs, *a: ([], jobs))  # every guard alone
    t, d = load(repo.root)
    rep = run_bite(t, d, Settings(warm_runner=False), jobs=1, guards=True, engine=_lossy(GuardItem))
    [hunk] = [r for r in rep.results if r.verdict != "not-code"]
    assert hunk.verdict != "error"  # the hunk's own revert was graded
    lost = [g for g in hunk.guards if g.reason == LOST]
    assert len(lost) == 1 and lost[0].verdict == "error"
    assert len(hunk.guards) >= 2  # the others were graded as usual


def _lossy(kind: type) -> object:
    """An executor factory whose executions lose the first result of a `kind` item they ran."""

    class Lossy(LocalExecutor):
        def start(self, plan, job):  # type: ignore[no-untyped-def]
            execution = super().start(plan, job)
            real = execution.results
            want = HunkResult if kind is RevertItem else tuple

            def results():  # type: ignore[no-untyped-def]
                dropped = False
                for r in real():
                    if isinstance(r, want) and not dropped:
                        dropped = True  # it ran, and was lost on the way back
                        continue
                    yield r

            execution.results = results  # type: ignore[method-assign]
            return execution

    return Lossy
