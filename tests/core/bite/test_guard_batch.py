"""Guards graded in one pytest session (swapped code objects) agree with guards run one by one."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.bite import guard_batch
from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from tests.core.bite.helpers import load
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

BASE = {"pkg/__init__.py": "", "pkg/shapes.py": "X = 1\n"}

# Methods, a staticmethod, a property, a decorated function (functools.wraps), a closure user,
# a nested helper and a loop whose early exit removed hangs: the shapes the swap must find.
SHAPES = '''import functools

X = 1


def logged(fn):
    @functools.wraps(fn)
    def inner(*a, **k):
        return fn(*a, **k)
    return inner


@logged
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


class Box:
    def __init__(self, w):
        self.w = w

    @property
    def wide(self):
        return self.w > 10

    @staticmethod
    def scale(v, k):
        if k == 0:
            raise ValueError("k")
        return v * k

    def area(self, h):
        def twice(v):
            return v + v
        if h < 0:
            return 0
        return twice(self.w * h) // 2


def countdown(n):
    from time import sleep  # the guard that drops `break` loops until its timeout: asleep, not on a core
    while True:
        n -= 1
        if n <= 0:
            break
        sleep(0.001)
    return n
'''

TESTS = '''import pytest
from pkg.shapes import Box, clamp, countdown


def test_clamp():
    assert clamp(-1, 0, 5) == 0
    assert clamp(3, 0, 5) == 3


def test_box():
    assert Box(20).wide
    assert Box(2).area(3) == 6
    assert Box.scale(2, 3) == 6
    with pytest.raises(ValueError):
        Box.scale(1, 0)


def test_countdown():
    assert countdown(3) == 0
'''


def _spy_batches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Per batch session run from now on: (guards it graded, guards it left to run the ordinary way)."""
    seen: list[tuple[int, int]] = []
    real = guard_batch.run_batch

    def spying(*a, **k):
        graded, again = real(*a, **k)
        seen.append((len(graded), len(again)))
        return graded, again

    monkeypatch.setattr(guard_batch, "run_batch", spying)
    return seen


def _verdicts(report) -> dict[tuple[int, str, str], str]:
    return {(g.line, g.kind, g.replacement): g.verdict for r in report.results for g in r.guards}


def test_batched_and_one_by_one_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rb = make_repo(tmp_path / "r", BASE, {"pkg/shapes.py": SHAPES, "tests/test_shapes.py": TESTS})
    t, d = load(rb.root)
    batches = _spy_batches(monkeypatch)
    # Two guards of countdown loop until the timeout, batched and alone: 8 s is far above any
    # other guard's run (under a second) and keeps the test from waiting a minute.
    batched = run_bite(t, d, Settings(), jobs=2, guards=True, timeout=8)
    assert sum(graded for graded, _ in batches) >= 10, batches  # most guards went through a batch session
    monkeypatch.setattr(guard_batch, "batchable", lambda jobs, *_: ([], list(jobs)))
    alone = run_bite(t, d, Settings(), jobs=2, guards=True, timeout=8)
    got, want = _verdicts(batched), _verdicts(alone)
    assert got == want
    assert {"bites", "toothless", "timeout"} <= set(got.values()), got  # the removed `break` loops forever


def test_a_guard_on_a_line_run_at_import_is_not_batched(tmp_path: Path) -> None:
    # Executed outside a test body: swapping code after import would miss its effect.
    src = "def pick(x):\n    if x > 1:\n        return 'big'\n    return 'small'\n\n\nSIZE = pick(5)\n"
    rb = make_repo(tmp_path / "r", BASE, {
        "pkg/shapes.py": src,
        "tests/test_pick.py": "from pkg.shapes import SIZE\n\n\ndef test_size():\n    assert SIZE == 'big'\n"})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=1, guards=True)
    verdicts = {(g.line, g.replacement): g.verdict for g in rep.results[0].guards}
    assert verdicts[(2, "False")] == "bites", verdicts  # import-time behaviour changed: a real run sees it


