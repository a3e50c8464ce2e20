"""A pulled note over the input cap is skipped without ever being read; the rest of the pull lands."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from reviewui.core.notes import store
from reviewui.core.notes.sync import pull_notes_report
from reviewui.core.notes.verdicts import Review, read_note, record_review, reviews_on
from tests.core.notes_origin import bare_origin, isolate_git

REF = "refs/notes/reviewui"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True).stdout.decode().strip()


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path_factory.mktemp("home"), monkeypatch)


def test_an_oversized_note_is_never_read_and_the_other_review_lands(tmp_path: Path, monkeypatch) -> None:
    origin = bare_origin(tmp_path)
    for who in ("a", "m"):
        git(tmp_path, "clone", "-q", str(origin), who)
        git(tmp_path / who, "config", "user.name", who)
        git(tmp_path / who, "config", "user.email", f"{who}@example.com")
    a, m = tmp_path / "a", tmp_path / "m"
    base, head = git(origin, "rev-parse", "main"), git(origin, "rev-parse", "agent/work")
    (m / "big").write_text("x" * 5000)
    big = git(m, "hash-object", "-w", "big")
    git(m, "notes", "--ref", REF, "add", "-f", "-C", big, base)
    theirs = Review.new("approve", "ok", repo_dir=m, branch="agent/work", base=base, head=head)
    record_review(m, theirs)
    git(m, "push", "-q", "origin", f"{REF}:{REF}")

    import reviewui.core.bounded as bounded

    monkeypatch.setattr(bounded, "limit", lambda kind: 1000)
    reads: list[tuple[tuple[str, ...], bytes]] = []
    real = store.run_git

    def spy(repo: Any, *args: str, **kw: Any) -> bytes:
        reads.append((args, kw.get("input") or b""))
        return real(repo, *args, **kw)

    monkeypatch.setattr(store, "run_git", spy)
    report = pull_notes_report(a, "origin")
    assert report.added == 1 and report.oversized == ((base, 5000),)
    assert report.warnings() == [f"warning: skipped the note on {base[:12]}: 5,000 bytes is over the 1,000-byte cap"
                                 " (max-input-bytes)"]
    contents = [(args, data) for args, data in reads if "--batch" in args or "blob" in args]
    assert contents and not any(big.encode() in data or big in args for args, data in contents)
    assert any(big.encode() in data for args, data in reads if "--batch-check" in args)  # its size was asked
    assert [r.id for r in reviews_on(a, head)] == [theirs.id]
    assert read_note(a, base) is None
