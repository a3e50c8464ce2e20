"""Hunk reverts graded in one configured pytest session agree with reverts run one by one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reviewui.core.bite import plan, revert_batch
from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from tests.core.bite.helpers import feature_repo, load, use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(graded by the batch, sent back to run one by one) for every batch session."""
    seen: list[tuple[int, int]] = []
    real = revert_batch.RevertSession.grade

    def grade(self, *a, **k):
        real(self, *a, **k)
        seen.append((len(self.graded), len(self.again)))

    monkeypatch.setattr(revert_batch.RevertSession, "grade", grade)
    return seen


def _no_controls(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests count a session's forks: no null runs placed among them at random (test_controls.py)."""
    monkeypatch.setattr(plan, "CONTROLS", 0)


def _sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base: dict[str, str], branch: dict[str, str],
           **kw):
    """(batch sessions as _spy records them, report) of a guarded sweep of a new repo, one slot."""
    use_venv_python(monkeypatch)
    _no_controls(monkeypatch)
    t, d = load(make_repo(tmp_path / "r", base, branch).root)
    sessions = _spy(monkeypatch)
    return sessions, run_bite(t, d, Settings(), jobs=1, guards=True, **kw)


def _one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(revert_batch, "batchable", lambda pending: ([], list(pending)))


def _graded(report) -> dict[str, tuple[str, tuple[str, ...], str]]:
    return {r.file: (r.verdict, r.failing_tests, r.reason) for r in report.results}


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_batched_and_one_by_one_reverts_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: bool) -> None:
    use_venv_python(monkeypatch)
    _no_controls(monkeypatch)
    t, d = load(feature_repo(tmp_path / "r").root)
    sessions = _spy(monkeypatch)
    batched = run_bite(t, d, Settings(warm_runner=warm), jobs=2, guards=True)
    assert sum(graded for graded, _ in sessions) >= 3 and not any(again for _, again in sessions), sessions
    _one_by_one(monkeypatch)
    alone = run_bite(t, d, Settings(warm_runner=warm), jobs=2, guards=True)
    assert _graded(batched) == _graded(alone)
    assert {v for v, _, _ in _graded(batched).values()} >= {"bites", "toothless", "broken"}
    broken = next(r for r in batched.results if r.verdict == "broken")
    assert "ImportError" in broken.output and "short test summary" in broken.output  # the fork's own output


# Three hunks, each graded by the same test; the test leaves a file behind in the tree.
LEFTOVER_BASE = {"pkg/__init__.py": "", **{f"pkg/{m}.py": f"def {m}(x):\n    return x > 1\n" for m in "abc"}}
LEFTOVER_BRANCH = {
    **{f"pkg/{m}.py": f"def {m}(x):\n    return x > 0\n" for m in "abc"},
    "tests/test_abc.py": (
        "from pathlib import Path\n\nfrom pkg.a import a\nfrom pkg.b import b\nfrom pkg.c import c\n\n\n"
        "def test_fresh_tree():\n    a(5), b(5), c(5)\n    assert not Path('leftover').exists()\n"
        "    Path('leftover').write_text('x')\n\n\ndef test_a():\n    assert a(1)\n"
    ),
}


