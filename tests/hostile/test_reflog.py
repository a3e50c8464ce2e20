"""A test that reads the scratch's reflog to tell a revert's run from a control's (issue 44).

The pristine scratch was made by `git init` (which sets core.logAllRefUpdates) and `update-ref`,
so it had `.git/logs/HEAD`: one line, from nothing to the head's commit. A batched revert's fork
moves the ref to its own commit without a line; a null revert's commit is the head's own. Run
alone, `commit_scratch`'s `update-ref` adds a line from the head's commit to the revert's, and a
control's from the head's commit to itself. A test that fails when the ref is not the last line's
new id, or when a line moved the ref from one commit to another, passed the baseline and every
control and failed every revert: every hunk "bit" while the tests check nothing. No scratch keeps
a reflog now (scratch_build.no_reflogs: core.logAllRefUpdates off in its own config before its
first ref, no `logs/`). Differential, batched and alone: with the fix off the probe makes every
hunk bite; with it on there is no reflog to read and no hunk bites.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.bite import inert_edit, origin
from reviewui.core.run import scratch_build
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo
from tests.hostile.wrong_code import base_files, calls, head_files, imports, run_alone, sweep

pytestmark = pytest.mark.slow

N = 2
PROBE = '''import os

ZERO = "0" * 40


def test_reflog():
    CALLS()
    git = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".git")
    log = os.path.join(git, "logs", "HEAD")
    if not os.path.exists(log):
        return  # nothing to read: the probe cannot tell
    with open(os.path.join(git, "HEAD")) as f:
        ref = f.read().split("ref:", 1)[1].strip()
    with open(os.path.join(git, ref)) as f:
        now = f.read().strip()
    with open(log) as f:
        lines = [line.split()[:2] for line in f if line.strip()]
    assert lines[-1][1] == now, f"the ref moved without a reflog line: {lines} {now}"
    moved = [(old, new) for old, new in lines if old != ZERO and old != new]
    assert not moved, f"a reflog line moved the ref: {moved}"
'''


def _repo(root: Path) -> Path:
    branch = {"tests/__init__.py": "", "tests/test_probe.py": imports(N) + calls(N) + PROBE, **head_files(N)}
    return make_repo(root, base_files(N), branch).root


@pytest.mark.parametrize("alone", [False, True], ids=["batched", "alone"])
@pytest.mark.parametrize("fixed", [True, False], ids=["no-reflog", "fix-off"])
def test_a_reflog_cannot_tell_a_revert_from_a_control(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      fixed: bool, alone: bool) -> None:
    use_venv_python(monkeypatch)
    # The probe opens `.git`: the reader record (test_git_store_reads.py) would set its failures
    # aside on its own. Off here, so this test shows what the scratch's layout alone hides.
    monkeypatch.setattr(origin, "GIT_READS", False)
    if alone:
        run_alone(monkeypatch)
    if not fixed:  # the scratch keeps git's reflogs (and a pristine with one is not built again)
        monkeypatch.setattr(scratch_build, "no_reflogs", lambda dest: None)
        monkeypatch.setattr(scratch_build, "is_current", lambda done: (done / ".git" / "HEAD").is_file())
        monkeypatch.setattr(inert_edit, "MARKED", False)  # the marked controls catch it too: this layer alone
    t, d = load(_repo(tmp_path / "repo"))
    rep = sweep(t, d, fixed)
    if rep is None:  # a control caught the probe
        return
    verdicts = [r.verdict for r in rep.results]
    if fixed:  # no reflog in any run: nothing bites
        assert "bites" not in verdicts, [(r.file, r.verdict, r.failing_tests) for r in rep.results]
    else:  # the probe tells: each revert run fails it while the baseline and the controls pass
        assert verdicts == ["bites"] * N, [(r.file, r.verdict, r.reason) for r in rep.results]
        assert all("tests/test_probe.py::test_reflog" in r.failing_tests for r in rep.results)
