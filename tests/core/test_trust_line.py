"""The typed line between trusted programs and agent words (command_types.py), kept by construction.

- A `HostProgram` is made only by `command_types.host_program`, which refuses a relative path and
  anything in a checkout or a scratch; every helper that resolves or starts a program on the host
  takes only that type, and mypy rejects a plain string or agent words there.
- `AgentWords` reach only the sandboxed runner.
- Processes start on the host only from an allowlisted set of modules.
"""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from reviewui.core.run import command_types
from reviewui.core.run.command_types import HostProgram, add_checkouts, host_program
from tests.clirun import ROOT

PACKAGE = ROOT / "reviewui"

HOST_PROCESSES = {
    "core/git.py", "core/diff_batch.py", "core/notes/patchid.py", "core/notes/signing.py", "core/bite/origin.py",
    "core/bite/coverage_map.py", "core/run/bwrap_start.py", "core/run/interp.py", "core/run/runner.py",
    "core/run/sandbox.py", "core/run/sandbox_env.py",
    "core/run/storage.py", "core/run/warm_runner.py", "core/run/warm_server_host.py",
}
"""Modules that may start a process on the host (git, its patch-id pipe and its batched diff stream, a signer, the sandbox and what it needs, and
the trusted interpreter's probes). `core/inside/` runs inside the sandbox, never on the host."""


def _trees() -> dict[str, ast.Module]:
    return {str(p.relative_to(PACKAGE)): ast.parse(p.read_text(encoding="utf-8"))
            for p in sorted(PACKAGE.rglob("*.py"))}


def _calls(tree: ast.AST, name: str) -> int:
    return sum(1 for n in ast.walk(tree) if isinstance(n, ast.Call)
               and ((isinstance(n.func, ast.Name) and n.func.id == name)
                    or (isinstance(n.func, ast.Attribute) and n.func.attr == name)))


def test_only_allowlisted_modules_start_processes_on_the_host() -> None:
    starting = set()
    for rel, tree in _trees().items():
        if rel.startswith("core/inside/"):
            continue
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                    for a in n.names} | {n.module.split(".")[0] for n in ast.walk(tree)
                                         if isinstance(n, ast.ImportFrom) and n.module}
        spawns = any(_calls(tree, f) for f in ("system", "popen", "execv", "execvp", "execve", "execl", "spawnv",
                                               "posix_spawn", "create_subprocess_exec", "create_subprocess_shell"))
        if "subprocess" in imported or "pty" in imported or spawns:
            starting.add(rel)
    assert starting == HOST_PROCESSES


def test_a_host_program_is_made_only_by_the_vetting_function() -> None:
    made = {rel for rel, tree in _trees().items() if _calls(tree, "HostProgram")}
    assert made == {"core/run/command_types.py"}


def test_agent_words_reach_only_the_sandboxed_runner() -> None:
    takers = set()
    for rel, tree in _trees().items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]
                if any(a.annotation is not None and "AgentWords" in ast.unparse(a.annotation) for a in args):
                    takers.add(f"{rel}:{node.name}")
    assert takers == {"core/run/runner.py:run_tests"}


def _host_helpers() -> list[tuple[object, str]]:
    from reviewui.core.bite import coverage_map, origin
    from reviewui.core.run import interp, sandbox, warm_runner, warm_server_host

    return [(interp.python_of, "command"), (interp.facts, "exe"), (interp.layout, "python"),
            (sandbox.python_layout, "python"), (sandbox.run_env, "python"), (sandbox.visible_path, "python"),
            (sandbox.Box, "python"), (warm_runner.WarmPytest.__init__, "python"),
            (warm_server_host.plugin_cache_dir, "python"), (origin._checkout_roots, "python"),
            (coverage_map._probe_coverage, "python")]


def test_every_host_helper_takes_only_a_host_program() -> None:
    for func, param in _host_helpers():
        target = inspect.unwrap(func)  # type: ignore[arg-type]
        hints = typing.get_type_hints(target.__init__ if inspect.isclass(target) and param not in
                                      getattr(target, "__dataclass_fields__", {}) else target)
        assert HostProgram in typing.get_args(hints[param]) or hints[param] is HostProgram, (func, hints[param])


def test_host_program_refuses_tree_files_checkouts_and_scratches(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "tools").mkdir(parents=True)
    (checkout / ".venv" / "bin").mkdir(parents=True)
    (checkout / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for exe in (checkout / "tools" / "python", checkout / ".venv" / "bin" / "python"):
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    scratch = Path(__import__("tempfile").gettempdir()) / "reviewui-scratch-u4242"
    (scratch / "x" / "slots" / "0" / "tree").mkdir(parents=True, exist_ok=True)
    slot_python = scratch / "x" / "slots" / "0" / "tree" / "python"
    slot_python.write_text("#!/bin/sh\n")
    slot_python.chmod(0o755)
    try:
        # before the checkout is known, its files are plain host files: the differential
        assert host_program(str(checkout / "tools" / "python")) is not None
        add_checkouts(checkout)
        monkeypatch.chdir(checkout)
        assert host_program("tools/python") is None  # relative: a file of the tree, never resolved here
        assert host_program(str(checkout / "tools" / "python")) is None
        assert host_program("python", path_env=str(checkout / "tools")) is None
        assert host_program(str(checkout / ".venv" / "bin" / "python")) is not None  # the reviewer's venv there
        assert host_program(str(slot_python)) is None
        assert host_program("python", path_env=str(slot_python.parent)) is None
        assert host_program(sys.executable) is not None
        assert command_types.resolve(HostProgram("python"), str(slot_python.parent)) is None
    finally:
        __import__("shutil").rmtree(scratch, ignore_errors=True)
        with command_types._lock:
            command_types._checkouts.discard(checkout.resolve())


SNIPPET = '''from reviewui.core.run import interp
from reviewui.core.run.command_types import AgentWords, host_program

words = AgentWords(("tools/python", "-m", "pytest"))
interp.python_of(words.words[0])
interp.python_of(words)
interp.facts("tools/python")
interp.python_of(host_program("python"))
'''


@pytest.mark.slow
def test_mypy_rejects_agent_words_where_a_host_program_goes(tmp_path: Path) -> None:
    snippet = tmp_path / "crossing.py"
    snippet.write_text(SNIPPET)
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
                           str(snippet)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    errors = [ln for ln in done.stdout.splitlines() if ": error:" in ln]
    assert [int(ln.split(":")[1]) for ln in errors] == [5, 6, 7], done.stdout  # the vetted call (line 8) passes
    assert all('"HostProgram' in ln for ln in errors), errors
