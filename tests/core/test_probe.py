"""Probes on real repos: branch vs base in scratch worktrees, the reviewer's checkout untouched."""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.run.junit import TestOutcome
from reviewui.core.probe.run import (
    ProbeReport, ProbeRun, ProbeTest, check_probe_syntax, compare, export_probe, grade_run, load_draft, probe_name, probe_path,
    probe_template, run_probe, save_draft,
)
from reviewui.core.run.runner import RunResult
from reviewui.core.session import ReviewSession, RunOptions
from reviewui.core.run.scratch_slots import scratch_root
from reviewui.demo import build_sample
from tests.gitrepo import RepoBuilder, make_repo
from tests.project_python import pytest_command

pytestmark = pytest.mark.slow
PYTEST = pytest_command()

# The reviewer's probe from the story: a continuation turn that carries its own short
# reasoning next to the wasted, truncated one.
STORY_PROBE = '''\
from coder.history import NUDGE, Message, ToolCall, clear_truncated_reasoning


def test_continuation_keeps_its_short_reasoning():
    messages = [
        Message("assistant", reasoning="wasted thought cut off at the limit"),
        Message("user", NUDGE),
        Message("assistant", reasoning="run the tests first", tool_calls=[ToolCall("c1", "run_tests")]),
    ]
    clear_truncated_reasoning(messages)
    assert messages[2].reasoning == "run the tests first"
    assert messages[0].reasoning == ""
'''


def existing(root: Path) -> RepoBuilder:
    """A RepoBuilder over a repository built elsewhere (for its snapshot)."""
    rb = RepoBuilder.__new__(RepoBuilder)
    rb.root = root
    return rb


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample("01-trim-reasoning", tmp_path_factory.mktemp("samples")).repo_dir


def open_session(repo: Path, branch: str, base: str | None = None, **run: object) -> ReviewSession:
    return ReviewSession.open(repo, branch, base, run=RunOptions(test_cmd=PYTEST, **run))  # type: ignore[arg-type]


def test_story_probe_fails_on_agent_branch_and_passes_on_fix(sample: Path) -> None:
    before = existing(sample).snapshot()
    agent = run_probe(open_session(sample, "agent/trim-reasoning"), STORY_PROBE)
    fixed = run_probe(open_session(sample, "fix/trim-reasoning"), STORY_PROBE)

    assert agent.branch.status == "failed"
    [t] = agent.branch.tests
    assert t.id == "tests/test_reviewui_probe.py::test_continuation_keeps_its_short_reasoning"
    assert t.outcome == "failed" and "run the tests first" in t.message
    assert fixed.branch.status == "passed"
    assert [t.outcome for t in fixed.branch.tests] == ["passed"]
    # The function does not exist on main: an import error, never a test failure.
    for report in (agent, fixed):
        assert report.base.status == "error"
        assert report.base.rev != report.branch.rev
    assert agent.path == "tests/test_reviewui_probe.py"  # beside the tests it imitates
    assert existing(sample).snapshot() == before


def test_name_only_on_branch_is_error_on_base_and_said_plainly(sample: Path) -> None:
    session = open_session(sample, "agent/trim-reasoning")
    report = run_probe(session, STORY_PROBE, name="story.py")
    base = report.base
    assert base.status == "error"
    assert base.rev == session.target.base
    assert all(t.outcome == "error" for t in base.tests) and base.tests
    assert "clear_truncated_reasoning" in base.reason
    # Scratch paths are shown repo-relative.
    assert "/worktrees/" not in base.reason + base.output + "".join(t.message for t in base.tests)
    assert "coder/history.py" in base.tests[0].message
    assert report.summary().startswith("fails on branch, errors on base: the name does not exist there")
    data = report.to_json()
    assert list(data) == ["probe", "branch", "base", "reverted", "sandbox", "limits", "disk",  # issue 27: limits, disk
                          "branch_own_conftest", "trusted_config"]
    assert data["probe"] == "story.py" and data["reverted"] is None
    assert list(data["base"]) == ["rev", "status", "tests", "output"]
    assert data["base"]["status"] == "error"
    assert list(data["branch"]["tests"][0]) == ["id", "outcome", "message"]
    json.dumps(data)
    text = report.render_text()
    assert "FAILED" in text and "ERROR" in text and "the name does not exist there" in text


