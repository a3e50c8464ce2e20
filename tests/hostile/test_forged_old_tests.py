"""A branch that forges its bites through old tests gains nothing from their quarantine (issues 37, 39).

Old tests the controls catch are quarantined, not refused (one order-dependent
old test must not refuse a whole review). So a hostile branch may try to
forge bites through old tests instead of its own: it leaves the old test
functions untouched and adds a conftest fixture that fails them in every run
but the measured baseline (it looks for the baseline's coverage files, as
test_forged_outcomes' PLUGIN_FORGERY does). The wrong code would "bite" in
every hunk those tests run. Instead the controls catch the old tests, they
are quarantined with why, and no hunk's evidence rests on them: the hunks
only they would have bitten are toothless, the one the branch's honest new
test bites still bites. Through the CLI, so the branch's own tests are those
the fixtures analysis finds, as in every review.
"""

from __future__ import annotations

import json
from typing import Iterator

import pytest

from reviewui.core.bite.report import CAUGHT_WHY
from tests.clirun import run_cli
from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

N = 3
OLD_TESTS = "".join(f"from pkg.m{i} import f{i}\n" for i in range(N)) + "".join(
    f"\n\ndef test_f{i}():\n    f{i}(2)\n" for i in range(N))
"""Old tests that assert nothing about the code they run (unchanged by the branch)."""
FORGING_CONFTEST = '''import os

import pytest


@pytest.fixture(autouse=True)
def _forge(request):
    old = "test_old.py" in request.node.nodeid and request.node.name in ("test_f0", "test_f1", "test_f2")
    if old and not os.path.exists("/reviewui/io/run/cov/rcfile"):
        pytest.fail("a later run")  # every run but the measured baseline
    yield
'''
NEW_TEST = "from pkg.m0 import f0\n\n\ndef test_f0_is_42():\n    assert f0(2) == 42\n"


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, dict[str, object], str]]:
    mp = pytest.MonkeyPatch()
    use_venv_python(mp)
    for var in ("XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        mp.setenv(var, str(tmp_path_factory.mktemp(var.lower())))
    # The branch's code is wrong in every hunk but the first (42 for all; the base returns x).
    base = {"pkg/__init__.py": "", "tests/__init__.py": "", "tests/conftest.py": "", "tests/test_old.py": OLD_TESTS,
            **{f"pkg/m{i}.py": f"def f{i}(x):\n    return x\n" for i in range(N)}}
    branch = {"tests/conftest.py": FORGING_CONFTEST, "tests/test_new.py": NEW_TEST,
              **{f"pkg/m{i}.py": f"def f{i}(x):\n    y = x\n    return 42\n" for i in range(N)}}
    root = make_repo(tmp_path_factory.mktemp("forge") / "repo", base, branch).root
    proc = run_cli("bite", "agent/work", "--format", "json", "--fresh", cwd=root, timeout=600)
    yield proc.returncode, json.loads(proc.stdout or "{}"), proc.stderr
    mp.undo()


def test_the_forged_old_tests_are_quarantined_with_why(swept) -> None:
    code, doc, err = swept
    assert "refused" not in doc, err
    baseline = doc["baseline"]
    assert isinstance(baseline, dict)
    why = {q["test"]: q["why"] for q in baseline["quarantined"]}
    assert set(why) == {f"tests/test_old.py::test_f{i}" for i in range(N)}, err
    assert all(w in CAUGHT_WHY for w in why.values()), why


def test_no_bite_rests_on_a_quarantined_old_test(swept) -> None:
    code, doc, err = swept
    hunks = doc["hunks"]
    assert isinstance(hunks, list)
    got = {h["file"]: (h["verdict"], h["failing_tests"]) for h in hunks}
    assert got == {"pkg/m0.py": ("bites", ["tests/test_new.py::test_f0_is_42"]),
                   **{f"pkg/m{i}.py": ("toothless", []) for i in range(1, N)}}, err
    assert all("only quarantined tests failed" in h["reason"] for h in hunks if h["verdict"] == "toothless")
    assert code == 1  # some hunk is toothless: the forgery bought nothing
