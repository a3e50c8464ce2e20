"""The outcome of a bite-check run and its three renderings: JSON, text and Stryker.

The JSON keys and verdict words are a contract with scripts and CI
(`reviewui bite --format json`); the Stryker output follows the
mutation-testing-elements report schema (schemaVersion "1"), each hunk one
mutant, so existing mutation-report viewers can show it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from reviewui.core.git import show_file
from reviewui.core.target import Target

Verdict = Literal["bites", "toothless", "uncovered", "broken", "timeout", "error", "skipped"]
VERDICTS: tuple[str, ...] = ("bites", "toothless", "uncovered", "broken", "timeout", "error", "skipped")
BaselineStatus = Literal["green", "red", "broken", "timeout"]

STRYKER_STATUS: dict[str, str] = {
    "bites": "Killed",
    "toothless": "Survived",
    "uncovered": "NoCoverage",
    "broken": "CompileError",
    "timeout": "Timeout",
    "error": "RuntimeError",
    "skipped": "Ignored",
}

_LANGUAGES = {
    ".py": "python", ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin",
    ".scala": "scala", ".cs": "csharp", ".rb": "ruby", ".php": "php", ".swift": "swift", ".c": "c",
    ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".sh": "shell", ".bash": "shell",
}


@dataclass(frozen=True)
class HunkResult:
    """The verdict on one source hunk."""

    file: str
    """Path of the file the hunk belongs to."""
    index: int
    """0-based index of the hunk within its file."""
    header: str
    """The hunk's range header, e.g. `@@ -4,6 +4,8 @@`."""
    text: str
    """The hunk as in the diff."""
    verdict: Verdict
    """bites | toothless | uncovered | broken | timeout | error | skipped."""
    failing_tests: tuple[str, ...] = ()
    """Node ids of the tests that failed with the hunk reverted (the ones that bit)."""
    messages: dict[str, str] = field(default_factory=dict, hash=False)
    """Node id -> first line of its failure message."""
    reason: str = ""
    """Why this verdict, in one line (empty for a plain bite or toothless)."""
    seconds: float = 0.0
    """How long the revert run took (0 when nothing was run)."""
    output: str = ""
    """The capped output of the revert run (head and tail)."""
    tests_run: tuple[str, ...] = ()
    """What was run: node ids (coverage-guided), test files, or () for the whole suite."""

    @property
    def key(self) -> tuple[str, int]:
        """(file, index), as Hunk.key."""
        return (self.file, self.index)


@dataclass(frozen=True)
class Baseline:
    """The selected tests at the unmodified branch head."""

    status: BaselineStatus
    """green | red | broken | timeout."""
    failing_tests: tuple[str, ...] = ()
    """Node ids that failed at the head (red baseline)."""
    messages: dict[str, str] = field(default_factory=dict, hash=False)
    """Node id -> first line of its failure message."""
    seconds: float = 0.0
    """Duration of the baseline run."""
    reason: str = ""
    """Why it is not green, in one line."""
    output: str = ""
    """Capped output of the baseline run."""
    tests: tuple[str, ...] = ()
    """Node ids that ran (pytest only)."""
    coverage_guided: bool = False
    """True when per-test coverage was recorded and reverts run only covering tests."""


