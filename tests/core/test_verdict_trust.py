"""Verdicts a team can trust (issue 38): whitespace is code for currency; pulled unsigned approvals claiming the
reviewer never approve a row nor pass `verify`; only a current approve signed by a key the base lists opens it.

One team: a bare origin whose main names its allowed signers (`verify-signers`, Alice's key); Alice's clone
signs with that key; Mallory's clone (an agent with push rights) writes reviews in Alice's name.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest

from reviewui.core.notes.verdicts import Review
from tests.clirun import run_cli

ALICE = "Alice Reviewer <alice@example.com>"
BASE = {
    "clean.py": "def keep(items):\n    return list(items)\n",
    "build.py": "def build():\n    return 0\n",
    ".reviewui.toml": 'verify-signers = "ci/allowed_signers"\n',
}
CLEAN = "def clean(items):\n    out = []\n    for s in items:\n        out.append(s.strip())\n    return out\n"
REINDENTED = "def clean(items):\n    out = []\n    for s in items:\n        out.append(s.strip())\n        return out\n"
BUILD = 'def build():\n    return 0\n\n\nCMD = "rm -rf /tmp/build"\n'
SPACED = 'def build():\n    return 0\n\n\nCMD = "rm -rf / tmp/build"\n'
AGENT_ENV = {"GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
             "GIT_COMMITTER_NAME": "Agent", "GIT_COMMITTER_EMAIL": "agent@example.com"}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    full = {**os.environ, **(env or {})}
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True, env=full).stdout.decode().strip()


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, env=AGENT_ENV)
    return git(repo, "rev-parse", "HEAD")


def keypair(where: Path, name: str) -> Path:
    key = where / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.core.notes_origin import isolate_git

    isolate_git(tmp_path_factory.mktemp("home"), monkeypatch)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


@pytest.fixture
def team(tmp_path: Path) -> dict[str, Path]:
    alice_key = keypair(tmp_path, "alice_key")
    mallory_key = keypair(tmp_path, "mallory_key")
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    listed = f"alice@example.com {alice_key.with_suffix('.pub').read_text().strip()}\n"
    commit(seed, {**BASE, "ci/allowed_signers": listed}, "base")
    for name, files in (("agent/indent", {"clean.py": CLEAN}), ("agent/space", {"build.py": BUILD}),
                        ("agent/rebase", {"clean.py": CLEAN}), ("agent/work", {"build.py": BUILD})):
        git(seed, "checkout", "-qb", name, "main")
        commit(seed, files, f"agent: {name}")
    git(seed, "checkout", "-qb", "agent/other", "main")
    commit(seed, {"clean.py": CLEAN}, "agent: first step")
    commit(seed, {"build.py": BUILD}, "agent: second step")
    git(seed, "checkout", "-q", "main")
    git(tmp_path, "clone", "-q", "--bare", str(seed), "origin.git")
    clones = {}
    for who in ("alice", "mallory"):
        git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), who)
        clone = clones[who] = tmp_path / who
        git(clone, "config", "user.name", "Alice Reviewer")  # Mallory writes in Alice's name
        git(clone, "config", "user.email", "alice@example.com")
        for branch in ("agent/indent", "agent/space", "agent/rebase", "agent/work", "agent/other"):
            git(clone, "branch", "-q", branch, f"origin/{branch}")
    a = clones["alice"]
    mine = tmp_path / "alice_allowed"
    mine.write_text(listed)
    for key, value in (("gpg.format", "ssh"), ("user.signingkey", str(alice_key)),
                       ("gpg.ssh.allowedSignersFile", str(mine))):
        git(a, "config", key, value)
    return {"alice": a, "mallory": clones["mallory"], "mallory_key": mallory_key, "tmp": tmp_path}


def verdict(repo: Path, branch: str, word: str, reason: str = "ok") -> None:
    proc = run_cli("verdict", branch, word, "--reason", reason, cwd=repo)
    assert proc.returncode == 0, proc.stderr


def queue(repo: Path) -> dict[str, dict[str, object]]:
    proc = run_cli("queue", "--format", "json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["omitted"] == 0
    return {r["branch"]: r for r in doc["rows"]}


def verify(repo: Path, branch: str, *more: str) -> subprocess.CompletedProcess[str]:
    return run_cli("verify", branch, "--base", "main", *more, cwd=repo)


def test_whitespace_rework_and_a_space_in_a_string_outdate_an_approval_in_queue_log_and_verify(team) -> None:
    a = team["alice"]
    for branch in ("agent/indent", "agent/space", "agent/rebase"):
        verdict(a, branch, "approve")
    assert verify(a, "agent/indent").returncode == 0  # signed by a listed key, on this very head: it opens
    # the agent reworks: `return out` moved into the loop; a space inside a string; and one plain rebase
    for branch, files in (("agent/indent", {"clean.py": REINDENTED}), ("agent/space", {"build.py": SPACED})):
        git(a, "checkout", "-q", branch)
        commit(a, files, "tidy")
        plain = git(a, "diff", "main", branch).encode()
        stable = subprocess.run(["git", "patch-id", "--stable"], cwd=a, input=plain, capture_output=True).stdout
        old = subprocess.run(["git", "patch-id", "--stable"], cwd=a, capture_output=True,
                             input=git(a, "diff", "main", f"{branch}~1").encode()).stdout
        assert stable.split()[0] == old.split()[0]  # whitespace-blind, git calls it the same patch
    git(a, "checkout", "-q", "main")
    commit(a, {"build.py": "def build():\n    return 1\n"}, "main moves")
    git(a, "push", "-q", "origin", "main")  # the queue's base is origin/HEAD
    git(a, "checkout", "-q", "agent/rebase")
    git(a, "rebase", "-q", "main")
    git(a, "checkout", "-q", "main")

    rows = queue(a)
    for branch in ("agent/indent", "agent/space"):
        row = rows[branch]
        assert (row["tier"], row["currency"], row["verdict"]) == (1, "outdated", "approve"), row
        assert row["reason"].startswith("approval outdated by rework")
    assert (rows["agent/rebase"]["tier"], rows["agent/rebase"]["currency"]) == (5, "carried")

    for branch in ("agent/indent", "agent/space"):
        log = run_cli("log", branch, "--base", "main", "--format", "json", cwd=a)
        [entry] = json.loads(log.stdout)["reviews"]
        assert (entry["current"], entry["relation"], entry["counts"]) == (False, "different-patch", True)
        assert "OUTDATED by rework" in run_cli("log", branch, "--base", "main", cwd=a).stdout
        proc = verify(a, branch)
        assert proc.returncode == 1 and "outdated by rework" in proc.stdout, proc.stdout + proc.stderr
        doc = json.loads(verify(a, branch, "--format", "json").stdout)
        assert doc["ok"] is False and doc["reviews"][0]["current"] is False
    rebased = verify(a, "agent/rebase", "--format", "json")
    assert rebased.returncode == 0, rebased.stdout + rebased.stderr
    doc = json.loads(rebased.stdout)
    assert doc["ok"] and doc["reviews"][0]["current"] and doc["reviews"][0]["signature"] == "trusted"
    assert set(doc) >= {"ok", "head", "patch_id", "required", "reviews"}
    assert set(doc["reviews"][0]) >= {"reviewer", "verdict", "signature", "provenance", "current", "reason"}
    assert doc["reviews"][0]["reviewer"] == "alice@example.com"


def _forge_on(repo: Path, commit_sha: str, claims_head: str, branch: str, base: str) -> None:
    """An unsigned approve in Alice's name, dated 2099, written straight into the note on `commit_sha`."""
    r = Review.new("approve", "all good", repo_dir=repo, branch=branch, base=base, head=claims_head)
    r = replace(r, at=datetime(2099, 1, 1, tzinfo=timezone.utc))
    existing = subprocess.run(["git", "notes", "--ref=reviewui", "show", commit_sha], cwd=repo, capture_output=True,
                              text=True).stdout
    body = (existing + "\n" if existing else "") + r.to_toml()
    subprocess.run(["git", "notes", "--ref=reviewui", "add", "-f", "-F", "-", commit_sha], cwd=repo, input=body,
                   text=True, check=True, capture_output=True)


