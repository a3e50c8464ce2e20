"""A test that reads the scratch's git object store to tell a revert's run from a control's (issue 44).

A null revert's loose objects (control.py) are the head's own blob, trees and commit, all also in
the scratch's packs (scratch_build.pack_head); a revert's are new. A test that parses the pack
indexes (`.git/objects/pack/*.idx`, version 2: a fan-out table, then the sorted 20-byte names) and
fails when HEAD's commit is in no pack passed the baseline and every control and failed every
revert: every hunk "bit" while the tests check nothing. No layout of objects can hide this in
general (a test that knows its file's blob id can compare git's copy as it would the file), so
such a test is taken for what it is: the origin plugin's read audit (inside/read_audit.py) records a test
that opens, lists or links anything under the run's `.git` as a reader of every changed source
file, and its failures are no bites (bite/source_readers.py, `test-reads-changed-source`).
Differential, batched and alone: with that record off (origin.GIT_READS) the probe makes every
hunk bite; with it on no hunk bites and the finding names the probe, whichever way it reached
`.git` (by name, through a committed symlink, through a link it made); a test that reads
`.gitignore` is no reader.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reviewui.core.bite import inert_edit, origin
from reviewui.core.run.alike import AlikeRuns
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import RepoBuilder
from tests.hostile.wrong_code import base_files, calls, head_files, imports, run_alone, sweep

pytestmark = pytest.mark.slow

N = 2
PROBE = '''import os
import struct
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = os.path.join(tempfile.mkdtemp(), "stash")
os.symlink(os.path.join(ROOT, ".git"), LINK)  # made while collecting: no test is running


def _head():
    """HEAD's commit id, read from .git/HEAD and the ref's file."""
    with open(os.path.join(ROOT, ".git", "HEAD")) as f:
        ref = f.read().split("ref:", 1)[1].strip()
    with open(os.path.join(ROOT, ".git", ref)) as f:
        return bytes.fromhex(f.read().strip())


def _packed(name):
    """Whether a pack index of the scratch names `name` (idx version 2)."""
    pack = os.path.join(ROOT, ".git", "objects", "pack")
    for idx in os.listdir(pack):
        if not idx.endswith(".idx"):
            continue
        with open(os.path.join(pack, idx), "rb") as f:
            data = f.read()
        assert data[:8] == b"\\377tOc\\0\\0\\0\\2", "not a version 2 pack index"
        count = struct.unpack(">I", data[8 + 255 * 4:8 + 256 * 4])[0]
        names = data[8 + 256 * 4:8 + 256 * 4 + 20 * count]
        if any(names[i * 20:i * 20 + 20] == name for i in range(count)):
            return True
    return False


def test_packed():
    CALLS()
    assert _packed(_head()), "HEAD's commit is in no pack: a revert's run"


def test_listed():  # through the branch's symlink tests/store -> ../.git
    CALLS()
    assert os.listdir(os.path.join(ROOT, "tests", "store", "objects"))


def test_linked():  # through the link made while collecting
    assert os.listdir(os.path.join(LINK, "objects"))


def test_plain():  # .gitignore is no part of git's store
    CALLS()
    with open(os.path.join(ROOT, ".gitignore")) as f:
        assert f.read()
'''


def _repo(root: Path) -> Path:
    rb = RepoBuilder(root)
    rb.commit({".gitignore": "*.pyc\n", **base_files(N)}, "base")
    rb.branch("agent/work")
    rb.write({"tests/__init__.py": "", "tests/test_probe.py": imports(N) + calls(N) + PROBE, **head_files(N)})
    os.symlink("../.git", root / "tests" / "store")
    rb.commit({}, "agent change")
    rb.checkout("main")
    return root


@pytest.mark.parametrize("alone", [False, True], ids=["batched", "alone"])
@pytest.mark.parametrize("fixed", [True, False], ids=["git-readers", "fix-off"])
def test_a_pack_index_probe_makes_no_bite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          fixed: bool, alone: bool) -> None:
    use_venv_python(monkeypatch)
    # Plain scratches: a sweep's stock pack (run/alike.py) holds every revert's commit, which hides
    # this probe on its own (tests/hostile/test_stat_probes.py); the reader rule is tested alone here.
    monkeypatch.setattr(AlikeRuns, "of", staticmethod(lambda diff, head: None))
    if alone:
        run_alone(monkeypatch)
    if not fixed:  # a test reading `.git` is no reader of the changed files
        monkeypatch.setattr(origin, "GIT_READS", False)
        monkeypatch.setattr(inert_edit, "MARKED", False)  # the marked controls catch it too: this layer alone
    t, d = load(_repo(tmp_path / "repo"))
    rep = sweep(t, d, fixed)
    if rep is None:  # a control caught the probe
        return
    verdicts = [(r.file, r.verdict, r.failing_tests, r.reason) for r in rep.results]
    if fixed:  # the readers' failures are set aside: nothing bites, and each hunk says why
        readers = tuple(f"tests/test_probe.py::test_{n}" for n in ("linked", "listed", "packed"))
        assert rep.baseline.source_readers == tuple((f"pkg/m{i}.py", readers) for i in range(N))
        assert [v for _, v, _, _ in verdicts] == ["toothless"] * N, verdicts
        assert all("test-reads-changed-source" in r.reason and "test_packed" in r.reason for r in rep.results)
    else:  # the probe tells: each revert run fails it while the baseline and the controls pass
        assert [v for _, v, _, _ in verdicts] == ["bites"] * N, verdicts
        assert all(r.failing_tests == ("tests/test_probe.py::test_packed",) for r in rep.results), verdicts
