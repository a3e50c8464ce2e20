"""`bidi-control`: Trojan Source in a hunk is a finding, and the gate fails on it."""

from __future__ import annotations

import json
from pathlib import Path

from reviewui.core.findings import compute_findings
from reviewui.core.findings.bidi import bidi_control
from tests.clirun import run_cli
from tests.core.findings.helpers import branch, only

BASE = {
    "bank.py": "bank = {}\n\n\ndef subtract_funds(account, amount):\n    bank[account] -= amount\n    return\n",
    "tests/test_bank.py": "def test_nothing():\n    assert True\n",
}
# The "early return" pattern of the Trojan Source paper (CVE-2021-42574): drawn by a
# bidi-aware viewer, `return` looks like part of the docstring; Python executes it
# first, so the subtraction below never runs.
TROJAN = (
    "bank = {}\n\n\ndef subtract_funds(account, amount):\n"
    "    ''' Subtract funds from bank account then \u202e\u2066 ;return\u2069\u2066'''\n"
    "    bank[account] -= amount\n    return\n"
)


def test_trojan_source_early_return_is_an_error(tmp_path: Path) -> None:
    target, diff, settings = branch(tmp_path, BASE, {"bank.py": TROJAN})
    f = only(bidi_control(diff))
    assert (f.kind, f.severity, f.file, f.line) == ("bidi-control", "error", "bank.py", 5)
    assert "U+202E" in f.message and "U+2066" in f.message and "U+2069" in f.message
    assert "\u202e" not in f.evidence and "\\u202e" in f.evidence
    assert "bidi-control" in [x.kind for x in compute_findings(target, diff, settings)]


def test_zero_width_in_an_identifier_is_a_warning(tmp_path: Path) -> None:
    code = BASE["bank.py"] + "\n\ndef is_admin\u200b(user):\n    return True\n"
    _, diff, _ = branch(tmp_path, BASE, {"bank.py": code})
    f = only(bidi_control(diff))
    assert (f.severity, f.line) == ("warning", 9) and "U+200B" in f.message


def test_plain_unicode_docs_and_removed_lines_are_quiet(tmp_path: Path) -> None:
    base = {**BASE, "bank.py": TROJAN}
    change = {
        "bank.py": BASE["bank.py"] + "\nGREETING = 'héllo 日本 🎉 שלום'\n",  # removes the trojan, adds RTL letters
        "docs/notes.md": "RTL mark \u200f in prose\n",  # not code
        "pkg/bom.py": "\ufeffX = 1\n",  # a BOM at the start of a file
    }
    _, diff, _ = branch(tmp_path, base, change)
    assert bidi_control(diff) == []


def test_check_exits_1_and_prints_it_escaped(tmp_path: Path) -> None:
    branch(tmp_path, BASE, {"bank.py": TROJAN, "tests/test_bank.py": "def test_nothing():\n    assert 1\n"})
    proc = run_cli("check", "agent/work", cwd=tmp_path)
    assert proc.returncode == 1
    assert "bidi-control" in proc.stdout and "\u202e" not in proc.stdout and "\\u202e" in proc.stdout
    data = json.loads(run_cli("check", "agent/work", "--format", "json", cwd=tmp_path).stdout)
    assert [f["line"] for f in data["findings"] if f["kind"] == "bidi-control"] == [5]
