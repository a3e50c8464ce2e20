"""What a tool call does: its kind, the paths it names, and the file edits it makes.

Agents name the same few operations many ways (`Edit`, `str_replace_editor`,
`file_editor`, `apply_patch`, `edit 4:4 … end_of_edit`, a `cat > f <<EOF`
heredoc). `interpret_call` maps a tool name and its parsed arguments to a
ToolCall plus the FileEdits it implies; the shell heuristics only look at
commands that could write at all, so ordinary commands cost one substring test.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, cast

from reviewui.core.transcript.model import EditOp, FileEdit, ToolCall, ToolKind
from reviewui.core.transcript.patches import parse_apply_patch, parse_unified_diff
from reviewui.core.transcript.shell import might_write, python_edits, sed_files
from reviewui.core.transcript.shell import shell_edits as parsed_shell_edits

_EDIT_TOOLS = {"edit", "multiedit", "notebookedit", "edit_file", "replace", "str_replace", "insert"}
_EDITOR_TOOLS = {"str_replace_editor", "file_editor", "str_replace_based_edit_tool", "text_editor", "editor"}
_WRITE_TOOLS = {"write", "write_file", "create_file", "create", "write_to_file"}
_SHELL_TOOLS = {
    "bash", "shell", "exec_command", "terminal", "execute_bash", "run", "run_command", "local_shell",
    "local_shell_call", "execute_command", "cmd", "sh", "container.exec", "run_shell_command", "write_stdin",
}
_READ_TOOLS = {
    "read", "read_file", "view", "view_file", "open", "glob", "grep", "ls", "list_dir", "list_files",
    "find_file", "search_file", "search_dir", "goto", "scroll_up", "scroll_down", "cat", "notebookread",
}
_PYTHON_TOOLS = {"execute_ipython_cell", "ipython", "run_ipython", "python", "jupyter", "execute_python"}
_FINISH_TOOLS = {"finish", "submit", "task_complete", "attempt_completion", "complete_task", "final_answer", "done"}
_PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "file", "target_file")
_GROUP: dict[str, str] = {}
for _names, _group in (
    (_EDIT_TOOLS, "edit"), (_WRITE_TOOLS, "edit"), (_EDITOR_TOOLS, "editor"), (_SHELL_TOOLS, "shell"),
    (_READ_TOOLS, "read"), (_FINISH_TOOLS, "finish"), ({"apply_patch"}, "apply_patch"), (_PYTHON_TOOLS, "python"),
):
    for _n in _names:
        _GROUP[_n] = _group

_REJECTED = (
    "Your proposed edit has introduced new syntax error(s)",  # SWE-agent's and OpenHands' linter gate
    "Your changes have NOT been applied",
    "[No exact match found in",  # OpenHands agentskills edit_file_by_replace
    "No replacement was performed",
)


def edit_rejected(output: str) -> bool:
    """True when a tool's output says the edit it was asked for was not applied (linter gate, no match)."""
    head = output[:600]
    return any(m in head for m in _REJECTED)


FINISH_MARKERS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
"""Commands mini-swe-agent treats as "I am done"."""

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_REDIRECT = re.compile(r"(?<![<>&0-9])(>>?)\s*(['\"]?)([^\s'\"<>|;&()]+)\2")
_SEGMENT_SPLIT = re.compile(r"&&|\|\||;|\|")


def _path_arg(args: Any) -> str | None:
    if type(args) is dict:
        v = args.get("file_path")
        if type(v) is str and v:
            return v
        for key in _PATH_KEYS:
            v = args.get(key)
            if isinstance(v, str) and v:
                return v
    return None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def shell_command(args: Any) -> str | None:
    """Return the command line of a shell tool call's arguments (argv lists joined)."""
    if isinstance(args, str):
        return args
    if type(args) is not dict:
        return None
    v = args.get("command")
    if type(v) is str:
        return v
    for key in ("command", "cmd", "script", "code", "input"):
        v = args.get(key)
        if isinstance(v, str):
            return v
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            words = cast("list[str]", v)  # JSON, checked just above
            if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and words[1] in ("-lc", "-c"):
                return words[2]
            if words and words[0] in ("apply_patch", "applypatch") and len(words) >= 2:
                return "apply_patch <<'EOF'\n" + words[1] + "\nEOF"
            return " ".join(shlex.quote(x) for x in words)
    return None


