"""Headless evidence runs: bite, the truth table, check, claims; their progress and refusals."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING, Callable

from reviewui.command_args import emit, session_from_args
from reviewui.core.errors import ReviewError, refusal
from reviewui.core.safe_text import visible
from reviewui.headless.registry import handler, out

if TYPE_CHECKING:
    from reviewui.core.bite.instrument import UntrustedCommand
    from reviewui.core.bite.progress import ProgressSink, TestsProgress
    from reviewui.core.bite.report import BiteReport
    from reviewui.core.bite.truth_table import TruthTable
    from reviewui.core.session import ReviewSession


def tests_progress(args: argparse.Namespace) -> "ProgressSink":
    """A long run's progress on stderr (tests done of pytest's collection count, elapsed): rewritten in
    place on a terminal, else the first reading of each run and then one line every LINE_EVERY seconds
    (a CI log names every run it waited on and is not flooded)."""
    import time

    tty = sys.stderr.isatty()
    last: dict[str, float | str] = {"at": 0.0, "phase": ""}

    def say(p: "TestsProgress") -> None:
        if tty:
            sys.stderr.write("\r\x1b[K" + visible(p.words()))
            sys.stderr.flush()
        elif p.phase != last["phase"] or time.monotonic() - float(last["at"]) >= LINE_EVERY:
            last["at"], last["phase"] = time.monotonic(), p.phase
            sys.stderr.write(f"reviewui: {visible(p.words())}\n")

    return say


def sweep_progress(args: argparse.Namespace) -> Callable[[int, int], None]:
    """A sweep's hunks graded (of all) after its baseline: rewritten in place on a terminal (text
    output), else a line when the graded runs begin, one every LINE_EVERY seconds and one when the
    last hunk is in (a CI log shows where a long guard sweep is, not minutes of silence)."""
    import time

    tty = sys.stderr.isatty()
    at = {"start": -1.0, "said": 0.0}  # when the first reading came, when a line was last written

    def say(done: int, total: int) -> None:
        if tty:
            if args.format == "text":
                sys.stderr.write(f"\rbite-check {done}/{total}")
                sys.stderr.flush()
            return
        now = time.monotonic()
        if at["start"] < 0:
            at["start"] = now
        if done in (0, total) or now - at["said"] >= LINE_EVERY:
            at["said"] = now
            sys.stderr.write(f"reviewui: bite-check: {done}/{total} hunks, {now - at['start']:.0f}s\n")

    return say


LINE_EVERY = 15.0
"""Seconds between progress lines on a stderr that is not a terminal."""


def refuse(args: argparse.Namespace, e: "UntrustedCommand") -> int:
    """Say a refused command (exit 3): one line on stderr, and with `--format json` the one
    `refused` object on stdout, naming the tests that made it untrusted."""
    sys.stderr.write(f"reviewui: {e}\n")
    if getattr(args, "format", "text") == "json":
        emit(refusal(str(e), e.tests))
    return 3


# --- bite-checks --------------------------------------------------------------


@handler("bite")
def cmd_bite(args: argparse.Namespace) -> int:
    """Bite-check the branch's code hunks: exit 0 all bite, 1 some do not, 3 nothing learned, 2 usage.

    A whole-branch sweep stored for this very key (head, base, command, config,
    environment, version) is shown instead of rerun, with its age; `--fresh` reruns.
    """
    from reviewui.core.bite.engine import UntrustedCommand

    session = session_from_args(args)
    # Every --hunk given, in order, each hunk once (one given twice is one run).
    hunks = list(dict.fromkeys(k for spec in args.hunk for k in session.hunks(spec))) if args.hunk else None
    include_config = getattr(args, "include_config", False)

    whole = hunks is None and not include_config  # only whole-branch sweeps are stored and reused
    try:
        witness = getattr(args, "witness", False)
        report = stored_sweep(session, args.guards, witness) if whole else None
        if report is None:
            report = session.bite(hunks, on_progress=sweep_progress(args), guards=args.guards, include_config=include_config,
                                  witness=witness, on_tests=tests_progress(args))
            if whole:
                session.save_evidence(report)
    except UntrustedCommand as e:
        return refuse(args, e)
    if args.format == "json":
        doc = report.to_json(session.target)
        if report.exit_code == 3:  # nothing learned: the document says why, as every refusal does
            doc.update(refusal(report.refusal_reason(), report.baseline.failing_tests))
        emit(doc)
    elif args.format == "stryker":
        emit(report.to_stryker(session.target))
    else:
        if sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")
        out(report.render_text(session.target))
    return report.exit_code


def stored_sweep(session: ReviewSession, guards: bool, witness: bool = False) -> BiteReport | None:
    """The stored sweep of this very key when it answers the request (guards graded, witnesses looked
    for, if asked), else None.

    Says on stderr, in one line each, that stored results are used (and how
    old they are), that stored ones are stale, or that the store was set aside.
    """
    stored = session.stored()
    if stored.notice:
        sys.stderr.write(visible(f"reviewui: {stored.notice}") + "\n")
    b = stored.bite
    if b is None:
        return None
    if not b.current:
        sys.stderr.write(visible(f"reviewui: {stored.words()}: running afresh") + "\n")
        return None
    if (guards and not b.value.guards_checked) or (witness and not b.value.witnesses_checked):
        return None
    sys.stderr.write(visible(f"reviewui: {stored.words()} (rerun with --fresh)") + "\n")
    # Nothing ran: every grade is the stored sweep's (JSON `evidence`).
    report = dataclasses.replace(b.value, results=tuple(
        dataclasses.replace(r, evidence="reused", guards=tuple(dataclasses.replace(g, evidence="reused")
                                                              for g in r.guards)) for r in b.value.results))
    if not guards and report.guards_checked:
        # Asked without --guards: the document is the one a sweep without them prints.
        return dataclasses.replace(report, guards_checked=False,
                                   results=tuple(dataclasses.replace(r, guards=()) for r in report.results))
    return report


def swept_with_table(session: ReviewSession,
                     on_tests: "ProgressSink | None" = None) -> tuple[BiteReport, TruthTable]:
    """A guard-graded sweep and the truth table for the session, from the store when current, else run
    (and stored). Raises UntrustedCommand or ReviewError as the sweep does."""
    from reviewui.core.bite.cache import BiteCache

    report = stored_sweep(session, guards=True, witness=True)
    table = None
    cache = BiteCache()  # the sweep's warm servers make the table's base run too
    try:
        if report is not None:
            stored = session.stored().table
            table = stored.value if stored is not None and stored.current else None
        else:
            # the gate tells a toothless guard with a witness
            report = session.bite(guards=True, witness=True, on_tests=on_tests, cache=cache)
        if table is None:
            table = session.tests_table(report, on_tests=on_tests, cache=cache)
    finally:
        cache.close()
    if report.baseline.reason != "cancelled":
        session.save_evidence(report, table, session.findings(report, table))
    return report, table


@handler("tests")
def cmd_tests(args: argparse.Namespace) -> int:
    """The per-test truth table: exit 0 every new test needs the change and nothing regressed, 1 otherwise,
    3 when it could not be made (not pytest, the head's tests did not run), 2 usage."""
    from reviewui.core.bite.engine import UntrustedCommand

    session = session_from_args(args)
    try:
        report, table = swept_with_table(session, tests_progress(args))
    except UntrustedCommand as e:
        return refuse(args, e)
    t = session.target
    if args.format == "json":
        doc = {"repo": str(t.repo_dir), "branch": t.branch, "test_command": report.test_command, **table.to_json()}
        if table.status != "complete":
            doc.update(refusal(table.reason, report.baseline.failing_tests))
        emit(doc)
    else:
        out(f"{t.branch}: " + table.render_text())
    if table.status != "complete":
        return 3
    weak = table.regressions or any(r.base == "passes" for r in table.tests)
    return 1 if weak else 0


# --- the gate -----------------------------------------------------------------


@handler("check")
def cmd_check(args: argparse.Namespace) -> int:
    """Static findings (and bite findings with --bite); exit 1 when any is an error."""
    from reviewui import __version__
    from reviewui.core.findings import check_json, exit_code, render

    from reviewui.core.bite.engine import UntrustedCommand

    session = session_from_args(args)
    session.diff.preload()
    # The gate's sweep grades guard reverts too: a toothless guard is a `toothless-guard` finding.
    # ... and makes the per-test truth table (one more run, on the base), and reruns the agent's
    # test commands at the head: their findings join the rest.
    untrusted: UntrustedCommand | None = None
    report, table = None, None
    if args.bite:
        session.claims()  # first: the sweep's stored findings then include the reruns
        try:
            report, table = swept_with_table(session, tests_progress(args)) if not session.target.is_empty \
                else (None, None)
        except UntrustedCommand as e:  # nothing learned from the bites; the static findings still stand
            untrusted = e
    findings = session.findings(report, table)
    authors = session.authorship().hunk_records([h for f in session.diff.files for h in f.hunks]) \
        if args.format == "json" else None  # who wrote each hunk, from git-ai notes
    if untrusted is not None and args.format == "json":
        # One object: the static findings that still stand, and the refusal a tool reading only the JSON sees.
        emit({**check_json(session.target, session.diff, findings, authors),
              **refusal(str(untrusted), untrusted.tests)})
    else:
        out(render(args.format, session.target, session.diff, findings, __version__, authors),
            is_json=args.format != "text")
    if untrusted is not None:
        sys.stderr.write(f"reviewui: {untrusted}\n")
        return 3  # as `bite` says it: nothing could be learned
    return exit_code(findings)


@handler("claims")
def cmd_claims(args: argparse.Namespace) -> int:
    """The transcript's claims about its tests, rerun at the head; exit 1 when one is contradicted."""
    import json


    session = session_from_args(args)
    if session.transcript() is None:
        raise ReviewError("no transcript: pass --transcript FILE (or commit one where the config looks)")
    checks = session.claims()
    if args.format == "json":
        out(json.dumps({"branch": session.target.branch, "head": session.target.head,
                        "claims": [c.to_json() for c in checks]}, indent=2), is_json=True)
    else:
        lines = [f"{len(checks)} claim(s) about the tests in the transcript"]
        for c in checks:
            lines.append(f"  turn {c.claim.turn:>4}  {c.outcome:<13} {visible(c.claim.text)}")
            lines.append(f"              {visible(c.why)}")
        out("\n".join(lines))
    return 1 if any(c.outcome == "contradicted" for c in checks) else 0
