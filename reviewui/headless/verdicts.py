"""Headless verdicts: record one, the log, verify, the delta since a verdict, notes sync."""

from __future__ import annotations

import argparse
import sys

from reviewui.command_args import emit, session_from_args
from reviewui.core.errors import ReviewError
from reviewui.core.safe_text import visible
from reviewui.headless.registry import handler, out
from reviewui.headless.sweeps import swept_with_table


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
        # Guards and the truth table are verdict evidence too (as after `B` in the app).
        report, table = swept_with_table(session)
        session.evidence.add_report(report)
        session.evidence.add_truth_table(table)
    session.collect_findings()
    mine = session.self_review_warning()
    if mine:  # said before it is recorded: a verdict on one's own work is still the reviewer's call
        sys.stderr.write(visible(f"reviewui: warning: {mine}") + "\n")
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
        # Every reason and foreign line is indented and marked by the renderer; `out` escapes what remains.
        out(session.log_text())
    return 0


@handler("verify")
def cmd_verify(args: argparse.Namespace) -> int:
    """The merge check: exit 0 when each required reviewer's current approve is signed by a key the base
    lists (`verify-signers`), 1 with one line per missing piece, 2 on a usage error."""
    import json

    from reviewui.core.config import Settings
    from reviewui.core.notes.verify import verify
    from reviewui.core.target import resolve_target

    t = resolve_target(args.repo, args.branch, args.base)
    ref = Settings.from_commit(t.repo_dir, t.base_ref).notes_ref  # the base's, never the branch's
    report = verify(t.repo_dir, t.branch, t.base_ref, args.require, ref)
    if args.format == "json":
        out(json.dumps(report.to_json(), indent=2), is_json=True)
    elif args.format == "in-toto":
        out(json.dumps(report.to_in_toto(), indent=2), is_json=True)
    else:
        out(report.to_text())
    return 0 if report.ok else 1


@handler("delta")
def cmd_delta(args: argparse.Namespace) -> int:
    """What changed since the reviewer's latest verdict (or `--since REV`): each hunk new, changed or unchanged."""
    from reviewui.core.delta.report import render_text, to_json

    session = session_from_args(args)
    found = session.delta(args.since)
    if found is None:
        raise ReviewError(f"no verdict of yours on {session.target.branch}: nothing to compare with "
                          "(record one, or pass --since REV)")
    since, delta = found
    stored = session.stored().bite  # the grades of the head now, when a sweep of it is stored
    report = stored.value if stored is not None and stored.current else None
    if args.format == "json":
        emit(to_json(delta, report))
    else:
        out(render_text(session.target.branch, since, delta, report))
    return 0


@handler("notes")
def cmd_notes(args: argparse.Namespace) -> int:
    """Pull (fetch and merge by review id) or push the verdict notes."""
    from reviewui.core.session import ReviewSession

    line, warnings = ReviewSession.sync_notes(args.repo, args.action, args.remote)
    for warning in warnings:  # one line each, and the pull still went on
        sys.stderr.write(visible(f"reviewui: {warning}") + "\n")
    out(line)
    return 0
