"""A warm server whose own PYTHONPATH names the run's plugin folder still loads the run's plugins.

Seen running reviewui inside a reviewui run (our own gate): the outer run's PYTHONPATH is the fixed
plugin folder every run uses. The inner warm server met that folder before it existed, Python cached
"no finder" for it, and every warm run of the inner sweep failed with `No module named
'reviewui_origin'` (a cold run, a fresh Python, had no such cache). The same with a reviewer's own
PYTHONPATH naming it.
"""

from __future__ import annotations

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from reviewui.core.run import room
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_pythonpath_naming_the_plugin_folder_leaves_the_runs_alone(tmp_path, monkeypatch, warm: bool) -> None:
    use_venv_python(monkeypatch)
    monkeypatch.setenv("PYTHONPATH", room.IO + "/run/plugin")
    rb = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a - b\n"},
                   {"calc.py": "def add(a, b):\n    return a + b\n",
                    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=warm), jobs=1)
    assert rep.baseline.status == "green", rep.baseline.reason
    assert [(r.verdict, r.failing_tests) for r in rep.results] == [("bites", ("test_calc.py::test_add",))]
