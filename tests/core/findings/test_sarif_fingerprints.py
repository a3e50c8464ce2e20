"""SARIF for code scanning: every result has a fingerprint that a rerun on a moved head reproduces, and the
run an automation id whose category stays."""

from __future__ import annotations

import json
from pathlib import Path

from tests.clirun import run_cli
from tests.gitrepo import RepoBuilder

HELPERS = "def used():\n    return 1\n\n\ndef helper(x):\n    return x + 1\n\n\ndef other(x):\n    return x + 1\n"


def _sarif(rb: RepoBuilder) -> dict:
    proc = run_cli("check", "agent/x", "--base", "main", "--format", "sarif", cwd=rb.root)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_fingerprints_are_equal_across_two_runs_on_a_moved_head(tmp_path: Path) -> None:
    rb = RepoBuilder(tmp_path / "r")
    rb.commit({"pkg/__init__.py": "", "pkg/mod.py": "def used():\n    return 1\n", "use.py": "import pkg.mod\n"},
              "base")
    rb.branch("agent/x")
    rb.commit({"pkg/mod.py": HELPERS}, "add helpers nobody calls")
    first = _sarif(rb)
    run = first["runs"][0]
    results = run["results"]
    assert results and all(set(r["partialFingerprints"]) == {"reviewuiFinding/v1"} for r in results)
    uncalled = [r for r in results if r["ruleId"] == "uncalled-function"]
    assert len(uncalled) == 2  # two helpers, two distinct findings: two distinct fingerprints
    assert len({r["partialFingerprints"]["reviewuiFinding/v1"] for r in results}) == len(results)
    head1 = rb.git("rev-parse", "agent/x")
    assert run["automationDetails"]["id"] == f"reviewui/check/{head1}"
    # main moves (lines above the helpers), the branch is rebased: every line number moves
    rb.checkout("main")
    rb.commit({"pkg/mod.py": '"""The module."""\n\n\n' + "def used():\n    return 1\n"}, "docstring")
    rb.checkout("agent/x")
    rb.git("rebase", "-q", "-X", "theirs", "main")
    rb.checkout("main")
    second = _sarif(rb)
    lines = {r["locations"][0]["physicalLocation"]["region"]["startLine"]
             for r in second["runs"][0]["results"] if r["ruleId"] == "uncalled-function"}
    before = {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in uncalled}
    assert lines and lines != before  # the findings did move ...
    prints = lambda log: sorted((r["ruleId"], r["partialFingerprints"]["reviewuiFinding/v1"])  # noqa: E731
                                for r in log["runs"][0]["results"])
    assert prints(second) == prints(first)  # ... and kept their fingerprints
    assert second["runs"][0]["automationDetails"]["id"].rsplit("/", 1)[0] == "reviewui/check"
    assert second["runs"][0]["automationDetails"]["id"] != run["automationDetails"]["id"]
