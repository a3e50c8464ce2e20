"""`report-tampering`: the branch adds or changes code that can rewrite pytest's test reports.

A conftest or plugin hook on `pytest_runtest_makereport` (a hookwrapper that
turns a failure into a pass), `pytest_report_teststatus`,
`pytest_runtest_logreport` or `pytest_runtest_protocol` decides what every
run says, bite runs and the reviewer's probes included; so does code that
sets a report's `outcome` or `longrepr`, and a conftest that replaces
`sys.excepthook`. reviewui's canary test catches a rewrite while it runs;
this finding names the code that can do it, whether or not it did. The
files are read from git with the findings' parse cap (source.parse).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from reviewui.core.findings.model import Finding, finding
from reviewui.core.findings.source import decode, parse, read_blobs

if TYPE_CHECKING:
    from reviewui.core.diff import Diff
    from reviewui.core.target import Target

REPORT_HOOKS = ("pytest_runtest_makereport", "pytest_report_teststatus", "pytest_runtest_logreport",
                "pytest_runtest_protocol")
"""The hooks whose implementation decides what a test's report says."""
REPORT_FIELDS = ("outcome", "longrepr", "wasxfail")
"""Report attributes whose assignment rewrites an outcome."""


def report_tampering(target: Target, diff: Diff) -> list[Finding]:
    """A `report-tampering` finding for each reporting hook, report rewrite or `sys.excepthook`
    trick the branch adds or changes in a Python file."""
    files = [f for f in diff.files if f.status != "deleted" and not f.binary and f.path.endswith(".py")]
    if not files:
        return []
    repo = str(target.repo_dir)
    head = read_blobs(repo, target.head, [f.path for f in files])
    base = read_blobs(repo, target.base, [f.old_path or f.path for f in files if f.status != "added"])
    out: list[Finding] = []
    for f in files:
        data = head.get(f.path)
        tree = parse(decode(data), f.path) if data is not None else None
        if tree is None:
            continue
        old_data = base.get(f.old_path or f.path)
        old_tree = parse(decode(old_data), f.path) if old_data is not None else None
        before = {(what, key) for what, key, _ in _suspects(old_tree, f.path)} if old_tree is not None else set()
        for what, key, line in _suspects(tree, f.path):
            if (what, key) in before:
                continue
            out.append(finding(
                "report-tampering",
                f"{f.path} {what}: it can turn a failing test into a passing one in every run, bites and "
                "probes included (reviewui's canary test checks each run)",
                file=f.path, line=line, symbol=key.split("\0", 1)[0],
                evidence=key.split("\0", 1)[-1][:400],
            ))
    return out


def _suspects(tree: ast.Module, path: str) -> Iterator[tuple[str, str, int]]:
    """(what it is, a key that is the same when the code is, line) for each piece of code that can
    rewrite a report: reporting hooks, assignments to a report's outcome, `sys.excepthook`."""
    conftest = path.rsplit("/", 1)[-1] == "conftest.py"
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in REPORT_HOOKS:
            wrapper = any("wrapper" in ast.unparse(d) for d in node.decorator_list)
            kind = "hookwrapper on" if wrapper else "hook"
            yield f"adds or changes a {kind} {node.name}", f"{node.name}\0{ast.unparse(node)}", node.lineno
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and t.attr in REPORT_FIELDS:
                    yield (f"sets a report's {t.attr}", f"{t.attr}\0{ast.unparse(node)}", node.lineno)
                elif conftest and isinstance(t, ast.Attribute) and t.attr == "excepthook":
                    yield "replaces sys.excepthook", f"excepthook\0{ast.unparse(node)}", node.lineno
        elif conftest and isinstance(node, ast.Call) and ast.unparse(node.func) == "setattr" and \
                len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "excepthook":
            yield "replaces sys.excepthook", f"excepthook\0{ast.unparse(node)}", node.lineno
