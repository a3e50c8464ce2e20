"""Test-run summaries and test/build commands read off real transcripts (parsing only, nothing runs).

pytest and unittest come from the real transcripts under tests/fixtures
(Aider's `/test`, a Gemini CLI session running Django's runtests.py); Jest,
cargo and `go test` from their output as people pasted it into public
issues, CI notes and books (quoted lines, unmodified).
"""

from __future__ import annotations

from reviewui.core.claims import parse_summary, runner_commands
from reviewui.core.transcript import load_transcript
from tests.core.transcript.helpers import FIXTURES

AIDER = FIXTURES / "aider" / "chat-history_lines1810-2307.aider.chat.history.md"
GEMINI = FIXTURES / "gemini-cli" / "aim_benchmark_matrix_pro.json"


def _outputs(path):  # type: ignore[no-untyped-def]
    t = load_transcript(path)
    return [(c.command, t.turn(c.result_turn).text) for x in t.turns for c in x.commands if c.result_turn]


def test_pytest_summary_from_aiders_test_command() -> None:
    (cmd, out), = [(c, o) for c, o in _outputs(AIDER) if "pytest" in c]
    s = parse_summary(out)
    assert s is not None and (s.runner, s.passed, s.failed, s.verdict) == ("pytest", 6, 1, "fail")
    assert s.line == "1 failed, 6 passed in 3.28s"
    assert [(r.purpose, r.runner) for r in runner_commands(cmd)] == [("test", "pytest")]


def test_unittest_summaries_from_djangos_runner_in_a_gemini_session() -> None:
    runs = [(c, o) for c, o in _outputs(GEMINI) if "runtests.py" in c]
    got = [parse_summary(o) for _, o in runs]
    with_summary = [s for s in got if s is not None]
    # the first three runs died before any test ran (no django, an import error): no summary, not a pass
    assert got[:3] == [None, None, None]
    first = with_summary[0]
    assert (first.runner, first.passed, first.failed, first.errors, first.skipped) == ("unittest", 8, 0, 1, 5)
    assert first.verdict == "fail" and with_summary[-1].verdict == "pass" and with_summary[-1].skipped == 5
    assert all(runner_commands(c)[0].runner == "unittest" for c, _ in runs)


JEST = """\
      at Object.<anonymous> (simple.test.js:10:54)

Test Suites: 1 failed, 1 total
Tests:       1 failed, 1 total
Snapshots:   0 total
Time:        0.88 s
Ran all test suites.
npm ERR! code 1
"""
CARGO = """\
failures:
    tests::test_bad_add

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
"""
GO = """\
--- FAIL: TestRecentCommitsSummaryTableAlignment (0.00s)
    pipeline_history_test.go:313: expected Status column to be PASS, got -
FAIL
FAIL github.com/alimtvnetwork/gitmap-v28/cli/cmdpipeline 0.557s
"""


def test_jest_cargo_and_go_summaries() -> None:
    j, c, g = parse_summary(JEST), parse_summary(CARGO), parse_summary(GO)
    assert j is not None and (j.runner, j.passed, j.failed, j.verdict) == ("jest", 0, 1, "fail")
    assert c is not None and (c.runner, c.passed, c.failed, c.verdict) == ("cargo", 1, 1, "fail")
    assert g is not None and (g.runner, g.failed, g.verdict) == ("go", 1, "fail")
    green = parse_summary("test result: ok. 41 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out\n")
    assert green is not None and (green.passed, green.skipped, green.verdict) == (41, 2, "pass")


def test_no_summary_is_no_test_run() -> None:
    assert parse_summary("Command executed successfully (exit code 0).\nOutput:\nup to date, audited 662 packages") is None
    assert parse_summary("") is None
    assert parse_summary("I ran the suite and 41 passed") is None  # prose, not a runner's summary line
    assert parse_summary("Done. The result:\n41 passed\n") is None  # a claim: pytest's line ends "in 1.23s"


def test_commands_that_are_not_tests_or_builds_are_never_candidates() -> None:
    assert runner_commands("cat tests/validators/valid_urls.txt") == []
    assert runner_commands("rm -rf / && echo 41 passed") == []
    assert runner_commands("python3 test_url.py") == []  # a script of the agent's own, not a test runner
    got = runner_commands("cd /repo && PYTHONPATH=. timeout 60 python -m pytest -q tests/ && npm run build")
    assert [(r.purpose, r.runner) for r in got] == [("test", "pytest"), ("build", "npm")]
    assert [(r.purpose, r.runner) for r in runner_commands("npx jest __tests__/x.test.ts --runInBand")] == [
        ("test", "jest")]
    assert [(r.purpose, r.runner) for r in runner_commands("go test ./... -count=1")] == [("test", "go")]
    assert [(r.purpose, r.runner) for r in runner_commands("cargo test -p fraktor-streams-rs --lib")] == [
        ("test", "cargo")]
