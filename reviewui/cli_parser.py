"""The command line's grammar: every subcommand, its arguments and their types.

`build_parser` makes the parser (only the subcommand a command line names,
when asked: `reviewui open` pays for no other before its first paint);
`open_argv` turns a parsed `serve` back into the `open` arguments each browser
connection runs. Usage errors are one line and exit code 2 (`_Parser`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

from reviewui import __version__


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"reviewui: {message}\n")
        raise SystemExit(2)


BASE_HELP = "base ref (default: merge-base with the default branch)"
REPO_HELP = "repository (default: current directory)"
FORMAT_HELP = "how to print the result: text for a person, the others for tools (default: text)"


def _target_args(p: argparse.ArgumentParser, branch: bool = True) -> None:
    if branch:
        p.add_argument("branch", nargs="?", help="branch to review (default: the checked-out branch)")
    p.add_argument("--base", metavar="REF", help=BASE_HELP)
    p.add_argument("--repo", metavar="DIR", default=None, help=REPO_HELP)
    _trust_arg(p)


def _trust_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trust-branch-config", action="store_true",
                   help="apply the branch's own changes to reviewui's config (ignored by default)")


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--test-cmd", metavar="CMD", help="test command (default: python -m pytest)")
    p.add_argument("--all-tests", action="store_true", help="run the whole suite, not only changed test files")
    p.add_argument("--jobs", type=_positive_int, metavar="N", help="parallel workers (default: cores)")
    p.add_argument("--timeout", type=_positive_float, metavar="S", help="time limit per run in seconds")
    p.add_argument("--unsandboxed", action="store_true",
                   help="run the branch's code even where bubblewrap cannot sandbox it (recorded in the verdict)")
    p.add_argument("--fresh", action="store_true",
                   help="rerun everything: do not show or reuse the evidence stored for this head")


def _engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engine", choices=("local", "ray"), default=None,
                   help="what runs the sweep: this machine's slots (local, the default) or a Ray cluster's nodes "
                        "(needs pip install 'reviewui[ray]'); default: the `engine` setting")
    p.add_argument("--ray-address", metavar="ADDR", default=None,
                   help="the Ray cluster to join (default: the `ray-address` setting, else a local Ray on loopback)")


def _transcript_format_arg(p: argparse.ArgumentParser) -> None:
    from reviewui.core.transcript.names import FORMATS  # the registry is checked against this list

    p.add_argument(
        "--transcript-format", metavar="FMT", help=f"force the transcript format: {', '.join(FORMATS)}"
    )
    p.add_argument(
        "--instance", metavar="ID",
        help="which run of a transcript holding several (OpenHands resolver output, Inspect AI log, Aider session)",
    )


def _transcript_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--transcript", metavar="FILE", help="the agent's transcript")
    _transcript_format_arg(p)


def _task_args(p: argparse.ArgumentParser) -> None:
    task = p.add_mutually_exclusive_group()
    task.add_argument("--task", metavar="TEXT",
                      help="the task the agent was given (default: the transcript's first user turn): "
                           "a code name it mentions that no changed file contains is a finding")
    task.add_argument("--task-file", metavar="FILE", help="--task, read from a file")


def _positive_int(s: str) -> int:
    try:
        n = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {s}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {s}")
    return n


def _port(s: str) -> int:
    try:
        n = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {s}") from None
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535: {s}")
    return n


def _positive_float(s: str) -> float:
    try:
        n = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s}") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {s}")
    return n


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand, or only with subcommand `only`.

    Building every subcommand costs ~14 ms; `reviewui open` pays it before its
    first paint, so main() builds only the one the command line names.
    """
    parser = _Parser(prog="reviewui", description="Review a coding agent's git branch with evidence.")
    parser.add_argument("--version", action="version", version=f"reviewui {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for name, (help_text, add_args) in _SUBCOMMANDS.items():
        if only is None or name == only:
            add_args(sub.add_parser(name, help=help_text))
    return parser


def _demo_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", help="story to open, e.g. 02-add-stopped or 2 (default: the first)")
    p.add_argument("--dir", metavar="DIR", help="where the stories live (default: ~/.local/share/reviewui/demo)")
    p.add_argument("--rebuild", action="store_true", help="build the stories afresh (asks before deleting your work)")
    p.add_argument("--no-open", action="store_true", help="only build and print where")
    p.add_argument("--theme", metavar="NAME", help="colour theme (remembered)")


def _bite_args(p: argparse.ArgumentParser) -> None:
    _target_args(p)
    _run_args(p)
    p.add_argument("--hunk", metavar="FILE[:N]", action="append",
                   help="check only this file's hunks, or its hunk N (from 1); give it again for more")
    p.add_argument("--guards", action="store_true",
                   help="also revert the guards inside the agent's lines (conditions, early exits, statements)")
    p.add_argument("--include-config", action="store_true",
                   help="also bite-check hunks of files that are not code (toml, yaml, cfg, md, json, ...)")
    p.add_argument("--witness", action="store_true",
                   help="look for a call on which each toothless guard (and hunk) and its revert differ")
    p.add_argument("--format", choices=("text", "json", "stryker"), default="text", help=FORMAT_HELP)
    _engine_args(p)


def _tests_args(p: argparse.ArgumentParser) -> None:
    _target_args(p)
    _run_args(p)
    p.add_argument("--format", choices=("text", "json"), default="text", help=FORMAT_HELP)


def _fixtures_args(p: argparse.ArgumentParser) -> None:
    _target_args(p)
    p.add_argument("--format", choices=("text", "json"), default="text", help=FORMAT_HELP)


def _transcript_command_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="the transcript (a session log or an export, in any format listed below)")
    _transcript_format_arg(p)
    p.add_argument("--repo", metavar="DIR", help="link the turns to this repository's branch diff")
    p.add_argument("--branch", metavar="REF", help="the branch the transcript produced (with --repo)")
    p.add_argument("--base", metavar="REF", help=BASE_HELP)
    p.add_argument("--format", choices=("text", "json"), default="text", help=FORMAT_HELP)


