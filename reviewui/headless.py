"""The headless twins of the UI's actions: bite, fixtures, transcript, probe,
verdict, log, notes and check. Each handler takes parsed arguments, calls
the core, prints text or JSON, and returns the exit code.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any, Callable

from reviewui.command_args import emit, session_from_args
from reviewui.core.bounded import read_input_text
from reviewui.core.errors import ReviewError
from reviewui.core.safe_text import json_visible, visible

HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {}


def handler(name: str) -> Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    """Register a function as the handler of subcommand `name`."""

    def register(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        HANDLERS[name] = fn
        return fn

    return register


def out(text: str, *, is_json: bool = False) -> None:
    """Print text (control, bidi and invisible characters made visible), ending with one newline."""
    # Whatever a renderer forgot, the terminal never gets raw; JSON keeps its meaning.
    text = json_visible(text) if is_json else visible(text, multiline=True)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


# --- verdicts -----------------------------------------------------------------


@handler("verdict")
def cmd_verdict(args: argparse.Namespace) -> int:
    """Record approve/reject on the branch head in git notes."""
    from reviewui.core.notes.verdicts import VERDICTS

    words = list(args.words)
    if len(words) > 2 or words[-1] not in VERDICTS:
        raise ReviewError("usage: reviewui verdict [BRANCH] approve|reject [--reason TEXT]")
    verdict = words[-1]
    args.branch = words[0] if len(words) == 2 else None
    session = session_from_args(args)
    if args.with_bites:
        session.evidence.add_report(session.bite(guards=True))  # guards are verdict evidence too
    session.collect_findings()
    review = session.verdict(verdict, args.reason)
    t = session.target
    out(f"recorded {verdict} on {t.branch} @ {t.head[:7]} ({review.id})")
    return 0


@handler("log")
def cmd_log(args: argparse.Namespace) -> int:
    """List the verdicts recorded for the branch, with whether each still applies."""
    session = session_from_args(args)
    if args.format == "json":
        emit(session.log_json())
    else:
        out(session.log_text())
    return 0


@handler("notes")
def cmd_notes(args: argparse.Namespace) -> int:
    """Pull (fetch and merge by review id) or push the verdict notes."""
    from reviewui.core.session import ReviewSession

    out(ReviewSession.sync_notes(args.repo, args.action, args.remote))
    return 0


# --- bite-checks --------------------------------------------------------------


@handler("bite")
def cmd_bite(args: argparse.Namespace) -> int:
    """Bite-check the branch's code hunks: exit 0 all bite, 1 some do not, 3 nothing learned, 2 usage."""
    from reviewui.core.bite.engine import UntrustedCommand

    session = session_from_args(args)
    hunks = session.hunks(args.hunk) if args.hunk else None

    def progress(done: int, total: int) -> None:
        if args.format == "text" and sys.stderr.isatty():
            sys.stderr.write(f"\rbite-check {done}/{total}")
            sys.stderr.flush()

    try:
        report = session.bite(hunks, on_progress=progress, guards=args.guards,
                              include_config=getattr(args, "include_config", False))
    except UntrustedCommand as e:
        sys.stderr.write(f"reviewui: {e}\n")
        return 3
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

    from reviewui.core.bite.engine import UntrustedCommand

    session = session_from_args(args)
    session.diff.preload()
    # The gate's sweep grades guard reverts too: a toothless guard is a `toothless-guard` finding.
    untrusted: UntrustedCommand | None = None
    try:
        report = session.bite(guards=True) if args.bite and not session.target.is_empty else None
    except UntrustedCommand as e:  # nothing learned from the bites; the static findings still stand
        report, untrusted = None, e
    findings = session.findings(report)
    out(render(args.format, session.target, session.diff, findings, __version__), is_json=args.format != "text")
    if untrusted is not None:
        sys.stderr.write(f"reviewui: {untrusted}\n")
        return 3  # as `bite` says it: nothing could be learned
    return exit_code(findings)


# --- probes -------------------------------------------------------------------


@handler("probe")
def cmd_probe(args: argparse.Namespace) -> int:
    """Run a probe test on the branch and its base (and a reverted hunk); or export it."""
    from pathlib import Path

    from reviewui.core.probe.run import check_probe_edited, check_probe_syntax, export_probe

    if not args.file:
        raise ReviewError("probe needs --file PROBE.py")
    try:
        code = read_input_text(args.file, "probe file")  # no FIFO, device or bomb
    except (OSError, UnicodeDecodeError) as e:
        raise ReviewError(f"cannot read probe file: {args.file}") from e
    check_probe_syntax(code)
    check_probe_edited(code)
    if args.export:
        path = export_probe(code, args.export)
        out(f"exported the probe as a regression test: {path}")
        return 0
    session = session_from_args(args)
    hunk = session.one_hunk(args.hunk) if args.hunk else None
    try:
        report = session.probe(code, name=Path(args.file).name, hunk=hunk)
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
        sys.stderr.write(visible(f"reviewui: {err.path}:{err.line}: cannot analyse: {err.message}") + "\n")
    return 0


# --- transcripts --------------------------------------------------------------


@handler("transcript")
def cmd_transcript(args: argparse.Namespace) -> int:
    """Read an agent transcript: turns, flags and usage, as text or the contract JSON (streamed).

    With --repo/--branch/--base, the turns are also linked to the branch diff:
    every changed file with the turns that produced it, and the files no turn
    accounts for (`unattributed`).
    """
    from reviewui.core.transcript import render_text
    from reviewui.core.transcript.render import safe
    from reviewui.core.transcript.stream import write_json

    instance = getattr(args, "instance", None)
    extra: dict[str, Any] | None = None
    if args.repo or args.branch or args.base:
        from reviewui.core.session import ReviewSession

        session = ReviewSession.open(
            args.repo, args.branch, args.base, transcript=args.file, transcript_format=args.transcript_format,
            transcript_instance=instance,
        )
        t = session.transcript()
        links = session.link_transcript()
        assert t is not None and links is not None  # a transcript was given, so both exist
        extra = {
            "files": [
                {"path": f, "turns": list(turns), "unattributed": not turns} for f, turns in links.by_file.items()
            ],
            "unattributed": list(links.unattributed),
        }
        note = links.note()
        if note:
            t = dataclasses.replace(t, notes=t.notes + (note,))
    else:
        # The transcript alone: no repository, so none of the review's machinery
        # (config, git, the session) is imported; on a big log the start-up counts.
        from reviewui.core.transcript import load_transcript

        t = load_transcript(args.file, args.transcript_format, instance=instance)
    if args.format == "json":
        write_json(t, sys.stdout.write, extra)
    else:
        out(render_text(t))
        if extra is not None:
            for f in extra["files"]:
                turns = ", ".join(f"#{i}" for i in f["turns"]) or "unattributed"
                out(f"file {safe(f['path'])}: {turns}")
    if t.skipped_lines:
        sys.stderr.write(f"reviewui: skipped {t.skipped_lines} malformed line(s)\n")
    return 0
