"""Symlinks are data: a branch holding links out of the tree is reviewed, never refused; reviewui
checks them in as links, never follows one, and reports each (`symlink-outside-tree`, issue 27)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from reviewui.core.bounded import check_input, link_escape
from reviewui.core.errors import ReviewError
from reviewui.core.run.worktree import WorktreePool
from tests.clirun import run_cli
from tests.core.bite.helpers import load
from tests.gitrepo import RepoBuilder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def _branch_with_links(root: Path, outside: Path) -> RepoBuilder:
    rb = RepoBuilder(root)
    rb.commit({"calc.py": "def add(a, b):\n    return a + b\n",
               "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"}, "base")
    rb.branch("agent/work")
    rb.write({"calc.py": "def add(a, b):\n    if a < 0:\n        return 0\n    return a + b\n"})
    os.symlink(str(outside), root / "evil.py")  # a "source" file that is a link out of the tree
    os.symlink("../../../outside", root / "up_link")
    os.symlink(".git/config", root / "git_link")
    os.symlink("calc.py", root / "calc_link.py")  # inside: fine, no finding
    rb.git("add", "-A")
    rb.git("commit", "-q", "-m", "agent")
    rb.checkout("main")
    return rb


@pytest.fixture()
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.txt"
    secret.write_text("the reviewer's secret\n")
    return secret


def test_check_reports_each_link_out_of_the_tree(tmp_path: Path, outside: Path) -> None:
    rb = _branch_with_links(tmp_path / "repo", outside)
    proc = run_cli("check", "agent/work", "--base", "main", "--format", "json", cwd=rb.root)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    found = {f["file"]: f for f in json.loads(proc.stdout)["findings"] if f["kind"] == "symlink-outside-tree"}
    assert sorted(found) == ["evil.py", "git_link", "up_link"]
    assert all(f["severity"] == "warning" for f in found.values())
    assert "absolute path" in found["evil.py"]["message"] and str(outside) in found["evil.py"]["evidence"]
    assert "above the repository" in found["up_link"]["message"]
    assert "secret" not in proc.stdout.replace(str(outside), "")  # the link's target was never read


def test_bite_reviews_a_branch_with_a_link_out_of_the_tree(tmp_path: Path, outside: Path) -> None:
    rb = _branch_with_links(tmp_path / "repo", outside)
    proc = run_cli("bite", "agent/work", "--base", "main", cwd=rb.root, timeout=300)
    assert "escapes" not in proc.stderr and proc.returncode in (0, 1), proc.stderr  # was: refused, exit 2
    assert "calc.py hunk 1" in proc.stdout and "evil.py" not in proc.stdout  # a link is no code to revert
    assert outside.read_text() == "the reviewer's secret\n"


def test_the_scratch_holds_links_as_links_and_a_revert_never_writes_through_one(tmp_path: Path,
                                                                               outside: Path) -> None:
    rb = _branch_with_links(tmp_path / "repo", outside)
    t, d = load(rb.root)
    evil = d.file("evil.py")
    assert evil is not None and evil.symlink and evil.role == "source"
    with WorktreePool(rb.root, 1) as pool, pool.acquire() as s:
        s.checkout(t.head)
        assert os.readlink(s.path / "evil.py") == str(outside)
        assert os.readlink(s.path / "up_link") == "../../../outside"
        s.revert_hunk(evil, evil.hunks[0])  # the added link's revert: the link goes, nothing is followed
        assert not os.path.lexists(s.path / "evil.py")
        s.checkout(t.head)
        s.add_file("evil.py", b"overwritten\n")  # a probe landing on a link replaces the link
        assert not (s.path / "evil.py").is_symlink() and (s.path / "evil.py").read_bytes() == b"overwritten\n"
    assert outside.read_text() == "the reviewer's secret\n"


def test_a_changed_link_is_reverted_to_its_old_target(tmp_path: Path) -> None:
    rb = RepoBuilder(tmp_path / "repo")
    os.symlink("a.txt", rb.root / "link")
    rb.commit({"a.txt": "a\n", "b.txt": "b\n"}, "base")
    rb.branch("agent/work")
    (rb.root / "link").unlink()
    os.symlink("/etc/hostname", rb.root / "link")
    rb.commit({}, "agent")
    rb.checkout("main")
    t, d = load(rb.root)
    f = d.file("link")
    assert f is not None and f.symlink
    with WorktreePool(rb.root, 1) as pool, pool.acquire() as s:
        s.checkout(t.head)
        s.revert_hunk(f, f.hunks[0])
        assert os.readlink(s.path / "link") == "a.txt"


def test_a_folder_link_on_the_way_is_refused_in_one_line(tmp_path: Path, outside: Path) -> None:
    rb = RepoBuilder(tmp_path / "repo")
    os.symlink(str(outside.parent), rb.root / "tests")  # the branch's `tests` is a link out
    rb.commit({"a.py": "x = 1\n"}, "base")
    with WorktreePool(rb.root, 1) as pool, pool.acquire() as s:
        s.checkout("main")
        with pytest.raises(ReviewError, match="through the symlink tests"):
            s.add_file("tests/test_probe.py", "def test_x():\n    pass\n")
    assert sorted(p.name for p in outside.parent.iterdir()) == ["repo", "secret.txt"]


def test_a_transcript_link_in_the_repo_is_followed_only_inside_it(tmp_path: Path, outside: Path) -> None:
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"a.py": "x = 1\n"}, "base")
    real = FIXTURES / "claude_code_red_green.jsonl"
    copy = rb.root / "logs" / "session.jsonl"
    copy.parent.mkdir()
    shutil.copy(real, copy)
    (rb.root / "inside.jsonl").symlink_to("logs/session.jsonl")
    (rb.root / "out.jsonl").symlink_to(outside)  # planted by the branch, say
    assert link_escape(rb.root / "inside.jsonl") is None
    assert check_input(rb.root / "inside.jsonl", "transcript") > 0
    with pytest.raises(ReviewError, match="symlink inside .* pointing out of it") as e:
        check_input(rb.root / "out.jsonl", "transcript")
    assert "\n" not in str(e.value)
    proc = run_cli("transcript", str(rb.root / "out.jsonl"), cwd=rb.root)
    assert proc.returncode == 2 and "pointing out of it" in proc.stderr and "secret" not in proc.stdout
    mine = tmp_path / "reviewer-links" / "t.jsonl"  # outside every repository: the reviewer's own link
    mine.parent.mkdir()
    mine.symlink_to(copy)
    assert link_escape(mine) is None and check_input(mine, "transcript") > 0
