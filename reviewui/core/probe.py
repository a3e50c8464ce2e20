"""Probe tests: the test the agent avoided writing, run on the branch head and on its base.

A suspicion about a change is not a defect until a test fails. The reviewer
writes that test (a probe); `run_probe` places it beside the tests it
imitates (so their `conftest.py` fixtures and imports apply) in two scratch
worktrees of the bite-check machinery, one at the branch head and one at the
base, and runs only the probe there, in parallel. With a hunk given, a third
scratch runs it at the head with that hunk reverted: does the probe bite it?

The probe never touches the reviewer's checkout: it exists only in scratch
worktrees, and in the file the reviewer exports it to. Probes that do not
parse are refused with their line before anything runs.
"""

from __future__ import annotations

import ast
import concurrent.futures as cf
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from reviewui.core.bite import selected_test_files
from reviewui.core.diff import Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.git import list_files, show_file
from reviewui.core.revert import RevertError
from reviewui.core.runner import RunResult, is_pytest_command, run_tests, split_command
from reviewui.core.worktree import WorktreePool

PROBE_TIMEOUT = 60.0
"""Seconds a probe may run when neither --timeout nor the config sets a limit."""
PROBE_FILE = "test_reviewui_probe"
"""Stem of the file the probe is placed in (collected by pytest's default patterns)."""


@dataclass(frozen=True)
class ProbeTest:
    """One test function of the probe, as pytest reported it."""

    id: str
    """pytest node id, e.g. `tests/test_reviewui_probe.py::test_probe_x`."""
    outcome: str
    """`passed`, `failed` or `error` (an import or collection error is `error`)."""
    message: str
    """The assertion or error message ("" when passed)."""


@dataclass(frozen=True)
class ProbeRun:
    """The probe run at one place: the branch head, the base, or the head with a hunk reverted."""

    place: str
    """`branch`, `base` or `reverted`."""
    rev: str
    """The commit it ran at."""
    status: str
    """`passed`, `failed`, `error` (could not import/collect/run) or `timeout`."""
    tests: tuple[ProbeTest, ...]
    """Per-test outcomes (empty when nothing was collected or the run was killed)."""
    output: str
    """pytest's output (head and tail when long)."""
    reason: str = ""
    """One line on why: the first failure or error message, or what went wrong."""
    hunk: tuple[str, int] | None = None
    """(file, index) of the reverted hunk (place `reverted` only)."""

    def to_json(self) -> dict[str, Any]:
        """The run as in `reviewui probe --format json` (a contract)."""
        data: dict[str, Any] = {
            "rev": self.rev,
            "status": self.status,
            "tests": [{"id": t.id, "outcome": t.outcome, "message": t.message} for t in self.tests],
            "output": self.output,
        }
        if self.hunk is not None:
            data["hunk"] = {"file": self.hunk[0], "index": self.hunk[1]}
        return data


@dataclass(frozen=True)
class ProbeReport:
    """A probe's outcomes on branch and base (and with a hunk reverted)."""

    probe: str
    """The probe's name (e.g. the file it came from)."""
    path: str
    """Where the probe was placed inside the scratch worktrees (repo-relative)."""
    branch: ProbeRun
    """The run at the branch head."""
    base: ProbeRun
    """The run at the base (merge-base)."""
    reverted: ProbeRun | None = None
    """The run at the head with one hunk reverted, when asked for."""

    def outcomes(self) -> dict[str, str]:
        """{"branch": status, "base": status}, as a kept probe records them."""
        return {"branch": self.branch.status, "base": self.base.status}

    def summary(self) -> str:
        """The outcome in plain words, e.g. "fails on branch, passes on base: the branch broke this"."""
        return compare(self.branch, self.base)

    def reverted_summary(self) -> str | None:
        """What reverting the hunk did, in plain words, or None when no hunk was reverted."""
        return None if self.reverted is None else compare_reverted(self.branch, self.reverted)

    def to_json(self) -> dict[str, Any]:
        """The report as `reviewui probe --format json` prints it (keys are a contract)."""
        return {
            "probe": self.probe,
            "branch": self.branch.to_json(),
            "base": self.base.to_json(),
            "reverted": None if self.reverted is None else self.reverted.to_json(),
        }

    def render_text(self) -> str:
        """A plain-text report: one block per place, then the plain-words summary.

        Control characters from test output are shown escaped (`\\x1b`), never sent to the terminal.
        """
        lines = [f"probe {self.probe} (placed at {self.path})"]
        for run in (self.branch, self.base, self.reverted):
            if run is None:
                continue
            where = run.place if run.hunk is None else f"{run.place} ({run.hunk[0]}:{run.hunk[1]})"
            lines.append(f"  {where:<10} {run.rev[:7]}  {run.status.upper()}")
            for t in run.tests:
                lines.append(f"    {t.outcome:<6} {t.id}" + (f": {t.message}" if t.message else ""))
            if not run.tests and run.reason:
                lines.append(f"    {run.reason}")
        lines.append(self.summary())
        if self.reverted is not None:
            lines.append(compare_reverted(self.branch, self.reverted))
        return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", "\n".join(lines))


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


