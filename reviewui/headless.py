"""The headless twins of the UI's actions: bite, fixtures, transcript, probe,
verdict, log, notes and check. Each handler takes parsed arguments, calls
the core, prints text or JSON, and returns the exit code.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from reviewui.command_args import emit, session_from_args
from reviewui.core.errors import ReviewError
from reviewui.core.session import ReviewSession

HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {}


def handler(name: str) -> Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    """Register a function as the handler of subcommand `name`."""

    def register(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        HANDLERS[name] = fn
        return fn

    return register


def out(text: str) -> None:
    """Print text, ending with one newline."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


# --- verdicts -----------------------------------------------------------------


def verdict_evidence(session: ReviewSession, bite_report: Any = None) -> dict[str, Any]:
    """What a verdict carries: bites, kept probes, comments and findings (Review.new keywords)."""
    from reviewui.core.notes.verdicts import BiteRecord, FindingRecord
    from reviewui.core.state import ReviewState

    state = ReviewState.load(session.target.repo_dir, session.target.branch)
    bites = ()
    if bite_report is not None:
        bites = tuple(
            BiteRecord(r.file, r.header, r.verdict, tuple(r.failing_tests)) for r in bite_report.results
        )
    findings = tuple(FindingRecord(f.kind, f.message) for f in session.findings(bite_report))
    return {
        "bites": bites,
        "probes": tuple(state.probe_records()),
        "comments": tuple(state.comment_records()),
        "findings": findings,
    }


@handler("verdict")
def cmd_verdict(args: argparse.Namespace) -> int:
    """Record approve/reject on the branch head in git notes."""
    from reviewui.core.notes.verdicts import VERDICTS, Review, record_review

    words = list(args.words)
    if len(words) > 2 or words[-1] not in VERDICTS:
        raise ReviewError("usage: reviewui verdict [BRANCH] approve|reject [--reason TEXT]")
    verdict = words[-1]
    args.branch = words[0] if len(words) == 2 else None
    session = session_from_args(args)
    report = _run_bite(session) if args.with_bites else None
    t = session.target
    review = Review.new(
        verdict, args.reason, repo_dir=t.repo_dir, branch=t.branch, base=t.base, head=t.head,
        **verdict_evidence(session, report),
    )
    record_review(t.repo_dir, review, session.settings.notes_ref)
    out(f"recorded {verdict} on {t.branch} @ {t.head[:7]} ({review.id})")
    return 0


@handler("log")
def cmd_log(args: argparse.Namespace) -> int:
    """List the verdicts recorded for the branch, with whether each still applies."""
    from reviewui.core.notes.verdicts import log_json, render_log_text

    session = session_from_args(args)
    t = session.target
    ref = session.settings.notes_ref
    if args.format == "json":
        emit(log_json(t.repo_dir, t.branch, t.base, t.head, ref))
    else:
        out(render_log_text(t.repo_dir, t.branch, t.base, t.head, ref))
    return 0


@handler("notes")
def cmd_notes(args: argparse.Namespace) -> int:
    """Pull (fetch and merge by review id) or push the verdict notes."""
    from pathlib import Path

    from reviewui.core.config import Settings
    from reviewui.core.git import open_repo
    from reviewui.core.notes.sync import pull_notes_report, push_notes

    repo = open_repo(args.repo or Path.cwd())
    root = Path(repo.working_tree_dir or ".")
    ref = Settings.from_repo(root).notes_ref
    if args.action == "pull":
        out(pull_notes_report(root, args.remote, ref).words(args.remote))
    else:
        push_notes(root, args.remote, ref)
        out(f"pushed {ref} to {args.remote}")
    return 0


def _run_bite(session: ReviewSession, hunks: list[tuple[str, int]] | None = None,
              on_progress: Callable[[int, int], None] | None = None) -> Any:
    """Run the bite-check on the analysed part of the diff (settings' `exclude` left out)."""
    from reviewui.core.bite.engine import run_bite

    r = session.run
    session.diff.preload()
    return run_bite(
        session.target, session.analysed_diff(), session.settings, hunks=hunks,
        all_tests=r.all_tests, jobs=r.jobs, timeout=r.timeout, test_cmd=r.test_cmd, on_progress=on_progress,
    )


# --- bite-checks --------------------------------------------------------------


