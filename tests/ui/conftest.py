"""UI test fixtures: the awkward repo opened as a session."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.session import ReviewSession
from tests.awkward import awkward_repo


@pytest.fixture
def awkward_session(tmp_path: Path) -> ReviewSession:
    awkward_repo(tmp_path / "repo")
    return ReviewSession.open(tmp_path / "repo", "agent/work")