_VERB = {"passed": "passes", "failed": "fails", "error": "errors", "timeout": "times out"}


def compare(branch: ProbeRun, base: ProbeRun) -> str:
    """Say plainly what the two outcomes mean together."""
    b, a = branch.status, base.status
    head = f"{_VERB[b]} on branch, {_VERB[a]} on base" if a != b else f"{_VERB[b]} on both"
    if b == "error":
        return f"{head}: the probe does not run on the branch ({branch.reason or 'see output'}); fix the probe"
    if b == "timeout":
        return f"{head}: the probe hangs on the branch (killed after the time limit)"
    if a == "error":
        why = "the name does not exist there" if _is_import_error(base) else "the probe cannot run there"
        return f"{head}: {why} ({base.reason or 'see output'})"
    if a == "timeout":
        return f"{head}: the probe hangs on the base"
    return {
        ("failed", "passed"): f"{head}: the branch broke this",
        ("passed", "failed"): f"{head}: the branch fixed this",
        ("failed", "failed"): f"{head}: the branch did not fix this",
        ("passed", "passed"): f"{head}: no difference",
    }[(b, a)]


def compare_reverted(branch: ProbeRun, reverted: ProbeRun) -> str:
    """Say plainly whether the probe bites the reverted hunk."""
    b, r = branch.status, reverted.status
    head = f"{_VERB[r]} with the hunk reverted"
    if r == "error":
        if _is_import_error(reverted):
            return f"{head}: the hunk defines what the probe imports (inconclusive) ({reverted.reason})"
        return f"{head}: {reverted.reason or 'see output'}"
    if r == "timeout":
        return f"{head}: reverting the hunk makes the probe hang"
    if b == "passed":
        return f"{head}: the probe bites this hunk" if r == "failed" else f"{head}: the probe does not bite this hunk"
    if b == "failed":
        return f"{head}: this hunk is what makes it fail" if r == "passed" else f"{head} too: this hunk alone is not why"
    return f"{head} (the branch run was {b}, so this says little)"


def _is_import_error(run: ProbeRun) -> bool:
    text = run.reason + " " + " ".join(t.message for t in run.tests)
    return bool(re.search(r"ImportError|ModuleNotFoundError|cannot import name|NameError", text))


# --- checking, exporting, templates --------------------------------------------------


def check_probe_syntax(code: str, name: str = "probe") -> None:
    """Return None when `code` parses as Python.

    Raises ReviewError "probe line N: message" for a syntax error (also for a
    NUL byte or text that cannot be written as UTF-8) and for an empty probe.
    """
    if not code.strip():
        raise ReviewError("the probe is empty: write a test_… function")
    for n, line in enumerate(code.splitlines() or [code], 1):
        if "\0" in line:
            raise ReviewError(f"probe line {n}: source contains a NUL byte")
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            raise ReviewError(f"probe line {n}: text that is not valid UTF-8") from None
    try:
        ast.parse(code, filename=name)
    except SyntaxError as e:
        raise ReviewError(f"probe line {e.lineno or 1}: {e.msg}") from None
    except ValueError as e:  # odd inputs older Pythons report as ValueError
        raise ReviewError(f"probe line 1: {e}") from None


def export_probe(code: str, path: str | Path) -> Path:
    """Write the probe as a regression test to `path` (created, never overwritten); return it.

    Raises ReviewError when the probe does not parse, the file already
    exists, or it cannot be written.
    """
    check_probe_syntax(code)
    dest = Path(path).expanduser().absolute()
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise ReviewError(f"{dest} already exists; choose another path") from None
    except OSError as e:
        raise ReviewError(f"cannot write {dest}: {e.strerror or e}") from e
    with os.fdopen(fd, "wb") as f:
        f.write((code if code.endswith("\n") else code + "\n").encode("utf-8"))
    return dest


