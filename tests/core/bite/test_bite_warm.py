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
