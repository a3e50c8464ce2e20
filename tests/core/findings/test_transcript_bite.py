"""undeclared-write from a transcript; toothless-hunk, broken-hunk and baseline-red from a bite report."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.bite.report import Baseline, BiteReport, HunkResult
from reviewui.core.findings.bite_rules import bite_findings
from reviewui.core.findings.transcript_rules import undeclared_write
from reviewui.core.transcript.model import CLAIMS_DONE, Transcript, Turn
from tests.core.findings.helpers import branch, only

BASE = {"src/ledger.py": "def write(x):\n    return x\n", "tests/test_ledger.py": "def test_w():\n    assert True\n", "README.md": "r\n"}


def transcript(*touch: str, claim: str | None = None) -> Transcript:
    turns = [Turn(1, "user", "fix the ledger"), Turn(2, "assistant", "\n".join(f"TOUCH: {p}" for p in touch), touch_paths=tuple(touch))]
    if claim is not None:
        turns.append(Turn(3, "assistant", claim, flags=(CLAIMS_DONE,)))
    return Transcript(format="messages", turns=tuple(turns), skipped_lines=0, source="t.json")


def test_undeclared_write_fires_and_declared_unchanged_is_info(tmp_path: Path) -> None:
    target, diff, _ = branch(
        tmp_path / "r", BASE, {"src/ledger.py": "def write(x):\n    return x or 0\n", "tests/test_ledger.py": "def test_w():\n    assert 1\n"}
    )
    out = undeclared_write(target, diff, transcript("./src/ledger.py", "docs/notes.md"))
    warn = [f for f in out if f.severity == "warning"]
    assert [(f.file, f.severity) for f in warn] == [("tests/test_ledger.py", "warning")]
    assert "tests/test_ledger.py was modified but no TOUCH: line declared it" == warn[0].message
    info = [f for f in out if f.severity == "info"]
    assert [(f.file, f.kind) for f in info] == [("docs/notes.md", "undeclared-write")]


def test_folders_globs_absolute_paths_and_renames_count_as_declared(tmp_path: Path) -> None:
    target, diff, _ = branch(
        tmp_path / "r", BASE,
        {"src/ledger.py": None, "src/books.py": "def write(x):\n    return x\n", "tests/test_ledger.py": "def test_w():\n    assert 1\n", "README.md": "s\n"},
    )
    declared = transcript("src/ledger.py", "tests/", f"{target.repo_dir}/README.md")
    assert undeclared_write(target, diff, declared) == []
    assert undeclared_write(target, diff, transcript("src/*.py", "tests/*", "*.md")) == []


def test_no_declarations_or_no_transcript_is_quiet(tmp_path: Path) -> None:
    target, diff, _ = branch(tmp_path / "r", BASE, {"src/ledger.py": "x = 1\n"})
    assert undeclared_write(target, diff, transcript()) == []
    assert undeclared_write(target, diff, None) == []


def hunk(file: str, index: int, verdict: str, reason: str = "") -> HunkResult:
    return HunkResult(file=file, index=index, header="@@ -4,6 +7,8 @@", text="@@ -4,6 +7,8 @@\n+x\n", verdict=verdict, reason=reason)  # type: ignore[arg-type]


def test_bite_findings_map_verdicts() -> None:
    report = BiteReport(
        baseline=Baseline(status="green"),
        results=(
            hunk("src/a.py", 0, "bites"),
            hunk("src/a.py", 1, "toothless"),
            hunk("src/b.py", 0, "uncovered"),
            hunk("src/c.py", 0, "broken", "SyntaxError at line 3"),
            hunk("src/d.py", 0, "skipped"),
        ),
        selected_tests=(),
        test_command="pytest",
    )
    out = bite_findings(report)
    assert [(f.kind, f.severity, f.file, f.line) for f in out] == [
        ("toothless-hunk", "warning", "src/a.py", 7),
        ("toothless-hunk", "warning", "src/b.py", 7),
        ("broken-hunk", "info", "src/c.py", 7),
    ]
    assert "hunk 2 of src/a.py" in out[0].message and "every test still passes" in out[0].message
    assert "no test covers it" in out[1].message
    assert "SyntaxError at line 3" in out[2].message


def test_baseline_red_is_an_error_listing_failures() -> None:
    report = BiteReport(
        baseline=Baseline(status="red", failing_tests=("tests/test_l.py::test_w",), reason="1 failed"),
        results=(), selected_tests=(), test_command="pytest",
    )
    f = only(bite_findings(report))
    assert (f.kind, f.severity, f.file) == ("baseline-red", "error", None)
    assert "1 test(s) fail" in f.message and f.evidence == "tests/test_l.py::test_w"
    assert bite_findings(None) == []
    assert bite_findings(BiteReport(Baseline(status="green"), (), (), "pytest")) == []
    broken = only(bite_findings(BiteReport(Baseline(status="broken"), (), (), "pytest")))
    assert "broken" in broken.message