def probe_name(code: str) -> str:
    """The probe's name: its first top-level `test…` function, else "probe" (never raises)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return "probe"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            return node.name
    return "probe"


def module_name(path: str) -> str | None:
    """The dotted module a repo-relative `.py` path is imported as (`src/` layout aware), or None."""
    p = PurePosixPath(path)
    if p.suffix != ".py":
        return None
    parts = list(p.with_suffix("").parts)
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(s.isidentifier() for s in parts):
        return None
    return ".".join(parts)


def hunk_symbols(source: str, hunk: Hunk) -> list[str]:
    """Top-level names (functions, classes, assignments) whose lines the hunk adds or changes."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    touched = {ln.new_no for ln in hunk.lines if ln.kind == "added" and ln.new_no is not None}
    if not touched:  # a pure deletion: whatever now sits where it was
        touched = set(range(hunk.new_start, hunk.new_start + max(hunk.new_len, 1)))
    names: list[str] = []
    for node in tree.body:
        end = getattr(node, "end_lineno", node.lineno) or node.lineno
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        if not any(first <= n <= end for n in touched):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.extend(t.id for t in targets if isinstance(t, ast.Name))
    return list(dict.fromkeys(names))


def probe_template(session: Any, hunk: Hunk | None) -> str:
    """A probe to start from: imports of the hunk's module and symbols, and a test_probe_… stub.

    For a test-file hunk the test file's own imports are copied (the probe
    imitates it). Never raises for odd files: it falls back to a bare stub.
    """
    target = session.target
    imports: list[str] = []
    symbols: list[str] = []
    if hunk is not None:
        raw = show_file(target.repo_dir, target.head, hunk.file)
        source = raw.decode("utf-8", "replace") if raw is not None else ""
        f = session.diff.file(hunk.file)
        if f is not None and f.role == "test":
            imports = _import_lines(source)
        elif (mod := module_name(hunk.file)) is not None:
            symbols = [s for s in hunk_symbols(source, hunk) if not s.startswith("__")]
            imports = [f"from {mod} import {', '.join(symbols)}" if symbols else f"import {mod}"]
    stem = re.sub(r"\W+", "_", symbols[0]).strip("_").lower() if symbols else ""
    where = f"{hunk.file} {hunk.header}" if hunk is not None else "the change"
    body = [
        f'"""Probe for {where}: the test the change did not come with."""',
        "",
        *imports,
        "",
        "",
        f"def test_probe_{stem or 'change'}():",
        "    # Build the case the branch's tests avoid, call the code, assert what must hold.",
        '    assert False, "write the probe"',
        "",
    ]
    return "\n".join(body if imports else [body[0], "", *body[3:]])