def test_reverting_the_guard_hunk_shows_the_probe_bites_it(sample: Path) -> None:
    # Against the agent's branch, the fix's diff is the one-condition guard as its own hunk.
    session = open_session(sample, "fix/trim-reasoning", base="agent/trim-reasoning")
    [hunk] = session.diff.file("coder/history.py").hunks
    report = run_probe(session, STORY_PROBE, hunk=("coder/history.py", hunk.index))
    assert (report.branch.status, report.base.status) == ("passed", "failed")
    assert report.summary() == "passes on branch, fails on base: the branch fixed this"
    assert report.reverted is not None and report.reverted.status == "failed"
    assert report.reverted.rev == session.target.head
    assert "bites this hunk" in (report.reverted_summary() or "")
    data = report.to_json()["reverted"]
    assert data["hunk"] == {"file": "coder/history.py", "index": 0, "number": 1} and data["status"] == "failed"


def test_unknown_hunk_is_refused(sample: Path) -> None:
    session = open_session(sample, "agent/trim-reasoning")
    with pytest.raises(ReviewError, match="no hunk 6"):  # index 5 is hunk 6 to a person (issue 16)
        run_probe(session, STORY_PROBE, hunk=("coder/history.py", 5))
    with pytest.raises(ReviewError, match="not changed"):
        run_probe(session, STORY_PROBE, hunk=("README.md", 0))


# --- a small repo where the branch breaks one function and fixes another -------------

