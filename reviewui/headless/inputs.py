"""Headless views of the branch's inputs: probes, fixtures, the transcript."""

from __future__ import annotations

import argparse
import dataclasses
import gc
import sys
from typing import Any

from reviewui.command_args import emit, session_from_args
from reviewui.core.bounded import read_input_text
from reviewui.core.errors import ReviewError, refusal
from reviewui.core.safe_text import visible
from reviewui.headless.registry import handler, out


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
        if args.format == "json":
            emit(refusal(f"the probe could not run: {e}"))
        return PROBE_COULD_NOT_RUN
    exit_with = {"passed": 0, "failed": 1}.get(report.branch.status, PROBE_COULD_NOT_RUN)
    if args.format == "json":
        doc = report.to_json()
        if exit_with == PROBE_COULD_NOT_RUN:
            doc.update(refusal(f"the probe did not run to an outcome on the branch ({report.branch.status})"))
        emit(doc)
    else:
        out(report.render_text())
    return exit_with


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
        authored = session.authorship()
        extra = {
            "files": [
                {"path": f, "turns": list(turns), "unattributed": f in links.unattributed,
                 "authors": [{"tool": a.tool, "session": a.session, "model": a.model, "lines": n}
                             for a, n in authored.authors_of(f, authored.lines.get(f, {}).keys())]}
                for f, turns in links.by_file.items()
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
        # A one-shot command: what it loaded lives until it exits and holds no cycle, so the
        # cyclic collector is told to leave it be (walking it, a big log's turns, is all it would do).
        gc.freeze()
    if args.format == "json":
        from reviewui.core.transcript.stream import write_json

        write_json(t, sys.stdout.write, extra)
    else:
        from reviewui.core.transcript.render import render_text, safe

        out(render_text(t))
        if extra is not None:
            for f in extra["files"]:
                turns = ", ".join(f"#{i}" for i in f["turns"]) or "unattributed"
                out(f"file {safe(f['path'])}: {turns}")
    if t.skipped_lines:
        sys.stderr.write(f"reviewui: skipped {t.skipped_lines} malformed line(s)\n")
    return 0
