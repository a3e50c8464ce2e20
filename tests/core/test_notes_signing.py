"""Signed verdicts: signed with the reviewer's ssh key, checked against git's allowed-signers file;
a review forged in the reviewer's name and pulled from a remote is never shown as theirs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.notes.signing import SIGNED_HEADER, split_signed, verify_chunk
from reviewui.core.notes.sync import pull_notes_report, push_notes
from reviewui.core.notes.verdicts import Review, log_json, read_note, record_review, render_log_text
from tests.core.notes_origin import bare_origin


ALICE = "Alice Reviewer <alice@example.com>"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True).stdout.decode().strip()


def keypair(where: Path, name: str) -> Path:
    """A throwaway ed25519 key without a passphrase; returns the private key's path."""
    key = where / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    (home / "gitconfig").write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_DIR"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def team(tmp_path: Path) -> dict[str, object]:
    """A bare origin; Alice's clone signs with her ssh key and trusts it; Mallory's clone can push."""
    origin = bare_origin(tmp_path)
    alice_key = keypair(tmp_path, "alice_key")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"alice@example.com {alice_key.with_suffix('.pub').read_text().strip()}\n")
    clones = {}
    for who in ("alice", "mallory"):
        git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), who)
        clones[who] = tmp_path / who
    a = clones["alice"]
    git(a, "config", "user.name", "Alice Reviewer")
    git(a, "config", "user.email", "alice@example.com")
    git(a, "config", "gpg.format", "ssh")
    git(a, "config", "user.signingkey", str(alice_key))
    git(a, "config", "gpg.ssh.allowedSignersFile", str(allowed))
    m = clones["mallory"]
    # Mallory (an agent with push rights, say) writes reviews in Alice's name
    git(m, "config", "user.name", "Alice Reviewer")
    git(m, "config", "user.email", "alice@example.com")
    return {"alice": a, "mallory": m, "base": git(origin, "rev-parse", "main"), "head": git(origin, "rev-parse", "agent/work"),
            "tmp": tmp_path, "allowed": allowed}


def review(repo: Path, base: str, head: str, verdict: str = "approve", reason: str = "ok") -> Review:
    r = Review.new(verdict, reason, repo_dir=repo, branch="agent/work", base=base, head=head)
    record_review(repo, r)
    return r


def test_a_review_is_signed_and_verifies_as_its_signer(team) -> None:
    a, base, head = team["alice"], team["base"], team["head"]
    r = review(a, base, head)
    note = read_note(a, head)
    assert SIGNED_HEADER in note and "BEGIN SSH SIGNATURE" in note
    payload, fmt, sig = split_signed(note)
    assert fmt == "ssh" and payload == r.to_toml() and sig
    [entry] = log_json(a, "agent/work", base, head)["reviews"]
    assert entry["signature"]["status"] == "good" and entry["signature"]["signer"] == "alice@example.com"
    assert entry["shown_as"] == ALICE
    assert "[signed by alice@example.com]" in render_log_text(a, "agent/work", base, head)


def test_an_edited_review_no_longer_verifies(team) -> None:
    a, base, head = team["alice"], team["base"], team["head"]
    review(a, base, head, "reject", "the swap is wrong")
    note = read_note(a, head)
    assert verify_chunk(a, note).status == "good"
    forged = note.replace('verdict = "reject"', 'verdict = "approve"')
    assert forged != note
    check = verify_chunk(a, forged)
    assert check.status == "bad" and check.words().startswith("bad signature")


def test_an_untrusted_key_is_a_bad_signature(team) -> None:
    a, base, head = team["alice"], team["base"], team["head"]
    review(a, base, head)
    team["allowed"].write_text("")  # Alice no longer trusts any key
    [entry] = log_json(a, "agent/work", base, head)["reviews"]
    assert entry["signature"]["status"] == "bad" and "allowedSignersFile" in entry["signature"]["detail"]
    assert entry["shown_as"].startswith("unverified")


def test_signing_failure_records_nothing(team) -> None:
    a, base, head = team["alice"], team["base"], team["head"]
    git(a, "config", "user.signingkey", str(team["tmp"] / "no_such_key"))
    with pytest.raises(ReviewError, match="could not sign"):
        review(a, base, head)
    assert read_note(a, head) is None


