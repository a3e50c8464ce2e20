"""`reviewui delta`: since your latest verdict (yours only, trusted), or `--since REV`; the JSON contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewui.cli import main
from reviewui.core.notes.model import Review
from reviewui.core.notes.verdicts import record_review
from tests.core.delta.test_compute import FUNCS, _edit
from tests.gitrepo import RepoBuilder


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    got = capsys.readouterr()
    return code, got.out, got.err


@pytest.fixture
def pushed(tmp_path: Path) -> tuple[RepoBuilder, str, str]:
    """agent/work approved at its first head by the local reviewer, then pushed again: (repo, judged, head)."""
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"mod.py": FUNCS}, "base")
    rb.branch("agent/work")
    judged = rb.commit({"mod.py": _edit(_edit(FUNCS, 1, "    return 1\n"), 6, "    return 6\n")}, "first")
    assert main(["verdict", "agent/work", "approve", "--repo", str(rb.root)]) == 0
    head = rb.commit({"mod.py": _edit(_edit(_edit(FUNCS, 1, "    return 1\n"), 6, "    return 66\n"), 10,
                                      "    return 10\n")}, "second")
    rb.checkout("main")
    return rb, judged, head


def test_json_contract_since_your_approve(pushed, capsys: pytest.CaptureFixture[str]) -> None:
    rb, judged, head = pushed
    code, out, _ = _run(capsys, "delta", "agent/work", "--repo", str(rb.root), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert list(doc) == ["since", "head", "hunks", "counts"]
    assert (doc["since"], doc["head"]) == (judged, head)
    assert [list(h) for h in doc["hunks"]] == [["file", "header", "state", "evidence", "verdict"]] * 3
    assert [h["state"] for h in doc["hunks"]] == ["unchanged", "changed", "new"]
    assert all(h["evidence"] is None and h["verdict"] is None for h in doc["hunks"])  # nothing swept yet
    assert doc["counts"] == {"changed": 1, "new": 1, "unchanged": 1, "gone": 0}


def test_text_says_since_your_approve_and_shows_the_interdiff(pushed, capsys: pytest.CaptureFixture[str]) -> None:
    rb, judged, head = pushed
    code, out, _ = _run(capsys, "delta", "agent/work", "--repo", str(rb.root))
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("agent/work: since your approve of ")
    assert first.endswith(f"({judged[:10]}..{head[:10]}): 1 hunk changed, 1 new, 1 unchanged")
    assert "    | -+    return 6" in out and "    | ++    return 66" in out


def test_since_rev_overrides_and_no_verdict_is_one_line_exit_2(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"mod.py": FUNCS}, "base")
    rb.branch("agent/work")
    first = rb.commit({"mod.py": _edit(FUNCS, 1, "    return 1\n")})
    rb.commit({"mod.py": _edit(FUNCS, 1, "    return 1\n") + "X = 1\n"})
    code, out, err = _run(capsys, "delta", "agent/work", "--repo", str(rb.root))
    assert code == 2 and out == ""
    assert err == "reviewui: no verdict of yours on agent/work: nothing to compare with (record one, or pass --since REV)\n"
    code, out, _ = _run(capsys, "delta", "agent/work", "--repo", str(rb.root), "--since", first[:8], "--format", "json")
    assert code == 0 and [h["state"] for h in json.loads(out)["hunks"]] == ["unchanged", "new"]
    code, _, err = _run(capsys, "delta", "agent/work", "--repo", str(rb.root), "--since", "no-such-rev")
    assert code == 2 and err == "reviewui: --since: no such commit: no-such-rev\n"


def test_someone_elses_verdict_or_a_forged_claim_is_not_yours(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    rb = RepoBuilder(tmp_path / "repo")
    base = rb.commit({"mod.py": FUNCS}, "base")
    rb.branch("agent/work")
    head = rb.commit({"mod.py": _edit(FUNCS, 1, "    return 1\n")})
    real = Review.new("approve", "", repo_dir=rb.root, branch="agent/work", base=base, head=head)
    for who in ("Someone Else <else@example.com>",   # another reviewer's verdict
                "Test Reviewer <reviewer@example.com>"):  # claims to be me, but this clone never recorded it
        record = _forged(real, who)
        _write_note(rb, head, record)
    code, _, err = _run(capsys, "delta", "agent/work", "--repo", str(rb.root))
    assert code == 2 and "no verdict of yours" in err
    record_review(rb.root, real)  # recorded here, by me: this one is mine
    code, out, _ = _run(capsys, "delta", "agent/work", "--repo", str(rb.root), "--format", "json")
    assert code == 0 and json.loads(out)["since"] == head


def _forged(review: Review, reviewer: str) -> Review:
    import dataclasses
    import uuid

    return dataclasses.replace(review, id=str(uuid.uuid4()), reviewer=reviewer)


def _write_note(rb: RepoBuilder, head: str, review: Review) -> None:
    """Append `review` to the head's note with plain git, as a pull or another tool would (no provenance here)."""
    existing = ""
    try:
        existing = rb.git("notes", "--ref", "refs/notes/reviewui", "show", head) + "\n\n"
    except Exception:
        pass
    rb.git("notes", "--ref", "refs/notes/reviewui", "add", "-f", "-F", "-", head,
           input=(existing + review.to_toml()).encode())


def test_hostile_names_non_utf8_content_and_a_file_over_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from reviewui.core.bounded import analysis_limits

    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"mod.py": FUNCS, "big.txt": "x\n"}, "base")
    rb.branch("agent/work")
    evil = "e\x1b[31mvil\u202e.py"
    rb.commit({evil: b"A = '\xff'\n", "mod.py": _edit(FUNCS, 1, "    return '\x1b]0;pwned\x07'\n")})
    assert main(["verdict", "agent/work", "approve", "--repo", str(rb.root)]) == 0
    cap = analysis_limits().bytes
    rb.commit({evil: b"A = '\xfe'\n", "big.txt": "y" * (cap + 10) + "\n",
               "mod.py": _edit(FUNCS, 1, "    return '\x1b]0;owned\x07'\n")})
    code, out, _ = _run(capsys, "delta", "agent/work", "--repo", str(rb.root))
    assert code == 0
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out  # drawn escaped
    code, out, _ = _run(capsys, "delta", "agent/work", "--repo", str(rb.root), "--format", "json")
    doc = json.loads(out)
    assert "\x1b" not in out and "\u202e" not in out
    states = {h["file"]: (h["header"], h["state"]) for h in doc["hunks"]}
    assert states["big.txt"] == ("(not shown: over the cap)", "new")
    assert states["mod.py"][1] == "changed" and states[evil][1] == "changed"  # the non-UTF-8 byte changed
