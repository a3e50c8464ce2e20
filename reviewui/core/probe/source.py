"""Probe sources: syntax check, export as a regression test, templates for a hunk, drafts.

Everything about the probe's text that does not run it; probe.py runs it.
Drafts are the reviewer's unfinished probes, kept in local state beside the
review state (never in the checkout), keyed by hunk.
"""

from __future__ import annotations

import ast
import json
import os
import re
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from reviewui.core.bounded import parse_python
from reviewui.core.hunks import Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.git import show_file


# --- checking, exporting, templates --------------------------------------------------


def check_probe_syntax(code: str, name: str = "probe") -> None:
    """Return None when `code` parses as Python.

    Raises ReviewError "probe line N: message" for a syntax error (also for a
    NUL byte or text that cannot be written as UTF-8) and for an empty probe.
    """
    if not code.strip():
        raise ReviewError("the probe is empty: write a test_… function")
    for n, line in enumerate(code.splitlines() or [code], 1):
        if "\0" in line:
            raise ReviewError(f"probe line {n}: source contains a NUL byte")
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            raise ReviewError(f"probe line {n}: text that is not valid UTF-8") from None
    try:
        ast.parse(code, filename=name)
    except SyntaxError as e:
        raise ReviewError(f"probe line {e.lineno or 1}: {e.msg}") from None
    except ValueError as e:  # odd inputs older Pythons report as ValueError
        raise ReviewError(f"probe line 1: {e}") from None


TEMPLATE_MARK = 'assert False, "write the probe"'
"""The line the template's stub fails on; a probe still holding it has not been written."""


def check_probe_edited(code: str) -> None:
    """Return None when `code` is a probe someone wrote, not the untouched template.

    Raises ReviewError "probe line N: ..." naming the template's stub line
    while it is still there: the stub fails on every revision, which would
    read as "fails on both" evidence about the code.
    """
    for n, line in enumerate(code.splitlines(), 1):
        if line.strip() == TEMPLATE_MARK:
            raise ReviewError(f"probe line {n}: still the template: replace `{TEMPLATE_MARK}` with your check")


def patch_for_new_file(rel_path: str, code: str) -> str:
    """A `git apply`-able patch that adds `rel_path` holding `code` (for a branch not checked out)."""
    text = code if code.endswith("\n") else code + "\n"
    lines = text.splitlines()
    header = (
        f"diff --git a/{rel_path} b/{rel_path}\nnew file mode 100644\n--- /dev/null\n+++ b/{rel_path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n"
    )
    return header + "".join(f"+{ln}\n" for ln in lines)


def branch_is_checked_out(repo_dir: str | Path, branch: str, head: str) -> bool:
    """True when `repo_dir`'s working tree is on `branch` at `head` (writing a file there lands on it)."""
    from reviewui.core.git import run_git

    ref = run_git(repo_dir, "symbolic-ref", "--quiet", "HEAD", check=False).decode("utf-8", "replace").strip()
    at = run_git(repo_dir, "rev-parse", "--verify", "--quiet", "HEAD", check=False).decode().strip()
    return ref == f"refs/heads/{branch}" and at == head


def export_to_review(code: str, rel_path: str, repo_dir: Path, git_dir: Path, branch: str, head: str) -> tuple[Path, bool]:
    """Export the probe for the branch under review; return (where it was written, whether it is a patch).

    With the branch checked out, the test file is written into the checkout
    at `rel_path`. Otherwise the checkout (another branch) is left alone and
    a patch adding `rel_path` is written under the git dir, to apply on the
    branch. Raises ReviewError as `export_probe` does, and when the branch
    already has a file at `rel_path`.
    """
    check_probe_syntax(code)
    rel = PurePosixPath(rel_path.replace("\\", "/"))
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise ReviewError(f"export path must be inside the repository: {rel_path}")
    if branch_is_checked_out(repo_dir, branch, head):
        return export_probe(code, repo_dir / rel), False
    if show_file(repo_dir, head, str(rel)) is not None:
        raise ReviewError(f"{branch} already has {rel}; choose another path")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{branch}-{rel.stem}").strip("-")
    dest = git_dir / "reviewui" / "exports" / f"{safe}.patch"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(patch_for_new_file(str(rel), code), encoding="utf-8")
    return dest, True


