"""Edits read from shell commands and inline Python with a real parser, and edits the tool rejected."""

from __future__ import annotations

import pytest

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.model import TOOL_ERROR
from reviewui.core.transcript.tools import interpret_call, shell_edits
from tests.core.transcript.helpers import FIXTURES

RESOLVER = FIXTURES / "openhands" / "resolver_output.jsonl"


def _ops(cmd: str) -> list[tuple[str, str]]:
    return [(e.path, e.operation) for e in shell_edits(cmd, "c1")]


@pytest.mark.parametrize(
    "cmd, expected",
    [
        # The forms the issue found missed, as the agents wrote them.
        ('python3 -c "import re;p=\'src/app.py\';s=open(p).read();open(p,\'w\').write(s.replace(\'a\',\'b\'))"', [("src/app.py", "write")]),
        ("python3 -c \"open('src/app.py','w').write('x = 1\\n')\"", [("src/app.py", "write")]),
        ('echo "a; b" > x.sql', [("x.sql", "write")]),
        ("pwd > out.txt", [("out.txt", "write")]),
        ("mv a.py b.py", [("a.py", "delete"), ("b.py", "shell")]),
        ("git diff >> notes/review.md 2>/dev/null", [("notes/review.md", "insert")]),
        ("cp -r src/a.py build/", [("build/a.py", "shell")]),
        ("rm -f old.py && ls", [("old.py", "delete")]),
        ("sed -i 's/x/y/' a.py b.py", [("a.py", "shell"), ("b.py", "shell")]),
        ("cat data.txt | tee -a log.txt", [("log.txt", "insert")]),
        ("cd pkg && echo ok > status", [("pkg/status", "write")]),
        ("python - <<'PY'\nfrom pathlib import Path\nPath('gen.py').write_text('X = 2')\nPY", [("gen.py", "write")]),
        ("ls -la; grep -n 'a > b' src/*.py", []),  # a `>` inside quotes is no redirect
        ("echo done 2>&1", []),
    ],
)
def test_shell_write_forms(cmd: str, expected: list[tuple[str, str]]) -> None:
    assert _ops(cmd) == expected


def test_heredoc_content_and_patches() -> None:
    [w] = shell_edits("cat > src/m.py <<'EOF'\nif a > b: print('x; y')\nEOF\n")
    assert (w.path, w.operation, w.new) == ("src/m.py", "write", "if a > b: print('x; y')")
    [p] = shell_edits("cd repo && git apply <<EOF\n--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-old\n+new\nEOF")
    assert (p.path, p.operation, p.new, p.old) == ("repo/f.py", "patch", "new", "old")
    [e] = shell_edits('echo "a; b" > x.sql')
    assert e.new == "a; b"


def test_python_cell_edits() -> None:
    call, edits = interpret_call("execute_ipython_cell", {"code": "with open('LICENSE', 'w') as f:\n    f.write(t)"}, "i1")
    assert call.kind == "edit" and call.paths == ("LICENSE",) and [(e.path, e.operation) for e in edits] == [("LICENSE", "write")]
    call, edits = interpret_call("execute_ipython_cell", {"code": "print(open('LICENSE').read())"}, "i2")
    assert call.kind == "shell" and edits == []


def test_a_file_written_by_inline_python_in_a_real_run() -> None:
    # OpenHands resolver, issue 5: the LICENSE is written by `with open('LICENSE', 'w')` in a Python cell.
    t = load_transcript(RESOLVER)
    writers = [x for x in t.turns if x.files_written]
    assert [(x.index, x.files_written) for x in writers] == [(4, ("LICENSE",))]


def test_linter_rejected_edits_are_tool_errors_not_writes() -> None:
    # OpenHands resolver, issue 1: nine edit_file_by_replace calls on App.tsx rejected by the linter gate.
    t = load_transcript(RESOLVER, instance="1")
    rejected = [x for x in t.turns if x.role == "tool" and x.text.startswith("[Your proposed edit has introduced")]
    assert len(rejected) >= 5
    for r in rejected:
        assert r.has(TOOL_ERROR)
        call_turn = t.turn(r.index - 1)
        assert call_turn.tool_calls[0].paths == ("/workspace/src/App.tsx",) and call_turn.files_written == ()
    written = {p for x in t.turns for p in x.files_written}
    assert "/workspace/src/App.css" in written and "/workspace/src/PullRequestViewer.tsx" in written
