"""The guard tail: whichever batch session is free first grades the guards held back, and
the reverts start while the instrument check still runs, reporting nothing until it passed."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import reviewui.core.bite.runctx as runctx
from bench.bench_guards import function as bench_function
from bench.bench_guards import tests as bench_tests
from reviewui.core.bite import fallback, guard_batch, guard_check, guard_tail
from reviewui.core.bite.engine import UntrustedCommand, run_bite
from reviewui.core.bite.guard_check import BatchGuard
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.guards import Guard
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo


def _guard(path: str, n: int) -> BatchGuard:
    g = Guard(file=path, hunk=0, line=n, kind="condition", description="", start=(n, 0), end=(n, 1),
              replacement="True", source="", cover_lines=(n,), names=frozenset())
    return BatchGuard(GuardJob(g, None, (f"tests/test_{path[4]}.py",)), "m", [])  # type: ignore[arg-type]


def test_a_quarter_is_held_back_from_the_files_with_most_guards() -> None:
    plan = [_guard(f"pkg/{f}.py", n) for f, count in (("a", 4), ("b", 12), ("c", 8)) for n in range(count)]
    dealt, held = guard_tail.take_tail(plan, 2)
    assert len(held) == 6 and {g.job.guard.file for g in held} == {"pkg/b.py"}  # one file: few tests twice
    assert [g.job.guard.line for g in held] == list(range(6, 12))  # its last guards; its first stay dealt
    assert sorted(map(id, dealt + held)) == sorted(map(id, plan))  # every guard once
    assert dealt == [g for g in plan if g in dealt]  # in plan order
    assert guard_tail.take_tail(plan, 1) == (plan, [])  # one session: nothing to balance
    few = plan[:guard_tail.MIN_GUARDS - 1]
    assert guard_tail.take_tail(few, 2) == (few, [])
    tail = guard_tail.Tail(held, 2)
    assert tail.tests == ["tests/test_b.py"]  # what every session collects besides its own


def test_the_last_session_to_finish_gets_what_nobody_took() -> None:
    held = [_guard("pkg/a.py", n) for n in range(5)]
    tail = guard_tail.Tail(held, 2)
    assert [tail.take(), tail.take()] == [0, 1]
    assert tail.finish() == []  # another session may still take the rest
    assert tail.take() == 2
    assert tail.finish() == held[3:]  # the last one: the rest runs the ordinary way
    assert tail.take() is None and tail.finish() == []


def _repo(root: Path, files: int = 3):
    """The bench's repository, smaller: each file gains a 15-line function (18 guards) and its tests."""
    base = {"pkg/__init__.py": "", **{f"pkg/g{i}.py": "X = 1\n" for i in range(files)}}
    branch = {"tests/__init__.py": "", **{f"pkg/g{i}.py": "X = 1\n" + bench_function(i) for i in range(files)},
              **{f"tests/test_g{i}.py": bench_tests(i) for i in range(files)}}
    return load(make_repo(root, base, branch).root)


def _verdicts(report) -> dict[tuple[str, int, str, str], str]:
    return {(g.file, g.line, g.kind, g.replacement): g.verdict for r in report.results for g in r.guards}


