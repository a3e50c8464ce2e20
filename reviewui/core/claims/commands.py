"""Which of the agent's shell commands ran tests or a build, and with what runner.

A command line is split at `&&`, `||`, `;` and `|`; a leading `cd DIR`, env
assignments (`PYTHONPATH=. `) and `timeout N` / `uv run` / `poetry run`
prefixes are set aside; the first word (and the next, for `npm test`,
`go test`, `cargo test`, `python -m pytest`) names the runner. Only
recognised test and build commands are ever candidates to be run again;
anything else is never run.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Literal, Sequence

Purpose = Literal["test", "build"]


@dataclass(frozen=True)
class RunnerCommand:
    """One test or build command found in a command line."""

    purpose: Purpose
    """`test` or `build`."""
    runner: str
    """`pytest`, `unittest`, `tox`, `nox`, `npm`, `jest`, `vitest`, `go`, `cargo`, `make` …"""
    segment: str
    """The part of the command line that runs it, as written."""


_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\|(?!\|))\s*")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_WRAPPERS = {"timeout", "uv", "poetry", "pipenv", "hatch", "pdm", "npx", "pnpx", "bunx", "env", "time", "nice"}
_PYTHON = re.compile(r"^(?:.*/)?python(?:3(?:\.\d+)?)?$")
_NODE_TEST = {"test", "t", "test:unit", "test:ci", "tests"}


def _words(segment: str) -> list[str]:
    try:
        words = shlex.split(segment)
    except ValueError:
        words = segment.split()
    while words and (_ENV.match(words[0]) or words[0] in _WRAPPERS or words[0] in ("run",) or words[0].isdigit()
                     or words[0].startswith("-")):
        words = words[1:]  # `PYTHONPATH=. timeout 60 uv run pytest`: the runner is what is left
    return words


def _classify(words: list[str]) -> tuple[Purpose, str] | None:
    if not words:
        return None
    head = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if head in ("pytest", "py.test"):
        return "test", "pytest"
    if _PYTHON.match(head) and len(rest) >= 2 and rest[0] == "-m":
        mod = rest[1]
        if mod in ("pytest", "unittest", "tox", "nox"):
            return "test", mod
        if mod in ("build", "compileall"):
            return "build", mod
    if _PYTHON.match(head) and rest and re.search(r"(?:^|/)(?:runtests|manage)\.py$", rest[0]) and (
        rest[0].endswith("runtests.py") or rest[1:2] == ["test"]):
        return "test", "unittest"  # Django's runners print unittest's summary
    if head in ("tox", "nox"):
        return "test", head
    if head in ("jest", "vitest", "mocha"):
        return "test", head
    if head in ("npm", "yarn", "pnpm", "bun") and rest:
        script = rest[1] if rest[0] == "run" and len(rest) > 1 else rest[0]
        if script in _NODE_TEST or script.startswith("test"):
            return "test", head
        if script == "build" or script.startswith("build"):
            return "build", head
    if head == "go" and rest[:1] == ["test"]:
        return "test", "go"
    if head == "go" and rest[:1] in (["build"], ["vet"]):
        return "build", "go"
    if head == "cargo" and rest[:1] in (["test"], ["nextest"]):
        return "test", "cargo"
    if head == "cargo" and rest[:1] in (["build"], ["check"]):
        return "build", "cargo"
    if head == "make" and any(r in ("test", "check", "tests") for r in rest):
        return "test", "make"
    if head == "tsc":
        return "build", "tsc"
    return None


def runner_commands(command: str) -> list[RunnerCommand]:
    """The test and build commands in `command`, in order ([] for any other command)."""
    out: list[RunnerCommand] = []
    for segment in _SPLIT.split(command.strip()):
        if not segment or segment.startswith("cd "):
            continue
        found = _classify(_words(segment))
        if found is not None:
            out.append(RunnerCommand(found[0], found[1], segment))
    return out


_REDIRECT = re.compile(r"^\d*(?:>>?|<|>&|&>)")
MAX_LINE = 10_000
"""Characters of a command line read at most (an agent's heredoc can be megabytes)."""


@dataclass(frozen=True)
class RunCommand:
    """The test run inside an agent's command line, as reviewui reruns it."""

    runner: str
    """`pytest`, `unittest`, `tox`, `npm`, `go`, `cargo`, … or `custom` (a trusted pattern)."""
    argv: tuple[str, ...]
    """Its words as the agent wrote them (leading VAR=value included), redirections left out."""

    @property
    def text(self) -> str:
        """The command as one shell-quoted line (how reruns are keyed)."""
        return " ".join(shlex.quote(w) for w in self.argv)


def _argv(segment: str) -> tuple[str, ...]:
    try:
        words = shlex.split(segment)
    except ValueError:
        words = segment.split()
    return tuple(w for w in words if not _REDIRECT.match(w))


def find_test_command(line: str, extra: Sequence[str] = ()) -> RunCommand | None:
    """The first test run in an agent's command `line` (never a build, never the rest of the line),
    or None when it holds none. `extra` are trusted regular expressions naming more test commands."""
    if len(line) > MAX_LINE:
        return None
    for found in runner_commands(line):
        if found.purpose == "test":
            argv = _argv(found.segment)
            return RunCommand(found.runner, argv) if argv else None
    patterns = [re.compile(p) for p in extra]
    for segment in _SPLIT.split(line.strip()):
        if segment and any(p.search(segment) for p in patterns):
            argv = _argv(segment)
            return RunCommand("custom", argv) if argv else None
    return None
