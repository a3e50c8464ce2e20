"""Claims put to the test: each distinct test command the agent ran is rerun once at the branch head,
in the sandbox, and set beside what the agent reported.

Outcomes, per claim:
- `confirmed`: the head agrees with what the agent reported;
- `contradicted`: the agent reported green (or said the tests pass) and the
  head is red, or the failure counts differ;
- `unverifiable`: the command cannot run here (its program is not on PATH,
  it timed out, it printed no result), with why;
- `without-run`: a final "tests pass" with no test run anywhere in the transcript.

`judge` is pure (claims and rerun results in, checks out); `rerun` makes the
runs through the one sandboxed runner, in a scratch copy of the head.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Mapping, Sequence

from reviewui.core.claims.commands import RunCommand
from reviewui.core.claims.extract import Claim
from reviewui.core.claims.summary import TestSummary, parse_summary
from reviewui.core.errors import ReviewError

Outcome = Literal["confirmed", "contradicted", "unverifiable", "without-run"]
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)


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
    theirs = reported.describe() if reported is not None and reported.runner != "claim" else "the tests pass"
    if said_green and not got.green:
        return "contradicted", f"the agent reported {theirs}; at the head: {got.describe()}"
    if reported is not None and reported.runner != "claim" and \
            reported.failed + reported.errors != got.failed + got.errors:
        return "contradicted", f"the agent's run said {reported.describe()}; at the head: {got.describe()}"
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


def _split_env(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    env: dict[str, str] = {}
    rest = list(argv)
    while rest and (m := _ASSIGN.match(rest[0])):
        env[m.group(1)] = m.group(2)
        rest.pop(0)
    return env, rest


def rerun(repo_dir: str | Path, head: str, commands: Sequence[RunCommand], *, timeout: float | None = 300.0,
          env_allow: Sequence[str] = (), network: bool = False,
          cancel: threading.Event | None = None) -> dict[str, Rerun]:
    """Run each distinct command once in a sandboxed scratch copy of `head`; keyed by its text.

    Raises ReviewError when no scratch can be made or no sandbox can run (as bite does).
    """
    from reviewui.core.run.runner import run_tests
    from reviewui.core.run.worktree import WorktreePool

    out: dict[str, Rerun] = {}
    distinct = list({c.text: c for c in commands}.values())
    if not distinct:
        return out
    with WorktreePool(repo_dir, 1) as pool, pool.acquire() as scratch:
        for command in distinct:
            scratch.checkout(head)
            env, argv = _split_env(command.argv)
            try:
                run = run_tests(scratch.path, argv, (), timeout, env_allow=env_allow, extra_env=env,
                                network=network, cancel=cancel)
            except ReviewError as e:
                if "sandbox" in str(e) or "privileges" in str(e):
                    raise
                out[command.text] = Rerun(command.text, None, str(e))
                continue
            out[command.text] = Rerun(command.text, *_read(run))
    return out


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
    summary = parse_summary(run.output)
    if summary is None:
        if run.returncode == 0:
            return TestSummary("exit", 0, 0), None
        return None, f"exit code {run.returncode} and no test summary"
    return summary, None
