"""The local executor against the plainest one: every planned item alone, one after another.

Batch sessions, the tail and the warm server's forks are speed; the verdicts
must be those of running each item on its own in a fresh scratch
(fallback.run_alone), hunk by hunk and guard by guard, with guards and
without (a plain sweep batches its reverts in sessions of their own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from bench.bench_guards import function as bench_function
from bench.bench_guards import tests as bench_tests
from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.executor import Result, SweepJob
from reviewui.core.bite.fallback import run_alone
from reviewui.core.bite.plan import ControlItem, GuardItem, Item, SweepPlan
from reviewui.core.config import Settings
from reviewui.core.run.worktree import WorktreePool
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow


class OneByOne:
    """Every item of the plan alone, in plan order, on one thread."""

    name = "one-by-one"

    def __init__(self, pool: WorktreePool) -> None:
        self.pool = pool
        self.slots = pool.size  # planned as the local executor's plan is: the same items
        self.items: list[Item] = []

    def start(self, plan: SweepPlan, job: SweepJob) -> OneByOne:
        self.items = [*plan.alone, *(i for s in plan.sessions for i in s.reverts),
                      *(g if isinstance(g, ControlItem) else GuardItem(g.job) for s in plan.sessions
                        for g in s.guards),
                      *(GuardItem(g.job) for g in plan.tail)]
        self._job = job
        seen.append(self)
        return self

    def settle(self) -> None:
        pass

    def results(self) -> Iterator[Result]:
        for item in self.items:
            yield run_alone(self.pool, self._job, item)

    def cancel(self) -> None:
        pass


seen: list[OneByOne] = []


def _verdicts(report) -> dict[tuple[object, ...], str]:
    out: dict[tuple[object, ...], str] = {}
    for r in report.results:
        out[(r.file, r.index)] = r.verdict
        for g in r.guards:
            out[(g.file, g.line, g.kind, g.start, g.replacement)] = g.verdict
    return out


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """One repo, swept four ways: batched and one by one, with guards and without."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        use_venv_python(monkeypatch)
        filler = "".join(f"# line {n}\n" for n in range(8))  # keeps each function's change a hunk of its own
        calc = [("add", "a + b"), ("sub", "a - b"), ("mul", "a * b"), ("div", "a / b")]
        base = {"pkg/__init__.py": "", "pkg/g0.py": "X = 1\n", "pkg/g1.py": "X = 1\n", "pkg/cfg.py": "LIMIT = 3\n",
                "pkg/calc.py": "".join(f"def {n}(a, b):\n    return {e}\n\n\n{filler}" for n, e in calc)}
        branch = {"tests/__init__.py": "", "pkg/g0.py": "X = 1\n" + bench_function(0),
                  "pkg/g1.py": "X = 1\n" + bench_function(1), "pkg/cfg.py": "LIMIT = 4\n",
                  # four hunks in one file: two bite, one is toothless, one no test runs
                  "pkg/calc.py": "".join(f"def {n}(a, b):\n    if b is None:\n        return a\n    return {e}\n\n\n"
                                         f"{filler}" for n, e in calc),
                  "tests/test_calc.py": ("from pkg.calc import add, mul, sub\n\n\ndef test_add():\n"
                                         "    assert add(2, None) == 2\n\n\ndef test_sub():\n    assert sub(3, None) == 3\n"
                                         "\n\ndef test_mul():\n    mul(2, 3)\n"),
                  "tests/test_g0.py": bench_tests(0), "tests/test_g1.py": bench_tests(1),
                  "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef limit():\n    return 4\n"}
        t, d = load(make_repo(tmp_path_factory.mktemp("diff") / "r", base, branch).root)
        out: dict[str, object] = {}
        for guards in (True, False):
            out[f"batched-{guards}"] = run_bite(t, d, Settings(), jobs=2, guards=guards, timeout=20)
            out[f"alone-{guards}"] = run_bite(t, d, Settings(), jobs=2, guards=guards, timeout=20, engine=OneByOne)
            out[f"items-{guards}"] = list(seen[-1].items)
        yield out


def test_the_local_executor_grades_as_every_item_alone(sweeps: dict[str, object]) -> None:
    items = sweeps["items-True"]
    assert isinstance(items, list) and len(items) > 30  # the plain executor really ran every item itself
    got, want = _verdicts(sweeps["batched-True"]), _verdicts(sweeps["alone-True"])
    assert got == want
    assert {"bites", "toothless"} <= set(got.values()), got


def test_a_plain_sweep_batches_its_reverts_and_grades_as_each_alone(sweeps: dict[str, object]) -> None:
    got, want = _verdicts(sweeps["batched-False"]), _verdicts(sweeps["alone-False"])
    assert got == want
    assert {"bites", "toothless", "uncovered"} <= set(got.values()), got
    # the same hunk verdicts as the sweep that graded guards too
    with_guards = {k: v for k, v in _verdicts(sweeps["batched-True"]).items() if len(k) == 2}
    assert got == with_guards
    report = sweeps["batched-False"]
    assert report.controls >= 2  # type: ignore[attr-defined]  # the null runs among the reverts, all green


def test_a_plain_sweep_runs_its_python_reverts_in_sessions_not_alone(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --guards, no Python revert that names its tests runs alone in a fresh scratch."""
    from reviewui.core.bite import executor_local, fallback, plan

    alone: list[Item] = []
    real = fallback.run_alone

    def spy(pool, job, item):  # type: ignore[no-untyped-def]
        alone.append(item)
        return real(pool, job, item)

    monkeypatch.setattr(executor_local, "run_alone", spy)
    monkeypatch.setattr(plan, "SESSION_SHARE", 0.0)  # 4 hunks would ride one session: split them over both slots
    use_venv_python(monkeypatch)
    base = {"pkg/__init__.py": "", **{f"pkg/m{i}.py": f"def f{i}(x):\n    return x\n" for i in range(4)}}
    branch = {"tests/__init__.py": "",
              **{f"pkg/m{i}.py": f"def f{i}(x):\n    if x < 0:\n        return 0\n    return x\n" for i in range(4)},
              **{f"tests/test_m{i}.py": f"from pkg.m{i} import f{i}\n\n\ndef test_{i}():\n    assert f{i}(-1) == 0\n"
                 for i in range(4)}}
    t, d = load(make_repo(tmp_path / "r", base, branch).root)
    report = run_bite(t, d, Settings(), jobs=2, timeout=20)
    assert [r.verdict for r in report.results] == ["bites"] * 4
    assert alone == []  # every revert and control rode in a session
    assert report.controls >= 4  # two sessions, at least two null reverts each