def test_def_path_finds_functions_and_methods_only() -> None:
    assert guard_batch.def_path(SHAPES, 15) == [("clamp", 13, 14)]
    assert guard_batch.def_path(SHAPES, 39) == [("Box", 22, 22), ("area", 36, 36)]
    assert guard_batch.def_path(SHAPES, 3) is None  # module level
    assert guard_batch.def_path(SHAPES, 9) is None  # a decorator's wrapper, made at import
    assert guard_batch.def_path(SHAPES, 38) is None  # a nested helper
    assert guard_batch.def_path("def f(:\n", 1) is None


def test_batchable_parses_each_file_once_and_finds_what_the_edited_file_says(monkeypatch) -> None:
    # A guard keeps its file's lines where they were: the head's parse tells every guard of the
    # file where its function is (one parse, not one per guard line: a 2600-line file took
    # ~20 ms a parse). Where the head has no swappable function the edited file is asked, as
    # before (a nested helper's lines here): the answers are the same as one parse per guard.
    import ast

    from reviewui.core.bite.coverage_map import Selection
    from reviewui.core.bite.guard_check import GuardJob
    from reviewui.core.bite.guards import generate
    from reviewui.core.bite.origin import ChangedModule

    lines = range(1, SHAPES.count("\n") + 1)
    jobs = [GuardJob(g, Selection("tests", ("t",)), ("t",)) for g in generate(SHAPES, lines, file="pkg/shapes.py")]
    modules = [ChangedModule("pkg/shapes.py", "pkg.shapes", "")]
    one_by_one, _ = guard_batch.batchable(jobs, modules)
    parses = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda *a, **k: parses.append(1) or real(*a, **k))
    batch, rest = guard_batch.batchable(jobs, modules, {"pkg/shapes.py": SHAPES}.get)
    assert [(b.job.guard.ident, b.path) for b in batch] == [(b.job.guard.ident, b.path) for b in one_by_one]
    assert len(batch) >= 10 and rest
    fallbacks = len({(j.guard.file, j.guard.line) for j in rest})
    assert len(parses) == 1 + fallbacks  # the head once, then each line the head cannot place


def test_a_batched_failure_is_named_by_its_exception_line() -> None:
    from reviewui.core.inside.guard_batch_child import _first_line

    native = ('Traceback (most recent call last):\n  File "/s/tests/test_x.py", line 3, in test_x\n'
              '    assert f() == 2\n           ^^^^^^^^\nAssertionError: assert 1 == 2\n +  where 1 = f()\n')
    assert _first_line(native) == "AssertionError: assert 1 == 2"
    assert _first_line("def test():\n>   x()\nE   NameError: name 'x' is not defined\n") == \
        "NameError: name 'x' is not defined"
    assert _first_line("") == ""


def test_a_function_the_batch_cannot_reach_runs_the_ordinary_way(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # A decorator without functools.wraps hides the function: the fork says so and the guard
    # is graded in a scratch of its own, with the same verdict.
    src = ("def hide(fn):\n    return lambda *a: fn(*a)\n\n\n"
           "@hide\ndef sign(x):\n    if x < 0:\n        return -1\n    return 1\n")
    rb = make_repo(tmp_path / "r", BASE, {
        "pkg/shapes.py": src,
        "tests/test_sign.py": "from pkg.shapes import sign\n\n\ndef test_sign():\n    assert sign(-2) == -1\n"})
    t, d = load(rb.root)
    batches = _spy_batches(monkeypatch)
    rep = run_bite(t, d, Settings(), jobs=1, guards=True)
    assert sum(again for _, again in batches) >= 1, batches
    verdicts = {(g.line, g.replacement): g.verdict for g in rep.results[0].guards}
    assert verdicts[(7, "False")] == "bites", verdicts  # `x < 0` never true: test_sign fails


CALC = "X = 1\n\n\ndef total(items):\n    size = len(items)\n    if size == 0:\n        return 0\n    return sum(items)\n"
CALC_TESTS = '''from pkg.calc import total


def test_empty():
    assert total([]) + 0 == 0  # None + 0: a TypeError, which grading may excuse


def test_sum():
    assert total([1, 2]) == 3


def test_one():
    assert total([5]) == 5
'''


def test_a_batched_guard_stops_at_its_first_bite_but_not_at_an_excusable_failure(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/calc.py": "X = 1\n"},
                   {"pkg/calc.py": CALC, "tests/test_calc.py": CALC_TESTS})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=1, guards=True, timeout=20)
    guards = {(g.line, g.kind, g.replacement): g for g in rep.results[0].guards}
    ids = [f"tests/test_calc.py::test_{n}" for n in ("empty", "one", "sum")]  # the order they run in
    taken = guards[(6, "condition", "True")]  # every call returns 0: test_one is the first to fail
    assert taken.verdict == "bites" and taken.failing_tests == (ids[1],)
    assert taken.tests_run == tuple(ids[:2])  # test_sum never ran: one bite is the evidence
    never = guards[(6, "condition", "False")]  # sum([]) is 0 too: nothing fails, so every test ran
    assert never.verdict == "toothless" and set(never.tests_run) == set(ids)
    body = guards[(4, "body", "return None")]  # test_empty's TypeError may be excused: test_one runs too
    assert body.verdict == "bites" and ids[1] in body.failing_tests and body.tests_run == tuple(ids[:2])


