"""Pull and push verdict notes between clones: union by review id, no loss, no duplicates."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.notes.verdicts import Review, parse_note, read_note, record_review, reviews_in, reviews_on
from reviewui.core.notes.sync import merge_bodies, pull_notes, push_notes, remote_notes_ref
from tests.core.notes_origin import bare_origin, isolate_git

REF = "refs/notes/reviewui"
TRACKING = "refs/notes/remotes/origin/reviewui"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True).stdout.decode().strip()


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path_factory.mktemp("home"), monkeypatch)


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path, str, str]:
    """A bare origin with main and agent/work, cloned twice (A and B); returns (a, b, base, head)."""
    origin = bare_origin(tmp_path)
    out = []
    for name in ("a", "b"):
        git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), name)
        git(tmp_path / name, "config", "user.name", f"Reviewer {name.upper()}")
        git(tmp_path / name, "config", "user.email", f"{name}@example.com")
        out.append(tmp_path / name)
    base, head = git(origin, "rev-parse", "main"), git(origin, "rev-parse", "agent/work")
    return out[0], out[1], base, head


def review(repo: Path, base: str, head: str, reason: str, verdict: str = "approve") -> Review:
    r = Review.new(verdict, reason, repo_dir=repo, branch="agent/work", base=base, head=head)
    record_review(repo, r)
    return r


def ids(repo: Path, commit: str) -> list[str]:
    return [r.id for r in reviews_on(repo, commit)]


def test_two_clones_end_with_the_union_and_repeat_pulls_add_nothing(clones):
    a, b, base, head = clones
    a1, a2 = review(a, base, head, "a1"), review(a, base, head, "a2", "reject")
    b1 = review(b, base, head, "b1")
    b_on_base = review(b, base, base, "b on base")

    push_notes(a, "origin")
    with pytest.raises(ReviewError, match="pull"):
        push_notes(b, "origin")  # the remote has A's reviews, which B lacks

    assert pull_notes(b, "origin") == 2
    assert sorted(ids(b, head)) == sorted([a1.id, a2.id, b1.id])
    assert ids(b, head)[0] == b1.id  # B's own note is kept first, unchanged
    assert ids(b, base) == [b_on_base.id]
    merge = git(b, "rev-parse", REF)
    assert git(b, "rev-list", "--parents", "-n1", REF).split()[1:] == [
        git(b, "rev-parse", f"{REF}~1"), git(b, "rev-parse", TRACKING)
    ]
    push_notes(b, "origin")

    assert pull_notes(a, "origin") == 2
    assert sorted(ids(a, head)) == sorted([a1.id, a2.id, b1.id])
    assert ids(a, base) == [b_on_base.id]
    # A had nothing B lacked: fast-forward, so both clones share one notes commit.
    assert git(a, "rev-parse", REF) == merge

    for repo in (a, b, a, b):
        assert pull_notes(repo, "origin") == 0
    assert git(a, "rev-parse", REF) == git(b, "rev-parse", REF) == merge
    for repo in (a, b):
        assert len(ids(repo, head)) == 3 == len(set(ids(repo, head)))
        assert (read_note(repo, head) or "").count("[[review]]") == 3
    # A clone ahead of the remote stays as it is: no empty merge commits.
    review(b, base, head, "b2")
    ahead = git(b, "rev-parse", REF)
    assert pull_notes(b, "origin") == 0 and git(b, "rev-parse", REF) == ahead


def test_merge_in_either_order_gives_the_same_reviews(clones):
    a, b, base, head = clones
    review(a, base, head, "a")
    review(b, base, head, "b")
    push_notes(a, "origin")
    git(b, "remote", "add", "peer", str(a))
    git(a, "remote", "add", "peer", str(b))
    assert pull_notes(b, "peer") == 1
    assert pull_notes(a, "peer") == 1  # A pulls B's merged notes: only B's review is new to A
    assert sorted(ids(a, head)) == sorted(ids(b, head))
    assert pull_notes(a, "peer") == pull_notes(b, "peer") == 0
    assert remote_notes_ref("peer") == "refs/notes/remotes/peer/reviewui"
    assert git(a, "rev-parse", "refs/notes/remotes/peer/reviewui")


def test_foreign_text_from_the_remote_is_merged_once(clones, tmp_path):
    a, b, base, head = clones
    (tmp_path / "msg").write_bytes(b"bob says: ship it\n\xff raw\n")
    git(a, "notes", "--ref=reviewui", "add", "-F", str(tmp_path / "msg"), head)
    ra = review(a, base, head, "a")
    push_notes(a, "origin")
    rb = review(b, base, head, "b")
    for _ in range(3):
        pull_notes(b, "origin")
    raw = subprocess.run(["git", "notes", "--ref=reviewui", "show", head], cwd=b, capture_output=True).stdout
    assert raw.count(b"bob says: ship it\n\xff raw\n") == 1
    assert raw.startswith(b"[[review]]")  # B's own note first, byte for byte
    assert sorted(ids(b, head)) == sorted([ra.id, rb.id])


def test_pull_into_a_clone_without_notes_adopts_the_remote_ref(clones):
    a, b, base, head = clones
    review(a, base, head, "a1")
    review(a, base, base, "a2")
    push_notes(a, "origin")
    assert pull_notes(b, "origin") == 2
    assert git(b, "rev-parse", REF) == git(a, "rev-parse", REF) == git(b, "rev-parse", TRACKING)


def test_configured_notes_fetch_refspec_cannot_clobber_local_reviews(clones):
    a, b, base, head = clones
    review(a, base, head, "a")
    push_notes(a, "origin")
    mine = review(b, base, head, "mine")
    # A team setting that maps the remote's notes straight onto the local ref.
    git(b, "config", "--add", "remote.origin.fetch", "+refs/notes/*:refs/notes/*")
    assert pull_notes(b, "origin") == 1
    assert mine.id in ids(b, head) and len(ids(b, head)) == 2


def test_pull_from_a_remote_without_notes_changes_nothing(clones):
    a, b, base, head = clones
    assert pull_notes(b, "origin") == 0
    assert git(b, "for-each-ref", "refs/notes") == ""
    r = review(b, base, head, "b")
    assert pull_notes(b, "origin") == 0
    assert ids(b, head) == [r.id]


def test_bad_remotes_and_nothing_to_push_are_user_errors(clones, tmp_path):
    a, b, base, head = clones
    with pytest.raises(ReviewError, match="nothing|no reviews"):
        push_notes(a, "origin")
    for remote in ("nope", "--upload-pack=touch pwned", str(tmp_path / "origin.git")):
        with pytest.raises(ReviewError, match="no such remote"):
            pull_notes(a, remote)
    assert not (a / "pwned").exists() and not Path("pwned").exists()
    review(a, base, head, "a")
    git(a, "remote", "add", "gone", str(tmp_path / "missing.git"))
    with pytest.raises(ReviewError):
        push_notes(a, "gone")
    with pytest.raises(ReviewError):
        pull_notes(a, "gone")


def test_merge_bodies_is_a_union_that_keeps_local_bytes(clones):
    a, b, base, head = clones
    pieces = [Review.new("approve", f"r{i}", repo_dir=a, branch="x", base=base, head=head).to_toml() for i in range(3)]
    local = "hand note\n\n" + pieces[0] + "\n" + pieces[1]
    remote = pieces[2] + "\n" + pieces[0] + "\nsomeone's remark\n"
    merged, added = merge_bodies(local, remote)
    assert merged.startswith(local) and added == 1
    assert [r.reason for r in reviews_in(merged)] == ["r0", "r1", "r2"]
    assert merged.count("someone's remark") == 1
    again, added = merge_bodies(merged, remote)
    assert (again, added) == (merged, 0)
    back, added = merge_bodies(remote, local)
    assert sorted(r.reason for r in reviews_in(back)) == ["r0", "r1", "r2"] and added == 1
    assert "".join(c.text for c in parse_note(merged)) == merged
    # A remark that only occurs inside another line is still merged in.
    partial, _ = merge_bodies("x = ship it now\n", "ship it\n")
    assert partial == "x = ship it now\n\nship it\n"


def test_crossed_merges_with_the_same_reviews_still_let_every_clone_push(clones, tmp_path):
    a, b, base, head = clones
    ra, rb = review(a, base, head, "a"), review(b, base, head, "b")
    b_alone = git(b, "rev-parse", REF)
    push_notes(a, "origin")
    assert pull_notes(b, "origin") == 1  # B merges A's notes ...
    only_b = tmp_path / "only-b.git"
    git(tmp_path, "init", "-q", "--bare", str(only_b))
    git(b, "push", "-q", str(only_b), f"{b_alone}:{REF}")
    git(a, "remote", "add", "only-b", str(only_b))
    assert pull_notes(a, "only-b") == 1  # ... while A merges B's: two merges, the same reviews
    push_notes(a, "origin")
    with pytest.raises(ReviewError, match="pull"):
        push_notes(b, "origin")
    assert pull_notes(b, "origin") == 0  # nothing new, but the histories are joined
    push_notes(b, "origin")
    assert git(b, "rev-parse", REF) in git(b, "ls-remote", "origin", REF)
    for repo in (a, b):
        assert sorted(ids(repo, head)) == sorted([ra.id, rb.id])


def test_a_note_removed_on_the_remote_is_not_lost_locally(clones):
    a, b, base, head = clones
    on_head, on_base = review(a, base, head, "head"), review(a, base, base, "base")
    push_notes(a, "origin")
    assert pull_notes(b, "origin") == 2
    git(a, "notes", "--ref=reviewui", "remove", base)  # a descendant of B's notes commit, lacking a note
    push_notes(a, "origin")
    assert pull_notes(b, "origin") == 0
    assert ids(b, base) == [on_base.id] and ids(b, head) == [on_head.id]


def test_a_note_rewritten_on_the_remote_keeps_the_local_reviews(clones):
    a, b, base, head = clones
    on_head = review(a, base, head, "head")
    push_notes(a, "origin")
    assert pull_notes(b, "origin") == 1
    git(a, "notes", "--ref=reviewui", "add", "-f", "-m", "rewritten by hand", head)
    push_notes(a, "origin")
    assert pull_notes(b, "origin") == 0
    assert ids(b, head) == [on_head.id]
    assert "rewritten by hand" in (read_note(b, head) or "")