def interpret_call(name: str, args: Any, call_id: str | None = None) -> tuple[ToolCall, list[FileEdit]]:
    """Return the ToolCall for tool `name` called with parsed `args`, and the edits it makes."""
    low = name.lower()
    group = _GROUP.get(low)
    if group == "shell":
        cmd = shell_command(args) or ""
        edits = shell_edits(cmd, call_id)
        finish = FINISH_MARKERS[0] in cmd or FINISH_MARKERS[1] in cmd
        return ToolCall(name, args, "finish" if finish else "shell", _paths(edits) if edits else (), call_id), edits
    if group == "edit":
        return _edit_call(name, low, args, call_id)
    if group == "python":
        code = args.get("code") if isinstance(args, dict) else args
        edits = python_edits(code, call_id) if isinstance(code, str) else []
        return ToolCall(name, args, "shell" if not edits else "edit", _paths(edits), call_id), edits
    if group == "editor":
        return _editor_call(name, args, call_id)
    if group == "apply_patch":
        raw = args.get("input") if isinstance(args, dict) else args
        edits = parse_apply_patch(raw, call_id) if isinstance(raw, str) else []
        return ToolCall(name, args, "edit", _paths(edits), call_id), edits
    path = _path_arg(args)
    paths = (path,) if path else ()
    kind: ToolKind = "read" if group == "read" else "finish" if group == "finish" else "other"
    return ToolCall(name, args, kind, paths, call_id), []


def _paths(edits: list[FileEdit]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(e.path for e in edits))


def _editor_call(name: str, args: Any, call_id: str | None) -> tuple[ToolCall, list[FileEdit]]:
    a = args if isinstance(args, dict) else {}
    command = _str(a.get("command")) or ""
    path = _path_arg(a)
    paths = (path,) if path else ()
    if path is None:
        return ToolCall(name, args, "other", (), call_id), []
    if command == "create":
        edit = FileEdit(path, "create", None, _str(a.get("file_text")) or "", None, None, call_id)
        return ToolCall(name, args, "write", paths, call_id), [edit]
    if command == "str_replace":
        edit = FileEdit(path, "replace", _str(a.get("old_str")), _str(a.get("new_str")) or "", None, True, call_id)
        return ToolCall(name, args, "edit", paths, call_id), [edit]
    if command == "insert":
        edit = FileEdit(path, "insert", None, _str(a.get("new_str")) or "", None, True, call_id)
        return ToolCall(name, args, "edit", paths, call_id), [edit]
    if command == "undo_edit":
        return ToolCall(name, args, "edit", paths, call_id), [FileEdit(path, "shell", existed=True, call_id=call_id)]
    return ToolCall(name, args, "read", paths, call_id), []


def _edit_call(name: str, low: str, args: Any, call_id: str | None) -> tuple[ToolCall, list[FileEdit]]:
    a = args if isinstance(args, dict) else {}
    path = _path_arg(a)
    if path is None:
        return ToolCall(name, args, "edit" if low in _EDIT_TOOLS else "write", (), call_id), []
    paths = (path,)
    if low in _WRITE_TOOLS:
        content = _str(a.get("content"))
        if content is None:
            content = _str(a.get("file_text"))
        return ToolCall(name, args, "write", paths, call_id), [FileEdit(path, "write", None, content, call_id=call_id)]
    edits: list[FileEdit] = []
    if low == "multiedit" and isinstance(a.get("edits"), list):
        for e in a["edits"]:
            if isinstance(e, dict):
                edits.append(
                    FileEdit(path, "replace", _str(e.get("old_string")), _str(e.get("new_string")), None, True, call_id)
                )
    elif low == "notebookedit":
        edits.append(FileEdit(path, "replace", None, _str(a.get("new_source")), None, True, call_id))
    else:
        old = _str(a.get("old_string"))
        if old is None:
            old = _str(a.get("old_str"))
        new = _str(a.get("new_string"))
        if new is None:
            new = _str(a.get("new_str"))
        op: EditOp = "insert" if low == "insert" else "replace"
        edits.append(FileEdit(path, op, old, new, None, True, call_id))
    return ToolCall(name, args, "edit", paths, call_id), edits


