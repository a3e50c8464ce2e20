"""A bite won beside a reader of the file is run again without it.

A test that reads a changed source file as data is no evidence about its hunks
(source_readers.py sets its failures aside). But what it read can reach another
test: it keeps the file's hash in a module global, a conftest value, a file in
its temporary folder, and a test that never opens the file compares it with a
pin. That test fails in every revert of the file, a bite no code change earned.

Which state a test hands over cannot be seen; which tests read the file can. So
a revert (or guard) of a file some test reads, whose bites are all by other
tests, is run once more with those tests alone (every reader deselected, so
nothing read can be handed over), and once as a control: the same tests with
the file rewritten with its own code (inert_edit.null_bytes). A test stands as a bite only when it
fails under the edit and passes in the control. A test that fails without the
readers at the head too leans on them (its failure says nothing about the edit);
a rerun that ends any other way (a timeout, an error) leaves no bite either.
Both runs go through the sandboxed runner alone, as any item run alone does
(fallback.py). Files no test reads cost nothing: none of the 100 real-world
hunks (bench/realworld) has a reader.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping, Sequence, Union

from reviewui.core.bite.control import ControlResult
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.plan import ControlItem, GuardItem, Item, RevertItem
from reviewui.core.bite.report import HunkResult
from reviewui.core.bite.source_readers import FINDING
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk

Held = Union[HunkResult, tuple[GuardJob, GuardResult]]
"""A graded item as the sweep holds it: a hunk's revert, or a guard with its job."""

RunAlone = Callable[[Item], object]
"""Runs one item alone in a fresh scratch (fallback.run_alone): a HunkResult, or (job, GuardResult)."""


def without_readers(held: Sequence[Held], readers: Mapping[str, frozenset[str]],
                    targets: Sequence[tuple[FileDiff, Hunk]], run_alone: RunAlone,
                    control: Callable[[ControlItem], ControlResult]) -> list[Held]:
    """`held` with every bite won only by non-readers beside a reader of its file checked again
    (module docstring); `targets`: the sweep's hunks. Items with nothing to check come back as
    they are (the same objects)."""
    hunks = {h.key: (f, h) for f, h in targets}
    return [_checked(x, readers, hunks, run_alone, control) for x in held]


def _checked(x: Held, readers: Mapping[str, frozenset[str]], hunks: Mapping[tuple[str, int], tuple[FileDiff, Hunk]],
             run_alone: RunAlone, control: Callable[[ControlItem], ControlResult]) -> Held:
    res = x if isinstance(x, HunkResult) else x[1]
    mine = readers.get(res.file, frozenset()) | frozenset(res.run_readers)
    target = hunks.get(res.key)
    if res.verdict != "bites" or not mine or target is None:
        return x
    kept = tuple(t for t in res.failing_tests if t not in mine)
    if not kept:
        return x  # only readers failed: regrade (source_readers.py) makes it toothless
    f = target[0]
    if isinstance(x, HunkResult):
        item: Item = RevertItem(f, target[1], kept)
    else:
        item = GuardItem(replace(x[0], tests=kept))
    again = run_alone(item)
    rerun = again if isinstance(again, HunkResult) else again[1]  # type: ignore[index]
    null = control(ControlItem(f, kept))
    if rerun.verdict == "skipped" or not null.ran:  # the sweep was cancelled meanwhile
        graded = replace(res, verdict="skipped", failing_tests=(), messages={}, reason="cancelled")
        return graded if isinstance(x, HunkResult) else (x[0], graded)  # type: ignore[return-value]
    clean = not null.no_tests and all(t in kept for t in null.failing)  # else the control says nothing per test
    still = tuple(t for t in rerun.failing_tests if t in kept and t not in null.failing and t not in rerun.run_readers) \
        if rerun.verdict == "bites" and clean else ()
    if still:
        graded = replace(res, failing_tests=still, messages={t: m for t, m in res.messages.items() if t in still})
    else:
        graded = replace(res, verdict="toothless", failing_tests=(), messages={},
                         reason=_why(res.file, mine, kept, rerun.verdict, null))
    return graded if isinstance(x, HunkResult) else (x[0], graded)  # type: ignore[return-value]


def _why(file: str, mine: frozenset[str], kept: tuple[str, ...], verdict: str, null: ControlResult) -> str:
    readers = _names(sorted(mine))
    if null.no_tests:
        after = "run without them with nothing changed, no test was collected"
    elif null.failing:
        after = f"run without them, {_names(null.failing)} failed with nothing changed too"
    elif verdict in ("bites", "toothless"):  # (bites: none of the tests asked for)
        after = f"run without them, {_names(kept)} passed"
    else:
        after = f"run without them, {_names(kept)} came to {verdict}"
    return (f"the tests that failed ran beside {readers}, which read {file} as data; {after}: no bite ({FINDING})")


def _names(tests: tuple[str, ...] | list[str]) -> str:
    return ", ".join(tests[:3]) + (f" and {len(tests) - 3} more" if len(tests) > 3 else "")