@dataclass(frozen=True)
class BiteReport:
    """Everything one `reviewui bite` run found."""

    baseline: Baseline
    """The baseline run."""
    results: tuple[HunkResult, ...]
    """One result per checked hunk, in diff order."""
    selected_tests: tuple[str, ...]
    """Test files selected (empty with --all-tests: the whole suite ran)."""
    test_command: str
    """The test command as the user gave it."""

    def summary(self) -> dict[str, int]:
        """Count of results per verdict (every verdict word present)."""
        counts = {v: 0 for v in VERDICTS}
        for r in self.results:
            counts[r.verdict] += 1
        return counts

    @property
    def exit_code(self) -> int:
        """0 when every checked hunk bites, else 1."""
        return 0 if all(r.verdict == "bites" for r in self.results) else 1

    def matrix(self) -> dict[str, tuple[tuple[str, int], ...]]:
        """Test node id -> the hunks it bit; tests that bit nothing map to ()."""
        out: dict[str, list[tuple[str, int]]] = {t: [] for t in self.baseline.tests}
        for r in self.results:
            if r.verdict == "bites":
                for t in r.failing_tests:
                    out.setdefault(t, []).append(r.key)
        return {t: tuple(keys) for t, keys in out.items()}

    def decorative_tests(self) -> tuple[str, ...]:
        """Tests that ran at baseline but bit none of the checked hunks (meaningful after a sweep)."""
        return tuple(t for t, keys in self.matrix().items() if not keys)

    def to_json(self, target: Target) -> dict[str, Any]:
        """The contract JSON document (see the issue) as a dict ready for json.dumps."""
        return {
            "repo": str(target.repo_dir),
            "branch": target.branch,
            "base": target.base,
            "head": target.head,
            "test_command": self.test_command,
            "selected_tests": list(self.selected_tests),
            "baseline": {
                "status": self.baseline.status,
                "failing_tests": list(self.baseline.failing_tests),
                "seconds": round(self.baseline.seconds, 3),
            },
            "hunks": [
                {
                    "file": r.file,
                    "index": r.index,
                    "number": r.index + 1,
                    "header": r.header,
                    "text": r.text,
                    "verdict": r.verdict,
                    "failing_tests": list(r.failing_tests),
                    "reason": r.reason,
                    "seconds": round(r.seconds, 3),
                }
                for r in self.results
            ],
            "summary": self.summary(),
        }

    def render_text(self, target: Target | None = None) -> str:
        """A plain-text report for a terminal (control characters made visible)."""
        lines: list[str] = []
        if target is not None:
            lines.append(f"bite-check {target.branch} ({target.base[:10]}..{target.head[:10]})")
        b = self.baseline
        lines.append(f"command: {self.test_command}")
        lines.append(f"tests: {', '.join(self.selected_tests) or 'whole suite'}")
        lines.append(f"baseline: {b.status} ({b.seconds:.2f}s){' - ' + b.reason if b.reason else ''}")
        for t in b.failing_tests:
            lines.append(f"  FAILED {t}: {b.messages.get(t, '')}")
        for r in self.results:
            lines.append(f"{r.verdict.upper():<10} {r.file} hunk {r.index + 1} {r.header} ({r.seconds:.2f}s)")
            for t in r.failing_tests:
                msg = r.messages.get(t, "")
                lines.append(f"    {t}{': ' + msg if msg else ''}")
            if r.reason:
                lines.append(f"    {r.reason}")
        s = self.summary()
        lines.append(", ".join(f"{v} {s[v]}" for v in VERDICTS if s[v]) or "no source hunks to check")
        decorative = self.decorative_tests() if self.results else ()
        if decorative:
            lines.append("tests that bit nothing: " + ", ".join(decorative))
        return "\n".join(_visible(line) for line in lines) + "\n"

    def to_stryker(self, target: Target) -> dict[str, Any]:
        """A mutation-testing-elements report (schemaVersion "1"); each hunk is a mutant."""
        files: dict[str, Any] = {}
        for n, r in enumerate(self.results):
            entry = files.get(r.file)
            if entry is None:
                src = show_file(target.repo_dir, target.head, r.file)
                entry = files[r.file] = {
                    "language": _LANGUAGES.get(PurePosixPath(r.file).suffix.lower(), "plaintext"),
                    "source": (src or b"").decode("utf-8", "replace"),
                    "mutants": [],
                }
            start, end = _location(r, entry["source"])
            mutant: dict[str, Any] = {
                "id": str(n),
                "mutatorName": "hunk-revert",
                "replacement": _replacement(r.text),
                "location": {"start": start, "end": end},
                "status": STRYKER_STATUS[r.verdict],
                "description": r.reason or f"revert {r.header}",
            }
            if r.reason:
                mutant["statusReason"] = r.reason
            if r.verdict == "bites":
                mutant["killedBy"] = list(r.failing_tests)
            if r.tests_run:
                mutant["coveredBy"] = list(r.tests_run)
            entry["mutants"].append(mutant)
        return {
            "$schema": "https://git.io/mutation-testing-schema",
            "schemaVersion": "1",
            "thresholds": {"high": 80, "low": 60},
            "projectRoot": str(target.repo_dir),
            "files": files,
        }


def _location(r: HunkResult, source: str) -> tuple[dict[str, int], dict[str, int]]:
    m = re.match(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", r.header)
    start, length = (int(m.group(1)), int(m.group(2) or 1)) if m else (1, 1)
    lines = source.splitlines() or [""]
    first = min(max(start, 1), len(lines))
    last = min(max(start + length - 1, first), len(lines))
    return {"line": first, "column": 1}, {"line": last, "column": len(lines[last - 1]) + 1}


def _replacement(hunk_text: str) -> str:
    """The base-side lines of the hunk: what reverting it puts back."""
    body = hunk_text.splitlines()[1:]
    return "\n".join(ln[1:] for ln in body if ln[:1] in (" ", "-"))


def _visible(line: str) -> str:
    """Escape control characters so output cannot drive the terminal."""
    return "".join(c if c == "\t" or c.isprintable() else repr(c)[1:-1] for c in line)
