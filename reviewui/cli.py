"""Command line: arguments -> settings -> a ReviewSession -> the app or a headless command.

The grammar (subcommands, arguments, types) is cli_parser.py; here is the dispatch
and the commands that open the app (`open`, `demo`, `serve`).

`reviewui [BRANCH]` opens the review app; every UI action has a headless
twin as a subcommand. A ReviewError anywhere becomes one line on stderr and
exit code 2; tracebacks are only for bugs.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from reviewui.cli_parser import COMMANDS, build_parser, open_argv
from reviewui.command_args import session_from_args
from reviewui.core.errors import ReviewError
from reviewui.core.safe_text import visible

if TYPE_CHECKING:
    from reviewui.core.session import ReviewSession


def main(argv: Sequence[str] | None = None) -> int:
    """Run reviewui with `argv` (default sys.argv[1:]) and return the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or (args_list[0] not in COMMANDS and args_list[0] not in ("-h", "--help", "--version")):
        args_list = ["open", *args_list]
    args = build_parser(only=args_list[0] if args_list[0] in COMMANDS else None).parse_args(args_list)
    if getattr(args, "unsandboxed", False):
        from reviewui.core.run import sandbox

        sandbox.allow_unsandboxed(True)
    handler = HANDLERS.get(args.command)
    if handler is None:
        from reviewui import headless  # not at the top: `open` paints sooner without its imports

        handler = headless.HANDLERS[args.command]
    try:
        code = handler(args)
        _say_clamped_limits()  # after a command that ran; a refusal stays one line
        return code
    except ReviewError as e:
        sys.stderr.write(f"reviewui: {visible(str(e))}\n")
        if e.exit_code == 3 and getattr(args, "format", None) == "json":
            # A refusal (the sandbox or a limit cannot be had) is one JSON object, as every other one is.
            from reviewui.command_args import emit
            from reviewui.core.errors import refusal

            emit(refusal(str(e), getattr(e, "tests", ())))
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("reviewui: interrupted\n")
        return 130
    except BrokenPipeError:
        # Output piped into `head` and closed: nothing more to say.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _say_clamped_limits() -> None:
    """Once per command that ran the branch's code: the limits lowered to fit inherited ones."""
    run = sys.modules.get("reviewui.core.run.sandbox")
    if run is None or not run.was_required():
        return
    for note in run.limit_notes():
        sys.stderr.write(f"reviewui: note: {note}\n")


def cmd_open(args: argparse.Namespace) -> int:
    """Open the review app on the branch (with no branch named, on the base with agent branches
    about: the review queue)."""
    if args.branch is None and _offers_queue(args):
        from reviewui import headless

        return headless.cmd_queue(argparse.Namespace(repo=args.repo, base=args.base, remotes=False, all=False,
                                                     format=None, theme=args.theme, sweep=False, jobs=None))
    with _collector_paused():
        # Opening the session mostly waits on git (a dozen short commands, then git computing
        # every patch for the line counts) while importing Textual and the screens is all CPU:
        # done side by side, the first screen comes up sooner. The session is opened in a forked
        # helper (work_ahead.py), before any thread starts: in this process its Python would share
        # the import's GIL. The import runs on a daemon thread, so a bad branch still exits at
        # once; an import error surfaces again at the import below.
        from reviewui.work_ahead import WorkAhead

        opening = WorkAhead(lambda: _opened_for_first_screen(args))
        ui = threading.Thread(target=importlib.import_module, args=("reviewui.ui.app",), daemon=True)
        ui.start()
        session = opening.result()
        ui.join()
        from reviewui.ui.app import run_app

        run_app(session, initial_file=args.file, theme=args.theme)
    return 0


def _opened_for_first_screen(args: argparse.Namespace) -> ReviewSession:
    """The session `open` shows, with what its first screen draws already read: the file list with
    git's line counts, which files are never shown (one `cat-file --batch-check`), the first file's
    patch. Raises ReviewError for a bad repo, branch or base, or a `--file` the branch did not change."""
    session = session_from_args(args)
    if args.file and session.diff.file(args.file) is None and not session.target.is_empty:
        raise ReviewError(f"not a changed file: {args.file}")
    _ = session.diff.files  # joins git's line counts here, not on the UI's first screen
    # The first file's patch is shown only once every blob's size says it may be.
    session.diff.not_shown()
    _read_first_file(session, args.file)
    return session


def _read_first_file(session: ReviewSession, path: str | None) -> None:
    """Read and parse the patch of the file the review screen shows first (`--file`, else the first
    listed), beside the UI's import: its own git call would otherwise wait on the first screen."""
    first = session.diff.file(path) if path else session.diff.first_listed()
    if first is not None:
        _ = first.hunks  # kept on the file (a cached property); none read for a file over a cap


def _offers_queue(args: argparse.Namespace) -> bool:
    """True when `reviewui` alone is run on the base branch itself and agent branches exist:
    nothing to review here, so the queue of what there is to review opens instead."""
    from reviewui.core.git import git_text

    repo = args.repo or "."
    if not git_text(repo, "rev-parse", "--show-toplevel", check=False):
        return False  # not a work tree (a bare repository): the review's own checks say why
    current = git_text(repo, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    if not current or current not in ("main", "master", "trunk") and current != (args.base or ""):
        return False
    return bool(git_text(repo, "for-each-ref", "--count=1", "--format=%(refname)", "refs/heads/agent/",
                         check=False))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector until the app's first paint (or until the block ends).

    Everything allocated before the first paint (modules, the session, the first
    screen's widgets) lives as long as the app: collecting cycles among it only made
    the reviewer wait, ~50 ms with one full collection right before the paint.
    `run_app` sees the collector off and has the app turn it on after its first paint.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def cmd_demo(args: argparse.Namespace) -> int:
    """Build the demo stories once into a stable directory, list them, open the chosen (or first) one."""
    from reviewui.demo_home import default_demo_dir, ensure_stories, resolve_name

    dest = Path(args.dir) if args.dir else default_demo_dir()
    wanted = resolve_name(args.name) if args.name else None
    stories = ensure_stories(dest, rebuild=args.rebuild, confirm=_ask_yes)
    chosen = next((s.sample for s in stories if s.sample.name == wanted), stories[0].sample if stories else None)
    print(f"demo stories in {dest} (open one with `reviewui demo NAME`):")
    for s in stories:
        mark = ">" if chosen is not None and s.sample.name == chosen.name else " "
        print(f"{mark} {s.sample.name:<22} branch {s.sample.branch:<24} {s.sample.repo_dir}")
    sys.stdout.flush()
    if chosen is None or args.no_open:
        return 0
    from reviewui.core.session import ReviewSession  # not at the top: `transcript` starts faster without it

    with _collector_paused():
        session = ReviewSession.open(chosen.repo_dir, chosen.branch)
        from reviewui.ui.app import run_app

        run_app(session, theme=args.theme)
    return 0


def _ask_yes(question: str) -> bool:
    """Ask the user on the terminal; without one, the answer is no."""
    if not sys.stdin.isatty():
        sys.stderr.write(f"reviewui: kept, not rebuilt: {question} (answer needs a terminal)\n")
        return False
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the review app to a browser: each connection runs `reviewui open` with the same arguments."""
    session = session_from_args(args)  # a bad branch or repo fails here, in one line, not in the browser
    from reviewui.ui.serve import serve

    return serve(open_argv(args), args.host, args.port, title=f"reviewui {visible(session.target.branch)}")


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "open": cmd_open,
    "demo": cmd_demo,
    "serve": cmd_serve,
}
"""The commands that open the app; the headless ones are in headless.HANDLERS."""
