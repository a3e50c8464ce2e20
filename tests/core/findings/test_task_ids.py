"""task-identifier-missing and claimed-done-without-change."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.findings.model import finding
from reviewui.core.findings.task_ids import (
    claimed_done_without_change,
    load_task_text,
    task_identifier_missing,
    task_identifiers,
    task_paths,
)
from tests.core.findings.helpers import branch, only

TASK = "in scripts/bench.py add the field stopped to the dict that run returns, taking its value from result.stopped"
BENCH = "def run(result):\n    return {\n        'steps': result.steps,\n    }\n"


def names(text: str) -> list[str]:
    return [i.name for i in task_identifiers(text)]


def test_identifiers_from_the_seed_task() -> None:
    assert names(TASK) == ["result.stopped"]
    assert task_paths(TASK) == ["scripts/bench.py"]


@pytest.mark.parametrize(
    "text,want",
    [
        ("fix app.py for Windows", []),
        ("add a check to the loop", []),
        ("raise max_batch_size to 64, see `Batcher.flush()`", ["max_batch_size", "Batcher.flush"]),
        ("call `stopped` from **self.on_done**.", ["stopped", "self.on_done"]),
        ("e.g. in README.md, i.e. the docs; see https://x.example.com/a_b.html and mail a_b@c.org", []),
        ("use `pytest -k slow` and set `x=1`; version 1.2.3; __init__ stays", []),
        ("Node.js and config.yaml and scripts/run_all.sh", []),
        ("see www.python.org, www.example.io, example.com or docs.example.org; keep logger.info and self.app", ["logger.info", "self.app"]),
        ("U.S. spelling, a.k.a. colour", []),
        ("[bold red]x[/bold red] \x1b[31m danger_zone", ["danger_zone"]),
    ],
)
def test_identifier_extraction(text: str, want: list[str]) -> None:
    assert names(text) == want


def test_huge_task_is_bounded() -> None:
    text = " ".join(f"name_{i}" for i in range(10_000))
    assert len(names(text)) == 50


def test_missing_identifier_fires_on_the_changed_file(tmp_path: Path) -> None:
    target, diff, _ = branch(tmp_path / "r", {"scripts/bench.py": BENCH}, {"scripts/bench.py": BENCH.replace("steps,", "steps,\n        'stop': True,")})
    f = only(task_identifier_missing(target, diff, TASK))
    assert (f.kind, f.severity, f.file, f.symbol) == ("task-identifier-missing", "error", "scripts/bench.py", "result.stopped")
    assert "(nor stopped)" in f.message and f.evidence.startswith("task: in scripts/bench.py")


def test_last_part_of_a_dotted_name_is_enough(tmp_path: Path) -> None:
    done = BENCH.replace("steps,", "steps,\n        'stopped': getattr(result, 'stopped'),")
    target, diff, _ = branch(tmp_path / "r", {"scripts/bench.py": BENCH}, {"scripts/bench.py": done})
    assert task_identifier_missing(target, diff, TASK) == []


def test_whole_word_match_only(tmp_path: Path) -> None:
    near = BENCH.replace("steps,", "steps,\n        'stopped_at': result.stopped_at,")
    target, diff, _ = branch(tmp_path / "r", {"scripts/bench.py": BENCH}, {"scripts/bench.py": near})
    assert only(task_identifier_missing(target, diff, TASK)).symbol == "result.stopped"


def test_prose_task_and_no_task_are_quiet(tmp_path: Path) -> None:
    target, diff, _ = branch(tmp_path / "r", {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    assert task_identifier_missing(target, diff, "fix app.py for Windows") == []
    assert task_identifier_missing(target, diff, None) == []
    assert task_identifier_missing(target, diff, "   ") == []


def test_no_change_checks_the_named_file(tmp_path: Path) -> None:
    target, diff, _ = branch(tmp_path / "r", {"scripts/bench.py": BENCH, "other.py": "stopped = 1\n"}, {})
    f = only(task_identifier_missing(target, diff, TASK))
    assert f.file == "scripts/bench.py" and "the files the task names" in f.message
    has = BENCH.replace("steps,", "steps, 'stopped': result.stopped,")
    target, diff, _ = branch(tmp_path / "r2", {"scripts/bench.py": has}, {})
    assert task_identifier_missing(target, diff, TASK) == []


def test_no_change_and_no_named_file(tmp_path: Path) -> None:
    target, diff, _ = branch(tmp_path / "r", {"app.py": "x = 1\n"}, {})
    f = only(task_identifier_missing(target, diff, "set `max_batch_size` to 8"))
    assert f.file is None and "the branch changed nothing" in f.message


def test_deleted_and_binary_files_are_not_searched(tmp_path: Path) -> None:
    target, diff, _ = branch(
        tmp_path / "r",
        {"gone.py": "max_batch_size = 1\n", "blob.bin": b"\0max_batch_size\0"},
        {"gone.py": None, "blob.bin": b"\0max_batch_size\0\1", "new.py": "y = 2\n"},
    )
    assert only(task_identifier_missing(target, diff, "raise max_batch_size")).symbol == "max_batch_size"


@dataclass
class Turn:
    text: str


class FakeTranscript:
    def __init__(self, task: str | None, claim: str | None) -> None:
        self._task, self._claim = task, claim

    def task_text(self) -> str | None:
        return self._task

    def last_claim(self) -> Turn | None:
        return Turn(self._claim) if self._claim is not None else None

    def touch_declared(self) -> list[str]:
        return []


def test_load_task_text_order(tmp_path: Path) -> None:
    tr = FakeTranscript("from transcript", None)
    p = tmp_path / "task.txt"
    p.write_bytes("from file caf\xe9".encode("latin-1"))
    assert load_task_text("given", p, tr) == "given"
    assert load_task_text(None, p, tr) == "from file caf\ufffd"
    assert load_task_text(None, None, tr) == "from transcript"
    assert load_task_text(None, None, None) is None
    with pytest.raises(ReviewError, match="cannot read task file"):
        load_task_text(None, tmp_path / "missing.txt")


def test_claimed_done_fires_only_with_proof() -> None:
    proof = finding("no-change", "nothing changed: the branch has 1 commit but base..head is empty")
    tr = FakeTranscript(None, "Done. The line is already correct.")
    f = only(claimed_done_without_change(tr, [proof]))
    assert (f.kind, f.severity) == ("claimed-done-without-change", "error")
    assert '("Done. The line is already correct.")' in f.message and "base..head is empty" in f.message
    other = finding("uncalled-function", "x is never called")
    assert claimed_done_without_change(tr, [other]) == []
    assert claimed_done_without_change(FakeTranscript(None, None), [proof]) == []
    assert claimed_done_without_change(None, [proof]) == []


def test_claimed_done_with_missing_identifier() -> None:
    proof = finding("task-identifier-missing", "the task names result.stopped ...", file="scripts/bench.py", symbol="result.stopped")
    f = only(claimed_done_without_change(FakeTranscript(None, "x" * 500), [proof]))
    assert f.file == "scripts/bench.py" and f.symbol == "result.stopped" and "…" in f.message
