"""`report-tampering`: code the branch adds or changes that can rewrite pytest's reports is an error."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.findings import compute_findings, exit_code
from reviewui.core.findings.report_tampering import report_tampering
from tests.core.findings.helpers import branch

BASE = {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a + b\n",
        "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n"}

WRAPPER = (
    "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n\n\n"
    "@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n    report = outcome.get_result()\n"
    "    if report.failed:\n        report.outcome = 'passed'\n"
)


def test_a_makereport_hookwrapper_added_to_a_conftest_is_an_error(tmp_path: Path) -> None:
    target, diff, _ = branch(tmp_path, BASE, {"tests/conftest.py": WRAPPER})
    found = report_tampering(target, diff)
    hook = [f for f in found if f.symbol == "pytest_runtest_makereport"]
    assert len(hook) == 1 and hook[0].severity == "error" and hook[0].file == "tests/conftest.py"
    assert hook[0].line == 10 and "hookwrapper on pytest_runtest_makereport" in hook[0].message
    assert any(f.symbol == "outcome" and f.line == 14 for f in found), [f.message for f in found]


def test_report_teststatus_in_a_new_plugin_and_excepthook_in_conftest(tmp_path: Path) -> None:
    plugin = "def pytest_report_teststatus(report, config):\n    return 'passed', '.', 'PASSED'\n"
    conftest = BASE["tests/conftest.py"] + "\nimport sys\nsys.excepthook = lambda *a: None\nsetattr(sys, 'excepthook', print)\n"
    target, diff, _ = branch(tmp_path, BASE, {"tests/plugin_x.py": plugin, "tests/conftest.py": conftest})
    found = report_tampering(target, diff)
    assert {(f.file, f.symbol) for f in found} == {("tests/plugin_x.py", "pytest_report_teststatus"),
                                                  ("tests/conftest.py", "excepthook")}
    assert sorted(f.line for f in found if f.symbol == "excepthook") == [9, 10]


def test_a_hook_the_base_already_had_unchanged_is_not_reported(tmp_path: Path) -> None:
    base = {**BASE, "tests/conftest.py": WRAPPER}
    target, diff, _ = branch(tmp_path, base, {"tests/conftest.py": WRAPPER + "\n\ndef helper():\n    return 1\n",
                                              "pkg/calc.py": "def add(a, b):\n    return b + a\n"})
    assert report_tampering(target, diff) == []


def test_a_changed_hook_is_reported_and_the_gate_fails(tmp_path: Path) -> None:
    base = {**BASE, "tests/conftest.py": "def pytest_runtest_logreport(report):\n    pass\n"}
    target, diff, settings = branch(tmp_path, base, {
        "tests/conftest.py": "def pytest_runtest_logreport(report):\n    report.longrepr = None\n"})
    gate = [f for f in compute_findings(target, diff, settings) if f.kind == "report-tampering"]
    assert {(f.symbol, f.severity) for f in gate} == {("pytest_runtest_logreport", "error"), ("longrepr", "error")}
    assert exit_code(gate) == 1


def test_unparseable_binary_and_deleted_files_are_skipped(tmp_path: Path) -> None:
    base = {**BASE, "tests/old_plugin.py": "def pytest_runtest_makereport(item, call):\n    pass\n"}
    target, diff, _ = branch(tmp_path, base, {"tests/old_plugin.py": None, "tests/broken.py": "def (:\n",
                                              "tests/blob.py": b"\x00\xff" * 50})
    assert report_tampering(target, diff) == []
