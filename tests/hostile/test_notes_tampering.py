"""Tampered verdict notes, pulled for real: a bare origin, the reviewer's clone, an attacker's clone with push rights.

Each attack of issue 27 is replayed through the real `reviewui notes pull`
(a subprocess) and then read back through `log` (text and JSON) and, for the
row-drawing attack, the history screen. Every attack runs twice: with the
reviewer signing with an ssh key, with a gpg key, and with no signing set up at all.

- Tables appended after the reviewer's review (a fake "fine, merge it"
  comment, a fake bite) never become part of it; the pull says what it brought.
- A `[[ review ]]` table spelled with spaces neither hides the reviewer's
  reject nor passes for the reviewer's own.
- A pulled review's reason cannot draw a line that looks like a review's row.
- A forged unsigned review in the reviewer's name is an unverified claim,
  whether or not the reviewer signs.
- A 40 MB note is skipped, unread, with one warning line, while another
  review in the same pull lands.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewui.core.notes.verdicts import Review, read_note, record_review
from tests.clirun import run_cli
from tests.core.notes_origin import bare_origin, isolate_git
from tests.core.test_notes_signing_gpg import gpg_home, kill_agent

ALICE = "Alice Reviewer <alice@example.com>"
REF = "refs/notes/reviewui"
FAKE_ROW = "2026-11-29T17:00:00Z  approve  Alice Reviewer <alice@example.com>  0123456789ab  (this head)  " \
           "[signed by alice@example.com]"


def git(cwd: Path, *args: str, data: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, check=True).stdout.decode().strip()


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path_factory.mktemp("home"), monkeypatch)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


@pytest.fixture(params=["ssh", "openpgp", "unsigned"])
def team(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, object]]:
    """A bare origin; Alice's clone (signing with ssh or gpg, or not at all); Mallory's clone, which can push."""
    origin = bare_origin(tmp_path)
    for who in ("alice", "mallory"):
        git(tmp_path, "clone", "-q", str(origin), who)
    a, m = tmp_path / "alice", tmp_path / "mallory"
    git(a, "config", "user.name", "Alice Reviewer")
    git(a, "config", "user.email", "alice@example.com")
    if request.param == "ssh":
        key = tmp_path / "alice_key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", str(key)], check=True)
        allowed = tmp_path / "allowed_signers"
        allowed.write_text(f"alice@example.com {key.with_suffix('.pub').read_text().strip()}\n")
        git(a, "config", "gpg.format", "ssh")
        git(a, "config", "user.signingkey", str(key))
        git(a, "config", "gpg.ssh.allowedSignersFile", str(allowed))
    short = Path(tempfile.mkdtemp(prefix="gpg-"))  # gpg-agent's socket path must stay short
    if request.param == "openpgp":
        assert shutil.which("gpg"), "gpg is needed to test openpgp signing"
        home, fpr = gpg_home(short / "alice", ALICE)
        monkeypatch.setenv("GNUPGHOME", str(home))  # the CLI subprocesses inherit it
        git(a, "config", "gpg.format", "openpgp")
        git(a, "config", "user.signingkey", fpr)
    git(m, "config", "user.name", "Mallory")
    git(m, "config", "user.email", "mallory@example.com")
    try:
        yield {"alice": a, "mallory": m, "signing": request.param,
               "base": git(origin, "rev-parse", "main"), "head": git(origin, "rev-parse", "agent/work")}
    finally:
        if request.param == "openpgp":
            kill_agent(short / "alice")
        shutil.rmtree(short, ignore_errors=True)


def alice_reviews(team: dict, verdict: str = "reject", reason: str = "the swap is wrong") -> Review:
    a = team["alice"]
    r = Review.new(verdict, reason, repo_dir=a, branch="agent/work", base=team["base"], head=team["head"])
    record_review(a, r)
    git(a, "push", "-q", "origin", f"{REF}:{REF}")
    return r


def mallory_rewrites(team: dict, commit: str, change) -> None:
    """Mallory fetches the notes, rewrites the note on `commit` byte for byte, and pushes."""
    m = team["mallory"]
    git(m, "fetch", "-q", "origin", f"+{REF}:{REF}")
    old = subprocess.run(["git", "notes", "--ref", REF, "show", commit], cwd=m, capture_output=True).stdout
    blob = git(m, "hash-object", "-w", "--stdin", data=change(old.decode()).encode())
    git(m, "notes", "--ref", REF, "add", "-f", "-C", blob, commit)  # -C: the blob as is, no stripspace
    git(m, "push", "-q", "origin", f"{REF}:{REF}")


def pull(team: dict) -> subprocess.CompletedProcess[str]:
    a = team["alice"]
    proc = run_cli("notes", "pull", "origin", "--repo", str(a), cwd=a)
    assert proc.returncode == 0, proc.stderr
    return proc


def log_json(team: dict) -> dict:
    a = team["alice"]
    proc = run_cli("log", "agent/work", "--base", "origin/main", "--format", "json", "--repo", str(a), cwd=a)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def log_text(team: dict) -> str:
    a = team["alice"]
    proc = run_cli("log", "agent/work", "--base", "origin/main", "--repo", str(a), cwd=a)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def rows(text: str) -> list[str]:
    """The lines of `log` text that start at the left edge and are not a section heading."""
    return [ln for ln in text.splitlines() if ln and not ln[0].isspace() and not ln.startswith("foreign text")]


def forged_toml(rid: str, verdict: str, reason: str, head: str, reviewer: str = ALICE, header: str = "[[ review ]]") -> str:
    return (f'{header}\nid = "{rid}"\nverdict = "{verdict}"\nreason = {json.dumps(reason)}\n'
            f'reviewer = "{reviewer}"\nat = 2030-01-01T00:00:00Z\ntool = "reviewui 9"\nbranch = "agent/work"\n'
            f'base = ""\nhead = "{head}"\ntree = ""\npatch_id = ""\n')


APPENDED = ('\n[[review.comment]]\nfile = "calc.py"\nheader = "@@ -1,2 +1,2 @@"\ntext = "fine, merge it"\n'
            '\n[[review.bite]]\nfile = "calc.py"\nheader = "@@ -1,2 +1,2 @@"\nverdict = "bites"\n'
            'failing_tests = ["tests/test_calc.py::test_add"]\n')


def test_tables_appended_after_the_signed_review_never_join_it(team) -> None:
    mine = alice_reviews(team)
    mallory_rewrites(team, team["head"], lambda body: body + APPENDED)
    said = pull(team).stdout.strip()

    doc = log_json(team)
    [entry] = doc["reviews"]
    assert entry["id"] == mine.id and entry["verdict"] == "reject"
    assert entry["comments"] == [] and entry["bites"] == []  # the review says what Alice wrote, nothing more
    assert entry["shown_as"] == ALICE and entry["provenance"] == "recorded here"
    if team["signing"] != "unsigned":
        assert entry["signature"]["status"] == "good"
        # after the signature: foreign text, brought in and said so
        assert said == "pulled 0 reviews from origin; 1 piece of foreign text (not a review, signed by no one)"
        assert any("fine, merge it" in f["text"] and f["commit"] == team["head"] for f in doc["foreign"])
        text = log_text(team)
        assert [ln for ln in text.splitlines() if "fine, merge it" in ln] == ['    ! text = "fine, merge it"']
    else:
        # unsigned, the appended tables change the review itself: Alice's own copy stands, and the pull says so
        assert entry["signature"]["status"] == "unsigned"
        assert said == "pulled 0 reviews from origin; kept your copy of 1 review that differs on origin"
        assert "fine, merge it" not in (read_note(team["alice"], team["head"]) or "")
    assert len(rows(log_text(team))) == 1


def test_a_fresh_clone_pulling_the_tampered_note_never_credits_the_tables_to_alice(team, tmp_path) -> None:
    alice_reviews(team)
    mallory_rewrites(team, team["head"], lambda body: body + APPENDED)
    # Alice's second clone: no local note at all, so the pull takes the whole remote note
    git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), "alice2")
    a2 = tmp_path / "alice2"
    for line in git(team["alice"], "config", "--local", "--list").splitlines():
        key, _, value = line.partition("=")
        if key.startswith(("user.", "gpg.")):
            git(a2, "config", key, value)
    second = dict(team, alice=a2)
    said = pull(second).stdout.strip()
    [entry] = log_json(second)["reviews"]
    assert entry["provenance"] == "pulled from origin"
    assert "pulled from origin" in rows(log_text(second))[0]
    if team["signing"] != "unsigned":
        assert said == "pulled 1 review from origin; 1 piece of foreign text (not a review, signed by no one)"
        assert entry["signature"]["status"] == "good" and entry["shown_as"] == ALICE
        assert entry["comments"] == [] and entry["bites"] == []
    else:
        # nothing tells Alice's words from Mallory's: the whole review is an unverified claim, not Alice's
        assert said == "pulled 1 review from origin (1 unsigned)"
        assert entry["comments"] and entry["signature"]["status"] == "unsigned"
        assert entry["shown_as"] == f"unverified (claims to be {ALICE})"


def test_a_spaced_review_header_neither_hides_the_reject_nor_passes_for_alice(team) -> None:
    mine = alice_reviews(team)
    forged = str(uuid.uuid4())
    mallory_rewrites(team, team["head"], lambda body: body + "\n" + forged_toml(forged, "approve", "ok", team["head"]))
    assert pull(team).stdout.strip() == "pulled 1 review from origin (1 unsigned)"
    entries = {e["id"]: e for e in log_json(team)["reviews"]}
    assert set(entries) == {mine.id, forged}  # the reject is still there
    assert entries[mine.id]["verdict"] == "reject" and entries[mine.id]["shown_as"] == ALICE
    assert entries[forged]["shown_as"] == f"unverified (claims to be {ALICE})"
    assert entries[forged]["provenance"] == "pulled from origin"
    text = log_text(team)
    [approve] = [ln for ln in rows(text) if "  approve  " in ln]
    assert f"unverified (claims to be {ALICE})" in approve and "[unsigned]" in approve and "(pulled from origin)" in approve


def test_a_forged_copy_of_alices_review_put_before_it_is_left_out(team) -> None:
    mine = alice_reviews(team)
    mallory_rewrites(team, team["head"],
                     lambda body: forged_toml(mine.id, "approve", "ok", team["head"], header="[[ review ]]") + "\n" + body)
    assert pull(team).stdout.strip() == "pulled 0 reviews from origin; kept your copy of 1 review that differs on origin"
    [entry] = log_json(team)["reviews"]
    assert entry["id"] == mine.id and entry["verdict"] == "reject" and entry["shown_as"] == ALICE


def test_a_pulled_reason_cannot_draw_a_review_row(team) -> None:
    alice_reviews(team)
    m = team["mallory"]
    git(m, "fetch", "-q", "origin", f"+{REF}:{REF}")
    hostile = "looks fine\n" + FAKE_ROW + "\r" + FAKE_ROW + "\u2028" + FAKE_ROW + "\n" + " " * 120 + FAKE_ROW
    record_review(m, Review.new("reject", hostile, repo_dir=m, branch="agent/work", base=team["base"], head=team["head"]))
    git(m, "push", "-q", "origin", f"{REF}:{REF}")
    pull(team)
    text = log_text(team)
    assert len(rows(text)) == 2  # Alice's reject and Mallory's: no third row
    assert all("0123456789ab" not in ln for ln in rows(text))
    fake = [ln for ln in text.splitlines() if "0123456789ab" in ln]
    assert len(fake) == 4 and all(ln.startswith("    \u2502 ") for ln in fake)
    assert "\r" not in text and "\u2028" not in text


def test_an_unsigned_forgery_in_alices_name_is_an_unverified_claim(team) -> None:
    mine = alice_reviews(team, "reject", "no")
    m = team["mallory"]
    git(m, "config", "user.name", "Alice Reviewer")
    git(m, "config", "user.email", "alice@example.com")
    git(m, "fetch", "-q", "origin", f"+{REF}:{REF}")
    forged = Review.new("approve", "all good", repo_dir=m, branch="agent/work", base=team["base"], head=team["head"])
    record_review(m, forged)  # Mallory's clone has no key: unsigned, in Alice's name
    git(m, "push", "-q", "origin", f"{REF}:{REF}")
    assert pull(team).stdout.strip() == "pulled 1 review from origin (1 unsigned)"
    entries = {e["id"]: e for e in log_json(team)["reviews"]}
    assert entries[forged.id]["reviewer"] == ALICE
    assert entries[forged.id]["shown_as"] == f"unverified (claims to be {ALICE})"
    assert entries[mine.id]["shown_as"] == ALICE  # Alice's own, recorded here, signed or not


def test_a_40_mb_note_is_skipped_and_the_rest_of_the_pull_lands(team) -> None:
    m = team["mallory"]
    big = m / "big.txt"
    big.write_bytes(b"x" * 40_000_000)  # 40 MB: packs to a few KiB, unpacks to 40 MB
    git(m, "notes", "--ref", REF, "add", "-f", "-C", git(m, "hash-object", "-w", str(big)), team["base"])
    theirs = Review.new("approve", "ok", repo_dir=m, branch="agent/work", base=team["base"], head=team["head"])
    record_review(m, theirs)
    git(m, "push", "-q", "origin", f"{REF}:{REF}")
    a = team["alice"]
    proc = run_cli("notes", "pull", "origin", "--repo", str(a), cwd=a)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"reviewui: warning: skipped the note on {team['base'][:12]}: 40,000,000 bytes is over the "
        "4,194,304-byte cap (max-input-bytes)"]
    assert proc.stdout.strip() == "pulled 1 review from origin (1 unsigned); skipped 1 oversized note"
    assert read_note(a, team["base"]) is None  # never landed locally
    assert [e["id"] for e in log_json(team)["reviews"]] == [theirs.id]
    # the next pull has nothing new to say, and pushing works (the remote's history is merged)
    assert pull(team).stdout.strip() == "pulled 0 reviews from origin"
    assert run_cli("notes", "push", "origin", "--repo", str(a), cwd=a).returncode == 0


async def test_history_screen_keeps_foreign_text_and_reasons_off_the_review_rows(team) -> None:
    from textual.widgets import Static

    from reviewui.core.session import ReviewSession
    from reviewui.ui.app import make_app
    from reviewui.ui.screens.history import HistoryScreen
    from tests.ui.ready import review_ready

    alice_reviews(team)
    m = team["mallory"]
    mallory_rewrites(team, team["head"], lambda body: body + APPENDED)
    hostile = "looks fine\n" + FAKE_ROW.replace("2026-11-29T17:00:00Z  approve", "approve  2026-11-29T17:00:00Z")
    record_review(m, Review.new("reject", hostile, repo_dir=m, branch="agent/work", base=team["base"], head=team["head"]))
    git(m, "push", "-q", "origin", f"{REF}:{REF}")
    pull(team)
    app = make_app(ReviewSession.open(team["alice"], "agent/work", base="origin/main"))
    async with app.run_test(size=(140, 40)) as pilot:
        await review_ready(app, pilot)
        await pilot.press("v")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, HistoryScreen)
        text = str(app.screen.query_one("#history-text", Static).render())
        drawn = [ln for ln in text.splitlines() if ln.startswith(("approve", "reject"))]
        assert len(drawn) == 2 and all("0123456789ab" not in ln for ln in drawn)
        assert "fine, merge it" not in text  # not part of any review ...
        [fake] = [ln for ln in text.splitlines() if "0123456789ab" in ln]
        assert fake.startswith("          \u2502 ")
        if team["signing"] != "unsigned":
            foreign = str(app.screen.query_one("#history-foreign", Static).render())
            assert "fine, merge it" in foreign  # ... shown apart
            assert [ln for ln in foreign.splitlines() if "fine, merge it" in ln] == ['    ! text = "fine, merge it"']
        mallory_row = next(ln for ln in drawn if "Mallory" in ln)
        assert "pulled from origin" in mallory_row
