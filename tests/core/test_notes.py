"""Verdicts in git notes: contract keys, history kept, foreign notes kept, CAS under concurrency, patch-id."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from reviewui.core.notes import verdicts as notes
from reviewui.core.errors import ReviewError
from reviewui.core.notes.verdicts import (
    BiteRecord,
    CommentRecord,
    FindingRecord,
    NotesEdit,
    ProbeRecord,
    Review,
    branch_history,
    log_json,
    parse_note,
    read_note,
    record_review,
    render_log_text,
    review_relation,
    reviews_in,
    reviews_on,
    transact,
)
from reviewui.core.notes.patchid import patch_id
from tests.core.notes_origin import isolate_git

REF = "refs/notes/reviewui"
HOSTILE = "[bold red]x[/bold red] \x1b[31m red\x07 \"quoted\" 'single' \\ back\nnew line\n[[review]]\n"


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, check=True)
    return proc.stdout.decode("utf-8", "replace").strip()


def git_bytes(cwd: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True).stdout


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    isolate_git(home, monkeypatch)
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))


def make_repo(root: Path) -> tuple[Path, str, str]:
    """A repo with main (base) and agent/work (one commit changing calc.py); returns (repo, base, head)."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Ann Reviewer")
    git(repo, "config", "user.email", "ann@example.com")
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "README.md").write_text("hello\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "agent/work")
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
    git(repo, "commit", "-qam", "add sub")
    return repo, git(repo, "rev-parse", "main"), git(repo, "rev-parse", "agent/work")


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str, str]:
    return make_repo(tmp_path)


def new(repo: Path, base: str, head: str, verdict: str = "approve", reason: str = "ok", **kw) -> Review:
    return Review.new(verdict, reason, repo_dir=repo, branch="agent/work", base=base, head=head, **kw)


# --- recording ----------------------------------------------------------------


def test_approve_then_reject_on_same_head_keeps_both(repo):
    path, base, head = repo
    first = new(path, base, head, "approve", "looks right")
    record_review(path, first)
    second = new(path, base, head, "reject", "sub is untested")
    record_review(path, second)

    got = reviews_on(path, head)
    assert [(r.verdict, r.reason) for r in got] == [("approve", "looks right"), ("reject", "sub is untested")]
    assert got[0] == first and got[1] == second
    doc = tomllib.loads(read_note(path, head) or "")
    assert [r["id"] for r in doc["review"]] == [first.id, second.id]
    # One notes commit per verdict, the second on top of the first.
    assert git(path, "rev-list", "--count", REF) == "2"


def test_note_uses_contract_keys_and_is_readable_in_git_log(repo):
    path, base, head = repo
    review = new(
        path,
        base,
        head,
        "reject",
        HOSTILE,
        bites=[BiteRecord("calc.py", "@@ -1,2 +1,6 @@", "bites", ("test_calc.py::test_sub", HOSTILE))],
        probes=[ProbeRecord("neg", "def test_neg():\n    assert sub(1, 2) == -1\n", "pass", "fail")],
        comments=[CommentRecord("calc.py", "@@ -1,2 +1,6 @@", 5, HOSTILE), CommentRecord("calc.py", "@@ -1,2 +1,6 @@", None, "whole hunk")],
        findings=[FindingRecord("test-edited", HOSTILE)],
    )
    record_review(path, review)
    text = read_note(path, head) or ""
    table = tomllib.loads(text)["review"][0]
    assert set(table) == {
        "id", "verdict", "reason", "reviewer", "at", "tool", "branch", "base", "head", "tree", "patch_id",
        "bite", "probe", "comment", "finding", "sandbox",  # issue 13: how the evidence was produced
        "limits",  # issue 27: how its runs' memory and processes were bounded
    }
    assert table["sandbox"] in ("bwrap", "none")
    assert table["limits"] in ("cgroup-v1", "cgroup-v2", "per-process", "none")
    assert table["reviewer"] == "Ann Reviewer <ann@example.com>"
    assert table["tool"] == "reviewui 0.1.0"
    assert table["head"] == head and table["base"] == base
    assert table["tree"] == git(path, "rev-parse", f"{head}^{{tree}}")
    assert table["patch_id"] == patch_id(path, base, head) != ""
    assert table["reason"] == HOSTILE.strip()  # reasons are stripped, inner text kept exactly
    assert table["bite"] == [{"file": "calc.py", "header": "@@ -1,2 +1,6 @@", "verdict": "bites",
                              "failing_tests": ["test_calc.py::test_sub", HOSTILE]}]
    assert table["probe"][0] == {"name": "neg", "code": "def test_neg():\n    assert sub(1, 2) == -1\n",
                                 "branch": "pass", "base": "fail"}
    assert table["comment"] == [
        {"file": "calc.py", "header": "@@ -1,2 +1,6 @@", "line": 5, "text": HOSTILE},
        {"file": "calc.py", "header": "@@ -1,2 +1,6 @@", "text": "whole hunk"},
    ]
    assert table["finding"] == [{"kind": "test-edited", "message": HOSTILE}]
    # Written as the contract shows: sub-tables as [[review.x]], `at` as a bare UTC datetime with Z.
    for name in ("bite", "probe", "comment", "finding"):
        assert f"\n[[review.{name}]]\n" in text
    assert re.search(r"^at = \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", text, re.M)
    assert "\x1b" not in text  # control characters are escaped in the note itself
    assert reviews_on(path, head) == [review]

    log = git(path, "log", "--notes=reviewui", "-1", head)
    assert 'verdict = "reject"' in log and f'id = "{review.id}"' in log