BASE = {
    "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['.']\n",
    "calc.py": "def clamp(x):\n    return max(x, 0)\n\n\ndef double(x):\n    return x + 2\n",
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef answer():\n    return 42\n",
    "tests/test_base.py": "def test_nothing():\n    assert True\n",
}
BRANCH = {
    "calc.py": "def clamp(x):\n    return x\n\n\ndef double(x):\n    return x * 2\n",
    "tests/unit/test_calc.py": "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> RepoBuilder:
    return make_repo(tmp_path / "r", BASE, {**BRANCH, "tests/unit/test_reviewui_probe.py": "x = 1\n"})


def test_broke_fixed_and_conftest_fixtures_apply(repo: RepoBuilder) -> None:
    before = repo.snapshot()
    session = open_session(repo.root, "agent/work")
    # Beside the first changed test file; the name taken there is skipped.
    assert probe_path(session) == "tests/unit/test_reviewui_probe_2.py"
    probe = (
        "from calc import clamp, double\n\n\n"
        "def test_clamp(answer):\n    assert answer == 42\n    assert clamp(-1) == 0\n\n\n"
        "def test_double():\n    assert double(3) == 6\n"
    )
    report = run_probe(session, probe, name="p.py")
    by_id = {t.id.rsplit("::", 1)[1]: t.outcome for t in report.branch.tests}
    assert by_id == {"test_clamp": "failed", "test_double": "passed"}
    assert {t.id.rsplit("::", 1)[1]: t.outcome for t in report.base.tests} == {
        "test_clamp": "passed", "test_double": "failed",
    }
    clamp_only = "from calc import clamp\n\n\ndef test_clamp(answer):\n    assert clamp(-answer) == 0\n"
    assert run_probe(session, clamp_only).summary() == "fails on branch, passes on base: the branch broke this"
    double_only = "from calc import double\n\n\ndef test_double():\n    assert double(3) == 6\n"
    assert run_probe(session, double_only).summary() == "passes on branch, fails on base: the branch fixed this"
    assert repo.snapshot() == before


def test_a_hanging_probe_times_out_on_both(repo: RepoBuilder) -> None:
    session = open_session(repo.root, "agent/work", timeout=1.5)
    start = time.monotonic()
    report = run_probe(session, "import time\n\n\ndef test_hang():\n    time.sleep(120)\n")
    assert time.monotonic() - start < 30
    assert (report.branch.status, report.base.status) == ("timeout", "timeout")
    assert report.summary().startswith("times out on both")
    assert report.to_json()["branch"]["status"] == "timeout"


def test_syntax_error_is_refused_with_its_line_before_anything_runs(repo: RepoBuilder) -> None:
    session = open_session(repo.root, "agent/work")
    with pytest.raises(ReviewError, match=r"^probe line 3: "):
        run_probe(session, "def test_a():\n    pass\ndef test_b(:\n    pass\n")
    assert not scratch_root(repo.root).exists()  # no worktree was even created
    for code, line in (("x = 1\n\x00\n", 2), ("ok = 1\nbad = '\udcff'\n", 2), ("\n\n  x = 1\n", 3)):
        with pytest.raises(ReviewError, match=rf"^probe line {line}: "):
            check_probe_syntax(code)
    with pytest.raises(ReviewError, match="empty"):
        check_probe_syntax("  \n\n")
    check_probe_syntax("def test_ok():\n    assert '[bold red]x[/bold red]\\x1b[31m'\n")


def test_non_pytest_command_is_refused(repo: RepoBuilder) -> None:
    session = ReviewSession.open(repo.root, "agent/work", run=RunOptions(test_cmd="make test"))
    with pytest.raises(ReviewError, match="not pytest"):
        run_probe(session, "def test_a():\n    pass\n")


def test_probe_without_tests_and_hostile_messages(repo: RepoBuilder) -> None:
    session = open_session(repo.root, "agent/work")
    report = run_probe(session, "X = 1\n")
    assert report.branch.status == "error" and "ran no test" in report.branch.reason
    hostile = "def test_h():\n    assert False, '[bold red]x[/bold red] \\x1b[31mred'\n"
    report = run_probe(session, hostile)
    assert report.branch.status == "failed"
    assert "[bold red]x[/bold red]" in report.branch.tests[0].message


# --- pieces ---------------------------------------------------------------------------


def _result(tests: tuple[TestOutcome, ...], rc: int | None = 0, **kw: object) -> RunResult:
    return RunResult(command=("pytest",), returncode=rc, seconds=0.1, pytest=True, tests=tests, **kw)  # type: ignore[arg-type]


def test_grade_run_statuses() -> None:
    ok = TestOutcome("t.py::a", "passed")
    bad = TestOutcome("t.py::b", "failed", "AssertionError: 1 == 2")
    setup = TestOutcome("t.py::c", "error", "fixture 'nope' not found")
    coll = TestOutcome("t.py", "error", "ImportError: cannot import name 'x'", collection=True)
    skip = TestOutcome("t.py::d", "skipped", "later")
    grade = lambda res: grade_run("branch", "abc", res)  # noqa: E731
    assert grade(_result((ok,))).status == "passed"
    assert grade(_result((ok, bad), 1)).status == "failed"
    assert grade(_result((ok, bad), 1)).reason == "AssertionError: 1 == 2"
    assert grade(_result((setup,), 1)).status == "error"
    assert grade(_result((coll,), 2)).status == "error"
    assert grade(_result((skip,))).status == "error"  # nothing actually ran
    assert grade(_result((skip,))).tests == ()
    assert grade(_result((ok,), 3)).status == "error"  # pytest itself went wrong
    assert grade(_result((), None, timed_out=True)).status == "timeout"
    assert grade(_result((), None, cancelled=True)).status == "error"
    assert grade(_result((), 1, junit_error="missing")).status == "error"


def test_compare_reads_plainly() -> None:
    run = lambda status, reason="": ProbeRun("x", "abc", status, (), "", reason)  # noqa: E731
    assert compare(run("failed"), run("failed")) == "fails on both: the branch did not fix this"
    assert compare(run("passed"), run("passed")) == "passes on both: no difference"
    assert compare(run("error", "SyntaxError"), run("passed")).startswith("errors on branch, passes on base: the probe")
    assert "the probe cannot run there" in compare(run("passed"), run("error", "fixture 'db' not found"))


def test_template_imports_the_hunk_module_and_symbols(sample: Path) -> None:
    session = open_session(sample, "agent/trim-reasoning")
    [hunk] = session.diff.file("coder/history.py").hunks
    code = probe_template(session, hunk)
    ast.parse(code)
    assert "from coder.history import clear_truncated_reasoning\n" in code
    assert probe_name(code) == "test_probe_clear_truncated_reasoning"
    test_hunk = session.diff.file("tests/test_trim_reasoning.py").hunks[0]
    assert "from coder.history import NUDGE, Message, ToolCall, clear_truncated_reasoning" in probe_template(
        session, test_hunk
    )
    bare = probe_template(session, None)
    assert probe_name(bare) == "test_probe_change" and "import" not in bare
    # The stub fails until the reviewer writes it: it must not pass for a probe.
    report = run_probe(session, code)
    assert report.branch.status == "failed" and "write the probe" in report.branch.reason


def test_export_writes_and_never_overwrites(tmp_path: Path) -> None:
    code = "def test_a():\n    assert 1"
    dest = export_probe(code, tmp_path / "deep" / "test_regression.py")
    assert dest.read_text() == code + "\n"
    with pytest.raises(ReviewError, match="already exists"):
        export_probe("def test_b():\n    pass\n", dest)
    assert dest.read_text() == code + "\n"
    with pytest.raises(ReviewError, match="probe line 1"):
        export_probe("def (:\n", tmp_path / "other.py")
    assert not (tmp_path / "other.py").exists()


def test_drafts_round_trip_and_survive_garbage(tmp_path: Path) -> None:
    state = tmp_path / "s" / "branch.json"
    assert load_draft(state, "a.py:0") is None
    save_draft(state, "a.py:0", "draft one")
    save_draft(state, "", "draft two")
    assert load_draft(state, "a.py:0") == "draft one" and load_draft(state, "") == "draft two"
    assert not state.exists()  # drafts never go into the review state the verdict reads
    (tmp_path / "s" / "branch.probe-drafts.json").write_bytes(b"\xff{not json")
    assert load_draft(state, "a.py:0") is None
    save_draft(state, "a.py:0", "again")
    assert load_draft(state, "a.py:0") == "again"
    (tmp_path / "s" / "branch.probe-drafts.json").write_text('["not", "a", "dict"]')
    assert load_draft(state, "a.py:0") is None
    save_draft(state, "b.py:1", "fresh")
    assert load_draft(state, "b.py:1") == "fresh"


def test_text_report_escapes_control_characters() -> None:
    hostile = ProbeTest("t.py::h", "failed", "\x1b[31mred\x1b[0m [bold]x[/bold]\x07")
    branch = ProbeRun("branch", "a" * 40, "failed", (hostile,), "", hostile.message)
    base = ProbeRun("base", "b" * 40, "passed", (ProbeTest("t.py::h", "passed", ""),), "")
    report = ProbeReport("p.py", "tests/test_reviewui_probe.py", branch, base)
    text = report.render_text()
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b[31mred" in text and "[bold]x[/bold]" in text
    assert text.splitlines()[-1] == "fails on branch, passes on base: the branch broke this"
    assert report.outcomes() == {"branch": "failed", "base": "passed"}


def test_outcome_words() -> None:
    from reviewui.core.probe.run import outcome_words

    assert outcome_words({"branch": "failed", "base": "error"}) == "fails on branch, errors on base"
    assert outcome_words({"branch": "passed", "base": "passed"}) == "passes on both"
    assert outcome_words({"branch": "timeout", "base": "passed"}) == "times out on branch, passes on base"
    assert outcome_words({}) == "not run"

