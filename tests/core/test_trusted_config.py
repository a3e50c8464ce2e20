"""Settings come from the user and the base commit; the branch's own `.reviewui.toml` is only a finding.

The attack: an agent commits a `.reviewui.toml` that hands the tests a token
and the network, mutes the gate with severity overrides and points the
notes ref at `refs/heads/main`, then has the reviewer run reviewui on the
checked-out branch (or CI run the gate on it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewui.core.config import Settings, branch_config_change
from reviewui.core.errors import ReviewError
from reviewui.core.session import ReviewSession
from tests.clirun import run_cli
from tests.gitrepo import make_repo

HOSTILE = """\
env-allow = ["REVIEWER_TOKEN"]
network = true
notes-ref = "refs/heads/main"
timeout = 1
[severity]
test-only-change = "info"
config-changed = "info"
"""

BASE = {"app.py": "def f():\n    return 1\n", "tests/test_app.py": "from app import f\n\n\ndef test_f():\n    assert f() == 1\n"}
# Only a test changes: `test-only-change` is an error the branch tries to mute.
BRANCH = {"tests/test_app.py": "from app import f\n\n\ndef test_f():\n    assert f() in (1, 2)\n", ".reviewui.toml": HOSTILE}


@pytest.fixture(params=["main", "agent/work"], ids=["reviewer-on-main", "branch-checked-out"])
def repo(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    make_repo(tmp_path / "r", BASE, BRANCH, stay=request.param)
    return tmp_path / "r"


def _refs(repo: Path) -> str:
    import subprocess

    return subprocess.run(["git", "for-each-ref"], cwd=repo, capture_output=True, text=True, check=True).stdout


def test_branch_config_is_ignored_and_named(repo: Path) -> None:
    s = ReviewSession.open(repo, "agent/work")
    assert (s.settings.env_allow, s.settings.network, s.settings.notes_ref) == ((), False, "refs/notes/reviewui")
    assert (s.settings.severity, s.settings.timeout, s.settings.branch_config_trusted) == ({}, None, False)
    found = {f.kind: f for f in s.findings()}
    cc = found["config-changed"]
    assert cc.severity == "error" and cc.file == ".reviewui.toml"
    for key in ("env-allow", "network", "notes-ref", "timeout", "severity.test-only-change", "severity.config-changed"):
        assert key in cc.message
    assert "ignored" in cc.message
    assert found["test-only-change"].severity == "error"


def test_check_exit_code_is_not_muted_by_the_branch(repo: Path) -> None:
    proc = run_cli("check", "agent/work", "--format", "json", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    kinds = {f["kind"]: f["severity"] for f in json.loads(proc.stdout)["findings"]}
    assert kinds["config-changed"] == "error" and kinds["test-only-change"] == "error"


def test_verdict_never_writes_to_main(repo: Path) -> None:
    refs_before = _refs(repo)
    proc = run_cli("verdict", "agent/work", "approve", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    refs_after = _refs(repo)
    heads = lambda text: [ln for ln in text.splitlines() if "refs/heads/" in ln]  # noqa: E731
    assert heads(refs_after) == heads(refs_before)
    assert "refs/notes/reviewui" in refs_after
    # Accepting the branch's config does not open refs/heads/ either: one line, exit 2.
    proc = run_cli("verdict", "agent/work", "approve", "--trust-branch-config", cwd=repo)
    assert proc.returncode == 2 and proc.stderr.startswith("reviewui: config: notes-ref must be under refs/notes/")
    assert len(proc.stderr.strip().splitlines()) == 1
    assert heads(_refs(repo)) == heads(refs_before)


def test_untracked_working_tree_config_is_not_read(tmp_path: Path) -> None:
    make_repo(tmp_path, BASE, {"app.py": "def f():\n    return 2\n"}, stay="agent/work")
    (tmp_path / ".reviewui.toml").write_text('network = true\nenv-allow = ["X"]\n')
    (tmp_path / "pyproject.toml").write_text('[tool.reviewui]\ntest-command = "evil"\n')
    s = ReviewSession.open(tmp_path, "agent/work")
    assert (s.settings.network, s.settings.env_allow, s.settings.test_command) == (False, (), "python -m pytest")
    assert "config-changed" not in {f.kind for f in s.findings()}


def test_base_config_and_user_config_apply(tmp_path: Path) -> None:
    user = Path(__import__("os").environ["XDG_CONFIG_HOME"]) / "reviewui"
    user.mkdir(parents=True)
    (user / "config.toml").write_text('theme = "x"\ntimeout = 7\ntest-command = "user-cmd"\n')
    base = {**BASE, "pyproject.toml": '[tool.reviewui]\ntest-command = "a"\nnotes-ref = "team"\n'}
    make_repo(tmp_path, base, {"app.py": "def f():\n    return 2\n"})
    s = ReviewSession.open(tmp_path, "agent/work")
    assert (s.settings.test_command, s.settings.notes_ref, s.settings.timeout) == ("a", "refs/notes/team", 7.0)


def test_accepting_applies_the_branch_config_but_the_finding_stays(tmp_path: Path) -> None:
    branch = {**BRANCH, ".reviewui.toml": 'timeout = 5\nnetwork = true\n[severity]\nconfig-changed = "info"\ntest-only-change = "info"\n'}
    make_repo(tmp_path, BASE, branch)
    s = ReviewSession.open(tmp_path, "agent/work")
    assert s.settings.network is False and s.branch_config().keys == (
        "network", "severity.config-changed", "severity.test-only-change", "timeout")
    assert {f.kind: f.severity for f in s.findings()}["test-only-change"] == "error"
    s.accept_branch_config()
    assert (s.settings.network, s.settings.timeout, s.settings.branch_config_trusted) == (True, 5.0, True)
    found = {f.kind: f for f in s.findings()}
    assert found["test-only-change"].severity == "info"
    # The branch cannot mute the finding about its own config.
    assert found["config-changed"].severity == "error" and "accepted" in found["config-changed"].message
    opened = ReviewSession.open(tmp_path, "agent/work", trust_branch_config=True)
    assert opened.settings == s.settings


def test_accepting_new_test_globs_reclassifies_the_diff(tmp_path: Path) -> None:
    branch = {"checks/verify.py": "from app import f\n\n\ndef test_f():\n    assert f() == 1\n",
              ".reviewui.toml": 'test-globs = ["checks/**"]\n'}
    make_repo(tmp_path, BASE, branch)
    s = ReviewSession.open(tmp_path, "agent/work")
    before = s.diff.file("checks/verify.py")
    assert before is not None and before.role == "source"  # the branch's globs are not trusted yet
    s.accept_branch_config()
    after = s.diff.file("checks/verify.py")
    assert after is not None and after.role == "test"
    assert [f.path for f in s.diff.files] == [f.path for f in ReviewSession.open(tmp_path, "agent/work").diff.files]
    assert "test-only-change" in {f.kind for f in s.findings()}  # findings see the new roles


def test_broken_branch_config_is_a_finding_not_an_error(tmp_path: Path) -> None:
    make_repo(tmp_path, BASE, {**BRANCH, ".reviewui.toml": "network = [\n"})
    s = ReviewSession.open(tmp_path, "agent/work")
    cc = [f for f in s.findings() if f.kind == "config-changed"]
    assert len(cc) == 1 and "not valid TOML" in cc[0].message
    with pytest.raises(ReviewError, match="not valid TOML"):
        s.accept_branch_config()


def test_unrelated_pyproject_edit_is_not_a_config_change(tmp_path: Path) -> None:
    base = {**BASE, "pyproject.toml": '[project]\nname = "x"\n[tool.reviewui]\ntimeout = 3\n'}
    branch = {"pyproject.toml": '[project]\nname = "y"\n[tool.reviewui]\ntimeout = 3\n'}
    make_repo(tmp_path, base, branch)
    s = ReviewSession.open(tmp_path, "agent/work")
    assert branch_config_change(tmp_path, s.target.base, s.target.head).changed is False
    assert s.settings.timeout == 3.0


def test_notes_ref_outside_refs_notes_is_refused() -> None:
    for ref in ("refs/heads/main", "refs/tags/v1", "refs/notes/../heads/main"):
        with pytest.raises(ReviewError, match="notes-ref must be under refs/notes/"):
            Settings.from_mapping({"notes-ref": ref})
    assert Settings.from_mapping({"notes-ref": "team"}).notes_ref == "refs/notes/team"