def test_review_new_validates_verdict_reason_commits_and_identity(repo, tmp_path):
    path, base, head = repo
    with pytest.raises(ReviewError, match="approve or reject"):
        new(path, base, head, "approved")
    for empty in ("", "   \n"):
        with pytest.raises(ReviewError, match="reason"):
            new(path, base, head, "reject", empty)
    assert new(path, base, head, "approve", "").reason == ""
    with pytest.raises(ReviewError, match="no such commit"):
        new(path, base, "no-such-branch")
    git(path, "config", "--unset", "user.name")
    git(path, "config", "--unset", "user.email")
    git(path, "config", "user.useConfigOnly", "true")
    with pytest.raises(ReviewError, match="identity"):
        new(path, base, head)


def test_bad_notes_ref_is_refused(repo):
    path, base, head = repo
    review = new(path, base, head)
    for ref in ("reviewui", "refs/notes/bad..ref", "refs/notes/x y"):
        with pytest.raises(ReviewError, match="notes ref"):
            record_review(path, review, ref)
    assert git(path, "for-each-ref", "refs/notes") == ""


# --- foreign notes --------------------------------------------------------------


def test_non_toml_note_written_by_hand_is_kept_byte_for_byte(repo, tmp_path):
    path, base, head = repo
    foreign = b"LGTM -- bob\n= this is [not TOML\n\xff\xfe raw bytes\n"
    (tmp_path / "msg").write_bytes(foreign)
    git(path, "notes", "--ref=reviewui", "add", "-F", str(tmp_path / "msg"), head)
    before = git_bytes(path, "notes", "--ref=reviewui", "show", head)

    a = new(path, base, head, "approve", "fine")
    record_review(path, a)
    b = new(path, base, head, "reject", "changed my mind")
    record_review(path, b)

    after = git_bytes(path, "notes", "--ref=reviewui", "show", head)
    assert after.startswith(before)
    assert reviews_on(path, head) == [a, b]
    # The part after the foreign text is valid TOML holding both reviews.
    tail = after[len(before):].decode()
    assert [t["id"] for t in tomllib.loads(tail)["review"]] == [a.id, b.id]


def test_valid_toml_note_stays_valid_and_text_appended_later_survives(repo):
    path, base, head = repo
    git(path, "notes", "--ref=reviewui", "add", "-m", '[ci]\nstatus = "green"', head)
    a = new(path, base, head)
    record_review(path, a)
    doc = tomllib.loads(read_note(path, head) or "")
    assert doc["ci"] == {"status": "green"} and [r["id"] for r in doc["review"]] == [a.id]

    # Someone appends a plain remark after our review with plain git.
    git(path, "notes", "--ref=reviewui", "append", "-m", "bob: +1, ship it", head)
    b = new(path, base, head, "reject", "no")
    record_review(path, b)
    text = read_note(path, head) or ""
    assert reviews_on(path, head) == [a, b]
    assert text.count("bob: +1, ship it") == 1 and text.index("bob: +1") < text.index(b.id)
    assert text.startswith('[ci]\nstatus = "green"\n')


