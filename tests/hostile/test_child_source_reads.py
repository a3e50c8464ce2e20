"""A test that pins a changed source file's hash through another process makes no bite (issue 44).

The branch's code is wrong (each function returns 42); its tests pin each file's SHA-256 as another
process reads it (`sha256sum pkg/m0.py`, or a child Python opening it). Every revert changes the
file, so every hunk "bit" while the tests check nothing: the origin plugin's audit hook sees only
its own Python's opens. Its inotify watch (inside/child_reads.py) sees any process's: during the
baseline a test whose child opened a changed file is one of its readers
(`test-reads-changed-source`), and its failures are no bites. Differential: with the watch off
(origin.CHILD_READS) both hunks bite; with it on the pins' failures are set aside, while a test
whose child Python only imports `pkg.m0` and checks what it returns is no reader and still bites.
One sweep warm, the other cold (a warm server's fork makes its own watch).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from reviewui.core.bite import inert_edit, origin
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo
from tests.hostile.wrong_code import base_files, head_files, imports, presented, sweep

pytestmark = pytest.mark.slow

N = 2
HEADS = head_files(N)
READERS = {
    "sha256sum": "subprocess.run(['sha256sum', path], capture_output=True, text=True).stdout.split()[0]",
    "python": ("subprocess.run([sys.executable, '-c', 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "
               "\"rb\").read()).hexdigest())', path], capture_output=True, text=True).stdout.strip()"),
    # git's copy of the file in the scratch's HEAD (a revert's scratch commits the reverted tree)
    "git": "subprocess.run(['git', 'rev-parse', 'HEAD:' + rel], cwd=ROOT, capture_output=True, text=True).stdout.strip()",
}


def _pin(reader: str, data: bytes) -> str:
    if reader == "git":
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return hashlib.sha256(data).hexdigest()
CLI = ("def test_cli():  # a child Python imports pkg.m0 and checks what it returns: no reader\n"
       "    out = subprocess.run([sys.executable, '-c', 'from pkg.m0 import f0; print(f0(2))'], cwd=ROOT,\n"
       "                         capture_output=True, text=True)\n"
       "    assert out.stdout.strip() == '42', out.stderr\n")


def _repo(root: Path, reader: str) -> Path:
    # the files as a run shows them (padded: run/alike.py), as the agent would pin them
    pins = {p: _pin(reader, data) for p, data in presented(root.parent / "code", base_files(N), HEADS).items()}
    test = (imports(N)
            + "import os, subprocess, sys\nROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n"
            + f"PINS = {pins!r}\n\n\ndef digest(rel):\n    path = os.path.join(ROOT, rel)\n    return {READERS[reader]}\n"
            + "".join(f"\n\ndef test_{i}():\n    f{i}(2)  # covered, checked never\n"
                      f"    assert digest('pkg/m{i}.py') == PINS['pkg/m{i}.py']\n" for i in range(N))
            + "\n\n" + CLI)
    return make_repo(root, base_files(N), {"tests/__init__.py": "", "tests/test_probe.py": test, **HEADS}).root


@pytest.mark.parametrize("reader", ["sha256sum", "python", "git"])
@pytest.mark.parametrize("fixed", [True, False], ids=["child-readers", "fix-off"])
def test_a_hash_pinned_by_another_process_makes_no_bite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        fixed: bool, reader: str) -> None:
    use_venv_python(monkeypatch)
    if not fixed:  # other processes' opens are not watched
        monkeypatch.setattr(origin, "CHILD_READS", False)
        monkeypatch.setattr(inert_edit, "MARKED", False)  # the marked controls catch it too: this layer alone
    t, d = load(_repo(tmp_path / "repo", reader))
    rep = sweep(t, d, fixed, Settings(warm_runner=reader == "sha256sum"))
    if rep is None:  # a control caught the probe
        return
    verdicts = [(r.file, r.verdict, r.failing_tests, r.reason) for r in rep.results]
    probe = "tests/test_probe.py::"
    if fixed:  # the pins' failures are set aside; the importer's still count
        if reader == "git":  # git's store holds every changed file: each pin reads them all
            readers = [(f"pkg/m{i}.py", tuple(f"{probe}test_{j}" for j in range(N))) for i in range(N)]
        else:
            readers = [(f"pkg/m{i}.py", (f"{probe}test_{i}",)) for i in range(N)]
        assert rep.baseline.source_readers == tuple(readers)
        assert verdicts[0][1:3] == ("bites", (f"{probe}test_cli",)), verdicts
        assert verdicts[1][1] == "toothless", verdicts
        assert "test-reads-changed-source" in verdicts[1][3] and "test_1" in verdicts[1][3], verdicts
    else:  # the pins tell: each revert run fails its pin while the baseline and the controls pass
        assert [v for _, v, _, _ in verdicts] == ["bites"] * N, verdicts
        assert [f for _, _, f, _ in verdicts] == [(f"{probe}test_0", f"{probe}test_cli"), (f"{probe}test_1",)], verdicts
