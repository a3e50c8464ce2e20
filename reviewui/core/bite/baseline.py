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
from typing import Collection, Mapping, Sequence, TypedDict

from reviewui.core.bite.report import QUARANTINE_WHY, Baseline
from reviewui.core.run.runner import RunResult

TAIL_LINES = 12
"""Lines of output kept as the baseline's `output_tail`."""

_ERROR_LINE = re.compile(
    r"^(E\s+\S.*|ERROR:? .*|\w*Error: .*|ImportError while .*|.*No module named .*|"
    r".*unrecognized arguments: .*|INTERNALERROR> .*|error: .*)$"
)
_NO_TESTS = re.compile(r"^(?:Ran 0 tests in |NO TESTS RAN)", re.MULTILINE)
"""unittest's words for a run that found no test."""
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
    if _NO_TESTS.search(output):
        return ("unittest's discovery found no test module from where it started: name the folder it "
                "starts in (--test-cmd \"python -m unittest discover -s DIR -t DIR\"), or the test modules")
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


def is_own(node_id: str, own: Collection[str]) -> bool:
    """True when `node_id` is one of the branch's own new or changed tests (`own`: function ids,
    `file::Class::test`), or the module one of them lives in (a collection error's id)."""
    if "::" not in node_id:
        return any(o.startswith(node_id + "::") for o in own)
    return node_id.split("[", 1)[0] in own


def quarantine(base: Baseline, own: Collection[str] = ()) -> Baseline:
    """A red baseline whose other tests are green, made green against those: the failing old tests
    are quarantined (left out of every later run) by id with their first error line; the branch's
    own failing tests (`own`, function ids) are left out too but kept apart (`own_red`): red is red.

    A test red at the head says nothing about any hunk (it fails with or without it), and
    one such test (one reading installed metadata the tree does not have) must not keep the
    green ones from grading. Any other baseline, and one with nothing green, comes back as it
    is, its own red tests named.
    """
    if base.status != "red" or not base.failing_tests:
        return base
    red = set(base.failing_tests)
    green = tuple(t for t in base.tests if t not in red)
    mine = tuple(t for t in base.failing_tests if is_own(t, own))
    if not green:
        return replace(base, own_red=mine)
    old = tuple(t for t in base.failing_tests if t not in mine)
    return replace(base, status="green", failing_tests=(), tests=green, output_tail="",
                   reason=_left_out_words(old, mine, len(green), base.messages),
                   quarantined=old, own_red=mine, why=dict.fromkeys(old, QUARANTINE_WHY))


def _left_out_words(old: Sequence[str], mine: Sequence[str], green: int, messages: Mapping[str, str]) -> str:
    """One line: which red tests later runs leave out (the branch's own first), and against what."""
    parts = []
    if mine:
        parts.append(f"{len(mine)} of the branch's own test{'s' if len(mine) != 1 else ''} red at the head "
                     f"(left out, never quarantined), e.g. {mine[0]}: {messages.get(mine[0], '')}")
    if old:
        parts.append(f"{len(old)} test{'s' if len(old) != 1 else ''} red at the head quarantined "
                     f"(left out), e.g. {old[0]}: {messages.get(old[0], '')}")
    return "; ".join(parts) + f"; every hunk is graded against the {green} green"


def collection_broken(run: RunResult) -> bool:
    """True when only collection errors stopped a pytest run (a run past them may find green tests)."""
    return any(t.collection for t in run.tests) and not run.killed and not run.limit and not run.junit_error


def quarantine_collection(run: RunResult, own: Collection[str] = ()) -> Baseline | None:
    """The baseline of the second run, made past collection errors: green against the tests that
    passed, with the modules that cannot be collected and the failing tests left out (a module
    by its path): the old ones quarantined, the branch's own (`own`) kept apart as `own_red`.
    None when nothing passed there, or the run did not end as pytest ends a run."""
    if run.killed or run.limit or run.junit_error or run.returncode not in (0, 1):
        return None
    bad = [t for t in run.tests if t.outcome in ("failed", "error")]
    green = tuple(t.id for t in run.tests if t.outcome not in ("failed", "error"))
    if not any(t.outcome == "passed" for t in run.tests) or not bad:
        return None
    messages = {t.id: t.message for t in bad}
    mine = tuple(t.id for t in bad if is_own(t.id, own))
    old = tuple(t.id for t in bad if t.id not in mine)
    return Baseline("green", (), messages, run.seconds, _left_out_words(old, mine, len(green), messages), run.output,
                    green, quarantined=old, own_red=mine, why=dict.fromkeys(old, QUARANTINE_WHY))


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
        if run.returncode in (0, 5) and _NO_TESTS.search(run.output):
            # unittest's discovery found nothing (exit 0 on Python 3.11): no verdict can come of it,
            # and the instrument check must not be asked to judge a command that runs nothing.
            return Baseline("broken", reason=why("the command runs no tests (Ran 0 tests)"), **common)
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