def test_forged_review_pulled_from_a_bare_remote_is_unsigned_and_not_alices(team, capsys) -> None:
    a, m, base, head = team["alice"], team["mallory"], team["base"], team["head"]
    mine = review(a, base, head, "reject", "the swap is wrong")
    push_notes(a, "origin")
    git(m, "fetch", "-q", "origin", "refs/notes/reviewui:refs/notes/reviewui")
    forged = review(m, base, head, "approve", "all good")  # in Alice's name, no signature
    push_notes(m, "origin")

    report = pull_notes_report(a, "origin")
    assert (report.added, report.unsigned, report.bad) == (1, 1, 0)
    assert report.words("origin") == "pulled 1 review from origin (1 unsigned)"
    entries = {e["id"]: e for e in log_json(a, "agent/work", base, head)["reviews"]}
    assert entries[mine.id]["shown_as"] == ALICE and entries[mine.id]["signature"]["status"] == "good"
    assert entries[forged.id]["reviewer"] == ALICE  # what it claims ...
    assert entries[forged.id]["signature"]["status"] == "unsigned"
    assert entries[forged.id]["shown_as"] == f"unverified (claims to be {ALICE})"  # ... is not what it is shown as
    text = render_log_text(a, "agent/work", base, head)
    assert f"approve  unverified (claims to be {ALICE})" in text and "[unsigned]" in text


def test_forged_review_signed_with_another_key_is_a_bad_signature(team) -> None:
    a, m, base, head = team["alice"], team["mallory"], team["base"], team["head"]
    git(m, "config", "gpg.format", "ssh")
    git(m, "config", "user.signingkey", str(keypair(team["tmp"], "mallory_key")))
    forged = review(m, base, head, "approve", "all good")
    push_notes(m, "origin")
    report = pull_notes_report(a, "origin")
    assert (report.added, report.unsigned, report.bad) == (1, 0, 1)
    assert "1 bad signature" in report.words("origin")
    [entry] = log_json(a, "agent/work", base, head)["reviews"]
    assert entry["id"] == forged.id and entry["signature"]["status"] == "bad"
    assert entry["shown_as"].startswith("unverified")


def test_notes_pull_command_reports_unsigned(team, capsys) -> None:
    from reviewui import cli

    a, m, base, head = team["alice"], team["mallory"], team["base"], team["head"]
    review(m, base, head)
    push_notes(m, "origin")
    assert cli.main(["notes", "pull", "origin", "--repo", str(a)]) == 0
    assert "pulled 1 review from origin (1 unsigned)" in capsys.readouterr().out


async def test_history_screen_shows_the_forgery_as_unverified(team) -> None:
    from textual.widgets import Static

    from reviewui.core.session import ReviewSession
    from reviewui.ui.app import make_app
    from reviewui.ui.screens.history import HistoryScreen
    from reviewui.ui.widgets.review_header import ReviewHeader
    from tests.ui.ready import review_ready

    a, m, base, head = team["alice"], team["mallory"], team["base"], team["head"]
    review(a, base, head, "reject", "the swap is wrong")
    push_notes(a, "origin")
    git(m, "fetch", "-q", "origin", "refs/notes/reviewui:refs/notes/reviewui")
    forged = review(m, base, head, "approve", "all good")
    push_notes(m, "origin")
    pull_notes_report(a, "origin")
    session = ReviewSession.open(a, "agent/work", base="origin/main")
    app = make_app(session)
    async with app.run_test(size=(140, 30)) as pilot:
        await review_ready(app, pilot)  # the history is read in a worker after the first paint
        # the latest review is the forged approve: it does not count (issue 38), so Alice's reject stands
        header = app.screen.query_one(ReviewHeader)
        assert str(header.verdict) == "rejected by Alice Reviewer"
        await pilot.press("v")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, HistoryScreen)
        text = str(app.screen.query_one("#history-text", Static).render())
        lines = text.splitlines()
        rejected = next(ln for ln in lines if ln.startswith("reject"))
        approved = next(ln for ln in lines if ln.startswith("approve"))
        assert ALICE in rejected and "signed by alice@example.com" in rejected
        assert f"unverified (claims to be {ALICE})" in approved and "unsigned" in approved
        assert forged.head[:7] in approved
