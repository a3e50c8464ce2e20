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

from reviewui.core.bite.guard_report import GuardResult, guard_summary
from reviewui.core.bite.revert_result import RevertResult
from reviewui.core.git import show_file
from reviewui.core.safe_text import visible
from reviewui.core.target import Target

Verdict = Literal["bites", "toothless", "uncovered", "broken", "timeout", "error", "skipped", "not-code"]
VERDICTS: tuple[str, ...] = ("bites", "toothless", "uncovered", "broken", "timeout", "error", "skipped", "not-code")
QUARANTINE_WHY = "red at the head"
"""Why an old test was quarantined when nothing more is known (Baseline.why)."""
CAUGHT_ALONE, CAUGHT_ORDER = "fails when run alone", "depends on test order"
CAUGHT_NULL = "fails in a null run: depends on test order or on state another test leaves"
CAUGHT_WHY = (CAUGHT_ALONE, CAUGHT_ORDER, CAUGHT_NULL)
"""Why an old test a control caught was quarantined (caught.py): run alone at the head it fails, it
passes (so the order decides), or it was not run alone."""
BaselineStatus = Literal["green", "red", "broken", "timeout"]

STRYKER_STATUS: dict[str, str] = {
    "bites": "Killed",
    "toothless": "Survived",
    "uncovered": "NoCoverage",
    "broken": "CompileError",
    "timeout": "Timeout",
    "error": "RuntimeError",
    "skipped": "Ignored",
    "not-code": "Ignored",
}

EXIT_ALL_BITE, EXIT_SOME_WEAK, EXIT_NOTHING_LEARNED = 0, 1, 3
"""`reviewui bite` exit codes (2 is a usage error, raised as ReviewError)."""

_LANGUAGES = {
    ".py": "python", ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin",
    ".scala": "scala", ".cs": "csharp", ".rb": "ruby", ".php": "php", ".swift": "swift", ".c": "c",
    ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".sh": "shell", ".bash": "shell",
}


