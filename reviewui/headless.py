"""The headless twins of the UI's actions: bite, fixtures, transcript, probe,
verdict, log, notes and check. Each handler takes parsed arguments, calls
the core, prints text or JSON, and returns the exit code.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import sys
from typing import TYPE_CHECKING, Any, Callable

from reviewui.command_args import emit, session_from_args
from reviewui.core.bounded import read_input_text
from reviewui.core.errors import ReviewError, refusal
from reviewui.core.safe_text import json_visible, visible

if TYPE_CHECKING:
    from reviewui.core.bite.instrument import UntrustedCommand
    from reviewui.core.bite.progress import ProgressSink, TestsProgress
    from reviewui.core.bite.report import BiteReport
    from reviewui.core.bite.truth_table import TruthTable
    from reviewui.core.queue.read import QueueSource
    from reviewui.core.session import ReviewSession

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
    hunks = session.hunks(args.hunk) if args.hunk else None
    include_config = getattr(args, "include_config", False)

    def progress(done: int, total: int) -> None:
        if args.format == "text" and sys.stderr.isatty():
            sys.stderr.write(f"\rbite-check {done}/{total}")
            sys.stderr.flush()

    whole = hunks is None and not include_config  # only whole-branch sweeps are stored and reused
    try:
        witness = getattr(args, "witness", False)
        report = stored_sweep(session, args.guards, witness) if whole else None
        if report is None:
            report = session.bite(hunks, on_progress=progress, guards=args.guards, include_config=include_config,
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
