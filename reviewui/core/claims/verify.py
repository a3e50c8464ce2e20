"""Claims put to the test: each distinct test command the agent ran is rerun once at the branch head,
in the sandbox, and set beside what the agent reported.

Outcomes, per claim:
- `confirmed`: the head agrees with what the agent reported;
- `contradicted`: the agent reported green (or said the tests pass) and the
  head is red, the failure counts differ, or the agent reported more tests
  passing than the head ran ("41 passed" where 12 ran);
- `unverifiable`: the command cannot be rerun (its program is not a test runner a
  rerun takes, it sets PATH, PYTHON*, LD_* or a variable of the runner's: rerun_plan.py;
  the tests it names are not in the tree) or the rerun says nothing (it timed out,
  printed no result, ran no test), with why;
- `without-run`: a final "tests pass" with no test run anywhere in the transcript.

`judge` is pure (claims and rerun results in, checks out); `rerun` makes the
runs through the one sandboxed runner, in a scratch copy of the head, with the
trusted test command's Python: the transcript chooses only the tests and the
runner's options (rerun_plan.py); no program it names is started or asked, here
or in the sandbox. `confirmed` needs at least one test run.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Mapping, Sequence

from reviewui.core.claims.commands import RunCommand
from reviewui.core.claims.extract import Claim
from reviewui.core.claims.rerun_plan import missing_tests, plan
from reviewui.core.claims.summary import TestSummary, parse_summary
from reviewui.core.errors import ReviewError

Outcome = Literal["confirmed", "contradicted", "unverifiable", "without-run"]


@dataclass(frozen=True)
class Rerun:
    """What one test command did at the branch head."""

    command: str
    summary: TestSummary | None
    """The run's counts (None when it could not run or said nothing)."""
    problem: str | None = None
    """Why it could not be judged (a missing program, a timeout), else None."""


@dataclass(frozen=True)
class ClaimCheck:
    """One claim and what the head says of it."""

    claim: Claim
    outcome: Outcome
    why: str
    """One line: what the agent said against what the head did."""
    rerun: Rerun | None = None

    def to_json(self) -> dict[str, object]:
        """The `reviewui claims --format json` entry (keys are a contract)."""
        c = self.claim
        return {
            "turn": c.turn, "kind": c.kind, "outcome": self.outcome, "claim": c.text,
            "command": c.command.text if c.command else None,
            "reported": _counts(c.reported), "head": _counts(self.rerun.summary if self.rerun else None),
            "why": self.why,
        }


def _counts(s: TestSummary | None) -> dict[str, object] | None:
    if s is None:
        return None
    return {"passed": s.passed, "failed": s.failed, "errors": s.errors}


def _compare(reported: TestSummary | None, head: Rerun, said_green: bool) -> tuple[Outcome, str]:
    if head.summary is None:
        return "unverifiable", head.problem or "the rerun printed no test summary"
    got = head.summary
    if got.runner == "exit":
        return "unverifiable", "the rerun reports no count of the tests it ran"
    ran = got.passed + got.failed + got.errors
    theirs = reported.describe() if reported is not None and reported.runner != "claim" else "the tests pass"
    if said_green and not got.green:
        return "contradicted", f"the agent reported {theirs}; at the head: {got.describe()}"
    if ran == 0:
        return "unverifiable", "the rerun ran no test"
    if reported is not None and reported.runner != "claim" and \
            reported.failed + reported.errors != got.failed + got.errors:
        return "contradicted", f"the agent's run said {reported.describe()}; at the head: {got.describe()}"
    if reported is not None and reported.passed > ran:
        return "contradicted", f"the agent reported {reported.passed} passed; at the head {ran} ran: {got.describe()}"
    return "confirmed", f"at the head: {got.describe()}"


def judge(claims: Sequence[Claim], reruns: Mapping[str, Rerun]) -> list[ClaimCheck]:
    """Each claim's outcome, given the head's rerun of each command (keyed by `RunCommand.text`):
    the last run of each command, and the final claim."""
    out: list[ClaimCheck] = []
    runs = [c for c in claims if c.kind == "run" and c.command is not None]
    # Only a command's last run speaks for the head: earlier ones saw code the agent changed since.
    last_of = {c.command.text: c for c in runs if c.command is not None and c.reported is not None}
    for claim in claims:
        if claim.kind == "final":
            if not runs:
                out.append(ClaimCheck(claim, "without-run", "the agent says the tests pass but ran none"))
                continue
            last = runs[-1]
            assert last.command is not None
            head = reruns.get(last.command.text)
            if head is None:
                out.append(ClaimCheck(claim, "unverifiable", "its last test command was not rerun"))
                continue
            outcome, why = _compare(claim.reported, head, True)
            out.append(ClaimCheck(claim, outcome, why, head))
            continue
        if claim.command is None or claim.reported is None or last_of.get(claim.command.text) is not claim:
            continue  # a run whose output said nothing claims nothing; an earlier run is history
        head = reruns.get(claim.command.text)
        if head is None:
            out.append(ClaimCheck(claim, "unverifiable", "not rerun"))
            continue
        outcome, why = _compare(claim.reported, head, claim.reported.green)
        out.append(ClaimCheck(claim, outcome, why, head))
    return out