def test_pulled_unsigned_approvals_claiming_the_reviewer_never_approve_a_row_nor_pass_verify(team) -> None:
    a, m = team["alice"], team["mallory"]
    verdict(a, "agent/work", "reject", "CMD deletes the filesystem")
    assert run_cli("notes", "push", cwd=a).returncode == 0
    git(m, "fetch", "-q", "origin", "refs/notes/reviewui:refs/notes/reviewui")
    base = git(m, "merge-base", "main", "agent/work")
    _forge_on(m, git(m, "rev-parse", "agent/work"), git(m, "rev-parse", "agent/work"), "agent/work", base)
    # ... and one for a branch whose note sits on the agent's own earlier commit, claiming its head
    other_head = git(m, "rev-parse", "agent/other")
    _forge_on(m, git(m, "rev-parse", "agent/other~1"), other_head, "agent/other", base)
    git(m, "push", "-q", "origin", "refs/notes/reviewui:refs/notes/reviewui")
    pulled = run_cli("notes", "pull", cwd=a)
    assert pulled.returncode == 0 and "2 unsigned" in pulled.stdout, pulled.stdout + pulled.stderr

    rows = queue(a)
    work, other = rows["agent/work"], rows["agent/other"]
    assert (work["verdict"], work["tier"], work["not_counted"]) == ("reject", 4, 1), work  # her reject stands
    assert other["verdict"] is None and other["tier"] != 5 and other["not_counted"] == 1, other
    log = json.loads(run_cli("log", "agent/other", "--base", "main", "--format", "json", cwd=a).stdout)
    [forged] = log["reviews"]
    assert forged["shown_as"] == f"unverified (claims to be {ALICE})" and forged["counts"] is False
    assert forged["on_branch"] is True and forged["provenance"] == "pulled from origin"
    for branch in ("agent/work", "agent/other"):
        proc = verify(a, branch)
        assert proc.returncode == 1, proc.stdout
    assert "rejected by alice@example.com" in verify(a, "agent/work").stdout
    assert "unsigned" in verify(a, "agent/other").stdout