def test_a_batched_bite_is_reported_from_its_test_line_on(tmp_path: Path) -> None:
    # The fork's own short report: the frames from the test function on, then the exception
    # with pytest's assertion explanation, and its first line as the message.
    rb = make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/calc.py": "X = 1\n"},
                   {"pkg/calc.py": CALC, "tests/test_calc.py": CALC_TESTS})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=1, guards=True, timeout=20)
    taken = next(g for g in rep.results[0].guards if (g.line, g.replacement) == (6, "True"))
    assert taken.messages == {"tests/test_calc.py::test_one": "AssertionError: assert 0 == 5"}
    assert 'tests/test_calc.py", line 13, in test_one\n    assert total([5]) == 5' in taken.output
    assert "where 0 = total([5])" in taken.output
    assert "_pytest" not in taken.output and "^^^" not in taken.output  # no pytest frames, no caret lines


def test_a_sweep_reads_each_file_of_the_head_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Selection, coverage and guard planning all read the changed files: one git process each.
    from collections import Counter

    from reviewui.core.bite import head_files

    rb = make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/calc.py": "X = 1\n"},
                   {"pkg/calc.py": CALC, "tests/test_calc.py": CALC_TESTS})
    t, d = load(rb.root)
    reads: Counter[str] = Counter()
    real = head_files.show_file
    monkeypatch.setattr(head_files, "show_file", lambda cwd, rev, path: reads.update([path]) or real(cwd, rev, path))
    rep = run_bite(t, d, Settings(), jobs=1, guards=True, timeout=20)
    assert rep.results[0].guards and reads["pkg/calc.py"] == 1, reads


def test_batches_keep_a_files_guards_together_and_about_even() -> None:
    # A session collects the test modules its guards need: whole files where sizes allow.
    from reviewui.core.bite.guard_check import GuardJob
    from reviewui.core.bite.guards import Guard

    def batch_guard(path: str, n: int) -> guard_batch.BatchGuard:
        g = Guard(file=path, hunk=0, line=n, kind="condition", description="", start=(n, 0), end=(n, 1),
                  replacement="True", source="", cover_lines=(n,), names=frozenset())
        return guard_batch.BatchGuard(GuardJob(g, None, ()), "m", [])  # type: ignore[arg-type]

    plan = [batch_guard(f"pkg/{f}.py", n) for n in range(4) for f in "abc"]  # interleaved, as planned
    batches = guard_batch.split(plan, 2)
    files = [sorted({g.job.guard.file[4] for g in b}) for b in batches]
    assert [len(b) for b in batches] == [6, 6] and files == [["a", "c"], ["b", "c"]], files  # only c is shared
    assert all(b == sorted(b, key=plan.index) for b in batches)  # each batch in plan order
    one = guard_batch.split([batch_guard("pkg/a.py", n) for n in range(10)], 2)
    assert [len(b) for b in one] == [5, 5]  # one big file is still shared by both slots
    assert guard_batch.split([], 2) == []
