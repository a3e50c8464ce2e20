"""The coverage rcfile includes any changed file, whatever its name (brackets, newline, unicode, `$`)."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.run import sandbox

import coverage
import pytest
from coverage.files import GlobMatcher

from reviewui.core.bite.coverage_map import CoverageSupport, prepare

NAMES = [
    "pkg/we]ird[.py",
    "pkg/new\nline.py",
    "pkg/ünï cödé.py",
    "pkg/$HOME.py",
    "pkg/star*q?.py",
    "pkg/back\\slash.py",
    "pkg/#hash;semi.py",
    "pkg/trailing .py",
    "pkg/bad\udcffbyte.py",  # a non-UTF-8 byte in the name (surrogateescape)
]


@pytest.mark.parametrize("name", NAMES, ids=range(len(NAMES)))
def test_rcfile_parses_and_includes_the_file(tmp_path: Path, name: str) -> None:
    scratch = tmp_path / "scra[tch] $X"
    others = ["pkg/plain.py", name]
    prepare(tmp_path / "work", scratch, others, CoverageSupport("7.10.0", "pytrace"))
    cov = coverage.Coverage(config_file=str(tmp_path / "work" / "rcfile"))  # raises on a broken config
    include = cov.config.run_include
    assert len(include) == 2, include
    matcher = GlobMatcher(include, "include")
    # Paths as the run sees them (the host's when unsandboxed): run/room.py.
    place = sandbox.room_for_run(scratch, tmp_path)
    assert matcher.match(place.inside(scratch / name))
    assert matcher.match(place.inside(scratch / "pkg/plain.py"))
    assert not matcher.match(place.inside(scratch / "pkg/other.py"))
    assert cov.config.data_file == place.inside(tmp_path / "work" / ".coverage")
