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

import concurrent.futures as cf
import os
import re
import threading
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from reviewui.core.bite.engine import checkable_hunks, selected_test_files
from reviewui.core.bite.origin import changed_modules, checkout_roots, import_roots, split_env_words
from reviewui.core.bite.runctx import RunContext
from reviewui.core.errors import ReviewError
from reviewui.core.git import list_files
from reviewui.core.revert import RevertError
from reviewui.core.probe.trusted import changed_test_config, use_base_config
from reviewui.core.run import sandbox, storage
from reviewui.core.run.runner import RunResult, is_pytest_command, split_command
from reviewui.core.run.tempdirs import private_tempdir, remove_tree
from reviewui.core.run.worktree import WorktreePool
from reviewui.core.safe_text import visible
from reviewui.core.probe.source import (  # noqa: F401 - re-exported for callers of probe
    check_probe_edited,
    check_probe_syntax,
    drafts_path,
    export_to_review,
    export_probe,
    hunk_symbols,
    load_draft,
    module_name,
    probe_name,
    probe_template,
    save_draft,
)

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
    """`branch`, `base`, `reverted` or `branch_own` (the branch with its own conftest and pytest settings)."""
    rev: str
    """The commit it ran at."""
    status: str
    """`passed`, `failed`, `error` (could not import/collect/run), `timeout`, or `broken` (the run's
    reports cannot be believed: its canary test did not fail, or it imported the project from elsewhere)."""
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
            data["hunk"] = {"file": self.hunk[0], "index": self.hunk[1], "number": self.hunk[1] + 1}
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
    sandbox: str = ""
    """How the probe ran: "bwrap", or "none" when the reviewer opted out of the sandbox."""
    branch_own: ProbeRun | None = None
    """The branch run with the branch's own conftest and pytest settings, when it changed them
    (`branch` and `reverted` run with the base's: trusted.py)."""
    trusted_config: tuple[str, ...] = ()
    """The conftest and pytest configuration files the branch changed (taken from the base)."""

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
            "sandbox": self.sandbox or None,
            "limits": (sandbox.limits_level() if self.sandbox == "bwrap" else "none") if self.sandbox else None,
            "disk": (storage.level() if self.sandbox == "bwrap" else "none") if self.sandbox else None,
            "branch_own_conftest": None if self.branch_own is None else self.branch_own.to_json(),
            "trusted_config": list(self.trusted_config),
        }

    def render_text(self) -> str:
        """A plain-text report: one block per place, then the plain-words summary.

        Control characters from test output are shown escaped (`\\x1b`), never sent to the terminal.
        """
        lines = [f"probe {self.probe} (placed at {self.path})"]
        if self.sandbox == "none":
            lines.append("  sandbox: NONE (unsandboxed: the reviewer opted in)")
        if self.trusted_config:
            lines.append(f"  the branch changes {', '.join(self.trusted_config)}: branch and reverted runs use the base's")
        for run in (self.branch, self.base, self.reverted, self.branch_own):
            if run is None:
                continue
            # hunk numbers for people count from 1, as --hunk FILE:N does
            where = run.place if run.hunk is None else f"{run.place} ({run.hunk[0]}:{run.hunk[1] + 1})"
            if run.place == "branch_own":
                where = "branch with the branch's own conftest"
            lines.append(f"  {where:<10} {run.rev[:7]}  {run.status.upper()}")
            for t in run.tests:
                lines.append(f"    {t.outcome:<6} {t.id}" + (f": {t.message}" if t.message else ""))
            if not run.tests and run.reason:
                lines.append(f"    {run.reason}")
        lines.append(self.summary())
        if self.reverted is not None:
            lines.append(compare_reverted(self.branch, self.reverted))
        if self.branch_own is not None:
            lines.append(compare_own(self.branch, self.branch_own))
        return visible("\n".join(lines), multiline=True)




_VERB = {"passed": "passes", "failed": "fails", "error": "errors", "timeout": "times out", "broken": "is broken"}


def compare(branch: ProbeRun, base: ProbeRun) -> str:
    """Say plainly what the two outcomes mean together."""
    b, a = branch.status, base.status
    head = f"{_VERB[b]} on branch, {_VERB[a]} on base" if a != b else f"{_VERB[b]} on both"
    if b == "broken":
        return f"{head}: nothing the branch run reports can be believed ({branch.reason})"
    if b == "error" and branch.reason.startswith(CANNOT_IMPORT):
        return f"{head}: {branch.reason}"
    if b == "error":
        return f"{head}: the probe does not run on the branch ({branch.reason or 'see output'}); fix the probe"
    if b == "timeout":
        return f"{head}: the probe hangs on the branch (killed after the time limit)"
    if a == "error":
        why = "the name does not exist there" if _is_import_error(base) else "the probe cannot run there"
        return f"{head}: {why} ({base.reason or 'see output'})"
    if a == "timeout":
        return f"{head}: the probe hangs on the base"
    if a == "broken":
        return f"{head}: nothing the base run reports can be believed ({base.reason})"
    return {
        ("failed", "passed"): f"{head}: the branch broke this",
        ("passed", "failed"): f"{head}: the branch fixed this",
        ("failed", "failed"): f"{head}: the branch did not fix this",
        ("passed", "passed"): f"{head}: no difference",
    }[(b, a)]