def rerun(repo_dir: str | Path, head: str, commands: Sequence[RunCommand], *, test_command: str,
          timeout: float | None = 300.0, env_allow: Sequence[str] = (), network: bool = False,
          cancel: threading.Event | None = None) -> dict[str, Rerun]:
    """Rerun each distinct command once in a sandboxed scratch copy of `head`; keyed by its text.

    Each runs as `<the trusted test command's Python> -m pytest|unittest <the agent's options and
    tests>` with the trusted command's `VAR=value` words (rerun_plan.py); one that cannot be
    rerun so, or names tests not in the tree, is not run. Raises ReviewError when no scratch
    can be made or no sandbox can run (as bite does).
    """
    from reviewui.core.run.runner import run_tests
    from reviewui.core.run.worktree import WorktreePool

    out: dict[str, Rerun] = {}
    distinct = list({c.text: c for c in commands}.values())
    plans = {c.text: plan(c) for c in distinct}
    for text, p in plans.items():
        if isinstance(p, str):
            out[text] = Rerun(text, None, p)
    runnable = [c for c in distinct if not isinstance(plans[c.text], str)]
    if not runnable:
        return out
    python, trusted_env = trusted_python(test_command)
    if python is None:
        for c in runnable:
            out[c.text] = Rerun(c.text, None, f"the test command ({test_command}) names no Python to rerun it with")
        return out
    with WorktreePool(repo_dir, 1) as pool, pool.acquire() as scratch:
        for command in runnable:
            p = plans[command.text]
            assert not isinstance(p, str)
            scratch.checkout(head)
            missing = missing_tests(scratch.path, p.named_tests, p.runner)
            if missing:
                out[command.text] = Rerun(command.text, None, "the tests it names are not in the tree: "
                                          + ", ".join(missing[:5]))
                continue
            try:
                run = run_tests(scratch.path, [python, "-m", p.runner], (), timeout, env_allow=env_allow,
                                extra_env={**dict(p.env), **trusted_env}, network=network, cancel=cancel,
                                agent_args=p.args)
            except ReviewError as e:
                if "sandbox" in str(e) or "privileges" in str(e):
                    raise
                out[command.text] = Rerun(command.text, None, str(e))
                continue
            out[command.text] = Rerun(command.text, *_read(run))
    return out


def trusted_python(test_command: str) -> tuple[str | None, dict[str, str]]:
    """(the Python the trusted test command runs, its `VAR=value` words): its first word when that
    is a `python*`, else the interpreter of its program (a `pytest` console script's venv Python);
    None when it names none (`make test`, a path into the tree)."""
    from reviewui.core.run import interp
    from reviewui.core.run.command_types import host_program
    from reviewui.core.run.runner import split_command

    try:
        argv = split_command(test_command)
    except ReviewError:
        return None, {}
    env: dict[str, str] = {}
    while argv and (m := re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", argv[0], re.DOTALL)):
        env[m.group(1)] = m.group(2)
        argv.pop(0)
    if not argv:
        return None, env
    if re.match(r"^python(?:3(?:\.\d+)?)?$", Path(argv[0]).name) and ("/" not in argv[0] or argv[0].startswith("/")):
        return argv[0], env
    found = interp.python_of(host_program(argv[0], env.get("PATH")), env.get("PATH"))
    return (str(found) if found is not None else None), env


def _read(run: object) -> tuple[TestSummary | None, str | None]:
    from reviewui.core.run.runner import RunResult

    assert isinstance(run, RunResult)
    if run.timed_out:
        return None, f"timed out after {run.seconds:.0f}s"
    if run.cancelled:
        return None, "cancelled"
    if run.limit:
        return None, f"stopped at the sandbox's {run.limit}"
    if run.pytest and run.tests:
        failed = sum(1 for t in run.tests if t.outcome == "failed")
        errors = sum(1 for t in run.tests if t.outcome == "error")
        passed = sum(1 for t in run.tests if t.outcome == "passed")
        return TestSummary("pytest", passed, failed, errors), None
    if run.pytest and run.junit_error is None:
        return TestSummary("pytest", 0, 0), None  # its report holds no test: it ran none
    summary = parse_summary(run.output)
    if summary is None:
        if run.returncode == 0:
            return TestSummary("exit", 0, 0), None
        return None, f"exit code {run.returncode} and no test summary"
    return summary, None
