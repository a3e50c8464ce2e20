"""The local executor against the plainest one: every planned item alone, one after another.

Batch sessions, the tail and the warm server's forks are speed; the verdicts
must be those of running each item on its own in a fresh scratch
(fallback.run_alone), hunk by hunk and guard by guard.
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
from reviewui.core.bite.plan import GuardItem, Item, SweepPlan
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
                      *(GuardItem(g.job) for s in plan.sessions for g in s.guards),
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


def test_the_local_executor_grades_as_every_item_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    base = {"pkg/__init__.py": "", "pkg/g0.py": "X = 1\n", "pkg/g1.py": "X = 1\n", "pkg/cfg.py": "LIMIT = 3\n"}
    branch = {"tests/__init__.py": "", "pkg/g0.py": "X = 1\n" + bench_function(0),
              "pkg/g1.py": "X = 1\n" + bench_function(1), "pkg/cfg.py": "LIMIT = 4\n",
              "tests/test_g0.py": bench_tests(0), "tests/test_g1.py": bench_tests(1),
              "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef limit():\n    return 4\n"}
    t, d = load(make_repo(tmp_path / "r", base, branch).root)
    batched = run_bite(t, d, Settings(), jobs=2, guards=True, timeout=20)
    alone = run_bite(t, d, Settings(), jobs=2, guards=True, timeout=20, engine=OneByOne)
    assert seen and len(seen[-1].items) > 30  # the plain executor really ran every item itself
    got, want = _verdicts(batched), _verdicts(alone)
    assert got == want
    assert {"bites", "toothless"} <= set(got.values()), got
