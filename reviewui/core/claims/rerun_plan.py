"""What a claims rerun takes from the agent's test command: which tests and which options, never the program.

The agent's command line is the agent's: its program may be a file of the branch
(`tools/python`), the scratch's predictable path, or found through a `PATH=` it set.
So a rerun runs the trusted test command's Python (as a bite does) with `-m pytest`
or `-m unittest`, and takes from the transcript only the words after the runner:
its options and the tests it names (`AgentWords`, which only the sandboxed runner
accepts). `plan` is pure: a `RerunPlan`, or why the command is `unverifiable`:

- its program is not a recognised test runner named bare: `pytest`, `py.test`, or
  `python`/`python3`/`python3.N` followed by `-m pytest` or `-m unittest` (wrappers
  such as `timeout 60`, `uv run`, `poetry run` are set aside);
- a `VAR=value` word sets PATH, PYTHON*, LD_* or a variable the runner itself uses
  (FORBIDDEN): the agent's run then ran in a world a rerun will not rebuild.

Other `VAR=value` words (`DJANGO_SETTINGS_MODULE=x`, `CI=1`) are passed to the run.
`named_tests` lists the test files or modules the words name, which the rerun checks
are in the tree ("the tests it names are not in the tree").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from reviewui.core.claims.commands import RunCommand
from reviewui.core.run.command_types import AgentWords

Runner = Literal["pytest", "unittest"]

FORBIDDEN = re.compile(r"^(?:PATH|HOME|PWD|TMPDIR|TMP|TEMP|SHELL|ENV|BASH_ENV|VIRTUAL_ENV|PYTHON\w*|LD_\w*"
                       r"|PYTEST\w*|REVIEWUI\w*|COVERAGE\w*|COV_CORE\w*|GIT_\w*)$")
"""Variables a transcript never sets for a rerun: the program's search path, the interpreter's
and the loader's, and every variable the runner sets or reads itself."""

_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
_PYTHON = re.compile(r"^python(?:3(?:\.\d+)?)?$")
_WRAPPERS = {"timeout": 1, "time": 0, "nice": 0, "env": 0, "uv": 0, "poetry": 0, "pipenv": 0, "hatch": 0,
             "pdm": 0, "run": 0}
"""Words in front of a runner that a rerun sets aside, and how many arguments each takes."""

_PYTEST_VALUES = {"-k", "-m", "-p", "-c", "-o", "-W", "-n", "-r", "--tb", "--deselect", "--ignore", "--ignore-glob",
                  "--maxfail", "--durations", "--cov", "--cov-report", "--cov-config", "--rootdir", "--basetemp",
                  "--confcutdir", "--log-level", "--log-cli-level", "--log-file", "--timeout", "--import-mode",
                  "--capture", "--color", "--dist", "--numprocesses", "--junitxml", "--junit-xml",
                  "--override-ini", "--reruns", "--count", "--config-file", "--durations-min"}
"""pytest options whose value is the next word (so that word names no test)."""
_UNITTEST_VALUES = {"-s", "--start-directory", "-p", "--pattern", "-t", "--top-level-directory", "-k"}


@dataclass(frozen=True)
class RerunPlan:
    """What a rerun of one agent command runs, with the trusted test command's Python."""

    runner: Runner
    """`pytest` or `unittest` (run as `<trusted python> -m <runner>`)."""
    args: AgentWords
    """The options and tests the agent gave its runner, as it wrote them."""
    env: tuple[tuple[str, str], ...] = ()
    """The agent's harmless `VAR=value` words."""
    named_tests: tuple[str, ...] = ()
    """The test paths (pytest, the part before `::`) or dotted modules (unittest) the words name."""


def _runner(words: list[str]) -> tuple[Runner, list[str]] | str:
    """(runner, the words after it) for `words` that start at the program, or why it is no runner."""
    if not words:
        return "it names no program"
    program, rest = words[0], words[1:]
    if "/" in program:
        return (f"its program {program!r} is a path, not a test runner a rerun takes (the rerun runs the "
                "trusted test command's Python)")
    if program in ("pytest", "py.test"):
        return "pytest", rest
    if _PYTHON.match(program) and rest[:1] == ["-m"] and rest[1:2] in (["pytest"], ["unittest"]):
        return ("pytest" if rest[1] == "pytest" else "unittest"), rest[2:]
    return (f"{' '.join(words[:3])!r} is not a test runner a rerun takes (only pytest and unittest, "
            "run with the trusted test command's Python)")


def _tests(runner: Runner, args: list[str]) -> tuple[str, ...]:
    """The tests `args` name (the words that are no option and no option's value)."""
    values = _PYTEST_VALUES if runner == "pytest" else _UNITTEST_VALUES
    out: list[str] = []
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in values
            continue
        if runner == "unittest" and word == "discover":
            continue
        out.append(word.split("::", 1)[0] if runner == "pytest" else word)
    return tuple(out)


def plan(command: RunCommand) -> RerunPlan | str:
    """The rerun of `command` (its tests and options, with the trusted Python), or why it is unverifiable."""
    words = list(command.argv)
    env: list[tuple[str, str]] = []
    while words:
        m = _ASSIGN.match(words[0])
        if m is not None:
            if FORBIDDEN.match(m.group(1)):
                return f"it sets {m.group(1)}, which a rerun never takes from a transcript"
            env.append((m.group(1), m.group(2)))
            words.pop(0)
            continue
        if words[0] in _WRAPPERS:
            takes = _WRAPPERS[words.pop(0)]
            while words and words[0].startswith("-"):
                words.pop(0)  # a wrapper's own options (`uv run --frozen`)
            del words[:takes]
            continue
        break
    found = _runner(words)
    if isinstance(found, str):
        return found
    runner, args = found
    if "--pyargs" in args:
        return RerunPlan(runner, AgentWords(tuple(args)), tuple(env))
    return RerunPlan(runner, AgentWords(tuple(args)), tuple(env), _tests(runner, args))


def missing_tests(tree: Path, named: tuple[str, ...], runner: Runner) -> list[str]:
    """The names in `named` that are no file or module of `tree` (a path outside it counts as missing)."""
    root = tree.resolve()
    out: list[str] = []
    for name in named:
        if runner == "unittest" and "/" not in name and not name.endswith(".py"):
            parts = name.split(".")
            found = any((root / Path(*parts[:n])).with_suffix(".py").is_file() or (root / Path(*parts[:n])).is_dir()
                        for n in range(1, len(parts) + 1))
        else:
            path = (root / name.split("[", 1)[0]).resolve()
            found = (path == root or root in path.parents) and path.exists()
        if not found:
            out.append(name)
    return out
