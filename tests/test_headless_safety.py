"""Headless output never carries an escape sequence or bidi character from the repo; JSON keeps its data."""

from __future__ import annotations

import json
from pathlib import Path

from tests.clirun import run_cli
from tests.gitrepo import make_repo

OSC52 = "\x1b]52;c;cHduZWQ=\x07"
NAME = f"pkg/clip{OSC52}\x9b\u202e.py"


def _clean(out: str) -> None:
    assert not any(c in out for c in "\x1b\x07\x9b\u202e")


def test_check_text_json_and_sarif_are_safe_to_print(tmp_path: Path) -> None:
    make_repo(tmp_path, {"pkg/__init__.py": ""}, {NAME: "def helper():\n    return 1\n"})
    text = run_cli("check", "agent/work", cwd=tmp_path)
    assert text.returncode in (0, 1), text.stderr
    _clean(text.stdout)
    assert "clip\\x1b]52;c;cHduZWQ=\\x07\\x9b\\u202e.py" in text.stdout
    for fmt in ("json", "sarif"):
        proc = run_cli("check", "agent/work", "--format", fmt, cwd=tmp_path)
        _clean(proc.stdout)
        data = json.loads(proc.stdout)  # still valid JSON
        assert "helper" in proc.stdout and data
    files = json.loads(run_cli("check", "agent/work", "--format", "json", cwd=tmp_path).stdout)["files"]
    assert [f["path"] for f in files] == [NAME]  # the data itself is intact


def test_errors_naming_a_hostile_path_are_escaped(tmp_path: Path) -> None:
    make_repo(tmp_path, {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    (tmp_path / "p.py").write_text("def test_p():\n    assert True\n")
    proc = run_cli("probe", "agent/work", "--file", "p.py", "--hunk", f"x{OSC52}.py:0", cwd=tmp_path)
    assert proc.returncode == 2
    _clean(proc.stderr)
    assert "x\\x1b]52;c;cHduZWQ=\\x07.py is not changed" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
