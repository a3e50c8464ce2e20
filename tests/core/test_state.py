"""Local review state: marks that survive restarts but not content changes, comments, kept probes."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.notes.verdicts import CommentRecord, ProbeRecord
from reviewui.core.state import ReviewState, hunk_digest, state_path

HOSTILE = "[bold red]x[/bold red] \x1b[31m\x07 \"q\" \\ \n"
ODD_FILE = "dir with space/na\udcefve.py"  # an undecodable byte kept as a surrogate escape


@dataclass(frozen=True)
class H:
    file: str
    header: str
    text: str


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True).stdout.decode().strip()


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-state"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "a.py").write_text("x = 1\n")
    git(path, "add", ".")
    git(path, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qm", "base")
    return path


HUNK = "@@ -1,2 +1,3 @@\n x = 1\n+y = 2\n z = 3\n"


def test_marks_persist_across_restarts_and_drop_when_the_hunk_changes(repo, state_home):
    s = ReviewState.load(repo, "agent/work")
    s.mark("a.py", "@@ -1,2 +1,3 @@", HUNK)
    s.mark(ODD_FILE, "@@ -5 +5 @@", HOSTILE)
    s.save()

    again = ReviewState.load(repo, "agent/work")
    assert again.is_marked("a.py", "@@ -1,2 +1,3 @@", HUNK)
    assert again.is_marked(ODD_FILE, "@@ -5 +5 @@", HOSTILE)
    changed = HUNK.replace("+y = 2", "+y = 3")
    assert not again.is_marked("a.py", "@@ -1,2 +1,3 @@", changed)
    assert not again.is_marked("b.py", "@@ -1,2 +1,3 @@", HUNK)  # same text, other file
    assert again.progress([H("a.py", "@@ -1,2 +1,3 @@", changed), H(ODD_FILE, "@@ -5 +5 @@", HOSTILE)]) == (1, 2)

    assert again.drop_stale([H("a.py", "@@ -1,2 +1,3 @@", changed), H(ODD_FILE, "@@ -5 +5 @@", HOSTILE)]) == 1
    again.save()
    third = ReviewState.load(repo, "agent/work")
    assert [m.file for m in third.marks()] == [ODD_FILE]
    # The mark does not come back when the old text returns after being dropped.
    assert not third.is_marked("a.py", "@@ -1,2 +1,3 @@", HUNK)
    assert third.unmark(ODD_FILE, "@@ -5 +5 @@") and not third.unmark(ODD_FILE, "@@ -5 +5 @@")
    assert not third.is_marked(ODD_FILE, "@@ -5 +5 @@", HOSTILE)


def test_a_mark_follows_a_hunk_whose_header_moved(repo, state_home):
    s = ReviewState.load(repo, "b")
    s.mark("a.py", "@@ -1,2 +1,3 @@", HUNK)
    moved = HUNK.replace("@@ -1,2 +1,3 @@", "@@ -11,2 +11,3 @@")
    assert s.is_marked("a.py", "@@ -11,2 +11,3 @@", moved)
    assert not s.is_marked("a.py", "@@ -11,2 +11,3 @@", moved.replace("z = 3", "z = 4"))
    assert s.drop_stale([H("a.py", "@@ -11,2 +11,3 @@", moved)]) == 0
    assert [(m.file, m.header) for m in s.marks()] == [("a.py", "@@ -11,2 +11,3 @@")]
    assert hunk_digest(HUNK) == hunk_digest(moved) != hunk_digest(HUNK + "+w\n")
    assert hunk_digest("") != hunk_digest("x")


def test_state_lives_outside_the_checkout_one_file_per_branch(repo, state_home, tmp_path):
    before = git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all")
    for branch in ("agent/work", "agent_work", "../../escape", "[bold]\x1b"):
        s = ReviewState.load(repo, branch)
        s.add_comment("a.py", "@@", f"for {branch}")
        s.save()
    assert git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all") == before
    files = sorted(p for p in state_home.rglob("*") if p.is_file())
    assert len(files) == 4 and all(p.suffix == ".json" and p.parent.parent == state_home / "reviewui" for p in files)
    assert len({p.parent for p in files}) == 1
    for branch in ("agent/work", "agent_work", "../../escape", "[bold]\x1b"):
        assert [c.text for c in ReviewState.load(repo, branch).comments()] == [f"for {branch}"]
        assert state_path(repo, branch).resolve().is_relative_to(state_home.resolve())

    # A linked worktree of the same repo shares the state; another repo does not.
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "--detach", str(wt))
    assert state_path(wt, "agent/work") == state_path(repo, "agent/work")
    other = tmp_path / "other" / "repo"
    other.mkdir(parents=True)
    git(other, "init", "-q")
    assert state_path(other, "agent/work") != state_path(repo, "agent/work")
    assert ReviewState.load(other, "agent/work").comments() == []
    with pytest.raises(ReviewError):
        ReviewState.load(tmp_path, "x")  # not inside a repository


def test_comments_add_list_remove_and_become_verdict_records(repo, state_home):
    s = ReviewState.load(repo, "b")
    c1 = s.add_comment("a.py", "@@ -1 +1 @@", HOSTILE, line=7)
    c2 = s.add_comment(ODD_FILE, "@@ -2 +2 @@", "whole hunk")
    with pytest.raises(ReviewError):
        s.add_comment("a.py", "@@", "  \n")
    s.save()
    s = ReviewState.load(repo, "b")
    assert s.comments() == [c1, c2]
    assert s.comments("a.py") == [c1]
    assert s.comment_records() == (
        CommentRecord("a.py", "@@ -1 +1 @@", 7, HOSTILE),
        CommentRecord(ODD_FILE, "@@ -2 +2 @@", None, "whole hunk"),
    )
    assert s.remove_comment(c1.id) and not s.remove_comment(c1.id)
    s.save()
    assert ReviewState.load(repo, "b").comments() == [c2]


def test_probes_keep_replace_outcomes_forget(repo, state_home):
    s = ReviewState.load(repo, "b")
    s.keep_probe("neg", "def test_neg():\n    assert f(-1) == 1\n")
    s.keep_probe("zero", HOSTILE, {"branch": "pass"})
    s.keep_probe("neg", "def test_neg():\n    assert f(-1) == -1\n")  # same name replaces, keeps its place
    s.set_probe_outcomes("neg", {"branch": "fail", "base": "pass", "reverted": "pass"})
    with pytest.raises(ReviewError):
        s.set_probe_outcomes("nope", {})
    with pytest.raises(ReviewError):
        s.keep_probe(" ", "x")
    s.save()
    s = ReviewState.load(repo, "b")
    assert [(p.name, p.code, p.outcomes) for p in s.probes()] == [
        ("neg", "def test_neg():\n    assert f(-1) == -1\n", {"branch": "fail", "base": "pass", "reverted": "pass"}),
        ("zero", HOSTILE, {"branch": "pass"}),
    ]
    assert s.probe_records() == (
        ProbeRecord("neg", "def test_neg():\n    assert f(-1) == -1\n", "fail", "pass"),
        ProbeRecord("zero", HOSTILE, "pass", ""),
    )
    assert s.forget_probe("zero") and not s.forget_probe("zero")
    assert [p.name for p in s.probes()] == ["neg"]


def test_unreadable_state_is_set_aside_not_fatal(repo, state_home):
    path = state_path(repo, "b")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"{not json \xff")
    s = ReviewState.load(repo, "b")
    assert s.problem and "corrupt" in s.problem and s.marks() == [] and s.comments() == []
    assert path.with_name(path.name + ".corrupt").read_bytes() == b"{not json \xff"
    s.mark("a.py", "@@", HUNK)
    s.save()
    assert ReviewState.load(repo, "b").problem is None

    # Wrong shapes inside valid JSON are skipped entry by entry.
    path.write_text(json.dumps({"marks": [{"file": 1}, {"file": "a.py", "header": "@@", "digest": hunk_digest(HUNK)}],
                                "comments": "nope", "probes": [None, {"name": "p", "code": "c", "outcomes": []}]}))
    s = ReviewState.load(repo, "b")
    assert s.is_marked("a.py", "@@", HUNK) and s.comments() == [] and s.probes()[0].outcomes == {}
    path.write_text("[]")
    assert ReviewState.load(repo, "b").problem


def test_save_is_atomic(repo, state_home, monkeypatch):
    s = ReviewState.load(repo, "b")
    s.mark("a.py", "@@", HUNK)
    s.save()
    good = state_path(repo, "b").read_bytes()

    s.mark("a.py", "@@ -9 +9 @@", "other")

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(os, "replace", boom)
        with pytest.raises(ReviewError, match="No space"):
            s.save()
    assert state_path(repo, "b").read_bytes() == good
    assert [p.name for p in state_path(repo, "b").parent.iterdir()] == [state_path(repo, "b").name]
    assert json.loads(good)["schema"] == 1
