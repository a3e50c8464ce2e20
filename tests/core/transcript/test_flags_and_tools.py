"""The readers flags are built from: claims, test verdicts, TOUCH lines, tool-call and patch interpretation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.flags import claims_done_text, read_verdict, touch_paths
from reviewui.core.transcript.model import EDITS_EXISTING_TEST, EDITS_TEST_AFTER_FAILURE, WRITES_TESTS, FileEdit
from reviewui.core.transcript.patches import changed_lines, modifies_existing_lines, parse_apply_patch, parse_unified_diff
from reviewui.core.transcript.tools import interpret_call, shell_edits


@pytest.mark.parametrize(
    "text",
    [
        "Action: done\nSummary: The line is already correct.",
        "The line is already correct.",
        "It's already implemented in utils.py.",
        "already has a test for check. Tests passed.",
        "The fix is complete.",
        "I have successfully completed the task.",
        "ACTION: DONE",
    ],
)
def test_done_claims_are_recognised(text: str) -> None:
    assert claims_done_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "Let me check whether it is correct before changing anything.",
        "Check if the parser already handles commas",
        "Running the tests now.",
        "",
        "done" * 0 + "nothing to see",
    ],
)
def test_ordinary_text_is_not_a_claim(text: str) -> None:
    assert not claims_done_text(text)


@pytest.mark.parametrize(
    ("output", "verdict"),
    [
        ("F..\nFAILED tests/test_a.py::test_x - AssertionError\n1 failed, 2 passed in 0.1s", "fail"),
        ("....\n4 passed in 0.1s", "pass"),
        ("--- FAIL: TestParse (0.00s)\nFAIL\texample.com/p\t0.01s", "fail"),
        ("ok  \texample.com/p\t0.01s", "pass"),
        ("test result: FAILED. 1 passed; 1 failed", "fail"),
        ("test result: ok. 3 passed; 0 failed", "pass"),
        ("Ran 3 tests in 0.001s\n\nOK", "pass"),
        ("Finished in 0.1 seconds\n3 tests, 1 failure", "fail"),
        ("Finished in 0.1 seconds\n3 tests, 0 failures", "pass"),
        ("Tests:       1 failed, 4 passed, 5 total", "fail"),
        ("total 8\ndrwxr-xr-x 2 root root 4096 .", None),
        ("", None),
    ],
)
def test_test_verdicts(output: str, verdict: str | None) -> None:
    assert read_verdict(output) == verdict


def test_verdict_reads_the_end_of_a_long_output() -> None:
    assert read_verdict("1 failed\n" + "x" * 50_000 + "\n12 passed in 3s") == "pass"


def test_touch_lines() -> None:
    text = "Plan:\nTOUCH: src/a.py\n- TOUCH: `tests/test_a.py`\nnot a TOUCH: line at all\nTOUCH:docs/x.md\n"
    assert touch_paths(text) == ["src/a.py", "tests/test_a.py", "docs/x.md"]
    assert touch_paths("no declarations") == []


@pytest.mark.parametrize(
    ("name", "args", "kind", "paths"),
    [
        ("Edit", {"file_path": "/r/a.py", "old_string": "a", "new_string": "b"}, "edit", ("/r/a.py",)),
        ("MultiEdit", {"file_path": "a.py", "edits": [{"old_string": "a", "new_string": "b"}]}, "edit", ("a.py",)),
        ("Write", {"file_path": "a.py", "content": "x"}, "write", ("a.py",)),
        ("NotebookEdit", {"notebook_path": "n.ipynb", "new_source": "x"}, "edit", ("n.ipynb",)),
        ("Read", {"file_path": "a.py"}, "read", ("a.py",)),
        ("Bash", {"command": "pytest -q"}, "shell", ()),
        ("exec_command", {"cmd": "ls"}, "shell", ()),
        ("str_replace_editor", {"command": "view", "path": "/r/a.py"}, "read", ("/r/a.py",)),
        ("str_replace_editor", {"command": "create", "path": "/r/b.py", "file_text": "x"}, "write", ("/r/b.py",)),
        ("file_editor", {"command": "insert", "path": "/r/b.py", "new_str": "y", "insert_line": 3}, "edit", ("/r/b.py",)),
        ("finish", {"message": "done"}, "finish", ()),
        ("submit", {}, "finish", ()),
        ("TodoWrite", {"todos": []}, "other", ()),
        ("WebSearch", "not even a dict", "other", ()),
    ],
)
def test_tool_call_kinds(name: str, args: object, kind: str, paths: tuple[str, ...]) -> None:
    call, _ = interpret_call(name, args, "id")
    assert (call.name, call.kind, call.paths, call.id) == (name, kind, paths, "id")


def test_shell_write_heuristics() -> None:
    cmd = "cat > tests/test_new.py << 'EOF'\ndef test_x():\n    assert 1\nEOF\necho done"
    (e,) = shell_edits(cmd)
    assert (e.path, e.operation, e.new) == ("tests/test_new.py", "write", "def test_x():\n    assert 1")
    (e,) = shell_edits("cat <<EOF >> notes.md\nmore\nEOF")
    assert (e.path, e.operation, e.new) == ("notes.md", "insert", "more")
    assert [(e.path, e.operation) for e in shell_edits("sed -i.bak -e 's/a/b/' src/x.py src/y.py && ls")] == [
        ("src/x.py", "shell"), ("src/y.py", "shell")
    ]
    assert [(e.path, e.operation) for e in shell_edits("echo hi > out.txt 2>&1")] == [("out.txt", "write")]
    assert [(e.path, e.operation) for e in shell_edits("rm -f tests/test_old.py")] == [("tests/test_old.py", "delete")]
    assert shell_edits("pytest -q 2>&1 | tail -5") == []
    assert shell_edits("python -c 'print(1 > 0)' > /dev/null") == []
    diff = "git apply <<'EOF'\n--- a/src/m.py\n+++ b/src/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\nEOF"
    (e,) = shell_edits(diff)
    assert (e.path, e.operation, e.old, e.new) == ("src/m.py", "patch", "x = 1", "x = 2")


def test_mini_swe_agent_finish_marker_is_a_finish_call() -> None:
    call, _ = interpret_call("bash", {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"})
    assert call.kind == "finish"


def test_apply_patch_envelope() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@ def f():\n-    return 1\n+    return 2\n"
        "*** Delete File: old.py\n*** Add File: new.py\n+print('n')\n*** End Patch"
    )
    moved, deleted, added = parse_apply_patch(patch, "c")
    assert (moved.path, moved.operation, moved.old, moved.new) == ("b.py", "patch", "    return 1", "    return 2")
    assert (deleted.path, deleted.operation) == ("old.py", "delete")
    assert (added.path, added.operation, added.new, added.call_id) == ("new.py", "create", "print('n')", "c")
    assert parse_apply_patch("not a patch") == []


def test_unified_diff_with_new_and_deleted_files() -> None:
    diff = (
        "diff --git a/n.py b/n.py\nnew file mode 100644\nindex 0000000..1\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1 @@\n+x\n"
        "diff --git a/d.py b/d.py\n--- a/d.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n"
    )
    new, gone = parse_unified_diff(diff)
    assert (new.path, new.operation, new.existed) == ("n.py", "create", False)
    assert (gone.path, gone.operation) == ("d.py", "delete")


def test_changed_lines_leave_out_the_anchor() -> None:
    e = FileEdit("a.py", "replace", "def f():\n    return 1", "def f():\n    return 2\n    # note")
    assert changed_lines(e) == (["    return 2", "    # note"], ["    return 1"])
    assert modifies_existing_lines(e) is True
    additive = FileEdit("a.py", "replace", "def f():", "def f():\n    pass")
    assert modifies_existing_lines(additive) is False
    assert modifies_existing_lines(FileEdit("a.py", "write", None, "x")) is None
    assert modifies_existing_lines(FileEdit("a.py", "shell")) is True


def _session(tmp_path: Path, blocks: list[list[dict]], results: list[str]) -> Path:
    lines = [{"type": "user", "uuid": "u0", "sessionId": "s", "cwd": "/w", "message": {"role": "user", "content": "task"}}]
    for i, (content, result) in enumerate(zip(blocks, results, strict=True)):
        lines.append({"type": "assistant", "uuid": f"a{i}", "sessionId": "s", "message": {"id": f"m{i}", "role": "assistant", "content": content}})
        ids = [b["id"] for b in content if b.get("type") == "tool_use"]
        lines.append({"type": "user", "uuid": f"r{i}", "sessionId": "s", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": ids[0], "content": result}]}})
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


def _bash(i: int, cmd: str) -> list[dict]:
    return [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": cmd}}]


def _edit(i: int, path: str, old: str, new: str) -> list[dict]:
    return [{"type": "tool_use", "id": f"t{i}", "name": "Edit", "input": {"file_path": path, "old_string": old, "new_string": new}}]


def test_test_edit_after_green_run_is_not_after_failure(tmp_path: Path) -> None:
    p = _session(tmp_path, [
        _bash(1, "pytest"), _bash(2, "pytest"), _edit(3, "/w/tests/test_a.py", "assert f() == 1", "assert f() == 2"),
    ], ["1 failed, 1 passed", "2 passed", "ok"])
    t = load_transcript(p)
    edit = t.turns[5]
    assert EDITS_EXISTING_TEST in edit.flags and EDITS_TEST_AFTER_FAILURE not in edit.flags


def test_read_of_a_test_file_showing_failed_is_not_a_test_run(tmp_path: Path) -> None:
    p = _session(tmp_path, [
        [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/w/tests/test_a.py"}}],
        _edit(2, "/w/tests/test_a.py", "assert f() == 1", "assert f() == 2"),
    ], ["def test_report():\n    assert summary() == '1 failed'\n", "ok"])
    t = load_transcript(p)
    edit = t.turns[3]
    assert EDITS_EXISTING_TEST in edit.flags and EDITS_TEST_AFTER_FAILURE not in edit.flags


def test_custom_test_globs_decide_what_a_test_is(tmp_path: Path) -> None:
    p = _session(tmp_path, [_edit(1, "/w/spec/a_spec.rb", "expect(1)", "expect(2)")], ["ok"])
    assert WRITES_TESTS not in load_transcript(p).turns[1].flags
    t = load_transcript(p, test_globs=("*_spec.rb",))
    assert {WRITES_TESTS, EDITS_EXISTING_TEST} <= set(t.turns[1].flags)


def test_absolute_paths_are_made_relative_to_the_agent_cwd(tmp_path: Path) -> None:
    """A repo checked out under a folder called tests/ must not make every file a test."""
    lines = [{"type": "assistant", "uuid": "a", "sessionId": "s", "cwd": "/home/u/tests/proj",
              "message": {"id": "m", "role": "assistant", "content": _edit(1, "/home/u/tests/proj/src/a.py", "x = 1", "x = 2")}}]
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps(lines[0]) + "\n" + json.dumps({"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user", "content": "ok"}}) + "\n")
    t = load_transcript(p)
    assert WRITES_TESTS not in t.turns[0].flags
