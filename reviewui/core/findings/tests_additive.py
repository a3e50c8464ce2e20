"""`tests-not-additive`: the test tree may only grow.

In a test file that exists at the base, removing or renaming a test,
changing or removing a check or a parametrize case, or adding a skip/xfail
to an existing test is how a suite is made green without making the code
right. A check made strictly stronger (stricter.py) is said at `info`. Python files are compared by syntax tree (reformatting and reworded
assert messages are not changes); other test files (and Python that does
not parse) fall back to reading the diff lines (`tests_lines.py`). Test
configuration lives in `suite_config.py`.
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import TYPE_CHECKING, Iterable

from reviewui.core.findings.change_shape import is_snapshot_path
from reviewui.core.findings.model import Finding, finding
from reviewui.core.findings.pyast import Def, Item, TestFile, analyze_test_file
from reviewui.core.findings.source import file_text, parse
from reviewui.core.findings.stricter import stricter
from reviewui.core.findings.suite_config import collected_by_name, config_loosened
from reviewui.core.findings.tests_lines import compare_lines, deleted_lines, snapshot_changed

if TYPE_CHECKING:
    from reviewui.core.config import Settings
    from reviewui.core.diff import Diff
    from reviewui.core.file_diff import FileDiff
    from reviewui.core.target import Target

KIND = "tests-not-additive"
MAX_SHOWN = 100
"""Longest code text quoted in a message before it is cut."""


def tests_not_additive(target: Target, diff: Diff, settings: Settings) -> list[Finding]:
    """Return every way the branch changes existing tests or loosens test configuration."""
    out: list[Finding] = []
    for f in diff.files:
        if f.status == "added" or f.binary:
            continue
        if f.role == "test" or (f.role == "other" and is_snapshot_path(f.path)):
            out += test_file_findings(target, f, settings)
    out += config_loosened(target, diff, settings)
    return out


def test_file_findings(target: Target, f: FileDiff, settings: Settings) -> list[Finding]:
    """Return the findings for one changed test file that exists at the base."""
    repo, base, head = str(target.repo_dir), target.base, target.head
    old_path = f.old_path or f.path
    if is_snapshot_path(f.path) and not f.path.endswith(".py"):
        return snapshot_changed(f)
    old_text = file_text(repo, base, old_path)
    if old_text is None:
        return []
    new_text = None if f.status == "deleted" else file_text(repo, head, f.path)
    out: list[Finding] = []
    if f.status == "renamed" and f.path.endswith(".py"):
        out += _renamed_out_of_collection(target, f, old_path, settings)
    if f.path.endswith(".py"):
        old_tree = parse(old_text, old_path)
        new_tree = None if new_text is None else parse(new_text, f.path)
        if old_tree is not None and f.status == "deleted":
            return out + _deleted_python(f.path, analyze_test_file(old_tree))
        if old_tree is not None and new_tree is not None:
            return out + compare_python(f.path, old_text, new_text or "", old_tree, new_tree)
    if f.status == "deleted":
        return out + deleted_lines(f.path, old_text)
    return out + compare_lines(f)


# --- Python: compare syntax trees -----------------------------------------


def compare_python(path: str, old_text: str, new_text: str, old_tree: ast.Module, new_tree: ast.Module) -> list[Finding]:
    """Compare the base and branch versions of a parsed test file."""
    old, new = analyze_test_file(old_tree), analyze_test_file(new_tree)
    old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
    out: list[Finding] = []
    gone = [q for q in old.defs if q not in new.defs]
    fresh = [q for q in new.defs if q not in old.defs]
    handled: set[str] = set()
    for q in gone:
        if any(q.startswith(h + ".") for h in handled):
            continue
        d = old.defs[q]
        if not d.is_test and not d.checks and not _has_tests(old, q):
            continue
        twin = _renamed_to(d, [new.defs[n] for n in fresh if new.defs[n].kind == d.kind])
        what = _what(d, old)
        if twin is not None:
            fresh.remove(twin.qual)
            out.append(
                finding(
                    KIND,
                    f"existing {what} renamed: {q} → {twin.qual}",
                    file=path,
                    line=twin.line,
                    symbol=q,
                    evidence=f"- {d.line}: {_line(old_lines, d.line)}\n+ {twin.line}: {_line(new_lines, twin.line)}",
                )
            )
        elif d.is_test or _has_tests(old, q):
            out.append(
                finding(
                    KIND,
                    f"existing {what} removed: {q}",
                    file=path,
                    line=_nearest_line(new, q),
                    symbol=q,
                    evidence=f"- {d.line}: {_line(old_lines, d.line)}",
                )
            )
        else:
            shown = "; ".join(_short(c.text) for c in d.checks[:3])
            out.append(
                finding(
                    KIND,
                    f"helper {q} removed with its {len(d.checks)} check(s): {shown}",
                    file=path,
                    line=_nearest_line(new, q),
                    symbol=q,
                    evidence=_evidence(old_lines, d.checks, "-"),
                )
            )
        handled.add(q)
    for q, d in old.defs.items():
        if q in new.defs:
            out += _compare_def(path, d, new.defs[q], old_lines, new_lines)
    added_module_skips = _added(old.module_skips, new.module_skips)
    for it in added_module_skips:
        out.append(
            finding(
                KIND,
                f"skip/xfail added for the whole module: {_short(it.text)}",
                file=path,
                line=it.line,
                evidence=_evidence(new_lines, [it], "+"),
            )
        )
    return out


def _compare_def(path: str, old: Def, new: Def, old_lines: list[str], new_lines: list[str]) -> list[Finding]:
    out: list[Finding] = []
    for before, after in _pair(_missing(old.checks, new.checks), _added(old.checks, new.checks)):
        why = stricter(before, after, new.params) if after is not None else None
        if why is not None and after is not None:
            # Only stronger: said, never an error (stricter.py).
            out.append(finding(
                KIND, f"existing check made stricter in {old.qual}: {_short(before.text)} → {_short(after.text)} "
                      f"({why})", file=path, line=after.line, symbol=old.qual, severity="info",
                evidence=_evidence(old_lines, [before], "-") + "\n" + _evidence(new_lines, [after], "+")))
            continue
        out.append(_changed(path, old.qual, "check", before, after, new.line, old_lines, new_lines))
    for names, cases in old.params.items():
        new_cases = new.params.get(names, [])
        for before, after in _pair(_missing(cases, new_cases), _added(cases, new_cases)):
            out.append(_changed(path, old.qual, f"parametrize case ({names})", before, after, new.line, old_lines, new_lines))
    if old.is_test or old.kind == "class":
        for it in _added(old.skips, new.skips):
            out.append(
                finding(
                    KIND,
                    f"skip/xfail added to existing test {old.qual}: {_short(it.text)}",
                    file=path,
                    line=it.line,
                    symbol=old.qual,
                    evidence=_evidence(new_lines, [it], "+"),
                )
            )
    return out


def _changed(
    path: str, qual: str, what: str, before: Item, after: Item | None, fallback_line: int,
    old_lines: list[str], new_lines: list[str],
) -> Finding:
    if after is None:
        return finding(
            KIND,
            f"existing {what} removed in {qual}: {_short(before.text)}",
            file=path,
            line=fallback_line,
            symbol=qual,
            evidence=_evidence(old_lines, [before], "-"),
        )
    return finding(
        KIND,
        f"existing {what} changed in {qual}: {_shown(before.text, after.text)}",
        file=path,
        line=after.line,
        symbol=qual,
        evidence=_evidence(old_lines, [before], "-") + "\n" + _evidence(new_lines, [after], "+"),
    )


def _missing(old: list[Item], new: list[Item]) -> list[Item]:
    """Items of `old` with no equal item left in `new` (a multiset difference, in order)."""
    left = Counter(i.text for i in new)
    out: list[Item] = []
    for i in old:
        if left[i.text] > 0:
            left[i.text] -= 1
        else:
            out.append(i)
    return out


def _added(old: list[Item], new: list[Item]) -> list[Item]:
    return _missing(new, old)


def _pair(missing: list[Item], added: list[Item]) -> Iterable[tuple[Item, Item | None]]:
    """Pair each vanished item with the added item that most likely replaced it (in order)."""
    for i, before in enumerate(missing):
        yield before, added[i] if i < len(added) else None


def _renamed_to(d: Def, candidates: list[Def]) -> Def | None:
    """The added definition with exactly the same body as `d`, if any."""
    shape = d.shape
    return next((c for c in candidates if c.shape == shape), None)


def _has_tests(tf: TestFile, qual: str) -> bool:
    return any(q.startswith(qual + ".") and d.is_test for q, d in tf.defs.items())


def _what(d: Def, tf: TestFile) -> str:
    if d.kind == "class":
        n = sum(1 for q, x in tf.defs.items() if q.startswith(d.qual + ".") and x.is_test)
        return f"test class ({n} test{'s' if n != 1 else ''})"
    return "test"


def _nearest_line(tf: TestFile, qual: str) -> int | None:
    """Where a removed definition used to live on the branch side: its class, if that remains."""
    parent = qual.rsplit(".", 1)[0] if "." in qual else None
    if parent and parent in tf.defs:
        return tf.defs[parent].line
    return None


def _deleted_python(path: str, tf: TestFile) -> list[Finding]:
    tests = [q for q, d in tf.defs.items() if d.is_test and d.kind == "function"]
    checks = sum(len(d.checks) for d in tf.defs.values())
    if not tests and not checks:
        return []
    shown = ", ".join(tests[:5]) + (f" (+{len(tests) - 5} more)" if len(tests) > 5 else "")
    return [
        finding(
            KIND,
            f"existing test file deleted with {len(tests)} test(s): {shown or f'{checks} check(s)'}",
            file=path,
            evidence="\n".join(f"- {tf.defs[q].line}: def {q.rsplit('.', 1)[-1]}" for q in tests[:20]),
        )
    ]


def _renamed_out_of_collection(target: Target, f: FileDiff, old_path: str, settings: Settings) -> list[Finding]:
    was = collected_by_name(target, target.base, old_path)
    now = collected_by_name(target, target.head, f.path)
    if was and not now:
        return [
            finding(
                KIND,
                f"test file renamed so pytest no longer collects it: {old_path} → {f.path}",
                file=f.path,
                evidence=f"- {old_path}\n+ {f.path}",
            )
        ]
    return []


# --- text helpers ---------------------------------------------------------


def _line(lines: list[str], n: int) -> str:
    return lines[n - 1].strip() if 0 < n <= len(lines) else ""


def _evidence(lines: list[str], items: list[Item], sign: str) -> str:
    out: list[str] = []
    for it in items:
        span = range(it.line, min(it.end_line, it.line + 4) + 1)
        out += [f"{sign} {n}: {_line(lines, n)}" for n in span]
    return "\n".join(out)


def _short(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= MAX_SHOWN else one[: MAX_SHOWN - 1] + "…"


AROUND = 12
"""Characters shown on either side of the first difference when the one-line forms read the same."""


def _shown(before: str, after: str) -> str:
    """`before → after` on one line. Where the one-line forms read the same (only whitespace changed,
    in a string say, or the change lies past the cut), the first difference is shown as well, its
    spaces drawn as `·` (a finding's message is one line: runs of spaces are cut to one there):
    a reviewer must see what the edit was, not two equal texts."""
    a, b = _short(before), _short(after)
    if a != b:
        return f"{a} → {b}"
    at = next((n for n, (x, y) in enumerate(zip(before, after, strict=False)) if x != y), min(len(before), len(after)))
    start = max(0, at - AROUND)

    def window(text: str) -> str:
        return repr(text[start:at + AROUND]).replace(" ", "·")

    return (f"{a} (the same on one line; they first differ at character {at + 1}, spaces shown as ·: "
            f"{window(before)} → {window(after)})")


# pytest would collect these names from any test module that imports them.
tests_not_additive.__test__ = False  # type: ignore[attr-defined]
test_file_findings.__test__ = False  # type: ignore[attr-defined]
