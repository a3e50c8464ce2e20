"""Baselines say why; exit codes 0/1/3; coverage alongside pytest-cov and a map that cannot see."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from reviewui.core.bite.baseline import error_lines, hint
from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from tests.clirun import run_cli
from tests.core.bite.helpers import BASE, BRANCH, feature_repo, load, use_venv_python
from tests.gitrepo import make_repo

GUARD_BASE = {"pkg/__init__.py": "", "pkg/g.py": "def clamp(x):\n    return x\n"}
GUARD_BRANCH = {"pkg/g.py": "def clamp(x):\n    return max(x, 0)\n",
                "tests/test_g.py": "from pkg.g import clamp\n\n\ndef test_clamp():\n    assert clamp(-1) == 0\n"}


def _bite_json(root: Path, *extra: str) -> tuple[int, dict]:
    res = run_cli("bite", "agent/work", "--format", "json", *extra, cwd=root, timeout=300)
    assert res.stdout, res.stderr
    return res.returncode, json.loads(res.stdout)


def test_import_error_in_conftest_is_a_broken_baseline_with_its_cause(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "r", {**GUARD_BASE, "tests/conftest.py": "import nosuchdep_reviewui\n"}, GUARD_BRANCH)
    code, doc = _bite_json(rb.root)
    b = doc["baseline"]
    assert code == 3 and b["status"] == "broken"
    assert "nosuchdep_reviewui" in b["reason"] and "install the project's dependencies" in b["reason"]
    assert "No module named 'nosuchdep_reviewui'" in b["output_tail"]
    assert [h["verdict"] for h in doc["hunks"]] == ["skipped"]


def test_addopts_needing_a_missing_plugin_says_how_to_get_past_it(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    ini = {"pytest.ini": "[pytest]\naddopts = --reviewui-no-such-option\n"}
    rb = make_repo(tmp_path / "r", {**GUARD_BASE, **ini}, GUARD_BRANCH)
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings())
    assert rep.baseline.status == "broken" and rep.exit_code == 3
    assert "unrecognized arguments: --reviewui-no-such-option" in rep.baseline.output_tail
    assert '--test-cmd "python -m pytest -o addopts="' in rep.baseline.reason
    text = rep.render_text(t)
    assert "unrecognized arguments" in text and "-o addopts=" in text


def test_pytest_missing_from_the_test_python(tmp_path: Path) -> None:
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    rb = make_repo(tmp_path / "r", GUARD_BASE, GUARD_BRANCH)
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), test_cmd=f"{venv}/bin/python -m pytest")
    assert rep.baseline.status == "broken" and rep.exit_code == 3
    assert "pytest is not installed in the test Python" in rep.baseline.reason
    assert "No module named pytest" in rep.baseline.output_tail


def test_exit_codes_all_bite_some_toothless_red_untrusted(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    good = make_repo(tmp_path / "good", GUARD_BASE, GUARD_BRANCH)
    code, doc = _bite_json(good.root)
    assert code == 0 and [h["verdict"] for h in doc["hunks"]] == ["bites"]
    assert doc["hunks"][0]["failures"] == [{"test": "tests/test_g.py::test_clamp", "message": "assert -1 == 0"}]

    mixed = feature_repo(tmp_path / "mixed")
    code, _ = _bite_json(mixed.root)
    assert code == 1

    # Nothing green: a red test beside green ones would be quarantined (test_quarantine.py).
    red = make_repo(tmp_path / "red", GUARD_BASE,
                    {**GUARD_BRANCH, "tests/test_g.py": None, "tests/test_red.py": "def test_red():\n    assert 1 == 2\n"})
    code, doc = _bite_json(red.root)
    assert code == 3 and doc["baseline"]["status"] == "red"
    assert "tests/test_red.py::test_red" in doc["baseline"]["reason"]

    res = run_cli("bite", "agent/work", "--test-cmd", "true", cwd=good.root, timeout=300)
    assert res.returncode == 3 and "cannot be trusted" in res.stderr and "Traceback" not in res.stderr

    res = run_cli("bite", "agent/work", "--no-such-flag", cwd=good.root)
    assert res.returncode == 2


PYCOV = {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "--cov=pkg --cov-report="\n'}


def test_pytest_cov_in_addopts_keeps_the_coverage_map_right(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "r", {**BASE, **PYCOV}, BRANCH)
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=2)
    assert rep.baseline.status == "green", rep.baseline.reason
    assert rep.baseline.coverage_guided
    got = {r.file: r for r in rep.results}
    assert got["pkg/guard.py"].verdict == "bites"
    assert got["pkg/guard.py"].tests_run == ("tests/test_feature.py::test_clamp",)
    assert got["pkg/branchy.py"].verdict == "uncovered"
    assert got["pkg/log.py"].verdict == "toothless"


def test_a_coverage_map_that_saw_nothing_is_not_trusted(tmp_path: Path, monkeypatch) -> None:
    # The project's conftest switches tracing off: coverage records no line of the changed
    # modules although the tests import and run them. Calling hunks `uncovered` would be false.
    use_venv_python(monkeypatch)
    blind = {"tests/conftest.py": "import sys\nimport threading\nsys.settrace(None)\nthreading.settrace(None)\n"
             "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef _off():\n    sys.settrace(None)\n    yield\n"}
    rb = make_repo(tmp_path / "r", {**GUARD_BASE, **blind}, GUARD_BRANCH)
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=1)
    assert rep.baseline.status == "green"
    assert not rep.baseline.coverage_guided
    assert "coverage map not trusted (pkg.g was imported" in rep.selection
    assert [r.verdict for r in rep.results] == ["bites"]


def test_error_lines_and_hints() -> None:
    out = "collected 0 items\nImportError while loading conftest '/s/tests/conftest.py'.\nE   ModuleNotFoundError: No module named 'x'\n"
    assert error_lines(out).splitlines()[0].startswith("ImportError while loading conftest")
    assert error_lines("a\nb\n") == "a\nb"
    assert "pytest-cov (for --cov=pkg)" in hint("error: unrecognized arguments: --cov=pkg", "python -m pytest")
    assert hint("all good", "python -m pytest") == ""