def test_a_signed_approve_by_a_listed_signer_passes_verify_and_the_same_by_an_unlisted_key_fails(team) -> None:
    a, m = team["alice"], team["mallory"]
    git(m, "config", "gpg.format", "ssh")
    git(m, "config", "user.signingkey", str(team["mallory_key"]))
    git(m, "config", "user.email", "mallory@example.com")
    verdict(m, "agent/work", "approve", "ship it")  # signed, but by a key main does not list
    git(m, "push", "-q", "origin", "refs/notes/reviewui:refs/notes/reviewui")
    assert run_cli("notes", "pull", cwd=a).returncode == 0
    proc = verify(a, "agent/work", "--format", "json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["ok"] is False and [r["signature"] for r in doc["reviews"]] == ["untrusted"]
    assert "key not in the allowed signers" in doc["reviews"][0]["why_not"]
    verdict(a, "agent/work", "approve", "checked the CMD")
    proc = verify(a, "agent/work", "--require", "alice@example.com", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["required"] == ["alice@example.com"]
    need_both = verify(a, "agent/work", "--require", "alice@example.com", "mallory@example.com")
    assert need_both.returncode == 1 and need_both.stdout.strip().splitlines() == [
        "no current approve by mallory@example.com signed by a listed key: the approve claiming Alice Reviewer "
        "<mallory@example.com> is signed by a key not in the allowed signers"]
    statement = json.loads(verify(a, "agent/work", "--format", "in-toto").stdout)
    head = git(a, "rev-parse", "agent/work")
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["subject"] == [{"name": "agent/work", "digest": {"gitCommit": head}}]
    p = statement["predicate"]
    assert (p["verdict"], p["reviewer"], p["head"]) == ("approve", "alice@example.com", head)
    assert p["base"] == git(a, "merge-base", "main", "agent/work") and p["patchId"] and "evidence" in p


def test_verify_usage_errors_exit_2(team, tmp_path: Path) -> None:
    a = team["alice"]
    proc = verify(a, "agent/nope")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    git(a, "checkout", "-q", "main")
    commit(a, {".reviewui.toml": ""}, "no signers named")
    proc = verify(a, "agent/work")
    assert proc.returncode == 2 and "verify-signers" in proc.stderr and "Traceback" not in proc.stderr
    assert run_cli("verify", "--format", "yaml", cwd=a).returncode == 2