def shell_edits(cmd: str, call_id: str | None = None) -> list[FileEdit]:
    """Return the file edits a shell command evidently makes (see `shell.py`).

    A command the shell parser cannot read falls back to line heuristics
    (heredoc writes, patches, `sed -i`, echo/printf/cat/tee redirects, `rm`).
    """
    if not might_write(cmd):
        return []
    parsed = parsed_shell_edits(cmd, call_id)
    if parsed is not None:
        return parsed
    return _heuristic_shell_edits(cmd, call_id)


def _heuristic_shell_edits(cmd: str, call_id: str | None = None) -> list[FileEdit]:
    if not cmd or not (
        ">" in cmd or "sed" in cmd or "tee" in cmd or "apply" in cmd or "patch" in cmd or "rm " in cmd
        or "perl -i" in cmd
    ):
        return []
    edits: list[FileEdit] = []
    lines = cmd.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _HEREDOC.search(line) if "<<" in line else None
        if m is not None:
            delim = m.group(2)
            body: list[str] = []
            j = i + 1
            while j < len(lines) and lines[j].strip() != delim:
                body.append(lines[j])
                j += 1
            edits.extend(_heredoc_edit(line, "\n".join(body), call_id))
            i = j + 1
            continue
        edits.extend(_line_edits(line, call_id))
        i += 1
    return edits


def _heredoc_edit(head: str, body: str, call_id: str | None) -> list[FileEdit]:
    if "apply_patch" in head or "applypatch" in head:
        return parse_apply_patch(body, call_id)
    if "git apply" in head or re.search(r"\bpatch\b", head):
        return parse_unified_diff(body, call_id)
    target = _redirect_target(head)
    if target is None:
        tm = re.search(r"\btee\s+(-a\s+)?(['\"]?)([^\s'\"<>|;&]+)\2", head)
        if tm:
            target = (">>" if tm.group(1) else ">", tm.group(3))
    if target is None:
        return []
    mode, path = target
    if mode == ">>":
        return [FileEdit(path, "insert", None, body, None, None, call_id)]
    return [FileEdit(path, "write", None, body, None, None, call_id)]


def _redirect_target(segment: str) -> tuple[str, str] | None:
    for m in _REDIRECT.finditer(segment):
        path = m.group(3)
        if path.startswith(("/dev/", "&")):
            continue
        return m.group(1), path
    return None


def _line_edits(line: str, call_id: str | None) -> list[FileEdit]:
    out: list[FileEdit] = []
    for seg in _SEGMENT_SPLIT.split(line):
        seg = seg.strip()
        if not seg:
            continue
        word = seg.split(None, 1)[0]
        if word in ("sed", "perl") and (" -i" in seg or " --in-place" in seg):
            out.extend(FileEdit(p, "shell", None, None, None, True, call_id) for p in sed_files(_argv(seg)[1:]))
        elif word == "rm":
            for p in _argv(seg)[1:]:
                if not p.startswith("-"):
                    out.append(FileEdit(p, "delete", None, None, None, True, call_id))
        elif ">" in seg and word in ("echo", "printf", "cat", "tee"):
            target = _redirect_target(seg)
            if target is not None:
                op: EditOp = "insert" if target[0] == ">>" else "write"
                out.append(FileEdit(target[1], op, None, None, None, None, call_id))
    return out


def _argv(seg: str) -> list[str]:
    try:
        return shlex.split(seg)
    except ValueError:
        return seg.split()