def _import_lines(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    lines = source.splitlines()
    return [
        "\n".join(lines[n.lineno - 1 : (n.end_lineno or n.lineno)])
        for n in tree.body
        if isinstance(n, (ast.Import, ast.ImportFrom))
    ]


# --- drafts (local state, never the checkout) ----------------------------------------


def drafts_path(state_path: Path) -> Path:
    """Where the unsaved probe drafts of a branch live: beside its review state file."""
    return state_path.with_name(state_path.stem + ".probe-drafts.json")


def load_draft(state_path: Path, key: str) -> str | None:
    """The draft last edited for `key` (e.g. "file:index"), or None. Unreadable files count as empty."""
    try:
        data = json.loads(drafts_path(state_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def save_draft(state_path: Path, key: str, code: str) -> None:
    """Remember the draft for `key` (atomic write). Raises ReviewError when it cannot be written."""
    path = drafts_path(state_path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data = data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        data = {}
    data[key] = code
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=True)
        os.replace(tmp, path)
    except OSError as e:
        raise ReviewError(f"cannot save the probe draft to {path}: {e.strerror or e}") from e


# --- running ---------------------------------------------------------------------------


def probe_path(session: Any) -> str:
    """Where the probe goes (repo-relative): beside the branch's first changed test file,
    else in `tests/` when the head has one, else at the root; never over an existing file."""
    target = session.target
    tests = selected_test_files(session.diff)
    head_files = list_files(target.repo_dir, target.head)
    if tests:
        folder = str(PurePosixPath(tests[0]).parent)
    elif any(p.startswith("tests/") for p in head_files):
        folder = "tests"
    else:
        folder = "."
    taken = set(head_files) | set(list_files(target.repo_dir, target.base))
    n = 1
    while True:
        name = f"{PROBE_FILE}.py" if n == 1 else f"{PROBE_FILE}_{n}.py"
        rel = name if folder == "." else f"{folder}/{name}"
        if rel not in taken:
            return rel
        n += 1


def run_probe(
    session: Any,
    code: str,
    name: str = "probe_test.py",
    hunk: tuple[str, int] | None = None,
    cancel: threading.Event | None = None,
) -> ProbeReport:
    """Run the probe at the branch head and at the base in parallel (and with `hunk` reverted).

    Raises ReviewError when the probe does not parse (before anything
    runs), the test command is not pytest or cannot start, the hunk is
    unknown, or a scratch worktree cannot be prepared.
    """
    check_probe_syntax(code, name)
    command = session.test_command
    argv = split_command(command)
    if not is_pytest_command(argv):
        raise ReviewError(f"probes run with pytest; the test command {command!r} is not pytest (use --test-cmd)")
    target = session.target
    revert = None
    if hunk is not None:
        f = session.diff.file(hunk[0])
        if f is None:
            raise ReviewError(f"{hunk[0]} is not changed on this branch")
        if not 0 <= hunk[1] < len(f.hunks):
            raise ReviewError(f"{f.path} has no hunk {hunk[1]} (it has {len(f.hunks)})")
        revert = (f, f.hunks[hunk[1]])
    rel = probe_path(session)
    timeout = session.run.timeout or session.settings.timeout or PROBE_TIMEOUT
    env_allow = session.settings.env_allow
    places = [("branch", target.head), ("base", target.base)] + ([("reverted", target.head)] if revert else [])

    def one(place: str, rev: str) -> ProbeRun:
        with pool.acquire() as scratch:
            scratch.checkout(rev)
            key = None
            if place == "reverted" and revert is not None:
                key = (revert[0].path, revert[1].index)
                try:
                    scratch.revert_hunk(*revert)
                except RevertError as e:
                    return ProbeRun(place, rev, "error", (), "", f"the hunk could not be reverted: {e}", key)
            scratch.add_file(rel, code)
            res = run_tests(scratch.path, argv, [rel], timeout, env_allow=env_allow, cancel=cancel)
            return grade_run(place, rev, res, key, scratch_root=str(scratch.path))

    with WorktreePool(target.repo_dir, len(places)) as pool:
        with cf.ThreadPoolExecutor(max_workers=len(places), thread_name_prefix="probe") as ex:
            futures = [ex.submit(one, place, rev) for place, rev in places]
            runs = [fut.result() for fut in futures]
    return ProbeReport(name, rel, runs[0], runs[1], runs[2] if revert else None)


def grade_run(
    place: str, rev: str, res: RunResult, hunk: tuple[str, int] | None = None, scratch_root: str = ""
) -> ProbeRun:
    """Turn one pytest run of the probe into a ProbeRun with its status.

    Paths inside the scratch worktree are shown repo-relative (`scratch_root` is cut out).
    """

    def clean(text: str) -> str:
        return text.replace(scratch_root.rstrip("/") + "/", "") if scratch_root else text

    tests = tuple(ProbeTest(t.id, t.outcome, clean(t.message)) for t in res.tests if t.outcome != "skipped")

    def run(status: str, reason: str) -> ProbeRun:
        return ProbeRun(place, rev, status, tests, clean(res.output), clean(reason), hunk)

    if res.timed_out:
        return run("timeout", f"killed after {res.seconds:.1f}s")
    if res.cancelled:
        return run("error", "cancelled")
    errors = [t for t in res.tests if t.outcome == "error"]
    collection = [t for t in errors if t.collection]
    if collection:
        return run("error", collection[0].message or "the probe could not be imported")
    failed = [t for t in res.tests if t.outcome == "failed"]
    if failed:
        return run("failed", failed[0].message)
    if errors:
        return run("error", errors[0].message)
    if res.junit_error:
        return run("error", f"pytest gave no report: {res.junit_error}")
    if not tests:
        return run("error", "pytest ran no test: name a function test_… (skipped tests do not count)")
    if res.returncode != 0:
        return run("error", f"pytest exit code {res.returncode} with no failing test")
    return run("passed", "")
