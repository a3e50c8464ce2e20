"""Classify the baseline run and say why it is not green, in pytest's own words.

A baseline that is red or broken means nothing can be learned from any
revert; the reviewer then needs the cause, not "exit code 1": the first
error lines pytest printed (`output_tail`), and for the causes every new
user meets a fix hint (pytest missing from the test Python, addopts naming a
plugin that is not installed, an import error).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TypedDict

from reviewui.core.bite.report import Baseline
from reviewui.core.run.runner import RunResult

TAIL_LINES = 12
"""Lines of output kept as the baseline's `output_tail`."""

_ERROR_LINE = re.compile(
    r"^(E\s+\S.*|ERROR:? .*|\w*Error: .*|ImportError while .*|.*No module named .*|"
    r".*unrecognized arguments: .*|INTERNALERROR> .*|error: .*)$"
)
_NO_MODULE = re.compile(r"No module named '?([\w.]+)'?")
_UNRECOGNIZED = re.compile(r"unrecognized arguments: (.*)")
_PLUGIN_FOR_OPTION = {"--cov": "pytest-cov", "-n": "pytest-xdist", "--dist": "pytest-xdist",
                      "--timeout": "pytest-timeout", "--benchmark": "pytest-benchmark",
                      "--reruns": "pytest-rerunfailures", "--mypy": "pytest-mypy", "--doctest-plus": "pytest-doctestplus",
                      "--asyncio-mode": "pytest-asyncio", "--hypothesis": "hypothesis", "--randomly": "pytest-randomly"}


def error_lines(output: str, limit: int = TAIL_LINES) -> str:
    """pytest's first error lines in `output` (else its last lines), at most `limit` of them."""
    lines = [ln.rstrip() for ln in output.splitlines() if ln.strip()]
    first = next((n for n, ln in enumerate(lines) if _ERROR_LINE.match(ln.strip())), None)
    if first is None:
        return "\n".join(lines[-limit:])
    return "\n".join(lines[first:first + limit])


def hint(output: str, command: str) -> str:
    """A fix hint for a known cause of a broken baseline, else ''."""
    if m := _UNRECOGNIZED.search(output):
        option = m.group(1).split()[0] if m.group(1).split() else ""
        plugin = next((p for o, p in _PLUGIN_FOR_OPTION.items() if option.startswith(o)), "")
        need = f"{plugin} (for {option})" if plugin else f"the plugin that provides {option}"
        return (f"the project's addopts need {need}, not installed in the test Python: install it, "
                f"or pass --test-cmd \"{command} -o addopts=\"")
    if m := _NO_MODULE.search(output):
        name = m.group(1)
        if name.split(".")[0] == "pytest":
            return ("pytest is not installed in the test Python: install it there, "
                    "or pass --test-cmd with a Python that has it")
        return (f"an import failed ({name}): install the project's dependencies in the test Python "
                "(generated or compiled modules are missing from a clean checkout until it is built)")
    if "ImportError while" in output or "ImportError:" in output:
        return "an import failed: install the project's dependencies in the test Python"
    return ""


class _Common(TypedDict):
    """The Baseline fields every outcome fills from the run."""

    seconds: float
    output: str
    tests: tuple[str, ...]
    output_tail: str


def quarantine(base: Baseline) -> Baseline:
    """A red baseline whose other tests are green, made green against those: the failing tests
    are quarantined (left out of every later run) by id with their first error line.

    A test red at the head says nothing about any hunk (it fails with or without it), and
    one such test (one reading installed metadata the tree does not have) must not keep the
    green ones from grading. Any other baseline, and one with nothing green, comes back as it is.
    """
    if base.status != "red" or not base.failing_tests:
        return base
    red = set(base.failing_tests)
    green = tuple(t for t in base.tests if t not in red)
    if not green:
        return base
    n = len(base.failing_tests)
    reason = (f"{n} test{'s' if n != 1 else ''} red at the head quarantined (left out; every hunk is "
              f"graded against the {len(green)} green), e.g. {base.failing_tests[0]}: "
              f"{base.messages.get(base.failing_tests[0], '')}")
    return replace(base, status="green", failing_tests=(), tests=green, reason=reason, output_tail="",
                   quarantined=base.failing_tests)


def collection_broken(run: RunResult) -> bool:
    """True when only collection errors stopped a pytest run (a run past them may find green tests)."""
    return any(t.collection for t in run.tests) and not run.killed and not run.limit and not run.junit_error


def quarantine_collection(run: RunResult) -> Baseline | None:
    """The baseline of the second run, made past collection errors: green against the tests that
    passed, with the modules that cannot be collected and the failing tests quarantined (a module
    by its path). None when nothing passed there, or the run did not end as pytest ends a run."""
    if run.killed or run.limit or run.junit_error or run.returncode not in (0, 1):
        return None
    bad = [t for t in run.tests if t.outcome in ("failed", "error")]
    green = tuple(t.id for t in run.tests if t.outcome not in ("failed", "error"))
    if not any(t.outcome == "passed" for t in run.tests) or not bad:
        return None
    first = bad[0]
    n = len(bad)
    reason = (f"{n} test{'s' if n != 1 else ''} or module{'s' if n != 1 else ''} red at the head quarantined "
              f"(left out; every hunk is graded against the {len(green)} green), e.g. {first.id}: {first.message}")
    return Baseline("green", (), {t.id: t.message for t in bad}, run.seconds, reason, run.output, green,
                    quarantined=tuple(t.id for t in bad))


def classify(run: RunResult, pytest_mode: bool, command: str) -> Baseline:
    """The Baseline of `run` with `reason` (and a hint) and `output_tail` filled when not green."""
    tail = error_lines(run.output)
    common: _Common = {"seconds": run.seconds, "output": run.output, "tests": tuple(t.id for t in run.tests),
              "output_tail": tail}

    def why(text: str) -> str:
        extra = hint(run.output, command)
        return f"{text}; {extra}" if extra else text

    if run.cancelled:
        return Baseline("broken", reason="cancelled", **common)
    if run.timed_out:
        return Baseline("timeout", reason=f"killed after {run.seconds:.1f}s (the time limit; raise it with --timeout)", **common)
    if run.limit:  # the sandbox's memory or disk limit stopped it
        return Baseline("broken", reason=run.limit, **common)
    first = tail.splitlines()[0].strip() if tail else ""
    if not pytest_mode:
        if run.returncode == 0:
            return Baseline("green", **common)
        return Baseline("red", reason=why(f"exit code {run.returncode}" + (f": {first}" if first else "")), **common)
    collection = [t for t in run.tests if t.collection]
    if run.returncode in (2, 3, 4, 5) or collection or run.junit_error:
        if collection:
            text = f"collection error in {collection[0].id}: {collection[0].message}"
        elif run.returncode == 5:
            text = "pytest collected no tests"
        else:
            text = f"pytest exit code {run.returncode}" + (f": {first}" if first else "")
        return Baseline("broken", reason=why(text), **common)
    failing = run.failing
    if failing:
        t = failing[0]
        return Baseline("red", tuple(t.id for t in failing), {t.id: t.message for t in failing},
                        reason=f"{len(failing)} selected test(s) fail at the branch head, e.g. {t.id}: {t.message}",
                        **common)
    if run.returncode != 0:
        return Baseline("broken", reason=why(f"exit code {run.returncode} but no failing test reported"), **common)
    return Baseline("green", **_Common(seconds=run.seconds, output=run.output, tests=common["tests"],
                                       output_tail=""))