def test_parse_note_keeps_every_byte_and_dedups_ids(repo):
    path, base, head = repo
    r = new(path, base, head)
    piece = r.to_toml()
    bodies = [
        "",
        "plain words",
        piece,
        "junk\n" + piece + "trailing junk line\n" + piece,
        "[[review]]\nid = \nbroken",
        '[[review]]\nid = "x"\nverdict = "maybe"\n',  # unknown verdict: foreign, kept
        piece.replace("\n", "\r\n"),
        "\udcff\udcfe" + piece,
    ]
    for body in bodies:
        chunks = parse_note(body)
        assert "".join(c.text for c in chunks) == body
    assert reviews_in("junk\n" + piece + "trailing junk line\n" + piece) == [r]
    chunks = parse_note("junk\n" + piece + "trailing junk line\n")
    assert [c.review is not None for c in chunks] == [False, True, False]
    assert chunks[2].text == "trailing junk line\n"
    assert reviews_in('[[review]]\nid = "x"\nverdict = "maybe"\n') == []
    assert reviews_in(piece.replace("\n", "\r\n")) == [r]


def test_other_commits_and_other_notes_refs_are_untouched(repo):
    path, base, head = repo
    git(path, "notes", "--ref=reviewui", "add", "-m", "note on base", base)
    git(path, "notes", "add", "-m", "default notes ref", head)
    base_blob = git(path, "notes", "--ref=reviewui", "list", base)
    commits_ref = git(path, "rev-parse", "refs/notes/commits")

    record_review(path, new(path, base, head))

    assert git(path, "notes", "--ref=reviewui", "list", base) == base_blob
    assert git(path, "rev-parse", "refs/notes/commits") == commits_ref
    assert len(git(path, "notes", "--ref=reviewui", "list").splitlines()) == 2


def test_existing_note_at_a_fanout_path_is_updated_in_place(repo):
    path, base, head = repo
    # Build a notes tree the way git does once it has many notes: <2 hex>/<38 hex>.
    blob = git(path, "hash-object", "-w", "--stdin", input=b"hand written\n")
    other = git(path, "hash-object", "-w", "--stdin", input=b"base note\n")
    sub = git(path, "mktree", input=f"100644 blob {blob}\t{head[2:]}\n".encode())
    top = git(path, "mktree", input=f"040000 tree {sub}\t{head[:2]}\n100644 blob {other}\t{base}\n".encode())
    commit = git(path, "commit-tree", top, "-m", "notes")
    git(path, "update-ref", REF, commit)

    r = new(path, base, head)
    record_review(path, r)

    paths = git(path, "ls-tree", "-r", "--name-only", REF).splitlines()
    assert sorted(paths) == sorted([f"{head[:2]}/{head[2:]}", base])
    shown = git(path, "notes", "--ref=reviewui", "show", head)
    assert shown.startswith("hand written") and r.id in shown
    assert git(path, "notes", "--ref=reviewui", "show", base) == "base note"
    assert reviews_on(path, head) == [r]


# --- the reviewer's checkout is never touched --------------------------------------


def test_working_tree_index_head_and_refs_unchanged(repo):
    path, base, head = repo
    (path / "calc.py").write_text("dirty\n")
    (path / "README.md").write_text("staged\n")
    git(path, "add", "README.md")
    (path / "untracked.txt").write_text("u\n")

    def observe() -> tuple:
        refs = [line for line in git(path, "for-each-ref").splitlines() if REF not in line]
        return (
            git(path, "status", "--porcelain", "--untracked-files=all"),
            git(path, "rev-parse", "HEAD"),
            git(path, "symbolic-ref", "HEAD"),
            refs,
            (path / ".git" / "index").read_bytes(),
            (path / "calc.py").read_bytes(),
        )

    before = observe()
    record_review(path, new(path, base, head))
    record_review(path, new(path, base, head, "reject", "no"))
    reviews_on(path, head)
    log_json(path, "agent/work", base, head)
    render_log_text(path, "agent/work", base, head)
    assert observe() == before
    assert git(path, "for-each-ref", "--format=%(refname)", "refs/notes") == REF


