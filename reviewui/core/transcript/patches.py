"""Patch texts agents write, turned into FileEdits, and the lines an edit adds or removes.

Three patch dialects show up in transcripts: Codex's `apply_patch` envelope
(`*** Begin Patch` / `*** Update File:` …), ordinary unified diffs (`git
apply`, SWE-agent submissions, OpenHands edit observations, Codex
`patch_apply_end`) and Claude Code's `structuredPatch` hunk lists. Line sets
are computed only when asked for (linking, the test flags), never at load.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from reviewui.core.transcript.model import EditOp, FileEdit

_AP_ADD = "*** Add File: "
_AP_UPDATE = "*** Update File: "
_AP_DELETE = "*** Delete File: "
_AP_MOVE = "*** Move to: "


def parse_apply_patch(text: str, call_id: str | None = None) -> list[FileEdit]:
    """Return the FileEdits of a Codex `apply_patch` envelope ([] when it is not one)."""
    if "*** Begin Patch" not in text[:200]:
        return []
    edits: list[FileEdit] = []
    path: str | None = None
    op = ""
    body: list[str] = []

    def flush() -> None:
        if path is None:
            return
        patch = "\n".join(body)
        if op == "create":
            new = "\n".join(ln[1:] for ln in body if ln.startswith("+"))
            edits.append(FileEdit(path, "create", None, new, patch, False, call_id))
        elif op == "delete":
            edits.append(FileEdit(path, "delete", None, None, None, True, call_id))
        else:
            old = "\n".join(ln[1:] for ln in body if ln.startswith("-"))
            new = "\n".join(ln[1:] for ln in body if ln.startswith("+"))
            edits.append(FileEdit(path, "patch", old, new, patch, True, call_id))

    for line in text.splitlines():
        if line.startswith(_AP_ADD):
            flush()
            path, op, body = line[len(_AP_ADD) :].strip(), "create", []
        elif line.startswith(_AP_UPDATE):
            flush()
            path, op, body = line[len(_AP_UPDATE) :].strip(), "patch", []
        elif line.startswith(_AP_DELETE):
            flush()
            path, op, body = line[len(_AP_DELETE) :].strip(), "delete", []
        elif line.startswith(_AP_MOVE) and path is not None:
            # The moved file's content lands at the new path: that is what a diff shows.
            path = line[len(_AP_MOVE) :].strip()
        elif line.startswith(("*** End Patch", "*** Begin Patch")):
            continue
        elif path is not None:
            body.append(line)
    flush()
    return edits


def parse_unified_diff(text: str, call_id: str | None = None) -> list[FileEdit]:
    """Return one `patch` FileEdit per file of a unified diff ([] when there is none)."""
    edits: list[FileEdit] = []
    path: str | None = None
    old_path: str | None = None
    body: list[str] = []

    def flush() -> None:
        if path is None:
            return
        if path == "/dev/null":
            edits.append(FileEdit(old_path or path, "delete", None, None, "\n".join(body), True, call_id))
            return
        old = "\n".join(ln[1:] for ln in body if ln.startswith("-"))
        new = "\n".join(ln[1:] for ln in body if ln.startswith("+"))
        existed = old_path != "/dev/null"
        op: EditOp = "patch" if existed else "create"
        edits.append(FileEdit(path, op, old, new, "\n".join(body), existed, call_id))

    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            flush()
            old_path = _strip_prefix(line[4:])
            path = _strip_prefix(lines[i + 1][4:])
            body = []
            i += 2
            continue
        if path is not None and not line.startswith("diff --git") and not line.startswith("index "):
            body.append(line)
        i += 1
    flush()
    return edits


def _strip_prefix(p: str) -> str:
    p = p.split("\t", 1)[0].strip()
    if p.startswith(("a/", "b/")) and not p.startswith(("a//", "b//")):
        return p[2:]
    return p


def render_structured_patch(hunks: Any) -> str | None:
    """Render Claude Code's `structuredPatch` hunk list as unified-diff text (None when absent)."""
    if not isinstance(hunks, list) or not hunks:
        return None
    out: list[str] = []
    for h in hunks:
        if not isinstance(h, dict):
            continue
        out.append(
            f"@@ -{h.get('oldStart', 0)},{h.get('oldLines', 0)} +{h.get('newStart', 0)},{h.get('newLines', 0)} @@"
        )
        lines = h.get("lines")
        if isinstance(lines, list):
            out.extend(ln for ln in lines if isinstance(ln, str))
    return "\n".join(out) if out else None


def _lines(text: str | None) -> list[str]:
    return text.splitlines() if text else []


def changed_lines(edit: FileEdit) -> tuple[list[str], list[str]]:
    """Return `(added, removed)`: the lines the edit put into and took out of the file.

    Lines an edit carries through unchanged (the anchor of a replacement,
    the unchanged part of a rewritten file) are in neither list. An edit
    whose content is unknown (`shell`) returns two empty lists.
    """
    if edit.patch is not None and edit.operation in ("patch", "replace", "write", "create"):
        added = [ln[1:] for ln in edit.patch.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        removed = [ln[1:] for ln in edit.patch.splitlines() if ln.startswith("-") and not ln.startswith("---")]
        if added or removed:
            return added, removed
    if edit.operation in ("create", "insert"):
        return _lines(edit.new), []
    if edit.operation in ("replace", "write", "patch"):
        new, old = _lines(edit.new), _lines(edit.old)
        if not old:
            return new, []
        new_c, old_c = Counter(new), Counter(old)
        added_c, removed_c = new_c - old_c, old_c - new_c
        return _take(new, added_c), _take(old, removed_c)
    return [], []


def _take(lines: list[str], wanted: Counter[str]) -> list[str]:
    out: list[str] = []
    left = dict(wanted)
    for ln in lines:
        if left.get(ln, 0) > 0:
            out.append(ln)
            left[ln] -= 1
    return out


def modifies_existing_lines(edit: FileEdit, removed: list[str] | None = None) -> bool | None:
    """Whether the edit changes or removes lines already in the file.

    True for deletions, in-place shell edits and any edit that takes a line
    out; False for a purely additive edit; None when the transcript does
    not say what the file held (a whole-file write over unknown content).
    `removed` is `changed_lines(edit)[1]` when the caller has it already.
    """
    if edit.operation in ("delete", "shell"):
        return True
    if edit.operation == "insert" or edit.operation == "create":
        return False
    if edit.operation in ("write", "replace") and edit.old is None and edit.patch is None:
        return None  # the transcript does not say what the edit replaced
    if removed is None:
        _, removed = changed_lines(edit)
    return any(ln.strip() for ln in removed)
