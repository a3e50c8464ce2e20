"""`reviewui transcript FILE --repo R --branch B`: the headless twin of linking turns to the branch diff."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.core.transcript.helpers import FIXTURES, REPO
from tests.gitrepo import make_repo

RESOLVER = FIXTURES / "openhands" / "resolver_output.jsonl"


def _license() -> str:
    # The LICENSE the agent wrote in the first run, from that run's own patch.
    patch = json.loads(RESOLVER.read_text().splitlines()[0])["git_patch"].replace("\r\n", "\n")
    return "\n".join(ln[1:] for ln in patch.split("\n") if ln.startswith("+") and not ln.startswith("+++")) + "\n"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reviewui", "transcript", *args], capture_output=True, text=True, cwd=REPO)


def test_files_linked_and_unattributed_in_json_and_text(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    make_repo(repo, {"README.md": "pr viewer\n"}, {"LICENSE": _license(), "NOTES.md": "not from the transcript\n"})
    r = _run(str(RESOLVER), "--repo", str(repo), "--branch", "agent/work", "--base", "main", "--format", "json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    files = {f["path"]: f for f in data["files"]}
    assert files["LICENSE"]["turns"] == [4] and not files["LICENSE"]["unattributed"]
    assert files["NOTES.md"] == {"path": "NOTES.md", "turns": [], "unattributed": True, "authors": []}
    assert data["unattributed"] == ["NOTES.md"]
    assert any(n.startswith("unattributed: 1 changed file") and "NOTES.md" in n for n in data["notes"])
    text = _run(str(RESOLVER), "--repo", str(repo), "--branch", "agent/work", "--base", "main")
    assert "file LICENSE: #4" in text.stdout and "file NOTES.md: unattributed" in text.stdout
    assert "note: unattributed: 1 changed file" in text.stdout


def test_the_branch_picks_the_resolver_instance(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    make_repo(repo, {"src/App.css": "#root {}\n"}, {"src/App.css": "#root {}\nbody.dark-mode {}\n"})
    r = _run(str(RESOLVER), "--repo", str(repo), "--branch", "agent/work", "--base", "main", "--format", "json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert "dark mode" in data["turns"][0]["text"]
    assert any("its patch matches the branch" in n for n in data["notes"])