# --- concurrency --------------------------------------------------------------------


def test_compare_and_swap_retries_when_another_writer_wins(repo):
    path, base, head = repo
    ours, theirs = new(path, base, head), new(path, base, head, "reject", "theirs")
    calls = []

    def change(snap: notes.NotesSnapshot) -> NotesEdit:
        calls.append(snap.commit)
        if len(calls) == 1:
            record_review(path, theirs)  # lands between our read and our update-ref
        body = snap.read(head) or ""
        return NotesEdit({head: notes.append_text(body, ours.to_toml())}, "test")

    transact(path, REF, change)
    assert len(calls) == 2 and calls[0] != calls[1]
    assert {r.id for r in reviews_on(path, head)} == {ours.id, theirs.id}


WORKER = """
import sys, time
from pathlib import Path
from reviewui.core.notes.verdicts import Review, record_review
repo, base, head, go, tag = sys.argv[1:6]
while not Path(go).exists():
    time.sleep(0.001)
for i in range(20):
    record_review(repo, Review.new("approve", f"{tag}-{i}", repo_dir=repo, branch="agent/work", base=base, head=head))
"""


def test_two_processes_recording_twenty_each_leave_forty(repo, tmp_path):
    path, base, head = repo
    go = tmp_path / "go"
    env = dict(os.environ, PYTHONPATH=str(Path(notes.__file__).parents[2]))
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(path), base, head, str(go), tag], env=env,
                         stderr=subprocess.PIPE)
        for tag in ("p1", "p2")
    ]
    time.sleep(0.3)  # both interpreters are up and polling before the start signal
    go.write_text("go")
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    got = reviews_on(path, head)
    assert len(got) == 40 and len({r.id for r in got}) == 40
    assert sorted(r.reason for r in got) == sorted(f"{t}-{i}" for t in ("p1", "p2") for i in range(20))
    assert git(path, "rev-list", "--count", REF) == "40"


# --- history, log and patch-id ------------------------------------------------------


