"""Bite-checks through the warm runner give the verdicts cold runs give; `warm-runner = false` turns it off."""

from __future__ import annotations

from pathlib import Path

import pytest

import reviewui.core.bite.runctx as bite
from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from tests.core.bite.helpers import feature_repo, load, use_venv_python

pytestmark = pytest.mark.slow


def test_warm_and_cold_sweeps_agree(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = feature_repo(tmp_path / "r")
    t, d = load(rb.root)
    real = bite.run_tests
    runs: list = []

    def recording(*args, **kwargs):
        result = real(*args, **kwargs)
        runs.append(result)
        return result

    monkeypatch.setattr(bite, "run_tests", recording)
    reports = {}
    used = {}
    for mode, settings in (("warm", Settings()), ("cold", Settings(warm_runner=False))):
        runs.clear()
        reports[mode] = run_bite(t, d, settings, jobs=2)
        used[mode] = [r.warm for r in runs]

    def summary(report):
        return [(r.file, r.index, r.verdict, r.failing_tests) for r in report.results]

    assert summary(reports["warm"]) == summary(reports["cold"])
    assert {r.verdict for r in reports["warm"].results} >= {"bites", "toothless", "broken"}
    # Warm: every run is a fork, the measured baseline included (its fork starts coverage itself),
    # and its map guides the sweep as a cold `coverage run` baseline's does.
    assert all(used["warm"]) and len(used["warm"]) >= 3
    assert reports["warm"].baseline.coverage_guided and reports["cold"].baseline.coverage_guided
    assert not any(used["cold"])


@pytest.mark.parametrize("first", [0, 1])
def test_the_baseline_runs_where_a_server_is_ready_first(tmp_path: Path, monkeypatch, first: int) -> None:
    # The baseline is the longer of the two runs before the reverts (the side checks go in the
    # other slot): it takes the slot whose warm server finished importing first.
    from reviewui.core.run.warm_runner import WarmPytest

    use_venv_python(monkeypatch)
    rb = feature_repo(tmp_path / "r")
    t, d = load(rb.root)
    real_first = WarmPytest.first_ready
    asked: list[int | None] = []

    def first_ready(self, cwds, timeout=60.0):
        asked.append(real_first(self, cwds, timeout))  # both really up: the order is the test's to pick
        real_first(self, cwds[first:first + 1], timeout)
        return first

    monkeypatch.setattr(WarmPytest, "first_ready", first_ready)
    import time

    import reviewui.core.bite.prepare as prepare

    real_side = prepare._in_slot

    def late_side(*args):
        time.sleep(1.5)  # the baseline (and the reverts after it) start first: the check keeps its slot
        return real_side(*args)

    monkeypatch.setattr(prepare, "_in_slot", late_side)
    real = bite.run_tests
    runs: list[tuple[str, bool]] = []
    instrument_runs: list[str] = []

    def recording(cwd, *args, **kwargs):
        runs.append((str(cwd).split("/slots/")[1].split("/")[0], bool(kwargs.get("coverage"))))
        if any("test_reviewui_instrument" in str(p) for p in args[1]):
            instrument_runs.append(runs[-1][0])
        return real(cwd, *args, **kwargs)

    monkeypatch.setattr(bite, "run_tests", recording)
    report = run_bite(t, d, Settings(), jobs=2)
    assert asked and asked[0] is not None  # the real servers were asked, and one was ready
    assert report.baseline.status == "green" and report.baseline.coverage_guided
    slots = sorted({slot for slot, _ in runs})
    assert len(slots) == 2
    assert [slot for slot, measured in runs if measured] == [slots[first]]
    side = instrument_runs  # told apart by its test: the reverts may start before it ends
    assert side and set(side) == {slots[1 - first]}  # the instrument check went to the other slot