@dataclass(frozen=True)
class HunkResult(RevertResult):
    """The verdict on one source hunk (how its revert run went: RevertResult's fields)."""

    file: str
    """Path of the file the hunk belongs to."""
    index: int
    """0-based index of the hunk within its file."""
    header: str
    """The hunk's range header, e.g. `@@ -4,6 +4,8 @@`."""
    text: str
    """The hunk as in the diff."""
    verdict: Verdict
    """bites | toothless | uncovered | broken | timeout | error | skipped | not-code."""
    guards: tuple[GuardResult, ...] = ()
    """Guard reverts inside the hunk's added lines (`bite --guards`), in line order."""
    passed_tests: tuple[str, ...] = ()
    """Node ids that ran and passed in the revert run."""
    scope: str = ""
    """Where the tests of a coverage-guided hunk were looked for: `selected` (the selected tests
    only: the whole suite was not searched) or `suite` (its one measured run); "" without coverage."""

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
    output_tail: str = ""
    """pytest's first error lines (else the last lines of output) when not green."""
    quarantined: tuple[str, ...] = ()
    """Old tests' node ids red at the head beside green ones (or failing alone, or by the order
    they run in): left out of every revert run (their first error line in `messages`, why in
    `why`); the baseline is green against the rest."""
    own_red: tuple[str, ...] = ()
    """The branch's own new or changed tests red at the head: left out of every later run as the
    quarantined are (they fail with or without any revert), but never quarantined: each is a
    `test-red-at-head` error (their first error line in `messages`)."""
    why: dict[str, str] = field(default_factory=dict, hash=False)
    """Quarantined node id -> why it was left out ("red at the head", "fails when run alone", ...)."""

    source_readers: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(changed source file, node ids of the tests that read it as data, not by import), as the
    baseline saw them: their failures are no bites of that file's hunks (source_readers.py)."""

    @property
    def left_out(self) -> tuple[str, ...]:
        """Every test later runs leave out: the quarantined and the branch's own red ones."""
        return (*self.quarantined, *self.own_red)


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
    guards_checked: bool = False
    """True when guard reverts were graded too (each hunk's `guards`)."""
    sandbox: str = ""
    """How the branch's code ran: "bwrap", "none" (the reviewer opted out), "" when nothing ran."""
    controls: int = 0
    """How many null runs (controls, control.py) ran among the graded ones, every one green."""
    witnesses_checked: bool = False
    """True when the toothless guards and hunks were searched for witnesses (`--witness`)."""

    def guard_summary(self) -> dict[str, int]:
        """Count of guard results per verdict, apart from the hunks' (every verdict word present)."""
        return guard_summary(g for r in self.results for g in r.guards)
    selection: str = ""
    """How many tests were selected and why, in one line."""
    selection_is_suite: bool = False
    """The selected test files are every test module of the tree: a hunk graded in the `suite`
    scope was graded by selected tests (nothing beyond them was searched)."""

    def evidence_summary(self) -> dict[str, dict[str, int]]:
        """How many hunks and guards were graded by this sweep (`fresh`) or taken from an earlier one (`reused`)."""
        hunks = [r for r in self.results if r.verdict != "not-code"]
        guards = [g for r in self.results for g in r.guards]
        return {"hunks": {"fresh": sum(r.evidence != "reused" for r in hunks),
                          "reused": sum(r.evidence == "reused" for r in hunks)},
                "guards": {"fresh": sum(g.evidence != "reused" for g in guards),
                           "reused": sum(g.evidence == "reused" for g in guards)}}

    def summary(self) -> dict[str, int]:
        """Count of results per verdict (every verdict word present)."""
        counts = dict.fromkeys(VERDICTS, 0)
        for r in self.results:
            counts[r.verdict] += 1
        return counts

    @property
    def exit_code(self) -> int:
        """0 every code hunk bites (or none to check), 1 some do not, 3 nothing could be learned.

        `not-code` hunks never count. A baseline that is not green, or hunks
        that were all skipped or errored, learn nothing: 3.
        """
        code = [r for r in self.results if r.verdict != "not-code"]
        if not code:
            return EXIT_ALL_BITE
        if self.baseline.status != "green" or all(r.verdict in ("skipped", "error") for r in code):
            return EXIT_NOTHING_LEARNED
        return EXIT_ALL_BITE if all(r.verdict == "bites" for r in code) else EXIT_SOME_WEAK

    def refusal_reason(self) -> str:
        """Why nothing could be learned (the `refused` reason of an exit 3), in one line."""
        b = self.baseline
        if b.status != "green":
            return f"the baseline is {b.status}" + (f": {b.reason}" if b.reason else "")
        return "every code hunk was skipped or errored: nothing could be learned"

    def matrix(self) -> dict[str, tuple[tuple[str, int], ...]]:
        """Test node id -> the hunks it bit; tests that bit nothing map to ()."""
        out: dict[str, list[tuple[str, int]]] = {t: [] for t in self.baseline.tests}
        for r in self.results:
            if r.verdict == "bites":
                for t in r.failing_tests:
                    out.setdefault(t, []).append(r.key)
        return {t: tuple(keys) for t, keys in out.items()}

    def decorative_tests(self) -> tuple[str, ...]:
        """Tests that ran for the checked hunks and passed every time (never hung, failed or skipped)."""
        failed = {t for r in self.results for t in r.failing_tests} | {
            t for r in self.results for t in r.messages}
        # A test that bit a guard revert (issue 15) is not decorative either.
        failed |= {t for r in self.results for g in r.guards if g.verdict == "bites" for t in g.failing_tests}
        passed: dict[str, None] = {}
        for r in self.results:
            for t in r.passed_tests:
                passed.setdefault(t, None)
        return tuple(t for t in passed if t not in failed)

    def to_json(self, target: Target) -> dict[str, Any]:
        """The contract JSON document (see the issue) as a dict ready for json.dumps."""
        doc = self._json(target)
        if self.guards_checked:  # issue 15: hunks[].guards and their own summary
            for entry, r in zip(doc["hunks"], self.results, strict=True):
                entry["guards"] = [g.to_json() for g in r.guards]
            doc["guard_summary"] = self.guard_summary()
        if self.witnesses_checked:  # issue 41: a witness object on each toothless hunk and guard
            for entry, r in zip(doc["hunks"], self.results, strict=True):
                if r.witness is not None:
                    entry["witness"] = r.witness.to_json()
        return doc

    def _json(self, target: Target) -> dict[str, Any]:
        return {
            "repo": str(target.repo_dir),
            "branch": target.branch,
            "base": target.base,
            "head": target.head,
            "test_command": self.test_command,
            "selected_tests": list(self.selected_tests),
            "selection": self.selection,
            "sandbox": self.sandbox or None,
            "limits": _limits_level(self.sandbox),
            "disk": _disk_level(self.sandbox),
            "baseline": {
                "status": self.baseline.status,
                "failing_tests": list(self.baseline.failing_tests),
                "seconds": round(self.baseline.seconds, 3),
                "reason": self.baseline.reason,
                "output_tail": self.baseline.output_tail,
                "quarantined": [{"test": t, "message": self.baseline.messages.get(t, ""),
                                 "why": self.baseline.why.get(t, QUARANTINE_WHY)}
                                for t in self.baseline.quarantined],
                "own_red": [{"test": t, "message": self.baseline.messages.get(t, "")}
                            for t in self.baseline.own_red],
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
                    "failures": [{"test": t, "message": m} for t, m in r.messages.items()],
                    "reason": r.reason or _default_reason(r),
                    "seconds": round(r.seconds, 3),
                    "scope": r.scope or None,
                    "evidence": r.evidence,
                }
                for r in self.results
            ],
            "summary": self.summary(),
            "evidence": self.evidence_summary(),
            "controls": self.controls,
        }

    def render_text(self, target: Target | None = None) -> str:
        """A plain-text report for a terminal (control characters made visible)."""
        lines: list[str] = []
        if target is not None:
            lines.append(f"bite-check {target.branch} ({target.base[:10]}..{target.head[:10]})")
        b = self.baseline
        lines.append(f"command: {self.test_command}")
        lines.append(f"tests: {', '.join(self.selected_tests) or 'whole suite'}")
        if self.selection:
            lines.append(f"selected: {self.selection}")
        if self.sandbox:
            lines.append("sandbox: " + ("bwrap" if self.sandbox == "bwrap" else "NONE (unsandboxed: the reviewer opted in)"))
        lines.append(f"baseline: {b.status} ({b.seconds:.2f}s){' - ' + b.reason if b.reason else ''}")
        for t in b.failing_tests:
            lines.append(f"  FAILED {t}: {b.messages.get(t, '')}")
        for t in b.own_red:
            lines.append(f"  RED (the branch's own test) {t}: {b.messages.get(t, '')}")
        for t in b.quarantined:
            lines.append(f"  QUARANTINED {t}: {b.messages.get(t, '')} ({b.why.get(t, QUARANTINE_WHY)})")
        if b.status != "green" and b.output_tail:
            lines.extend("  | " + ln for ln in b.output_tail.splitlines())
        for r in self.results:
            took = "reused" if r.evidence == "reused" else f"{r.seconds:.2f}s"
            lines.append(f"{r.verdict.upper():<10} {r.file} hunk {r.index + 1} {r.header} ({took})")
            for t in r.failing_tests:
                msg = r.messages.get(t, "")
                lines.append(f"    {t}{': ' + msg if msg else ''}")
            if r.reason:
                lines.append(f"    {r.reason}")
            if r.witness is not None:
                lines.append(f"    {r.witness.words()}")
            if self.selected_tests and r.scope == "suite" and r.verdict != "uncovered" and not self.selection_is_suite:
                lines.append("    no selected test runs it: graded by tests found in the whole suite")
            lines.extend(f"    guard {g.one_line()}{' (reused)' if g.evidence == 'reused' else ''}" for g in r.guards)
        s = self.summary()
        lines.append(", ".join(f"{v} {s[v]}" for v in VERDICTS if s[v]) or "nothing to bite-check")
        ev = self.evidence_summary()
        if ev["hunks"]["reused"] or ev["guards"]["reused"]:
            lines.append(f"evidence: {ev['hunks']['reused']} hunk(s) reused, {ev['hunks']['fresh']} fresh"
                         + (f"; guards {ev['guards']['reused']} reused, {ev['guards']['fresh']} fresh"
                            if self.guards_checked else ""))
        if self.sandbox:
            caught = sum(w in CAUGHT_WHY for w in self.baseline.why.values())
            lines.append(f"controls: {self.controls} null run(s) among the graded ones, all green" + (
                f" but for {caught} old test(s) they quarantined" if caught else ""))
        if self.guards_checked:
            gs = self.guard_summary()
            lines.append("guards: " + (", ".join(f"{v} {gs[v]}" for v in gs if gs[v]) or "none on the agent's lines"))
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
            if r.witness is not None:
                mutant["witness"] = r.witness.to_json()
            entry["mutants"].append(mutant)
            for k, g in enumerate(r.guards):  # issue 15: each guard its own mutant
                entry["mutants"].append(g.to_mutant(f"{n}.{k}"))
        return {
            "$schema": "https://git.io/mutation-testing-schema",
            "schemaVersion": "1",
            "thresholds": {"high": 80, "low": 60},
            "projectRoot": str(target.repo_dir),
            "files": files,
            "config": {"reviewui": {"controls": self.controls}},
        }


def _default_reason(r: HunkResult) -> str:
    """The one-line reason of a verdict that needed none in the text output."""
    if r.verdict == "bites":
        return f"{len(r.failing_tests)} test(s) failed with the hunk reverted"
    if r.verdict == "toothless":
        return "every selected test still passed"
    return r.verdict


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
    return visible(line)


def _disk_level(level: str) -> str | None:
    """How the runs' writes were bounded: "tmpfs" (sized storage), "watch" (polled), "none" (see run/storage.py)."""
    if not level:
        return None
    from reviewui.core.run import storage

    return "none" if level == "none" else storage.level()


def _limits_level(level: str) -> str | None:
    """How the runs' memory and processes were bounded (see sandbox.limits_level)."""
    if not level:
        return None
    from reviewui.core.run import sandbox

    return "none" if level == "none" else sandbox.limits_level()
