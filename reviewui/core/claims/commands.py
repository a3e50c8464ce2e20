"""Which shell commands from a transcript are test or build runs, and the part of them reviewui reruns.

An agent's command line is often more than the test run: `cd /testbed &&
source .venv/bin/activate && python -m pytest tests/ -q 2>&1 | tail -20`. The
line is split into its simple commands with a real shell parser (bashlex);
the test run is the one simple command whose program is a known runner
(pytest, unittest, tox, nox, npm/yarn/pnpm test, jest, vitest, go test,
cargo test, make test/check) or matches a pattern the trusted config adds
(`claim-commands`). Only that command is ever rerun, never the rest of the
line, and a line with no test run is never run at all. Its words are kept
as the agent wrote them, minus redirections and the pipe that trimmed its
output; environment assignments in front (`PYTHONPATH=src pytest`) stay.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any, Sequence

_PY = re.compile(r"^(?:.*/)?python(?:3(?:\.\d+)?)?$")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class RunCommand:
    """The test run inside an agent's command line."""

    runner: str
    """"pytest", "unittest", "tox", "nox", "npm", "jest", "vitest", "go", "cargo", "make", "custom"."""
    argv: tuple[str, ...]
    """The words reviewui reruns (leading VAR=value assignments included)."""
    program: str
    """The program that must be on PATH for the rerun (`python`, `npm`, `go` …)."""

    @property
    def text(self) -> str:
        """The command as one shell-quoted line."""
        return " ".join(shlex.quote(w) for w in self.argv)


def _runner(words: Sequence[str], extra: Sequence[re.Pattern[str]]) -> str | None:
    body = [w for w in words if not _ASSIGN.match(w)]
    if not body:
        return None
    prog = body[0].rsplit("/", 1)[-1]
    rest = body[1:]
    if prog in ("pytest", "py.test"):
        return "pytest"
    if _PY.match(prog) and len(rest) >= 2 and rest[0] == "-m":
        mod = rest[1]
        return {"pytest": "pytest", "unittest": "unittest", "tox": "tox", "nox": "nox"}.get(mod)
    if prog in ("tox", "nox"):
        return prog
    if prog in ("npm", "yarn", "pnpm") and rest[:1] in (["test"], ["t"]) or prog in ("npm", "pnpm") and \
            rest[:2] == ["run", "test"]:
        return "npm"
    if prog in ("jest", "vitest"):
        return prog
    if prog == "npx" and rest and rest[0] in ("jest", "vitest"):
        return rest[0]
    if prog == "go" and rest[:1] == ["test"]:
        return "go"
    if prog == "cargo" and rest[:1] in (["test"], ["nextest"]):
        return "cargo"
    if prog == "make" and rest and rest[0] in ("test", "check", "tests"):
        return "make"
    line = " ".join(words)
    if any(p.search(line) for p in extra):
        return "custom"
    return None


def _simple_commands(line: str) -> list[list[str]] | None:
    """The simple commands of a command line, each as its words (redirections dropped); None when
    the line cannot be parsed."""
    try:
        import bashlex

        parts = bashlex.parse(line)
    except Exception:
        return None
    out: list[list[str]] = []

    def walk(node: Any) -> None:
        kind = getattr(node, "kind", "")
        if kind == "command":
            words = [p.word for p in node.parts if getattr(p, "kind", "") in ("assignment", "word")]
            if words:
                out.append(words)
            return
        for child in getattr(node, "parts", []) or []:
            walk(child)
        for child in getattr(node, "list", []) or []:
            walk(child)
        command = getattr(node, "command", None)
        if command is not None:
            walk(command)

    for p in parts:
        walk(p)
    return out


def find_test_command(line: str, extra: Sequence[str] = ()) -> RunCommand | None:
    """The test run in an agent's command `line`, or None when it runs none (or cannot be parsed).

    `extra` are trusted regular expressions naming more test commands (config `claim-commands`).
    """
    if len(line) > 10_000:
        return None
    patterns = [re.compile(p) for p in extra]
    commands = _simple_commands(line)
    if commands is None:
        return None
    for words in commands:
        runner = _runner(words, patterns)
        if runner is None:
            continue
        body = [w for w in words if not _ASSIGN.match(w)]
        return RunCommand(runner, tuple(words), body[0])
    return None
