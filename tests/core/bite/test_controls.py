"""The controls among the graded runs: counted in every report, and a selection no control can vouch for.

A control runs a graded run's own selection (issue 39). Where that selection
collects no test (pytest's exit 5: here a conftest that deselects everything
a run names by node id), no control is possible for it: its hunks are not
graded (`skipped`, said), the others are, and the sweep learns nothing (exit
3) only when nothing at all is left to grade. Never a refusal for it.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.report import BiteReport
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

DESELECT_NODE_IDS = '''def pytest_collection_modifyitems(config, items):
    if any("::" in str(a) for a in config.args):
        items[:] = []  # a run that names node ids collects nothing
'''


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BiteReport, BiteReport, object]]:
    base = {"pkg/__init__.py": "", "pkg/a.py": "def a(x):\n    return x\n", "pkg/b.py": "LIMIT = 3\n"}
    branch = {"tests/__init__.py": "", "tests/conftest.py": DESELECT_NODE_IDS,
              "pkg/a.py": "def a(x):\n    if x < 0:\n        return 0\n    return x\n",
              "pkg/b.py": "LIMIT = 4\n",  # run at import: graded by its test file, not by node ids
              "tests/test_a.py": "from pkg.a import a\n\n\ndef test_a():\n    assert a(-1) == 0\n",
              "tests/test_b.py": "from pkg.b import LIMIT\n\n\ndef test_b():\n    assert LIMIT == 4\n"}
    with pytest.MonkeyPatch.context() as monkeypatch:
        use_venv_python(monkeypatch)
        t, d = load(make_repo(tmp_path_factory.mktemp("ctl") / "repo", base, branch).root)
        whole = run_bite(t, d, Settings(), jobs=1, timeout=30)
        only_a = run_bite(t, d, Settings(), jobs=1, timeout=30, hunks=[("pkg/a.py", 0)])
        yield whole, only_a, t


def test_a_selection_no_control_can_vouch_for_is_not_graded_and_said(swept) -> None:
    whole, _, _ = swept
    verdicts = {r.file: (r.verdict, r.reason) for r in whole.results}
    assert verdicts["pkg/b.py"][0] == "bites"
    assert verdicts["pkg/a.py"] == ("skipped", "no control is possible for its tests: their null-revert run "
                                               "collected no test")
    assert "no control is possible for 1 test selection(s)" in whole.selection
    assert whole.exit_code == 1  # something was graded: not "nothing learned"


def test_nothing_learned_only_when_no_selection_is_left(swept) -> None:
    _, only_a, _ = swept
    assert [r.verdict for r in only_a.results] == ["skipped"]
    assert only_a.exit_code == 3


def test_every_report_says_how_many_controls_ran(swept) -> None:
    whole, _, t = swept
    assert whole.controls >= 2
    assert whole.to_json(t)["controls"] == whole.controls
    assert f"controls: {whole.controls} null run(s)" in whole.render_text(t)
    assert whole.to_stryker(t)["config"]["reviewui"]["controls"] == whole.controls