def export_probe(code: str, path: str | Path) -> Path:
    """Write the probe as a regression test to `path` (created, never overwritten); return it.

    Raises ReviewError when the probe does not parse, the file already
    exists, or it cannot be written.
    """
    check_probe_syntax(code)
    dest = Path(path).expanduser().absolute()
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise ReviewError(f"{dest} already exists; choose another path") from None
    except OSError as e:
        raise ReviewError(f"cannot write {dest}: {e.strerror or e}") from e
    with os.fdopen(fd, "wb") as f:
        f.write((code if code.endswith("\n") else code + "\n").encode("utf-8"))
    return dest


def probe_name(code: str) -> str:
    """The probe's name: its first top-level `test…` function, else "probe" (never raises)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return "probe"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            return node.name
    return "probe"


def module_name(path: str) -> str | None:
    """The dotted module a repo-relative `.py` path is imported as (`src/` layout aware), or None."""
    p = PurePosixPath(path)
    if p.suffix != ".py":
        return None
    parts = list(p.with_suffix("").parts)
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(s.isidentifier() for s in parts):
        return None
    return ".".join(parts)


def hunk_symbols(source: str, hunk: Hunk) -> list[str]:
    """Top-level names (functions, classes, assignments) whose lines the hunk adds or changes."""
    try:
        tree = parse_python(source)  # within the analysis caps: the source is the branch's
    except (SyntaxError, ValueError):
        return []
    touched = {ln.new_no for ln in hunk.lines if ln.kind == "added" and ln.new_no is not None}
    if not touched:  # a pure deletion: whatever now sits where it was
        touched = set(hunk.new_lines)
    names: list[str] = []
    for node in tree.body:
        end = getattr(node, "end_lineno", node.lineno) or node.lineno
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        if not any(first <= n <= end for n in touched):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.extend(t.id for t in targets if isinstance(t, ast.Name))
    return list(dict.fromkeys(names))


def probe_template(session: Any, hunk: Hunk | None) -> str:
    """A probe to start from: imports of the hunk's module and symbols, and a test_probe_… stub.

    For a test-file hunk the test file's own imports are copied (the probe
    imitates it). Never raises for odd files: it falls back to a bare stub.
    """
    target = session.target
    imports: list[str] = []
    symbols: list[str] = []
    if hunk is not None:
        raw = show_file(target.repo_dir, target.head, hunk.file)
        source = raw.decode("utf-8", "replace") if raw is not None else ""
        f = session.diff.file(hunk.file)
        if f is not None and f.role == "test":
            imports = _import_lines(source)
        elif (mod := module_name(hunk.file)) is not None:
            symbols = [s for s in hunk_symbols(source, hunk) if not s.startswith("__")]
            imports = [f"from {mod} import {', '.join(symbols)}" if symbols else f"import {mod}"]
    stem = re.sub(r"\W+", "_", symbols[0]).strip("_").lower() if symbols else ""
    where = f"{hunk.file} {hunk.header}" if hunk is not None else "the change"
    body = [
        f'"""Probe for {where}: the test the change did not come with."""',
        "",
        *imports,
        "",
        "",
        f"def test_probe_{stem or 'change'}():",
        "    # Build the case the branch's tests avoid, call the code, assert what must hold.",
        '    assert False, "write the probe"',
        "",
    ]
    return "\n".join(body if imports else [body[0], "", *body[3:]])


def _import_lines(source: str) -> list[str]:
    try:
        tree = parse_python(source)  # within the analysis caps: the source is the branch's
    except (SyntaxError, ValueError):
        return []
    lines = source.splitlines()
    return [
        "\n".join(lines[n.lineno - 1 : (n.end_lineno or n.lineno)])
        for n in tree.body
        if isinstance(n, (ast.Import, ast.ImportFrom))
    ]


# --- drafts (local state, never the checkout) ----------------------------------------


def drafts_path(state_path: Path) -> Path:
    """Where the unsaved probe drafts of a branch live: beside its review state file."""
    return state_path.with_name(state_path.stem + ".probe-drafts.json")


def load_draft(state_path: Path, key: str) -> str | None:
    """The draft last edited for `key` (e.g. "file:index"), or None. Unreadable files count as empty."""
    try:
        data = json.loads(drafts_path(state_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def save_draft(state_path: Path, key: str, code: str) -> None:
    """Remember the draft for `key` (atomic write). Raises ReviewError when it cannot be written."""
    path = drafts_path(state_path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data = data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        data = {}
    data[key] = code
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=True)
        os.replace(tmp, path)
    except OSError as e:
        raise ReviewError(f"cannot save the probe draft to {path}: {e.strerror or e}") from e