def outcome_words(outcomes: dict[str, str]) -> str:
    """A kept probe's recorded outcomes in plain words, e.g. "fails on branch, errors on base"."""
    b, a = outcomes.get("branch", ""), outcomes.get("base", "")
    if not b and not a:
        return "not run"
    if b == a:
        return f"{_VERB.get(b, b)} on both"
    parts = [f"{_VERB.get(x, x)} on {where}" for x, where in ((b, "branch"), (a, "base")) if x]
    return ", ".join(parts)


def compare_own(branch: ProbeRun, own: ProbeRun) -> str:
    """Say plainly what the branch's own conftest and pytest settings do to the probe's outcome."""
    head = f"{_VERB[own.status]} with the branch's own conftest"
    if own.status == "broken":
        return f"with the branch's own conftest the run is broken: {own.reason}"
    if own.status == branch.status:
        return f"{head} too: they do not change this probe's outcome"
    return f"{head} ({_VERB[branch.status]} with the base's): the branch's conftest changes what this probe reports"


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
    if r == "broken":
        return f"{head}: {reverted.reason}"
    if b == "passed":
        return f"{head}: the probe bites this hunk" if r == "failed" else f"{head}: the probe does not bite this hunk"
    if b == "failed":
        return f"{head}: this hunk is what makes it fail" if r == "passed" else f"{head} too: this hunk alone is not why"
    return f"{head} (the branch run was {b}, so this says little)"


def _is_import_error(run: ProbeRun) -> bool:
    text = run.reason + " " + " ".join(t.message for t in run.tests)
    return bool(re.search(r"ImportError|ModuleNotFoundError|cannot import name|NameError", text))


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
    user_env, argv = split_env_words(split_command(command))
    if not argv or not is_pytest_command(argv):
        raise ReviewError(f"probes run with pytest; the test command {command!r} is not pytest (use --test-cmd)")
    target = session.target
    revert = None
    if hunk is not None:
        f = session.diff.file(hunk[0])
        if f is None:
            raise ReviewError(f"{hunk[0]} is not changed on this branch")
        if not 0 <= hunk[1] < len(f.hunks):
            raise ReviewError(f"{f.path} has no hunk {hunk[1] + 1} (it has {len(f.hunks)})")
        revert = (f, f.hunks[hunk[1]])
    rel = probe_path(session)
    timeout = session.run.timeout or session.settings.timeout or PROBE_TIMEOUT
    trusted = changed_test_config(target.repo_dir, target.base, target.head)
    places = [("branch", target.head), ("base", target.base)] + ([("reverted", target.head)] if revert else []) \
        + ([("branch_own", target.head)] if trusted else [])
    work = private_tempdir("probe")  # named with our pid: a killed probe's is removed at the next start
    # Run as a bite run is (runctx.py): the scratch's import roots, the user's VAR=value words,
    # the origin plugin and its canary; never warm (a probe is three runs, not a sweep).
    modules = changed_modules([f.path for f, _ in checkable_hunks(session.diff) if f.status != "deleted"],
                              list_files(target.repo_dir, target.head))
    ctx = RunContext(argv, user_env, modules, session.settings, work, cancel, None, (),
                     checkout_roots(argv[0], target.repo_dir))

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
            if place in ("branch", "reverted") and trusted:
                use_base_config(scratch, target.repo_dir, target.base, trusted)
            scratch.add_file(rel, code)
            seen = ctx.run(scratch.path, [rel], timeout)
            roots = tuple(os.path.relpath(r, scratch.path) for r in import_roots(scratch.path, modules))
            return grade_run(place, rev, seen.run, key, scratch_root=str(scratch.path), broken=seen.foreign,
                             roots=roots)

    try:
        with WorktreePool(target.repo_dir, len(places)) as pool:
            with cf.ThreadPoolExecutor(max_workers=len(places), thread_name_prefix="probe") as ex:
                futures = [ex.submit(one, place, rev) for place, rev in places]
                runs = {place: fut.result() for (place, _), fut in zip(places, futures, strict=True)}
    finally:
        remove_tree(work)
    return ProbeReport(name, rel, runs["branch"], runs["base"], runs.get("reverted"), sandbox=sandbox.level(),
                       branch_own=runs.get("branch_own"), trusted_config=trusted)


CANNOT_IMPORT = "cannot import "
"""How the reason of a run that could not import a module starts (compare() says it as it is)."""
_MISSING = re.compile(r"No module named '([^']+)'")


def grade_run(
    place: str, rev: str, res: RunResult, hunk: tuple[str, int] | None = None, scratch_root: str = "",
    broken: str | None = None, roots: tuple[str, ...] = (),
) -> ProbeRun:
    """Turn one pytest run of the probe into a ProbeRun with its status.

    Paths inside the scratch worktree are shown repo-relative (`scratch_root` is cut out).
    `broken`: why the run's reports cannot be believed (runctx.Observation.foreign). `roots`:
    the import roots the run searched (repo-relative), named when a module is missing.
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
    if broken:
        return run("broken", broken)
    errors = [t for t in res.tests if t.outcome == "error"]
    collection = [t for t in errors if t.collection]
    missing = next((m for t in collection for m in _MISSING.finditer(t.message + "\n" + t.detail)), None)
    if missing is not None:
        searched = ", ".join(dict.fromkeys(roots)) or "."
        return run("error", f"{CANNOT_IMPORT}{missing.group(1)}: no module of that name under the import roots "
                            f"searched ({searched}) or in the test Python")
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
