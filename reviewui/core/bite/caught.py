"""Old tests the controls caught: quarantined with why, never a refusal, and no grade rests on them.

The controls (control.py) run among the graded runs at random. A control that
fails on a test the branch added or changed, or on something that is not a
test at all (a timeout, a foreign module, an exit code with no failure), still
refuses the sweep (UntrustedCommand, exit 3, naming the tests): the branch's
own tests can tell a graded run from the baseline, so no bite they give can be
believed. A control that fails only on old tests (the base has their file,
the branch neither added nor changed them) says something about those tests,
not about the branch: they fail with nothing reverted, by the order they run
in or by state another test (or an earlier run) leaves. One such test must
not refuse a whole review (issue 39), so each is quarantined with why (run
alone at the head: it fails alone, or it passes and depends on test order)
and taken out of every graded item's failing tests: a revert's evidence never
rests on a test that also fails with nothing reverted. An item left with no
failing test is toothless, its reason naming them.

The controls are a sample: they run some of the graded runs' selections, not
all. Refusing on any failure makes the sample enough against a forgery (it
need only be caught once); quarantining does not, since a forgery that also
fails old tests in the runs no control mirrored would still "bite" there (a
changed conftest or source module can fail old tests the branch never
touched). So once the controls have caught old tests failing with nothing
reverted, each selection no control ran in which an item failed other old
tests gets one more control, run alone (`settle`'s follow-ups, a few at
most): what it catches is quarantined too, and a pass vouches for the
selection. No bite rests on an old test in a selection no control ran
still: those tests are taken out too, and an item left with no failing test
by them is `skipped` (not graded), not toothless. Taking tests away only
takes bites away, so a forged old test gains nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Collection, Iterable, Mapping, TypeVar

from reviewui.core.bite.control import ControlResult, refusal
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.instrument import UntrustedCommand
from reviewui.core.bite.report import CAUGHT_ALONE, CAUGHT_NULL, CAUGHT_ORDER, Baseline, HunkResult

ALONE_AT_MOST = 5
"""Caught old tests each run alone at the head to say why (the rest get CAUGHT_NULL)."""
NAMED = 3
"""Quarantined tests a regraded item's reason names (the rest are counted)."""


@dataclass(frozen=True)
class Caught:
    """What the failed controls of a sweep come to: a refusal, or old tests to quarantine (or neither)."""

    refused: UntrustedCommand | None = None
    old: tuple[str, ...] = ()
    """The old tests (node ids) the controls failed on, when nothing refuses."""


def sort_out(results: Iterable[ControlResult], baseline: Baseline, is_old: Callable[[str], bool]) -> Caught:
    """Refuse, or name the old tests to quarantine: the controls that failed only on old tests
    green in `baseline` (`is_old`) quarantine those; anything else they failed on refuses, as
    does a quarantine that would leave the baseline no green test."""
    results = list(results)
    failing = list(dict.fromkeys(t for r in results for t in r.failing))
    if not failing:
        return Caught()
    green = set(baseline.tests)
    old = tuple(t for t in failing if t in green and is_old(t))
    if len(old) < len(failing) or len(old) >= len(green):
        return Caught(refused=refusal(results, named=green))
    return Caught(old=old)


def quarantined(baseline: Baseline, why: Mapping[str, str]) -> Baseline:
    """`baseline` with the old tests of `why` quarantined (why each, said in its reason too)."""
    caught = [t for t in why if t not in baseline.quarantined]
    if not caught:
        return baseline
    said = (f"{len(caught)} old test{'s' if len(caught) != 1 else ''} quarantined: green in the baseline, red in "
            f"a null run among the graded ones, e.g. {caught[0]} ({why[caught[0]]})")
    return replace(baseline, tests=tuple(t for t in baseline.tests if t not in why),
                   quarantined=(*baseline.quarantined, *caught), why={**baseline.why, **{t: why[t] for t in caught}},
                   messages={**baseline.messages, **{t: baseline.messages.get(t, why[t]) for t in caught}},
                   reason="; ".join(x for x in (baseline.reason, said) if x))


Graded = TypeVar("Graded", HunkResult, GuardResult)


def strip(item: Graded, caught: Collection[str], doubted: Collection[str] = ()) -> Graded:
    """`item` without the quarantined tests `caught` (and the old tests `doubted`: no control ran
    its selection) among its failing tests: a bite left with none is toothless when only caught
    tests failed, its reason naming them, else `skipped`; any other verdict stands."""
    gone = [t for t in item.failing_tests if t in caught or t in doubted]
    if not gone:
        return item
    left = tuple(t for t in item.failing_tests if t not in gone)
    messages = {t: m for t, m in item.messages.items() if t not in gone}
    if item.verdict != "bites" or left:
        return replace(item, failing_tests=left, messages=messages)
    if any(t not in caught for t in gone):
        return replace(item, verdict="skipped", failing_tests=(), messages=messages,
                       reason=f"not graded: only old tests failed ({_named(gone)}) and no control ran its tests, "
                              "in a sweep whose controls caught old tests failing with nothing reverted")
    return replace(item, verdict="toothless", failing_tests=(), messages=messages,
                   reason=f"only quarantined tests failed ({_named(gone)}): they fail in a null run too, so they "
                          "say nothing about this code")


