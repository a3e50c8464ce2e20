"""A test that only *stats* to tell a revert's run from the baseline and the controls (issue 44).

`os.stat` raises no audit event and no inotify event, so the reader rules (read_audit.py,
child_reads.py) never see it. Two things a stat showed: a changed file's size (the head's in the
baseline and every control, the reverted file's in a revert run), and whether a loose object exists
in git's store (a revert's blob, whose id a test that knows its hunks can work out, was in its own
run's store alone). Either made every hunk "bite" while the tests check nothing. Now every run of a
sweep looks alike to a stat (run/alike.py): each changed Python file is padded to one size in every
run, and the pristine's store holds every single-hunk revert's objects before any run. Differential,
batched and alone, the probe working out what it looks for as an agent that knows our code would:
with that off every hunk bites; with it on none does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from reviewui.core.bite import engine, inert_edit
from reviewui.core.bite.engine import UntrustedCommand, run_bite
from reviewui.core.bite.guards import guards_for_hunk
from reviewui.core.config import Settings
from reviewui.core.run.alike import AlikeRuns, pad
from reviewui.core.run.scratch import Scratch
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo
from tests.hostile.wrong_code import base_files, calls, head_files, imports, run_alone, sweep

pytestmark = pytest.mark.slow

N = 3
LONG = {"pkg/long.py": "def g(x):\n    if x > 0:\n        return x\n    return -x\n"}
"""One more module whose revert is longer than the head's file (`g` returns 42 at the head)."""
LONG_HEAD = {"pkg/long.py": "def g(x):\n    return 42\n"}

PROBE = '''import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _stored(blob):
    return os.path.exists(os.path.join(ROOT, ".git", "objects", blob[:2], blob[2:]))


SEEN_SIZES = {p: os.stat(os.path.join(ROOT, p)).st_size for p in SIZES}
SEEN_BLOBS = frozenset(b for b in BLOBS if _stored(b))


def test_sizes():
    CALLS()
    assert all(SEEN_SIZES[p] in SIZES[p] for p in SIZES), f"sizes {SEEN_SIZES}"


def test_store():
    CALLS()
    assert SEEN_BLOBS in (frozenset(), frozenset(PADDED)), f"{len(SEEN_BLOBS)} reverts' blobs stored"
'''


def _blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _probe(reserve: dict[str, int]) -> str:
    """The probe module: the head's sizes (plain and padded) and the reverts' blob ids (plain and
    padded), worked out from the hunks and reviewui's padding rule, as the agent could."""
    sizes: dict[str, tuple[int, int]] = {}
    plain, padded = [], []
    for path in reserve:
        head, base = {**head_files(N), **LONG_HEAD}[path].encode(), {**base_files(N), **LONG}[path].encode()
        size = len(head) + reserve[path]
        sizes[path] = (len(head), size)
        plain.append(_blob(base))
        padded.append(_blob(pad(base, size)))
    return (imports(N) + "from pkg.long import g\n" + calls(N) + "    g(2)\n" + f"SIZES = {sizes!r}\nBLOBS = {plain + padded!r}\nPADDED = {padded!r}\n"
            + PROBE)


@pytest.mark.parametrize("alone", [False, True], ids=["batched", "alone"])
@pytest.mark.parametrize("fixed", [True, False], ids=["alike", "fix-off"])
def test_a_stat_cannot_tell_a_revert_from_the_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       fixed: bool, alone: bool) -> None:
    use_venv_python(monkeypatch)
    if alone:
        run_alone(monkeypatch)
    if not fixed:  # every scratch plain: the head's own sizes, each revert's objects in its own run
        monkeypatch.setattr(AlikeRuns, "of", staticmethod(lambda diff, head: None))
        monkeypatch.setattr(inert_edit, "MARKED", False)  # the marked controls catch it too: this layer alone
    base, head = {**base_files(N), **LONG}, {**head_files(N), **LONG_HEAD}
    _, only_code = load(make_repo(tmp_path / "code", base, head).root)
    reserve = AlikeRuns.of(only_code, "").reserve if fixed else dict.fromkeys(head, 0)
    assert sorted(reserve) == sorted(head)
    t, d = load(make_repo(tmp_path / "repo", base, {"tests/__init__.py": "", "tests/test_probe.py": _probe(reserve),
                                                    **head}).root)
    rep = sweep(t, d, fixed)
    if rep is None:
        return
    verdicts = [r.verdict for r in rep.results]
    if fixed:  # every run shows the same sizes and the same store: nothing bites
        assert "bites" not in verdicts, [(r.file, r.verdict, r.failing_tests) for r in rep.results]
    else:  # each revert run fails both probes while the baseline and the controls pass them
        assert verdicts == ["bites"] * (N + 1), [(r.file, r.verdict, r.reason) for r in rep.results]
        for r in rep.results:
            assert {"tests/test_probe.py::test_sizes", "tests/test_probe.py::test_store"} <= set(r.failing_tests)


GUARD_PROBE = '''import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEN = [b for b in BLOBS if os.path.exists(os.path.join(ROOT, ".git", "objects", b[:2], b[2:]))]


def test_store():
    CALLS()
    assert not SEEN, f"{len(SEEN)} guard edits' blobs stored"
'''


@pytest.mark.parametrize("fixed", [True, False], ids=["hidden", "fix-off"])
def test_a_stat_cannot_tell_a_guard_run_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixed: bool) -> None:
    """A guard run alone commits its edit: the edited file's blob (worked out from reviewui's guard
    generator and padding) was a loose object of that run alone. Now what it wrote goes into a pack
    named by a random object (alike.hide_new_objects): no guard bites. With that off, every guard does."""
    use_venv_python(monkeypatch)
    monkeypatch.setattr(engine.guard_batch, "batchable", lambda jobs, *a: ([], jobs))  # every guard alone
    if not fixed:
        monkeypatch.setattr(Scratch, "hide_new_objects", lambda self: None)
    base = base_files(N)  # each f{i} gains a guard: `if x > 1: return 42`, its conditions never checked
    head = {f"pkg/m{i}.py": f"def f{i}(x):\n    if x > 1:\n        return 42\n    return x\n" for i in range(N)}
    _, only_code = load(make_repo(tmp_path / "code", base, head).root)
    reserve, blobs = AlikeRuns.of(only_code, "").reserve, []
    for f in only_code.files:
        text = head[f.path].encode()
        for h in f.hunks:
            blobs += [_blob(pad(g.source.encode(), len(text) + reserve[f.path]))
                      for g in guards_for_hunk(f, h, text.decode())]
    assert len(blobs) >= N
    probe = imports(N) + calls(N) + f"BLOBS = {blobs!r}\n" + GUARD_PROBE
    t, d = load(make_repo(tmp_path / "repo", base, {"tests/__init__.py": "", "tests/test_probe.py": probe,
                                                    **head}).root)
    try:
        rep = run_bite(t, d, Settings(), jobs=2, timeout=60, guards=True)
    except UntrustedCommand as e:
        assert fixed, f"the probe was caught with the fix off: {e}"
        return
    assert rep.baseline.status == "green", rep.baseline.reason
    graded = [g.verdict for r in rep.results for g in r.guards]
    assert len(graded) == len(blobs), graded
    if fixed:
        assert "bites" not in graded, graded
    else:
        assert graded == ["bites"] * len(blobs), graded
