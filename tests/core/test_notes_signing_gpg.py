"""Signed verdicts with `gpg.format=openpgp`: signed with the reviewer's gpg key, checked against the keyring;
an edited review, an unsigned forgery and one signed by a key the keyring lacks never pass as the reviewer's.

Each test gets throwaway GNUPGHOMEs (no passphrase, no pinentry); the gpg-agent
they start is killed in teardown.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewui.core.notes.signing import SIGNED_HEADER, signing_setup, split_signed, verify_chunk
from reviewui.core.notes.sync import pull_notes_report, push_notes
from reviewui.core.notes.verdicts import Review, log_json, read_note, record_review, render_log_text
from tests.core.test_notes_signing import git
from tests.core.notes_origin import bare_origin, isolate_git

ALICE = "Alice Reviewer <alice@example.com>"


def gpg_home(where: Path, uid: str) -> tuple[Path, str]:
    """A fresh GNUPGHOME holding one ed25519 signing key for `uid`; returns (home, fingerprint)."""
    home = where
    home.mkdir(mode=0o700)
    env = {"GNUPGHOME": str(home), "PATH": "/usr/bin:/bin"}
    subprocess.run(["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key",
                    uid, "ed25519", "sign", "never"], env=env, check=True, capture_output=True)
    listing = subprocess.run(["gpg", "--batch", "--with-colons", "--list-secret-keys", uid], env=env,
                             check=True, capture_output=True, text=True).stdout
    fpr = next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))
    return home, fpr


def kill_agent(home: Path) -> None:
    subprocess.run(["gpgconf", "--kill", "all"], env={"GNUPGHOME": str(home), "PATH": "/usr/bin:/bin"},
                   capture_output=True)


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path_factory.mktemp("home"), monkeypatch)


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """A bare origin; Alice's clone signs with her gpg key (GNUPGHOME set to her keyring); Mallory's can push."""
    assert shutil.which("gpg"), "gpg is needed to test openpgp signing"
    origin = bare_origin(tmp_path)
    # gpg-agent's socket lives in GNUPGHOME, and a socket path has ~108 bytes: pytest's deep
    # temp paths outgrow that once its run counter reaches four digits.
    short = Path(tempfile.mkdtemp(prefix="gpg-"))
    alice_home, alice_fpr = gpg_home(short / "alice", ALICE)
    mallory_home, mallory_fpr = gpg_home(short / "mallory", ALICE)  # same uid, another key
    monkeypatch.setenv("GNUPGHOME", str(alice_home))
    clones = {}
    for who in ("alice", "mallory"):
        git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), who)
        clones[who] = tmp_path / who
        git(clones[who], "config", "user.name", "Alice Reviewer")  # Mallory writes in Alice's name
        git(clones[who], "config", "user.email", "alice@example.com")
    git(clones["alice"], "config", "gpg.format", "openpgp")
    git(clones["alice"], "config", "user.signingkey", alice_fpr)
    try:
        yield {"alice": clones["alice"], "mallory": clones["mallory"], "base": git(origin, "rev-parse", "main"),
               "head": git(origin, "rev-parse", "agent/work"), "alice_fpr": alice_fpr,
               "mallory_home": mallory_home, "mallory_fpr": mallory_fpr}
    finally:
        kill_agent(alice_home)
        kill_agent(mallory_home)
        shutil.rmtree(short, ignore_errors=True)


def review(repo: Path, base: str, head: str, verdict: str = "approve", reason: str = "ok") -> Review:
    r = Review.new(verdict, reason, repo_dir=repo, branch="agent/work", base=base, head=head)
    record_review(repo, r)
    return r


def test_the_setup_is_read_as_openpgp(team) -> None:
    setup = signing_setup(team["alice"])
    assert setup is not None and (setup.format, setup.key, setup.program) == ("openpgp", team["alice_fpr"], "gpg")


def test_a_review_is_gpg_signed_and_log_shows_its_signer(team) -> None:
    a, base, head = team["alice"], team["base"], team["head"]
    r = review(a, base, head)
    note = read_note(a, head)
    assert SIGNED_HEADER in note and "BEGIN PGP SIGNATURE" in note
    payload, fmt, sig = split_signed(note)
    assert fmt == "openpgp" and payload == r.to_toml() and sig
    [entry] = log_json(a, "agent/work", base, head)["reviews"]
    assert entry["signature"]["status"] == "good"
    assert entry["signature"]["signer"] == ALICE and entry["signature"]["key"] == team["alice_fpr"]
    assert entry["shown_as"] == ALICE
    assert f"[signed by {ALICE}]" in render_log_text(a, "agent/work", base, head)


def test_an_edited_gpg_signed_review_is_a_bad_signature(team) -> None:
    a, base, head = team["alice"], team["base"], team["head"]
    review(a, base, head, "reject", "the swap is wrong")
    note = read_note(a, head)
    assert verify_chunk(a, note).status == "good"
    forged = note.replace('verdict = "reject"', 'verdict = "approve"')
    assert forged != note
    check = verify_chunk(a, forged)
    assert check.status == "bad" and check.words() == "bad signature (does not verify)"
    # the signature itself garbled: bad, never unsigned
    payload, _, sig = split_signed(note)
    garbled = note.replace(sig.splitlines()[3], sig.splitlines()[3][::-1]) if sig else note
    assert garbled != note and verify_chunk(a, garbled).status == "bad"


def test_forged_reviews_pulled_from_a_bare_remote_are_not_alices(team, monkeypatch: pytest.MonkeyPatch) -> None:
    a, m, base, head = team["alice"], team["mallory"], team["base"], team["head"]
    mine = review(a, base, head, "reject", "the swap is wrong")
    push_notes(a, "origin")
    git(m, "fetch", "-q", "origin", "refs/notes/reviewui:refs/notes/reviewui")
    unsigned = review(m, base, head, "approve", "all good")  # in Alice's name, no signature
    # ... and one signed by Mallory's own key under Alice's user id, which Alice's keyring does not hold
    git(m, "config", "user.signingkey", team["mallory_fpr"])
    with monkeypatch.context() as mp:
        mp.setenv("GNUPGHOME", str(team["mallory_home"]))
        other_key = review(m, base, head, "approve", "really all good")
    push_notes(m, "origin")

    report = pull_notes_report(a, "origin")
    assert (report.added, report.unsigned, report.bad) == (2, 1, 1)
    entries = {e["id"]: e for e in log_json(a, "agent/work", base, head)["reviews"]}
    assert entries[mine.id]["shown_as"] == ALICE and entries[mine.id]["signature"]["status"] == "good"
    assert entries[unsigned.id]["signature"]["status"] == "unsigned"
    assert entries[unsigned.id]["shown_as"] == f"unverified (claims to be {ALICE})"
    assert entries[other_key.id]["signature"] == {"status": "bad", "state": "untrusted", "signer": "", "key": "",
                                                  "detail": "no public key for it"}
    assert entries[other_key.id]["shown_as"] == f"unverified (claims to be {ALICE})"
    text = render_log_text(a, "agent/work", base, head)
    assert "[unsigned]" in text and "[bad signature (no public key for it)]" in text


def test_verify_counts_only_an_openpgp_key_the_base_lists(team, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.clirun import run_cli

    a, m, base, head = team["alice"], team["mallory"], team["base"], team["head"]
    git(a, "checkout", "-q", "main")
    (a / "ci").mkdir()
    (a / "ci" / "allowed").write_text(f"alice@example.com openpgp {team['alice_fpr']}\n")
    (a / ".reviewui.toml").write_text('verify-signers = "ci/allowed"\n')
    git(a, "add", ".")
    git(a, "commit", "-qm", "name the allowed signers")
    git(a, "checkout", "-q", "agent/work")
    # Mallory's key in Alice's keyring (a good signature there), under Alice's uid, but not listed
    public = subprocess.run(["gpg", "--batch", "--export", team["mallory_fpr"]], capture_output=True, check=True,
                            env={"GNUPGHOME": str(team["mallory_home"]), "PATH": "/usr/bin:/bin"}).stdout
    subprocess.run(["gpg", "--batch", "--import"], input=public, capture_output=True, check=True)
    git(m, "config", "gpg.format", "openpgp")
    git(m, "config", "user.signingkey", team["mallory_fpr"])
    with monkeypatch.context() as mp:
        mp.setenv("GNUPGHOME", str(team["mallory_home"]))
        review(m, base, head, "approve", "ship it")
    push_notes(m, "origin")
    pull_notes_report(a, "origin")
    proc = run_cli("verify", "agent/work", "--base", "main", "--format", "json", cwd=a)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [entry] = json.loads(proc.stdout)["reviews"]
    assert entry["signature"] == "untrusted" and "allowed signers" in entry["why_not"]
    review(a, base, head, "approve", "checked")
    proc = run_cli("verify", "agent/work", "--base", "main", "--require", "alice@example.com", cwd=a)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "approved by alice@example.com" in proc.stdout
