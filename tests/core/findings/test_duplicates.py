"""duplicate-function: copies (renamed variables, other literals) fire; similar-but-different stays quiet."""

from __future__ import annotations

import ast
from pathlib import Path

from reviewui.core.findings.duplicates import MIN_TOKENS, SIMILARITY_THRESHOLD, duplicate_function, normalize, similarity
from reviewui.core.findings.source import TreeSource
from reviewui.core.fixtures import changed_symbols
from tests.core.findings.helpers import branch, only

EXISTING = '''import re

TOKEN = re.compile(r"gh[pousr]_[A-Za-z0-9]{36}")


def find_tokens(text):
    """Return GitHub tokens in text."""
    found = []
    for line in text.splitlines():
        for match in TOKEN.finditer(line):
            if match.group(0) not in found:
                found.append(match.group(0))
    return found
'''

COPY = '''

def secrets_in(prompt):
    hits = []
    for row in prompt.splitlines():
        for m in TOKEN.finditer(row):
            if m.group(1) not in hits:
                hits.append(m.group(1))
    return hits
'''

DIFFERENT = '''

def words_in(prompt):
    seen = {}
    for row in prompt.split(","):
        for part in row.strip().split():
            if len(part) > 3:
                seen[part] = seen.get(part, 0) + 1
    return sorted(seen)
'''


def dups(tmp_path: Path, change: dict):
    target, diff, settings = branch(tmp_path / "r", {"pkg/__init__.py": "", "pkg/scan.py": EXISTING}, change)
    syms = changed_symbols(target.repo_dir, target.base, target.head, [f.path for f in diff.files])
    return duplicate_function(syms, TreeSource(str(target.repo_dir), target.head), settings.test_globs)


def test_copy_with_renamed_variables_fires(tmp_path: Path) -> None:
    f = only(dups(tmp_path, {"pkg/guard.py": "from pkg.scan import TOKEN\n" + COPY}))
    assert (f.kind, f.severity, f.file, f.line, f.symbol) == ("duplicate-function", "warning", "pkg/guard.py", 4, "pkg.guard.secrets_in")
    assert "the same as existing find_tokens (pkg/scan.py:6)" in f.message and "threshold 90%" in f.message
    assert "= pkg/scan.py:6: def find_tokens(text):" in f.evidence


def test_near_copy_reports_its_percentage(tmp_path: Path) -> None:
    near = COPY.replace("    return hits\n", "    hits.sort()\n    return hits\n")
    f = only(dups(tmp_path, {"pkg/guard.py": "from pkg.scan import TOKEN\n" + near}))
    assert "% the same as existing find_tokens" in f.message and "the same as existing" in f.message


def test_similar_but_different_function_is_quiet(tmp_path: Path) -> None:
    assert dups(tmp_path, {"pkg/words.py": DIFFERENT}) == []


def test_same_shape_calling_other_apis_is_quiet(tmp_path: Path) -> None:
    other = COPY.replace("splitlines", "split").replace("finditer", "findall")
    assert dups(tmp_path, {"pkg/guard.py": "from pkg.scan import TOKEN\n" + other}) == []


def test_tiny_functions_are_never_duplicates(tmp_path: Path) -> None:
    base_small = "def is_token(p):\n    return 'ghp_' in p\n"
    target, diff, settings = branch(
        tmp_path / "r", {"pkg/a.py": base_small}, {"pkg/b.py": "def reject(prompt):\n    return 'github_token' in prompt\n"}
    )
    syms = changed_symbols(target.repo_dir, target.base, target.head, ["pkg/b.py"])
    assert duplicate_function(syms, TreeSource(str(target.repo_dir), target.head)) == []


def test_copies_in_test_files_are_not_reported(tmp_path: Path) -> None:
    assert dups(tmp_path, {"tests/test_scan.py": "from pkg.scan import TOKEN\n" + COPY}) == []


def test_normalize_abstracts_locals_and_literals_only() -> None:
    a = ast.parse("def f(x):\n    y = x + 1\n    return len(y.items)\n").body[0]
    b = ast.parse("def g(q):\n    z = q + 99\n    return len(z.items)\n").body[0]
    c = ast.parse("def g(q):\n    z = q - 99\n    return len(z.values)\n").body[0]
    assert normalize(a) == normalize(b)
    assert normalize(a) != normalize(c)
    assert "N:len" in normalize(a) and "A:items" in normalize(a) and "V" in normalize(a)
    assert similarity(normalize(a), normalize(c)) < 1.0
    assert 0 < SIMILARITY_THRESHOLD <= 1 and MIN_TOKENS > 10


SHORT_EXISTING = '''import re


def has_github_token(text):
    pattern = re.compile(r"gh[pousr]_[A-Za-z0-9]{36}")
    return pattern.search(text) is not None
'''


def test_short_exact_copy_under_a_new_name_fires(tmp_path: Path) -> None:
    copy = "import re\n\n\ndef reject_tokens(prompt):\n    rx = re.compile(r'ghp_x')\n    return rx.search(prompt) is not None\n"
    target, diff, settings = branch(tmp_path / "r", {"pkg/guards.py": SHORT_EXISTING}, {"pkg/bench.py": copy})
    syms = changed_symbols(target.repo_dir, target.base, target.head, ["pkg/bench.py"])
    f = only(duplicate_function(syms, TreeSource(str(target.repo_dir), target.head)))
    assert f.symbol == "pkg.bench.reject_tokens" and "the same as existing has_github_token" in f.message


def test_short_near_copy_is_quiet(tmp_path: Path) -> None:
    near = "import re\n\n\ndef reject_tokens(prompt):\n    rx = re.compile(r'ghp_x')\n    return rx.search(prompt) is None\n"
    target, diff, settings = branch(tmp_path / "r", {"pkg/guards.py": SHORT_EXISTING}, {"pkg/bench.py": near})
    syms = changed_symbols(target.repo_dir, target.base, target.head, ["pkg/bench.py"])
    assert duplicate_function(syms, TreeSource(str(target.repo_dir), target.head)) == []
