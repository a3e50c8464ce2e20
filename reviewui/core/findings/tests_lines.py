"""`tests-not-additive` read from diff lines, for test files that are not parsable Python.

Rust, Go, JavaScript, Java test files (and Python with a syntax error) are
judged line by line: a removed line that is a check (assert_eq!, expect(),
t.Errorf, assertEquals...) or a test definition, not re-added elsewhere in
the file, is a finding, paired with the added check that replaced it; a skip
marker (#[ignore], it.skip, @Disabled, t.Skip) added onto an unchanged line
is a skip added to an existing test. Comment lines never count.
"""

from __future__ import annotations

import re
from collections import Counter

from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import DiffLine, Hunk
from reviewui.core.findings.model import Finding, finding

KIND = "tests-not-additive"
MAX_SHOWN = 100

_COMMENT = re.compile(r"^\s*(#(?!\[)|//|/\*|\*|--|;)")
_CHECK = re.compile(
    r"(?i:assert\w*\s*[(!\s])|\bexpect\s*\(|\.should\b|\.to[A-Z]\w*\s*\(|\bt\.(Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\("
    r"|\brequire\.\w+\s*\(|\bEXPECT_[A-Z_]+\s*\(|\bverify\s*\("
)
_TESTDEF = re.compile(
    r"^\s*(async\s+)?(def|fn|func|function)\s+[Tt]est\w*|^\s*#\[(\w+::)?test\]|^\s*@Test\b"
    r"|^\s*(it|test|describe)\s*\(\s*['\"`]"
)
_SKIP = re.compile(
    r"#\[ignore\b|\bxit\s*\(|\bxdescribe\s*\(|\b(it|test|describe)\.(skip|todo)\s*\(|@Disabled\b|@Ignore\b"
    r"|\bt\.Skip\w*\s*\(|pytest\.mark\.(skip|xfail)|\bunittest\.skip|\bpytest\.(skip|xfail)\s*\(|\bskipTest\s*\("
    r"|@(skip|xfail)\b"
)


def compare_lines(f: FileDiff) -> list[Finding]:
    """Return findings from the diff lines of a test file that cannot be parsed as Python."""
    out: list[Finding] = []
    added_texts = Counter(ln.text.strip() for h in f.hunks for ln in h.lines if ln.kind == "added")
    removed_texts = Counter(ln.text.strip() for h in f.hunks for ln in h.lines if ln.kind == "removed")
    for h in f.hunks:
        removed = [ln for ln in h.lines if ln.kind == "removed" and not _COMMENT.match(ln.text)]
        added = [ln for ln in h.lines if ln.kind == "added" and not _COMMENT.match(ln.text)]
        for pattern, what in ((_TESTDEF, "test"), (_CHECK, "check")):
            gone = [ln for ln in removed if pattern.search(ln.text) and added_texts[ln.text.strip()] == 0]
            if what == "check":
                gone = [ln for ln in gone if not _TESTDEF.search(ln.text)]
            new = [ln for ln in added if pattern.search(ln.text) and removed_texts[ln.text.strip()] == 0]
            for i, before in enumerate(gone):
                after = new[i] if i < len(new) and what == "check" else None
                if after is None:
                    out.append(
                        finding(
                            KIND,
                            f"existing {what} removed: {_short(before.text.strip())}",
                            file=f.path,
                            line=_new_line_near(h, before),
                            evidence=f"- {before.old_no}: {before.text.strip()}",
                        )
                    )
                else:
                    out.append(
                        finding(
                            KIND,
                            f"existing {what} changed: {_short(before.text.strip())} → {_short(after.text.strip())}",
                            file=f.path,
                            line=after.new_no,
                            evidence=f"- {before.old_no}: {before.text.strip()}\n+ {after.new_no}: {after.text.strip()}",
                        )
                    )
        out += _added_skips(f.path, h)
    return out


def _added_skips(path: str, h: Hunk) -> list[Finding]:
    """Skip markers added right above existing (context) lines, i.e. onto an existing test."""
    out: list[Finding] = []
    lines = list(h.lines)
    for i, ln in enumerate(lines):
        if ln.kind != "added" or not _SKIP.search(ln.text) or _COMMENT.match(ln.text):
            continue
        rest = [x for x in lines[i + 1 :] if x.kind != "removed"]
        onto_existing = rest and rest[0].kind == "context"
        inside_existing = _inside_existing_test(lines[:i])
        if onto_existing or inside_existing:
            out.append(
                finding(
                    KIND,
                    f"skip added to an existing test: {_short(ln.text.strip())}",
                    file=path,
                    line=ln.new_no,
                    evidence=f"+ {ln.new_no}: {ln.text.strip()}",
                )
            )
    return out


def _inside_existing_test(before: list[DiffLine]) -> bool:
    """True when the nearest test definition above (within the hunk) is an unchanged line."""
    for ln in reversed(before):
        if _TESTDEF.search(ln.text):
            return ln.kind == "context"
    return False


def deleted_lines(path: str, old_text: str) -> list[Finding]:
    """Return a finding when a deleted (non-Python) test file held test definitions."""
    lines = old_text.splitlines()
    tests = [(i + 1, ln.strip()) for i, ln in enumerate(lines) if _TESTDEF.search(ln)]
    if not tests:
        return []
    return [
        finding(
            KIND,
            f"existing test file deleted with {len(tests)} test(s)",
            file=path,
            evidence="\n".join(f"- {n}: {t}" for n, t in tests[:20]),
        )
    ]


def snapshot_changed(f: FileDiff) -> list[Finding]:
    """Return a finding when an existing snapshot/golden file loses or changes lines."""
    if f.status != "deleted" and f.removed == 0:
        return []
    what = "deleted" if f.status == "deleted" else f"changed ({f.removed} line(s) removed)"
    first = next((ln for h in f.hunks for ln in h.lines if ln.kind == "removed"), None)
    evidence = f"- {first.old_no}: {first.text}" if first is not None else ""
    return [
        finding(
            KIND,
            f"existing snapshot/golden file {what}",
            file=f.path,
            line=None if f.status == "deleted" or not f.hunks else f.hunks[0].new_start or None,
            evidence=evidence,
        )
    ]


def _new_line_near(h: Hunk, ln: DiffLine) -> int | None:
    """The branch-side line where a removed line used to be."""
    last = None
    for x in h.lines:
        if x is ln:
            break
        if x.new_no is not None:
            last = x.new_no
    return (last + 1) if last is not None else (h.new_start or None)


def _short(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= MAX_SHOWN else one[: MAX_SHOWN - 1] + "…"