def _probe_args(p: argparse.ArgumentParser) -> None:
    _target_args(p)
    _run_args(p)
    p.add_argument("--file", metavar="PROBE.py", help="the probe test file")
    p.add_argument("--hunk", metavar="FILE:N", help="also run with hunk N (from 1) of FILE reverted")
    p.add_argument("--export", metavar="PATH", help="write the probe as a regression test to PATH")
    p.add_argument("--format", choices=("text", "json"), default="text", help=FORMAT_HELP)


def _verdict_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("words", nargs="+", metavar="[BRANCH] approve|reject",
                   help="the verdict, after the branch it is for (default: the checked-out branch)")
    p.add_argument("--reason", default="", metavar="TEXT", help="why (required for a reject)")
    p.add_argument("--base", metavar="REF", help=BASE_HELP)
    p.add_argument("--repo", metavar="DIR", help=REPO_HELP)
    p.add_argument("--with-bites", action="store_true", help="run the bite sweep first and attach it")
    _trust_arg(p)
    _run_args(p)


def _log_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("branch", nargs="?", help="the branch (default: the checked-out branch)")
    p.add_argument("--repo", metavar="DIR", help=REPO_HELP)
    p.add_argument("--base", metavar="REF", help=BASE_HELP)
    p.add_argument("--format", choices=("text", "json"), default="text", help=FORMAT_HELP)


def _verify_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("branch", nargs="?", help="the branch to check (default: the checked-out branch)")
    p.add_argument("--base", metavar="REF", help="the base it merges into (default: origin/HEAD, main, master, trunk)")
    p.add_argument("--repo", metavar="DIR", help=REPO_HELP)
    p.add_argument("--require", metavar="REVIEWER", nargs="+", action="extend", default=[],
                   help="each of these must have a current signed approve (default: any one listed signer)")
    p.add_argument("--format", choices=("text", "json", "in-toto"), default="text", help=FORMAT_HELP)


def _delta_args(p: argparse.ArgumentParser) -> None:
    _target_args(p)
    p.add_argument("--since", metavar="REV", help="compare with this head (default: the head of your latest verdict)")
    p.add_argument("--format", choices=("text", "json"), default="text", help=FORMAT_HELP)