def test_a_revert_after_one_whose_tests_wrote_files_runs_in_a_fresh_copy(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # In a shared tree the second revert would find `leftover` and `test_fresh_tree` would
    # fail: a bite made up by the batch. Once the tree changed, the rest runs one by one,
    # the guards of the session included.
    sessions, batched = _sweep(tmp_path, monkeypatch, LEFTOVER_BASE, LEFTOVER_BRANCH)
    assert sessions and sessions[0][1] == 2, sessions  # the first revert ran in the batch, two came back
    assert _graded(batched) == {
        "pkg/a.py": ("bites", ("tests/test_abc.py::test_a",), ""),  # a(1) is False again
        "pkg/b.py": ("toothless", (), "every selected test still passed"),
        "pkg/c.py": ("toothless", (), "every selected test still passed"),
    }
    guards = {r.file: [(g.kind, g.verdict) for g in r.guards] for r in batched.results}
    assert guards["pkg/b.py"] == [("boundary", "toothless")], guards  # no guard run saw the leftover file


# A root conftest imports the module under revert while pytest configures; it also makes a
# temp dir for the whole session at configure time and removes it when the session ends.
CONFTEST = '''import shutil
import tempfile

import pkg.early

_dir = []


def pytest_configure(config):
    _dir.append(tempfile.mkdtemp())


def pytest_sessionfinish(session):
    shutil.rmtree(_dir[0])  # raises when an earlier session (a fork) already removed it
'''
EARLY_BASE = {"pkg/__init__.py": "", "pkg/early.py": "def e(x):\n    return x > 1\n",
              "pkg/late.py": "def late(x):\n    return x > 1\n", "conftest.py": CONFTEST}
EARLY_BRANCH = {
    "pkg/early.py": "def e(x):\n    return x > 0\n", "pkg/late.py": "def late(x):\n    return x > 0\n",
    "tests/test_el.py": "from pkg.early import e\nfrom pkg.late import late\n\n\ndef test_e():\n    assert e(1)\n\n\n"
                        "def test_l():\n    assert late(1)\n",
}


def test_a_module_imported_while_pytest_configured_is_reverted_on_its_own(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    sessions, batched = _sweep(tmp_path, monkeypatch, EARLY_BASE, EARLY_BRANCH)
    assert sessions == [(1, 1)], sessions  # pkg/late.py in the batch; pkg/early.py came back
    got = _graded(batched)
    # Both bite: a fork ends before the conftest's session end, which would remove the
    # session's temp dir under the next fork (an internal error, graded broken).
    assert got["pkg/early.py"][:2] == ("bites", ("tests/test_el.py::test_e",))
    assert got["pkg/late.py"][:2] == ("bites", ("tests/test_el.py::test_l",))


HANG_BASE = {"pkg/__init__.py": "", "pkg/loop.py": "def spin(x):\n    while x > 0:\n        pass\n    return x\n",
             "pkg/other.py": "def other(x):\n    return x > 1\n"}
HANG_BRANCH = {
    "pkg/loop.py": "def spin(x):\n    while x > 0:\n        x -= 1\n    return x\n",
    "pkg/other.py": "def other(x):\n    return x > 0\n",
    "tests/test_hang.py": "from pkg.loop import spin\nfrom pkg.other import other\n\n\n"
                          "def test_spin():\n    assert spin(3) == 0\n\n\ndef test_other():\n    assert other(1)\n",
}


def test_a_revert_that_hangs_is_killed_and_the_next_one_still_runs(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    sessions, rep = _sweep(tmp_path, monkeypatch, HANG_BASE, HANG_BRANCH, timeout=3)
    assert sessions == [(2, 0)], (sessions, _graded(rep))
    got = _graded(rep)
    assert got["pkg/loop.py"][0] == "timeout"
    assert got["pkg/other.py"][:2] == ("bites", ("tests/test_hang.py::test_other",))


FORGED = ("import subprocess\nfrom pkg.calc import add\n\n\ndef test_forged():\n    add(3, 1)\n"
          "    for args in (['diff', '--quiet', 'HEAD'], ['diff', '--cached', '--quiet'], ['status', '--porcelain']):\n"
          "        done = subprocess.run(['git', *args], capture_output=True, text=True)\n"
          "        assert done.returncode == 0 and not done.stdout, args\n")


def test_a_batched_revert_looks_committed_to_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A test that only asks git whether the tree changed cannot forge a bite: the fork's HEAD
    # and index are the revert's own commit, as in a revert run of its own.
    sessions, rep = _sweep(tmp_path, monkeypatch,
                           {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n"},
                           {"pkg/calc.py": "def add(a, b):\n    if a > b:\n        return a + b\n    return a + b\n",
                            "tests/test_forged.py": FORGED})
    assert rep.baseline.status == "green", rep.baseline.output
    assert sessions == [(1, 0)], sessions
    assert [r.verdict for r in rep.results] == ["toothless"], rep.results[0].output


def test_every_revert_rides_in_a_session_whatever_the_guard_count() -> None:
    # (was: reverts rode only in guard sessions; without one each revert ran alone in a fresh scratch)
    items: list[Any] = [(f, None, ("t",)) for f in "abcd"]  # stand-ins: deal only moves them around
    assert revert_batch.deal(items, [], 2) == ([(items[0::2], []), (items[1::2], [])], [])  # sessions of reverts
    assert revert_batch.deal(items[:1], [], 2) == ([(items[:1], [])], [])  # never an empty session
    sessions, rest = revert_batch.deal(items, [["g0"], ["g1"]], 2)
    assert sessions == [(items[0::2], ["g0"]), (items[1::2], ["g1"])] and rest == []
    sessions, rest = revert_batch.deal(items, [["g0"]], 2)  # one guard session, two slots: a session of reverts
    assert sessions == [(items[0::2], ["g0"]), (items[1::2], [])] and rest == []
    assert revert_batch.deal([], [], 2) == ([], [])


def test_a_revert_goes_to_the_session_whose_guards_share_its_file() -> None:
    class F:
        def __init__(self, path: str) -> None:
            self.path = path

    items: list[Any] = [(F(f"pkg/{f}.py"), None, ("t",)) for f in "abcd"]
    chunks = [["pkg/b.py", "pkg/d.py"], ["pkg/a.py", "pkg/c.py"]]
    sessions, rest = revert_batch.deal(items, chunks, 2, set)
    assert [[i[0].path for i in got] for got, _ in sessions] == [["pkg/b.py", "pkg/d.py"], ["pkg/a.py", "pkg/c.py"]]
    assert rest == []
    lopsided = [["pkg/a.py", "pkg/b.py", "pkg/c.py", "pkg/d.py"], ["pkg/x.py"]]
    sessions, _ = revert_batch.deal(items, lopsided, 2, set)
    assert [len(got) for got, _ in sessions] == [2, 2]  # the shares stay even


def test_a_test_file_is_rewritten_once_for_every_fork_while_its_bytes_are_the_same(tmp_path, monkeypatch) -> None:
    import _pytest.assertion.rewrite as rewrite

    from reviewui.core.inside import revert_batch_child

    calls: list[str] = []

    def fake_rewrite(fn, cfg):
        calls.append(fn.read_text())
        if fn.name == "test_moving.py":
            fn.write_text(fn.read_text() + "# changed while it was rewritten\n")
        return "stat", fn.read_text()

    monkeypatch.setattr(rewrite, "_rewrite_test", fake_rewrite)
    test = tmp_path / "test_x.py"
    test.write_text("def test_x():\n    assert 1\n")
    (tmp_path / "data.txt").write_text("not python\n")
    moving = tmp_path / "test_moving.py"
    moving.write_text("def test_m():\n    pass\n")
    later = tmp_path / "test_later.py"
    later.write_text("def test_l():\n    pass\n")
    config = object()
    monkeypatch.chdir(tmp_path)
    revert_batch_child._rewrite_once(config, ["test_x.py", "test_x.py::test_x", "missing.py", "data.txt",
                                              "test_moving.py"])
    assert len(calls) == 2  # test_x.py and test_moving.py rewritten here, once each; nothing else
    del calls[:]
    once = rewrite._rewrite_test
    moving.write_text("def test_m():\n    pass\n")  # its bytes as first read: the code made was not of them
    once(moving, config)
    once(later, config)
    assert len(calls) == 2  # changed under its rewrite: not kept; never rewritten here: pytest's own way
    del calls[:]
    assert once(test, config) == ("stat", "def test_x():\n    assert 1\n") and calls == []  # a fork's import
    assert once(test, object()) and len(calls) == 1  # another configuration: rewritten as pytest would
    test.write_text("def test_x():\n    assert 2\n")  # a test (or a revert) changed it
    assert once(test, config) == ("stat", "def test_x():\n    assert 2\n") and len(calls) == 2


def test_a_file_that_cannot_be_rewritten_leaves_the_others_kept(tmp_path, monkeypatch) -> None:
    import _pytest.assertion.rewrite as rewrite

    from reviewui.core.inside import revert_batch_child

    calls: list[str] = []

    def fake_rewrite(fn, cfg):
        calls.append(fn.name)
        if fn.name == "test_broken.py":
            raise SyntaxError("the agent left it half written")
        return "stat", fn.read_text()

    monkeypatch.setattr(rewrite, "_rewrite_test", fake_rewrite)
    for name in ("test_broken.py", "test_x.py"):
        (tmp_path / name).write_text("def test_x():\n    pass\n")
    config = object()
    monkeypatch.chdir(tmp_path)
    revert_batch_child._rewrite_once(config, ["test_broken.py", "test_x.py"])
    assert calls == ["test_broken.py", "test_x.py"]
    once = rewrite._rewrite_test
    assert once(tmp_path / "test_x.py", config) == ("stat", "def test_x():\n    pass\n")
    assert calls == ["test_broken.py", "test_x.py"]  # kept although the file before it failed
    with pytest.raises(SyntaxError):
        once(tmp_path / "test_broken.py", config)  # each fork meets the error as pytest would


def test_the_files_a_revert_fork_collects_are_rewritten_once_with_the_sessions_own(monkeypatch) -> None:
    # A revert's selection (every test of a module-level hunk, say) is often wider than the tests of
    # the guards its session runs: each fork rewrote the files outside the session's own again.
    from types import SimpleNamespace

    from reviewui.core.inside import revert_batch_child

    seen: list[list[str]] = []
    monkeypatch.setattr(revert_batch_child, "_rewrite_once", lambda config, paths: seen.append(paths))
    config = SimpleNamespace(args=["tests/test_a.py::test_one"], getini=lambda name: [])
    revert_batch_child._warm(SimpleNamespace(config=config), ["tests/test_b.py", "tests/test_a.py::test_two"])
    assert seen and set(seen[0]) == {"tests/test_a.py", "tests/test_b.py"}