def _named(tests: list[str]) -> str:
    return ", ".join(tests[:NAMED]) + (f" and {len(tests) - NAMED} more" if len(tests) > NAMED else "")


Held = HunkResult | tuple[GuardJob, GuardResult]
"""A graded item of the execution, as Sweep.hold keeps it: a hunk's revert, or a guard's."""


def settle(held: list[Held], controls: list[ControlResult], baseline: Baseline, is_old: Callable[[str], bool],
           selection: Callable[[Held], tuple[str, ...] | None],
           fails_alone: Callable[[str], bool | None],
           follow_up: Callable[[tuple[str, ...]], ControlResult | None] | None = None,
           ) -> tuple[list[Held], dict[str, str]]:
    """The held items once every control is back, and the old tests the controls caught (node id ->
    why, `fails_alone` running the first few alone), stripped from them (strip; `selection`: the
    tests an item ran, to know whether a control ran them too). Raises the refusal (UntrustedCommand)
    when the controls failed on anything but old tests (sort_out).

    Once the controls caught old tests, an item failing other old tests in a selection no control
    ran gets one more control of that selection (`follow_up`, run alone, at most FOLLOW_UPS_AT_MOST;
    appended to `controls`): what it catches is quarantined too, a pass vouches for the selection.
    Without one, those tests are doubted and the item is `skipped` (strip)."""
    found = sort_out(controls, baseline, is_old)
    if found.refused is not None:
        raise found.refused
    if not found.old:
        return held, {}
    if follow_up is not None:
        more = _follow_ups(held, controls, found.old, is_old, selection, follow_up)
        if more:
            controls.extend(more)
            found = sort_out(controls, baseline, is_old)
            if found.refused is not None:
                raise found.refused
    why = why_caught(found.old, fails_alone)
    vouched = {c.tests for c in controls if c.ran and not c.no_tests}
    out: list[Held] = []
    for x in held:
        failing = x.failing_tests if isinstance(x, HunkResult) else x[1].failing_tests
        doubted = () if selection(x) in vouched else [t for t in failing if is_old(t)]
        if isinstance(x, HunkResult):
            out.append(strip(x, why, doubted))
        else:
            g = strip(x[1], why, doubted)
            out.append(x if g is x[1] else (x[0], g))
    return out, why


FOLLOW_UPS_AT_MOST = 8
"""Selections a sweep runs one more control for once its controls caught old tests (settle)."""


def _follow_ups(held: list[Held], controls: list[ControlResult], caught: Collection[str],
                is_old: Callable[[str], bool], selection: Callable[[Held], tuple[str, ...] | None],
                follow_up: Callable[[tuple[str, ...]], ControlResult | None]) -> list[ControlResult]:
    """One more control for each selection (the first FOLLOW_UPS_AT_MOST) no control ran in which an
    item failed old tests the controls have not caught."""
    vouched = {c.tests for c in controls if c.ran and not c.no_tests}
    wanted: dict[tuple[str, ...], None] = {}
    for x in held:
        failing = x.failing_tests if isinstance(x, HunkResult) else x[1].failing_tests
        tests = selection(x)
        if tests is not None and tests not in vouched and any(is_old(t) and t not in caught for t in failing):
            wanted.setdefault(tests)
    return [c for c in (follow_up(t) for t in list(wanted)[:FOLLOW_UPS_AT_MOST]) if c is not None]


def strip_hunk(r: HunkResult, caught: Collection[str]) -> HunkResult:
    """`r` and its guards stripped of the quarantined tests `caught` (strip)."""
    if not caught:
        return r
    return replace(strip(r, caught), guards=tuple(strip(g, caught) for g in r.guards))


def why_caught(tests: Iterable[str], fails_alone: Callable[[str], bool | None]) -> dict[str, str]:
    """Why each caught old test failed in a null run: run alone at the head (the first few,
    `fails_alone`; None: it was not run), it fails alone, or it passes alone and so depends
    on the order tests run in."""
    out: dict[str, str] = {}
    for n, t in enumerate(tests):
        alone = fails_alone(t) if n < ALONE_AT_MOST else None
        out[t] = CAUGHT_NULL if alone is None else CAUGHT_ALONE if alone else CAUGHT_ORDER
    return out