def _notes_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("pull", "push"),
                   help="pull: fetch the remote's verdicts and merge them into yours; push: send yours")
    p.add_argument("remote", nargs="?", default="origin", help="the remote (default: origin)")
    p.add_argument("--repo", metavar="DIR", help=REPO_HELP)


def _check_args(p: argparse.ArgumentParser) -> None:
    _target_args(p)
    _transcript_args(p)
    _task_args(p)
    p.add_argument("--bite", action="store_true", help="run the bite sweep and add its findings")
    _run_args(p)
    _engine_args(p)
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text", help=FORMAT_HELP)


def _claims_args(p: argparse.ArgumentParser) -> None:
    _target_args(p)
    _transcript_args(p)
    _run_args(p)
    p.add_argument("--format", choices=("text", "json"), default="text", help=FORMAT_HELP)


def _queue_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", metavar="DIR", help="the repository (default: the current directory)")
    p.add_argument("--base", metavar="REF", help="the base branch (default: origin/HEAD, main, master, trunk)")
    p.add_argument("--remotes", action="store_true", help="also list refs/remotes/*/agent/* branches")
    p.add_argument("--all", action="store_true", help="also show approved branches already merged")
    p.add_argument("--format", choices=("text", "json"), default=None,
                   help="print the queue instead of opening it (text or json)")
    p.add_argument("--theme", metavar="NAME", help="colour theme of the app")
    p.add_argument("--sweep", action="store_true",
                   help="first fill in the evidence of every branch still waiting for it (into the evidence store)")
    p.add_argument("--jobs", type=_positive_int, default=None, metavar="N", help="parallel runs per sweep")
    _engine_args(p)


def _open_args(p: argparse.ArgumentParser) -> None:
    _target_args(p)
    _transcript_args(p)
    _run_args(p)
    p.add_argument("--file", metavar="PATH", help="open at this file")
    p.add_argument("--theme", metavar="NAME", help="colour theme (remembered)")
    _task_args(p)


def _serve_args(p: argparse.ArgumentParser) -> None:
    _open_args(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=_port, default=8000, metavar="P", help="port (default: 8000; 0: any free one)")


_SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "open": ("open the review app (the default command)", _open_args),
    "serve": ("the review app in a browser (prints the address to open)", _serve_args),
    "demo": ("open a demo story (built once, then reused)", _demo_args),
    "bite": ("bite-check the branch's source hunks", _bite_args),
    "tests": ("the per-test truth table: the branch's tests at the head and on the base", _tests_args),
    "fixtures": ("show what the branch's tests are made of", _fixtures_args),
    "transcript": ("read an agent transcript", _transcript_command_args),
    "probe": ("run a probe test on the branch and its base", _probe_args),
    "verdict": ("record approve/reject in git notes", _verdict_args),
    "log": ("list the verdicts recorded for a branch", _log_args),
    "delta": ("what changed since your verdict: each hunk new, changed or unchanged", _delta_args),
    "notes": ("sync verdict notes with a remote", _notes_args),
    "verify": ("the merge check: exit 0 only on a current approve signed by a key the base lists", _verify_args),
    "check": ("the merge-path gate: static findings, exit 1 on errors", _check_args),
    "claims": ("the transcript's test claims, rerun at the head in the sandbox", _claims_args),
    "queue": ("every agent branch, ordered by what needs you first", _queue_args),
}
"""Each subcommand's help line and the function adding its arguments, in the order help lists them."""

COMMANDS = tuple(_SUBCOMMANDS)


def open_argv(args: argparse.Namespace) -> list[str]:
    """The `reviewui open` arguments that `args` (parsed by serve's parser) stand for."""
    p = _Parser(prog="reviewui open")
    _open_args(p)
    argv: list[str] = []
    positional: list[str] = []
    for action in p._actions:
        value = getattr(args, action.dest, None)
        if not action.option_strings:
            positional += [] if value is None else [str(value)]
        elif isinstance(action, argparse._StoreTrueAction):
            argv += [action.option_strings[-1]] if value else []
        elif value is not None and action.dest != "help":
            argv += [action.option_strings[-1], str(value)]
    return [*argv, "--", *positional] if positional else argv
