"""compute_findings end to end, the gate's exit code, and its JSON, text and SARIF outputs."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from reviewui.core.config import Settings
from reviewui.core.diff import load_diff
from reviewui.core.errors import ReviewError
from reviewui.core.findings import KINDS, Finding, check_json, compute_findings, exit_code, render, render_text, to_sarif
from reviewui.core.findings import run as run_module
from reviewui.core.findings.model import finding
from reviewui.core.target import resolve_target
from reviewui.core.transcript.model import CLAIMS_DONE, Transcript, Turn
from tests.awkward import awkward_repo
from tests.core.findings.helpers import branch

BENCH = "def run(result):\n    return {\n        'steps': result.steps,\n    }\n"
TASK = "in scripts/bench.py add the field stopped to the dict that run returns, taking its value from result.stopped"
HOSTILE = "[bold red]x[/bold red] \x1b[31mred\x1b[0m"


def test_false_finish_story(tmp_path: Path) -> None:
    """A run that claims done and changes nothing: no-change, the missing identifier, the false claim."""
    target, diff, settings = branch(tmp_path / "r", {"scripts/bench.py": BENCH}, {})
    tr = Transcript("messages", (Turn(1, "user", TASK), Turn(2, "assistant", "The line is already correct.", flags=(CLAIMS_DONE,))), 0, "t")
    found = compute_findings(target, diff, settings, transcript=tr)
    # issue 28: "already correct" with no test run in the transcript is also a claim nobody checked
    assert [f.kind for f in found] == ["claimed-done-without-change", "no-change", "task-identifier-missing",
                                       "claim-without-run"]
    assert exit_code(found) == 1


def test_sorted_by_severity_then_file_and_line_and_overrides_apply(tmp_path: Path) -> None:
    base = {"pkg/__init__.py": "", "pkg/a.py": "def a():\n    return 1\n", "tests/test_a.py": "from pkg.a import a\n\n\ndef test_a():\n    assert a() == 1\n"}
    change = {
        "pkg/a.py": "def a():\n    return 2\n\n\ndef unused():\n    return 3\n",
        "tests/test_a.py": "from pkg.a import a\n\n\ndef test_a():\n    assert a() == 2\n",
    }
    target, diff, settings = branch(tmp_path / "r", base, change)
    found = compute_findings(target, diff, settings)
    assert [(f.kind, f.severity, f.file) for f in found] == [
        ("tests-not-additive", "error", "tests/test_a.py"),
        ("uncalled-function", "warning", "pkg/a.py"),
    ]
    relaxed = compute_findings(target, diff, replace(settings, severity={"tests-not-additive": "warning", "uncalled-function": "error"}))
    assert [(f.kind, f.severity) for f in relaxed] == [("uncalled-function", "error"), ("tests-not-additive", "warning")]
    assert exit_code(found) == 1 and exit_code([f for f in found if f.severity != "error"]) == 0


def test_override_never_promotes_an_info_note() -> None:
    note = finding("undeclared-write", "declared but unchanged", severity="info")
    warn = finding("undeclared-write", "undeclared")
    out = run_module.apply_severity([note, warn], {"undeclared-write": "error"})
    assert [f.severity for f in out] == ["info", "error"]


def test_a_crashing_rule_yields_no_finding_and_is_logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    target, diff, settings = branch(tmp_path / "r", {"a.py": "x = 1\n"}, {})

    def boom(*a: object, **k: object) -> list[Finding]:
        raise RuntimeError("weird input")

    monkeypatch.setattr(run_module, "task_identifier_missing", boom)
    with caplog.at_level(logging.WARNING):
        found = compute_findings(target, diff, settings, task="set `max_batch_size`")
    assert [f.kind for f in found] == ["no-change"]
    assert "task-identifier-missing failed" in caplog.text

    def user_error(*a: object, **k: object) -> list[Finding]:
        raise ReviewError("git cat-file: bad object")

    monkeypatch.setattr(run_module, "no_change", user_error)
    with pytest.raises(ReviewError):
        compute_findings(target, diff, settings)


def test_awkward_repo_runs_every_rule_without_errors(tmp_path: Path) -> None:
    awkward_repo(tmp_path / "awk")
    target = resolve_target(tmp_path / "awk", "agent/work")
    diff = load_diff(str(target.repo_dir), target.base, target.head)
    found = compute_findings(target, diff, Settings(), task=HOSTILE)
    assert exit_code(found) == 0
    doc = json.loads(json.dumps(check_json(target, diff, found)))
    paths = {f["path"]: f for f in doc["files"]}
    assert paths["pkg/new_name.py"]["old_path"] == "pkg/old_name.py" and paths["pkg/new_name.py"]["status"] == "renamed"
    assert paths["data/logo.bin"]["binary"] is True and paths["tests/test_calc.py"]["role"] == "test"


# --- outputs ---------------------------------------------------------------------


class T:
    repo_dir = Path("/r/my repo")
    branch = "agent/work"
    base = "a" * 40
    head = "b" * 40


SAMPLE = [
    finding("tests-not-additive", "existing check changed in test_x: assert a == 1 → assert a == 2", file="tests/t.py", line=5, symbol="test_x", evidence="- 5: assert a == 1\n+ 5: assert a == 2"),
    finding("uncalled-function", f"f is never called {HOSTILE}", file="dir with space/naïve.py", line=3, symbol="f", evidence=HOSTILE),
    finding("broken-hunk", "could not grade", file="src/x.py"),
    finding("no-change", "nothing changed"),
]


def test_check_json_has_exactly_the_contract_keys(tmp_path: Path) -> None:
    target, diff, settings = branch(tmp_path / "r", {"a.py": "x = 1\n", "tests/t.py": "def test_x():\n    assert 1\n"}, {"a.py": "x = 2\ny = 3\n"})
    doc = check_json(target, diff, SAMPLE)
    # issue 42: `authors` added (the git-ai authorship notes' hunk records; empty without notes)
    assert set(doc) == {"repo", "branch", "base", "head", "files", "findings", "summary", "authors"}
    assert (doc["branch"], doc["base"], doc["head"]) == ("agent/work", target.base, target.head)
    assert doc["files"] == [{"path": "a.py", "old_path": None, "status": "modified", "role": "source", "binary": False, "added": 2, "removed": 1}]
    assert doc["findings"][0] == {
        "kind": "tests-not-additive", "severity": "error", "file": "tests/t.py", "line": 5, "symbol": "test_x",
        "message": "existing check changed in test_x: assert a == 1 → assert a == 2", "evidence": "- 5: assert a == 1\n+ 5: assert a == 2",
    }
    assert doc["summary"] == {"error": 2, "warning": 1, "info": 1}
    assert json.loads(render("json", target, diff, SAMPLE, "0.1.0")) == doc


def test_exit_code() -> None:
    assert exit_code([]) == 0
    assert exit_code([SAMPLE[1], SAMPLE[2]]) == 0
    assert exit_code(SAMPLE) == 1
    assert exit_code([replace(SAMPLE[1], severity="error")]) == 1


def test_text_escapes_control_characters_and_summarizes() -> None:
    text = render_text(SAMPLE)
    assert "\x1b" not in text and "\\x1b[31mred" in text and "[bold red]x[/bold red]" in text
    lines = text.splitlines()
    assert lines[0] == "error: tests/t.py:5: tests-not-additive [test_x]: existing check changed in test_x: assert a == 1 → assert a == 2"
    assert lines[1] == "    - 5: assert a == 1"
    assert lines[-1] == "2 error(s), 1 warning(s), 1 info"
    assert render_text([]).strip() == "0 error(s), 0 warning(s), 0 info — no findings"
    with pytest.raises(ValueError):
        render("xml", T(), None, SAMPLE, "1")


def test_sarif_has_every_required_field() -> None:
    log = json.loads(render("sarif", T(), None, SAMPLE, "0.1.0"))
    assert log["version"] == "2.1.0" and log["$schema"].startswith("https://") and log["$schema"].endswith("sarif-schema-2.1.0.json")
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "reviewui" and driver["version"] == "0.1.0" and driver["informationUri"].startswith("https://")
    ids = [r["id"] for r in driver["rules"]]
    assert ids == list(KINDS)
    for r in driver["rules"]:
        assert r["shortDescription"]["text"] and r["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert {r["id"]: r["defaultConfiguration"]["level"] for r in driver["rules"]}["broken-hunk"] == "note"
    results = run["results"]
    assert len(results) == len(SAMPLE)
    for res, f in zip(results, SAMPLE, strict=True):
        assert res["ruleId"] == f.kind and ids[res["ruleIndex"]] == f.kind
        assert res["level"] == {"error": "error", "warning": "warning", "info": "note"}[f.severity]
        assert res["message"]["text"] == f.message
        if f.file is None:
            # issue 16: a branch-level finding gets a location (logical; no diff given here, so no file)
            [where] = res["locations"]
            assert where["logicalLocations"][0]["fullyQualifiedName"].startswith("branch:")
            assert "physicalLocation" not in where
            continue
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"]
        if f.line:
            assert loc["region"]["startLine"] == f.line >= 1
        else:
            assert "region" not in loc
    assert results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "dir%20with%20space/na%C3%AFve.py"
    assert results[0]["properties"]["evidence"].startswith("- 5:")


def test_kinds_catalogue() -> None:
    assert {k: v.severity for k, v in KINDS.items()} == {
        "tests-not-additive": "error", "test-only-change": "error", "no-change": "error", "task-identifier-missing": "error",
        "uncalled-function": "warning", "test-mentions-only": "warning", "duplicate-function": "warning",
        "undeclared-write": "warning", "claimed-done-without-change": "error", "toothless-hunk": "warning",
        "broken-hunk": "info", "baseline-red": "error", "toothless-guard": "warning",
        "toothless-guard-with-witness": "warning", "toothless-guard-no-witness": "info",
        "config-changed": "error", "bidi-control": "error", "report-tampering": "error",
        "test-red-at-head": "error", "test-passes-on-base": "warning", "test-only-notices-name": "info",
        "claim-contradicted": "error", "claim-unverifiable": "info", "claim-confirmed": "info",
        "claim-without-run": "warning",
        "not-analysed": "warning",
        "symlink-outside-tree": "warning",
        "test-reads-changed-source": "warning",
    }
    assert all(v.description and "\n" not in v.description for v in KINDS.values())
    f = finding("no-change", "two\nlines   here")
    assert f.message == "two lines here" and f.to_json()["file"] is None
    assert to_sarif(T(), [], "1")["runs"][0]["results"] == []


def test_sarif_branch_level_finding_sits_on_the_first_changed_file() -> None:
    class D:
        files = [type("F", (), {"path": "pkg/na ive.py"})(), type("F", (), {"path": "b.py"})()]

    log = json.loads(render("sarif", T(), D(), [finding("test-only-change", "only tests changed")], "1"))
    [where] = log["runs"][0]["results"][0]["locations"]
    assert where["physicalLocation"] == {"artifactLocation": {"uri": "pkg/na%20ive.py"}, "region": {"startLine": 1}}


def test_core_findings_does_not_import_ui_libraries() -> None:
    import subprocess
    import sys

    code = "import sys, reviewui.core.findings; print(any(m.split('.')[0] in ('textual', 'rich') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[3])
    assert out.stdout.strip() == "False"


def test_the_findings_package_loads_its_names_on_demand() -> None:
    import reviewui.core.findings as findings

    assert findings.compute_findings.__module__ == "reviewui.core.findings.run"
    assert not hasattr(findings, "no_such_name")