@handler("bite")
def cmd_bite(args: argparse.Namespace) -> int:
    """Bite-check the branch's source hunks; exit 0 only when every hunk bites."""
    from reviewui.core.bite.engine import parse_hunk_spec

    session = session_from_args(args)
    session.diff.preload()
    hunks = parse_hunk_spec(args.hunk, session.analysed_diff()) if args.hunk else None

    def progress(done: int, total: int) -> None:
        if args.format == "text" and sys.stderr.isatty():
            sys.stderr.write(f"\rbite-check {done}/{total}")
            sys.stderr.flush()

    report = _run_bite(session, hunks, progress)
    if args.format == "json":
        emit(report.to_json(session.target))
    elif args.format == "stryker":
        emit(report.to_stryker(session.target))
    else:
        if sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")
        out(report.render_text(session.target))
    return report.exit_code


# --- the gate -----------------------------------------------------------------


@handler("check")
def cmd_check(args: argparse.Namespace) -> int:
    """Static findings (and bite findings with --bite); exit 1 when any is an error."""
    from reviewui import __version__
    from reviewui.core.findings import exit_code, render

    session = session_from_args(args)
    session.diff.preload()
    report = _run_bite(session) if args.bite and not session.target.is_empty else None
    findings = session.findings(report)
    out(render(args.format, session.target, session.diff, findings, __version__))
    return exit_code(findings)


# --- probes -------------------------------------------------------------------


@handler("probe")
def cmd_probe(args: argparse.Namespace) -> int:
    """Run a probe test on the branch and its base (and a reverted hunk); or export it."""
    from pathlib import Path

    from reviewui.core.probe.run import check_probe_edited, check_probe_syntax, export_probe, run_probe

    if not args.file:
        raise ReviewError("probe needs --file PROBE.py")
    try:
        code = Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ReviewError(f"cannot read probe file: {args.file}") from e
    check_probe_syntax(code)
    check_probe_edited(code)
    if args.export:
        path = export_probe(code, args.export)
        out(f"exported the probe as a regression test: {path}")
        return 0
    session = session_from_args(args)
    hunk = _one_hunk(args.hunk, session) if args.hunk else None
    try:
        report = run_probe(session, code, name=Path(args.file).name, hunk=hunk)
    except ReviewError as e:
        sys.stderr.write(f"reviewui: the probe could not run: {e}\n")
        return PROBE_COULD_NOT_RUN
    if args.format == "json":
        emit(report.to_json())
    else:
        out(report.render_text())
    return {"passed": 0, "failed": 1}.get(report.branch.status, PROBE_COULD_NOT_RUN)


PROBE_COULD_NOT_RUN = 3
"""`probe` exit code when the probe did not run to an outcome on the branch (error, timeout, setup)."""


def _one_hunk(spec: str, session: ReviewSession) -> tuple[str, int]:
    from reviewui.core.bite.engine import hunk_number_to_index

    path, sep, number = spec.rpartition(":")
    if not sep or not number.isdigit():
        raise ReviewError(f"--hunk takes FILE:N (N the hunk's number, from 1), got {spec!r}")
    f = session.diff.file(path)
    if f is None:
        raise ReviewError(f"{path} is not changed on this branch")
    return (f.path, hunk_number_to_index(path, int(number), len(f.hunks)))


# --- fixtures -----------------------------------------------------------------


@handler("fixtures")
def cmd_fixtures(args: argparse.Namespace) -> int:
    """Show what the branch's added or changed tests are made of."""
    from reviewui.core.fixtures import render_text

    session = session_from_args(args)
    report = session.fixtures()
    if args.format == "json":
        emit(report.to_json())
    else:
        out(render_text(report))
    for err in report.errors:
        sys.stderr.write(f"reviewui: {err.path}:{err.line}: cannot analyse: {err.message}\n")
    return 0


# --- transcripts --------------------------------------------------------------


@handler("transcript")
def cmd_transcript(args: argparse.Namespace) -> int:
    """Read an agent transcript: turns, flags and usage, as text or the contract JSON."""
    from reviewui.core.transcript import load_transcript, render_text

    t = load_transcript(args.file, args.transcript_format)
    if args.format == "json":
        emit(t.to_json())
    else:
        out(render_text(t))
    if t.skipped_lines:
        sys.stderr.write(f"reviewui: skipped {t.skipped_lines} malformed line(s)\n")
    return 0
