"""Coverage-guided selection: which selected tests execute which changed lines.

The baseline of a `<python> -m pytest` command is measured with coverage.py
(as `<python> -m coverage run -m pytest ...`, or a warm fork that starts
coverage itself), with a generated rcfile measuring only the changed Python
files. A tiny pytest plugin (put on PYTHONPATH, loaded via
PYTEST_PLUGINS, never written into the scratch) switches coverage's dynamic
context to `<node id>|setup`, `|call` and `|teardown` around every test, so
the data says exactly which test ran which line. Lines run outside any test
(imports at collection time: module constants, `def` lines) carry the empty
context and count as executed by every selected test.

A hunk is then:
- `uncovered` when no executable changed line (or, for removed lines, no
  statement next to the removal point) was executed at all;
- run against only the tests whose *call* phase executed it;
- run against every selected test when fixture setup/teardown, import time
  or a subprocess executed it (a shared fixture can feed many tests).

Tests quarantined at the baseline (red at the head) count as not having
run. A map of the selected tests says `uncovered` of what no *selected*
test runs; prepare.search_suite then maps the whole suite once, and its
`uncovered` means no test in the suite runs the lines (`scope`).

Evidence is never invented: when the reviewer's `python` lacks coverage,
when the plugin did not see every test run in-process (pytest-xdist), or
when the data cannot be read, no map is made and every hunk runs all
selected tests. Non-Python files always run all selected tests.
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Sequence

from reviewui.core import inside
from reviewui.core.run.tempdirs import private_tempdir, remove_tree
from reviewui.core.bounded import parse_python
from reviewui.core.hunks import DiffLine, Hunk
from reviewui.core.run import sandbox
from reviewui.core.run.command_types import HostProgram, host_program, resolve
from reviewui.core.run.process import read_run_text

PLUGIN_MODULE = "reviewui_covctx"

PLUGIN_SOURCE = inside.source("coverage_plugin.py").read_text(encoding="utf-8")
"""The plugin each run loads (inside/coverage_plugin.py: it runs in the project's Python)."""


@dataclass(frozen=True)
class CoverageSupport:
    """What the reviewer's Python offers for coverage."""

    version: str
    """coverage.py version found there."""
    core: str
    """`ctrace` when the C tracer imports, else `pytrace` (both support contexts)."""
    pytest_cov: bool = False
    """True when pytest-cov is installed there (its own measuring is switched off with --no-cov)."""

    @property
    def has_subprocess_patch(self) -> bool:
        """True when `[run] patch = subprocess` exists (coverage 7.10+)."""
        try:
            major, minor = (int(x) for x in self.version.split(".")[:2])
        except ValueError:
            return False
        return (major, minor) >= (7, 10)


def probe_coverage(python: str, path_env: str) -> CoverageSupport | None:
    """Return coverage support of the `python` found on `path_env` (the trusted test command's
    program), or None when absent or when it is no host program (command_types.py)."""
    program = host_program(python, path_env)
    return _probe_coverage(program, path_env) if program is not None else None


@functools.lru_cache(maxsize=16)
def _probe_coverage(python: HostProgram, path_env: str) -> CoverageSupport | None:
    exe = resolve(python, path_env)
    if exe is None:
        return None
    code = (
        "import coverage\n"
        "try:\n from coverage.tracer import CTracer; core='ctrace'\n"
        "except Exception:\n core='pytrace'\n"
        # Found, not imported: importing pytest-cov imports pytest, half the probe's time.
        "import importlib.util\n"
        "pc = '1' if importlib.util.find_spec('pytest_cov') is not None else '0'\n"
        "print(coverage.__version__, core, pc)\n"
    )
    try:
        # Run from an empty dir: `-c` puts the cwd (the reviewer's checkout, maybe the branch) on sys.path.
        empty = private_tempdir("covprobe")  # pid-named: swept after a kill -9
        try:
            proc = subprocess.run(
                [exe, "-c", code], capture_output=True, timeout=60, env={**os.environ, "PATH": path_env}, cwd=empty
            )
        finally:
            remove_tree(empty)
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = proc.stdout.decode("utf-8", "replace").split()
    if proc.returncode != 0 or len(parts) != 3:
        return None
    return CoverageSupport(version=parts[0], core=parts[1], pytest_cov=parts[2] == "1")


def coverage_args(argv: Sequence[str], support: CoverageSupport | None = None) -> list[str] | None:
    """The pytest arguments a measured run of `<python> -m pytest ARGS` adds, or None for
    any other shape of command (no coverage guidance then).

    With pytest-cov installed, `--no-cov` keeps its own measuring (from
    `--cov` in addopts) from taking the tracer over.
    """
    if len(argv) < 3 or list(argv[1:3]) != ["-m", "pytest"]:
        return None
    if not os.path.basename(argv[0]).startswith("python"):
        return None
    return ["--no-cov"] if support is not None and support.pytest_cov else []


def prepare(work: Path, scratch: Path, files: Sequence[str], support: CoverageSupport,
            plugin_dir: Path | None = None) -> dict[str, str]:
    """Write the rcfile into `work` and the plugin into `plugin_dir` (default `work`); return the
    extra environment for the run (COVERAGE_RCFILE names the rcfile: `coverage run` and a warm
    fork both read it). Paths in the rcfile are written as a sandboxed run sees them (run/room.py),
    `work` being under the run's own directory."""
    work.mkdir(parents=True, exist_ok=True)
    plugins = plugin_dir or work
    plugins.mkdir(parents=True, exist_ok=True)
    (plugins / f"{PLUGIN_MODULE}.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
    place = sandbox.room_for_run(scratch, plugins.parent if plugin_dir is not None else work.parent)
    include = "\n".join(f"    {_glob_literal(place.inside(scratch / f))}" for f in files)
    lines = [
        "[run]",
        f"data_file = {place.inside(work / '.coverage').replace('$', '$$')}",
        "parallel = true",
        f"core = {support.core}",
        "disable_warnings = no-data-collected, module-not-imported, couldnt-parse, no-ctracer",
        "include =",
        include,
    ]
    if support.has_subprocess_patch:
        lines.append("patch = subprocess")
    (work / "rcfile").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # Joined with the run's own PYTHONPATH / PYTEST_PLUGINS by the caller (origin.merge_env).
    return {
        "PYTEST_PLUGINS": PLUGIN_MODULE,
        "PYTHONPATH": str(plugins),
        "REVIEWUI_COV_SEEN": str(work / "seen.txt"),
        "COVERAGE_CORE": support.core,
        "COVERAGE_RCFILE": str(work / "rcfile"),
    }


def _glob_literal(path: str) -> str:
    """`path` as a coverage include pattern that matches it, whatever its characters.

    The rcfile is INI with one pattern a line, and patterns are globs with
    `$VAR` expansion: glob characters, `$`, whitespace, line breaks and
    unencodable characters each become `?` (one character), a backslash `/`
    (coverage's `/` matches either slash). The pattern may then also match a
    sibling differing there; read_map keeps exact paths only.
    """
    return "".join(
        "/" if c == "\\" else c if c.isprintable() and not c.isspace() and c not in "*?[]$#;" else "?" for c in path
    )


Choice = Literal["uncovered", "tests", "all"]


@dataclass(frozen=True)
class Selection:
    """Which tests a hunk's revert has to run."""

    choice: Choice
    """`uncovered` (run nothing), `tests` (only `tests`) or `all` (every selected test)."""
    tests: tuple[str, ...] = ()
    """Node ids whose call phase executed the hunk (when `choice` is `tests`)."""
    reason: str = ""
    """Why, in a few words (shown with `uncovered`)."""


class CoverageMap:
    """Per file, per line: the contexts (test phases) that executed it."""

    def __init__(self, lines: dict[str, dict[int, frozenset[str]]], seen: frozenset[str]) -> None:
        self.lines = lines
        """Repo-relative path -> line -> contexts (`""` means outside any test)."""
        self.seen = seen
        """Node ids the plugin saw run in-process."""

    def select(self, hunk: Hunk, head_text: str | None, skip: frozenset[str] = frozenset(),
               scope: str = "selected") -> Selection:
        """Decide which tests must run for `hunk` (see the module docstring); tests in `skip`
        (quarantined: red at the head) count as not having run. `scope` (`selected` or `suite`:
        which tests this map measured) words an `uncovered` reason."""
        if not hunk.file.endswith(".py") or head_text is None:
            return Selection("all", reason="not a Python file")
        spans = statement_spans(head_text)
        if spans is None:
            return Selection("all", reason="file does not parse")
        executed = self.lines.get(hunk.file, {})
        targets = _target_spans(hunk, spans)
        if not targets:
            return Selection("uncovered", reason="the hunk changes no executable line")
        contexts: set[str] = set()
        for lo, hi in targets:
            for n in range(lo, hi + 1):
                contexts |= executed.get(n, frozenset())
        quarantined = {c for c in contexts if c.rpartition("|")[0] in skip}
        contexts -= quarantined
        if not contexts:
            nobody = "no test in the suite executes" if scope == "suite" else "no selected test executes"
            why = "only tests red at the head (quarantined) execute" if quarantined else nobody
            return Selection("uncovered", reason=f"{why} the changed lines")
        tests: set[str] = set()
        for ctx in contexts:
            node, _, phase = ctx.rpartition("|")
            if phase != "call" or not node:
                return Selection("all", reason="executed outside a test body (import, fixture or subprocess)")
            tests.add(node)
        return Selection("tests", tuple(sorted(tests)))

    def blind_to(self, modules: Sequence[object], imported: dict[str, str]) -> str | None:
        """A changed module the tests imported but of which no line was recorded (the map is blind), else None."""
        for m in modules:
            name, path = getattr(m, "name", ""), getattr(m, "path", "")
            if name in imported and not self.lines.get(path):
                return name
        return None




def read_map(work: Path, scratch: Path, files: Sequence[str], expected: Sequence[str]) -> CoverageMap | None:
    """Read the baseline's coverage data; None when it is missing or cannot be trusted.

    `expected` are the node ids JUnit says ran: if the plugin did not see
    every one of them in-process (pytest-xdist, a plugin that reruns in a
    subprocess), the data is incomplete and no map is returned.
    """
    try:
        seen = frozenset(l for l in (read_run_text(work / "seen.txt") or "").splitlines() if l)
    except OSError:
        return None
    if not set(expected) <= seen:
        return None
    try:
        from coverage import CoverageData
    except ImportError:  # pragma: no cover - coverage is a dependency of reviewui
        return None
    by_abs = {str((scratch / f).resolve()): f for f in files}
    inside = sandbox.room_for_run(scratch, "/").tree_inside  # where a sandboxed run measured them
    by_abs.update({f"{inside}/{f}": f for f in files})
    lines: dict[str, dict[int, frozenset[str]]] = {}
    try:
        for data_file in sorted(work.glob(".coverage*")):
            data = CoverageData(basename=str(data_file))
            data.read()
            for measured in data.measured_files():
                rel = by_abs.get(measured) or by_abs.get(str(Path(measured).resolve()))
                if rel is None:
                    continue
                dest = lines.setdefault(rel, {})
                for n, ctxs in data.contexts_by_lineno(measured).items():
                    dest[n] = dest.get(n, frozenset()) | frozenset(ctxs)
    except Exception:  # a corrupt or foreign-version data file: no guidance rather than wrong guidance
        return None
    return CoverageMap(lines, seen)


def statement_spans(source: str) -> list[tuple[int, int]] | None:
    """Line spans of every statement (compound statements: their header only); None on SyntaxError."""
    spans = _spans(source)
    return None if spans is None else list(spans)


@functools.lru_cache(maxsize=8)
def _spans(source: str) -> tuple[tuple[int, int], ...] | None:
    """statement_spans, kept for the last few files: every hunk of a file is selected from the same
    head text (a parse of it per hunk was most of a 200-hunk plan's time)."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return None
    spans: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.stmt, ast.excepthandler)):
            continue
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):  # a statement body holds statements
            end = max(start, body[0].lineno - 1)
        else:
            end = node.end_lineno or node.lineno
        spans.append((start, end))
    return tuple(spans)


def _innermost(line: int, spans: list[tuple[int, int]]) -> tuple[int, int] | None:
    best: tuple[int, int] | None = None
    for lo, hi in spans:
        if lo <= line <= hi and (best is None or hi - lo < best[1] - best[0]):
            best = (lo, hi)
    return best


def _nearest(line: int, spans: list[tuple[int, int]], step: int, limit: int) -> tuple[int, int] | None:
    n = line
    while 1 <= n <= limit:
        found = _innermost(n, spans)
        if found:
            return found
        n += step
    return None


def _target_spans(hunk: Hunk, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Statement spans whose execution stands for the hunk's changed lines.

    Each run of changed lines is represented by its executable added lines;
    a run with none (a pure removal, or code replaced by comments) by the
    statements just before and after the removal point.
    """
    limit = max((hi for _, hi in spans), default=0)
    out: list[tuple[int, int]] = []
    last_new = hunk.new_start - 1 if hunk.new_len else hunk.new_start
    block: list[DiffLine] = []
    before = last_new

    def close() -> None:
        if not block:
            return
        found = [s for s in (_innermost(ln.new_no, spans) for ln in block if ln.new_no is not None) if s]
        if not found and any(ln.kind == "removed" for ln in block):
            around = (_nearest(before, spans, -1, limit), _nearest(before + 1, spans, 1, limit))
            found = [s for s in around if s]
        out.extend(found)
        block.clear()

    for ln in hunk.lines:
        if ln.kind == "context":
            close()
        else:
            if not block:
                before = last_new
            block.append(ln)
        if ln.new_no is not None:
            last_new = ln.new_no
    close()
    return out
