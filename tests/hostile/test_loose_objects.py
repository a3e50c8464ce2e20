"""A test that counts the scratch's loose git objects to tell a revert's run from a control's (issue 44).

A revert run commits the reverted file: its scratch has a new blob, new trees
on the file's path and a new commit as loose objects. A null revert (the
control, control.py) writes the file's own bytes, so its blob and trees are
the head's own (packed, written loose again), and its commit was the head's
commit, loose already: one loose object fewer, no second commit. A test that
fails when it sees two loose commits (or an odd number of loose objects past
the head's) passed the baseline and every control and failed every revert:
every hunk "bit" while the tests check nothing. The head's commit is now
packed with the tree (scratch_build.pack_head), so a control's run holds as
many loose objects as a revert's, a commit among them, and the probe cannot
tell them apart. Run alone, a revert's scratch gets git's new loose objects
and a control's got none (git writes nothing it has packed): a control alone
now writes the head's own blob, trees and commit loose (staging.write_loose).
Differential, each path with its own fix off: the same probe makes every hunk
bite; with it on, no hunk bites (or a control fails and the sweep is refused). A sweep's pristine
now also holds every revert's objects before any run (run/alike.py), and the probe's listing of
`.git` while its module is collected makes its tests readers (inside/read_audit.py): each hides
the probe on its own; both are left out here, so these layers are tested alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.bite import fallback, inert_edit, origin
from reviewui.core.bite.engine import UntrustedCommand, run_bite
from reviewui.core.config import Settings
from reviewui.core.run import scratch_build
from reviewui.core.run.alike import AlikeRuns
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo
from tests.hostile.wrong_code import base_files, calls, head_files, imports, run_alone

pytestmark = pytest.mark.slow

N = 3
PROBE = '''import os
import zlib


def _loose():
    """The kinds of the loose objects of the repository the tests are in."""
    store = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".git", "objects")
    kinds = []
    for fan in os.listdir(store):
        if len(fan) == 2:
            for name in os.listdir(os.path.join(store, fan)):
                with open(os.path.join(store, fan, name), "rb") as f:
                    kinds.append(zlib.decompress(f.read()).split(b" ", 1)[0].decode())
    return kinds


KINDS = _loose()
'''

# Against a revert batch: the null revert's fork had the head's commit, loose already.
BATCHED = '''
def test_commits():
    CALLS()
    assert KINDS.count("commit") < 2, f"a second loose commit: {sorted(KINDS)}"


def test_count():
    CALLS()
    assert len(KINDS) <= 1 or len(KINDS) % 2 == 0, f"an odd count of loose objects: {sorted(KINDS)}"
'''

# Against runs alone: git writes nothing loose for a null edit, all of whose objects are packed.
ALONE = '''
def test_any():
    CALLS()
    assert not KINDS, f"loose objects: {sorted(KINDS)}"
'''


def _repo(root: Path, probe: str) -> Path:
    branch = {"tests/__init__.py": "", "tests/test_probe.py": imports(N) + calls(N) + PROBE + probe, **head_files(N)}
    return make_repo(root, base_files(N), branch).root


@pytest.mark.parametrize("alone", [False, True], ids=["batched", "alone"])
@pytest.mark.parametrize("fixed", [True, False], ids=["packed-head", "fix-off"])
def test_a_loose_object_count_cannot_tell_a_revert_from_a_control(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 fixed: bool, alone: bool) -> None:
    use_venv_python(monkeypatch)
    # Plain scratches, the layers below the stock (run/alike.py packs every revert's objects before any run,
    # which hides this probe too: tests/hostile/test_stat_probes.py): each run's own objects only.
    monkeypatch.setattr(AlikeRuns, "of", staticmethod(lambda diff, head: None))
    # The probe lists `.git` at its module's top level: since reads at collection are read by the
    # module's tests, the `.git` reader rule catches it too (tests/hostile/test_git_store_reads.py);
    # off here, so the layers below it are tested alone.
    monkeypatch.setattr(origin, "GIT_READS", False)
    if alone:
        run_alone(monkeypatch)
    if not fixed and alone:  # a control alone leaves the objects git wrote (none) as they are
        monkeypatch.setattr(fallback, "write_loose", lambda scratch, files: None)
    elif not fixed:  # the head's commit left loose
        monkeypatch.setattr(scratch_build, "pack_head", lambda dest, commit: None)
    if not fixed:
        monkeypatch.setattr(inert_edit, "MARKED", False)  # the marked controls catch it too: this layer alone
    t, d = load(_repo(tmp_path / "repo", ALONE if alone else BATCHED))
    try:
        rep = run_bite(t, d, Settings(), jobs=2, timeout=60)
    except UntrustedCommand as e:  # a control that failed would be as good: the probe is caught
        assert fixed, f"the probe was caught with the fix off: {e}"
        return
    assert rep.baseline.status == "green", rep.baseline.reason
    verdicts = [r.verdict for r in rep.results]
    if fixed:  # every run of the probe sees what the baseline's did, or a control's: nothing bites
        assert "bites" not in verdicts, [(r.file, r.verdict, r.failing_tests) for r in rep.results]
    else:  # the probe tells: each revert run fails it while the controls pass
        assert verdicts == ["bites"] * N, [(r.file, r.verdict, r.reason) for r in rep.results]
        probe = "test_any" if alone else "test_commits"
        assert all(f"tests/test_probe.py::{probe}" in r.failing_tests for r in rep.results)
