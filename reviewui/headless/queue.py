"""Headless queue: every agent branch in review order, and the background sweep of the queue."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from reviewui.core.errors import ReviewError
from reviewui.core.safe_text import visible
from reviewui.headless.registry import handler, out

if TYPE_CHECKING:
    from reviewui.core.queue.read import QueueSource


@handler("queue")
def cmd_queue(args: argparse.Namespace) -> int:
    """Every agent branch, ordered by what needs the reviewer first: the app, or printed (--format)."""
    import sys

    from reviewui.core.queue.report import render_json_text, render_text

    source = queue_source(args)
    if args.sweep:
        sweep_queue(source, args)
    if args.format is None:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise ReviewError("the queue app needs a terminal; use `reviewui queue --format text|json`")
        import gc

        from reviewui.ui.queue_app import QueueApp

        was_on = gc.isenabled()
        gc.disable()  # until the first real read is on screen (QueueApp.started): what it allocates lives on
        try:
            QueueApp(source, theme=args.theme, resume_gc=was_on).run()
        finally:
            if was_on:
                gc.enable()
        return 0
    view = source.read()
    for notice in view.notices:
        sys.stderr.write(visible(f"reviewui: {notice}") + "\n")
    if args.format == "json":
        out(render_json_text(view.rows, view.omitted), is_json=True)
    else:
        out(render_text(view.rows, show_hidden=args.all, omitted=view.omitted))
    return 0


def sweep_queue(source: "QueueSource", args: argparse.Namespace) -> int:
    """Fill in the evidence of every row still waiting for it, in queue order, into the evidence store.

    Each branch gets what `check --bite` makes (core/queue/sweep.py), each on `--jobs` slots: one
    after another on the local engine, several at once on Ray (`--engine`, else the `engine` setting). A branch whose sweep cannot run is said in one line and the rest go on.
    Returns how many were swept.
    """
    import threading

    from reviewui.core.config import resolve_settings
    from reviewui.core.queue.sweep import sweep_branches

    todo = [r.record.branch for r in source.rows() if r.tier == 3 and r.record.evidence.status in ("pending", "stale")]
    engine = args.engine or resolve_settings(source.repo, source.base, source.base).engine
    swept = 0
    started = 0
    lock = threading.Lock()  # several branches may start and end at once

    def start(branch: str) -> None:
        nonlocal started
        with lock:
            started += 1
            sys.stderr.write(f"reviewui: sweeping {started}/{len(todo)}: {visible(branch)}\n")

    def done(branch: str, why: str | None) -> None:
        nonlocal swept
        if why is None:
            swept += 1
        else:
            sys.stderr.write(f"reviewui: {visible(branch)}: {visible(why)}\n")

    sweep_branches(source.repo, todo, source.base, engine=engine, on_done=done, on_start=start, jobs=args.jobs,
                   ray_address=args.ray_address)
    return swept


def queue_source(args: argparse.Namespace) -> "QueueSource":
    """Where `reviewui queue` reads: the repository, its base, the trusted branch patterns."""
    from pathlib import Path

    from reviewui.core.config import resolve_settings
    from reviewui.core.git import git_text
    from reviewui.core.queue.read import DEFAULT_PATTERNS
    from reviewui.core.queue.read import QueueSource
    from reviewui.core.target import default_base_ref

    top = git_text(args.repo or ".", "rev-parse", "--show-toplevel", check=False)
    if not top:
        raise ReviewError("not a git repository (or any of its parents)")
    repo = Path(top)
    base = args.base or default_base_ref(repo)
    settings = resolve_settings(repo, base, base)  # trusted: the base's own config, never a branch's
    patterns = settings.queue_branches or DEFAULT_PATTERNS
    return QueueSource(repo, base, patterns, bool(args.remotes), settings.notes_ref, tuple(settings.transcript_paths))