def test_rebase_keeping_patch_is_current_amend_changing_it_is_outdated(repo):
    path, base, head = repo
    old = new(path, base, head, "approve", "good")
    record_review(path, old)

    git(path, "checkout", "-q", "main")
    (path / "README.md").write_text("hello again\n")
    git(path, "commit", "-qam", "main moves on")
    git(path, "checkout", "-q", "agent/work")
    git(path, "rebase", "-q", "main")
    new_base, rebased = git(path, "rev-parse", "main"), git(path, "rev-parse", "HEAD")
    assert rebased != head

    doc = log_json(path, "agent/work", new_base, rebased)
    assert [(r["id"], r["head"], r["current"]) for r in doc["reviews"]] == [(old.id, head, True)]
    assert review_relation(old, rebased, patch_id(path, new_base, rebased)) == "same-patch"
    assert "same patch, earlier head" in render_log_text(path, "agent/work", new_base, rebased)

    (path / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return b - a\n")
    git(path, "commit", "-q", "--amend", "-am", "add sub")
    amended = git(path, "rev-parse", "HEAD")
    doc = log_json(path, "agent/work", new_base, amended)
    assert [r["current"] for r in doc["reviews"]] == [False]
    assert "OUTDATED" in render_log_text(path, "agent/work", new_base, amended)

    fresh = Review.new("reject", "b - a", repo_dir=path, branch="agent/work", base=new_base, head=amended)
    record_review(path, dataclasses.replace(fresh, at=old.at + timedelta(seconds=1)))
    doc = log_json(path, "agent/work", new_base, amended)
    assert [(r["verdict"], r["current"]) for r in doc["reviews"]] == [("approve", False), ("reject", True)]


def test_log_json_matches_the_contract(repo):
    path, base, head = repo
    r = new(path, base, head, "reject", HOSTILE)
    record_review(path, r)
    doc = json.loads(json.dumps(log_json(path, "agent/work", base, head)))
    # issue 27 adds the foreign text of the notes
    assert list(doc) == ["reviews", "foreign"]
    assert doc["foreign"] == []
    (entry,) = doc["reviews"]
    # issue 16 adds the evidence, the signature check, whom it is shown as and the relation; issue 27 the provenance;
    # issue 38 what the verdict relation says of it: whether it counts (and why not), and whether its note is on the branch
    assert set(entry) == {"id", "verdict", "reason", "reviewer", "at", "branch", "base", "head", "patch_id", "current",
                          "shown_as", "signature", "provenance", "relation", "bites", "probes", "comments", "findings",
                          "counts", "on_branch", "why_not"}
    assert entry["provenance"] == "recorded here"
    assert entry["at"] == r.at.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert datetime.fromisoformat(entry["at"].replace("Z", "+00:00")) == r.at
    assert entry["current"] is True and entry["reason"] == HOSTILE.strip()


def test_render_log_text_never_emits_control_characters(repo):
    path, base, head = repo
    record_review(path, new(path, base, head, "reject", "evil \x1b[2J\x1b[31mred\x07"))
    text = render_log_text(path, "agent/work", base, head)
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b[2J" in text and "reject" in text and "(this head)" in text
    assert "no reviews" in render_log_text(path, "other", base, base)


def test_branch_history_finds_all_heads_of_the_branch_oldest_first(repo):
    path, base, head = repo
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    later = dataclasses.replace(new(path, base, head, "reject", "later"), at=t0 + timedelta(hours=2))
    earlier = dataclasses.replace(new(path, base, base, "approve", "earlier"), at=t0)
    other = dataclasses.replace(new(path, base, base, "approve", "other branch"), branch="agent/other", at=t0)
    renamed = dataclasses.replace(new(path, base, head, "approve", "same head"), branch="renamed", at=t0 + timedelta(hours=1))
    for r in (later, earlier, other, renamed):
        record_review(path, r)
    assert [r.reason for r in branch_history(path, "agent/work", head)] == ["earlier", "same head", "later"]
    assert [r.reason for r in branch_history(path, "agent/other", "agent/other")] == ["other branch"]


def test_patch_id_is_gits_verbatim_patch_id_of_base_to_head(repo):
    # issue 38: the id is verbatim (whitespace is code), no longer git's whitespace-blind --stable one
    path, base, head = repo
    plain = subprocess.run(["git", "diff", base, head], cwd=path, capture_output=True, check=True).stdout
    expected = git(path, "patch-id", "--verbatim", input=plain).split()[0]
    assert patch_id(path, base, head) == expected
    assert patch_id(path, head, head) == ""
    # The reviewer's diff settings cannot change it.
    git(path, "config", "diff.noprefix", "true")
    git(path, "config", "color.diff", "always")
    git(path, "config", "diff.external", "false")
    assert patch_id(path, base, head) == expected
    with pytest.raises(ReviewError):
        patch_id(path, base, "nope")


def test_patch_id_sees_binary_content(repo):
    path, base, head = repo
    ids = []
    for payload in (b"\x00\x01\x02one", b"\x00\x01\x02two"):
        git(path, "checkout", "-q", "-B", "bin", base)
        (path / "blob.bin").write_bytes(payload)
        git(path, "add", "blob.bin")
        git(path, "commit", "-qm", "bin")
        ids.append(patch_id(path, base, "bin"))
    assert ids[0] and ids[1] and ids[0] != ids[1]


def test_relation_needs_a_real_patch_id_to_call_an_earlier_head_the_same_patch(repo):
    path, base, head = repo
    r = new(path, base, head)
    assert review_relation(r, head, "") == "this-head"
    assert review_relation(dataclasses.replace(r, patch_id=""), "f" * 40, "") == "different-patch"
    assert review_relation(r, "f" * 40, r.patch_id) == "same-patch"
    assert review_relation(r, "f" * 40, "0" * 40) == "different-patch"


def test_a_huge_foreign_note_with_fake_review_headers_is_kept_and_read_fast(repo, tmp_path):
    path, base, head = repo
    junk = ("[[review]]\nid = 'fake'\nnot toml at all {{{\n" + "x" * 200 + "\n") * 5000  # ~1.2 MB
    (tmp_path / "big").write_text(junk)
    git(path, "notes", "--ref=reviewui", "add", "-F", str(tmp_path / "big"), head)
    r = new(path, base, head)
    started = time.monotonic()
    record_review(path, r)
    assert reviews_on(path, head) == [r]
    assert time.monotonic() - started < 10
    assert (read_note(path, head) or "").startswith(junk)