@pytest.mark.slow
def test_a_session_that_starts_late_leaves_the_tail_to_the_other(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    t, d = _repo(tmp_path / "r")
    alone = run_bite(t, d, Settings(), jobs=1, guards=True, timeout=20)  # one session, no tail
    real_batch, real_serve = guard_batch.run_batch, guard_tail.TailServer.close
    starts: list[int] = []
    took: list[int] = []

    def late_batch(*a, **k):
        with lock:
            first = not starts
            starts.append(1)
        if first:
            time.sleep(2.0)  # this session starts late: the other has the tail done by then
        return real_batch(*a, **k)

    def counted_close(self):
        real_serve(self)
        took.append(len(self.served))

    lock = threading.Lock()
    monkeypatch.setattr(guard_batch, "run_batch", late_batch)
    monkeypatch.setattr(guard_tail.TailServer, "close", counted_close)
    both = run_bite(t, d, Settings(), jobs=2, guards=True, timeout=20)
    assert len(took) == 2 and sorted(took)[0] == 0 and sorted(took)[1] >= 10, took  # all to the early one
    assert _verdicts(both) == _verdicts(alone)  # a tail guard is graded as any other
    assert {"bites", "toothless"} <= set(_verdicts(both).values())


@pytest.mark.slow
def test_a_tail_no_session_could_serve_runs_the_ordinary_way(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    t, d = _repo(tmp_path / "r")

    def no_socket(*a, **k):
        raise OSError("AF_UNIX path too long")

    ordinary: list[int] = []
    real_job = guard_check.run_job

    def counted_job(*a, **k):
        ordinary.append(1)
        return real_job(*a, **k)

    monkeypatch.setattr(guard_tail.TailServer, "__init__", no_socket)
    monkeypatch.setattr(fallback, "run_job", counted_job)
    rep = run_bite(t, d, Settings(), jobs=2, guards=True, timeout=20)
    guards = [g for r in rep.results for g in r.guards]
    assert len(guards) == 54 and all(g.verdict in ("bites", "toothless") for g in guards)
    assert len(ordinary) == int(54 * guard_tail.TAIL_SHARE)  # the held-back quarter, each on its own


# Every failure turned into a pass: the baseline is green, the instrument test "passes".
FORGING = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
'''


@pytest.mark.slow
@pytest.mark.parametrize("forged", [False, True], ids=["trusted", "forged"])
def test_reverts_start_before_the_instrument_check_ends_and_nothing_is_reported_before_it(
        tmp_path: Path, monkeypatch, forged: bool) -> None:
    use_venv_python(monkeypatch)
    t, d = _repo(tmp_path / "r", files=2) if not forged else (None, None)
    if forged:
        base = {"pkg/__init__.py": "", "pkg/g0.py": "X = 1\n"}
        branch = {"tests/__init__.py": "", "conftest.py": FORGING, "pkg/g0.py": "X = 1\n" + bench_function(0),
                  "tests/test_g0.py": bench_tests(0)}
        t, d = load(make_repo(tmp_path / "f", base, branch).root)
    import reviewui.core.bite.prepare as prepare

    events: list[tuple[str, float]] = []
    real_side, real_run = prepare._in_slot, runctx.run_tests

    def late_side(*args):
        time.sleep(1.5)  # the baseline is done long before: the reverts must not wait for this
        try:
            return real_side(*args)
        finally:
            events.append(("checked", time.monotonic()))

    def recording(cwd, command, tests, *a, **k):
        if not any("instrument" in str(p) for p in tests) and not k.get("coverage"):
            events.append(("revert run", time.monotonic()))
        return real_run(cwd, command, tests, *a, **k)

    monkeypatch.setattr(prepare, "_in_slot", late_side)
    monkeypatch.setattr(runctx, "run_tests", recording)
    reported: list[float] = []
    run = lambda: run_bite(t, d, Settings(), jobs=2, guards=True, timeout=20,  # noqa: E731
                           on_result=lambda r: reported.append(time.monotonic()))
    if forged:
        with pytest.raises(UntrustedCommand, match="cannot be trusted"):
            run()
        assert reported == []  # nothing the forged reports made is shown
        # The baseline's own canary test was reported passed: refused before any revert started.
        assert [what for what, _ in events if what == "revert run"] == []
        return
    else:
        rep = run()
        assert {r.verdict for r in rep.results} == {"broken"} and _verdicts(rep)
        checked = next(when for what, when in events if what == "checked")
        assert reported and min(reported) >= checked  # nothing reported before the check passed
    first_revert = min(when for what, when in events if what == "revert run")
    checked = next(when for what, when in events if what == "checked")
    assert first_revert < checked  # the reverts did not wait for it


def test_the_checks_slot_is_taken_before_its_thread_runs_and_given_back_after(tmp_path: Path) -> None:
    from reviewui.core.bite import prepare
    from reviewui.core.run.worktree import WorktreePool

    rb = make_repo(tmp_path / "r", {"a.py": "X = 1\n"}, {"a.py": "X = 2\n"})
    with WorktreePool(rb.root, 1) as pool:
        lease = pool.acquire()
        held = lease.__enter__()  # taken by the caller: nobody else gets it meanwhile
        taken = threading.Event()

        def other() -> None:
            with pool.acquire():
                taken.set()

        threading.Thread(target=other, daemon=True).start()
        assert not taken.wait(0.3)
        assert prepare._in_slot(lease, held, lambda s: s is held) is True
        assert taken.wait(10)  # given back once the check is done
