"""`tests-not-additive` for test configuration: collection narrowed or checks relaxed.

A suite can be made green without touching a test: `-k`/`--deselect` in
`addopts`, a narrower `testpaths`, a `collect_ignore` entry in a conftest,
`xfail_strict` or `-W error` dropped. Each pytest setting is read from
pyproject.toml, pytest.ini, tox.ini and setup.cfg at both ends of the
branch and compared; a narrowing is only reported when it is one (a new
`testpaths` that still covers every existing test file is quiet).
"""

from __future__ import annotations

import ast
import configparser
import re
import shlex
import tomllib
from collections import Counter
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from reviewui.core.findings.model import Finding, finding
from reviewui.core.findings.pyast import unparse
from reviewui.core.fixtures.source import call_name, walk_toplevel
from reviewui.core.findings.source import file_text, parse
from reviewui.core.git import list_files
from reviewui.core.roles import DEFAULT_TEST_GLOBS, is_test_path

if TYPE_CHECKING:
    from reviewui.core.target import Target
    from reviewui.core.config import Settings
    from reviewui.core.diff import Diff


KIND = "tests-not-additive"
CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
DEFAULT_PYTHON_FUNCTIONS = ("test",)
DEFAULT_PYTHON_CLASSES = ("Test",)

# addopts options that select fewer tests when added...
_SELECTING = frozenset(
    "-k -m --deselect --ignore --ignore-glob --lf --last-failed --sw --stepwise --stepwise-skip --co "
    "--collect-only --noconftest --continue-on-collection-errors <path>".split()
)
# ...and options that make failures count when present.
_STRICT = frozenset("--strict-markers --strict-config --strict --doctest-modules --doctest-glob --runxfail --cov-fail-under".split())
_TAKES_VALUE = frozenset(
    "-k -m --deselect --ignore --ignore-glob -W --pythonwarnings -p -o --override-ini -c --rootdir --confcutdir "
    "--cov --cov-fail-under --cov-report --junitxml --junit-xml --tb --maxfail -n --numprocesses --dist "
    "--log-level --basetemp --doctest-glob --import-mode --durations --color --capture".split()
)
_HOOKS_THAT_HIDE = re.compile(r"deselect|\bskip\w*|xfail|\.remove\(|\[:\]\s*=|\bdel\b|\.pop\(|\bignore\w*")


def config_loosened(target: "Target", diff: "Diff", settings: "Settings") -> list[Finding]:
    """Return findings for pytest settings and conftest hooks that narrow or relax the suite."""
    out: list[Finding] = []
    for f in diff.files:
        if f.binary:
            continue
        name = PurePosixPath(f.path).name
        old_path = f.old_path or f.path
        old = None if f.status == "added" else file_text(str(target.repo_dir), target.base, old_path)
        new = None if f.status == "deleted" else file_text(str(target.repo_dir), target.head, f.path)
        if name in CONFIG_FILES:
            before, after = read_options(name, old), read_options(name, new)
            if before is None or after is None:
                continue  # unreadable config: pytest itself would fail, nothing is hidden
            folder = str(PurePosixPath(f.path).parent)
            out += compare_options(target, settings, f.path, new or "", before, after, "" if folder == "." else folder)
        elif name == "conftest.py":
            out += compare_conftest(f.path, old, new)
    return out


# --- ini options -------------------------------------------------------------


def read_options(name: str, text: str | None) -> dict[str, Any] | None:
    """Return the pytest settings in a config file's text ({} when none; None when unreadable)."""
    if text is None:
        return {}
    if name == "pyproject.toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None
        tool = data.get("tool", {}) if isinstance(data.get("tool"), dict) else {}
        pytest_section = tool.get("pytest", {}) if isinstance(tool.get("pytest"), dict) else {}
        raw = dict(pytest_section.get("ini_options", {}) or {})
        raw.update({k: v for k, v in pytest_section.items() if k != "ini_options"})
        return {k: _as_list(k, v) for k, v in raw.items()}
    section = "tool:pytest" if name == "setup.cfg" else "pytest"
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    if not parser.has_section(section):
        return {}
    return {k: _as_list(k, v) for k, v in parser.items(section)}


def _as_list(key: str, value: Any) -> Any:
    if key == "xfail_strict":
        return value if isinstance(value, bool) else str(value).strip().lower() in ("true", "1", "yes", "on")
    if isinstance(value, list):
        items = [str(v) for v in value]
        return _split_opts(" ".join(shlex.quote(i) for i in items)) if key == "addopts" else items
    text = str(value)
    if key == "addopts":
        return _split_opts(text)
    if key == "filterwarnings":
        return [ln.strip() for ln in text.splitlines() if ln.strip()]
    return text.split()


def _split_opts(text: str) -> list[str]:
    """Turn an addopts string into options, each with its value: `-k expr`, `--strict-markers`."""
    try:
        tokens = shlex.split(text, comments=True)
    except ValueError:
        tokens = text.split()
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith("-"):
            out.append(f"<path> {tok}")
        elif tok.startswith("--") and "=" in tok:
            flag, _, value = tok.partition("=")
            out.append(f"{flag} {value}")
        elif tok in _TAKES_VALUE and i + 1 < len(tokens):
            out.append(f"{tok} {tokens[i + 1]}")
            i += 1
        elif len(tok) > 2 and tok[1] in "kmWpon" and not tok.startswith("--"):
            out.append(f"{tok[:2]} {tok[2:]}")
        else:
            out.append(tok)
        i += 1
    return out


def _flag(opt: str) -> str:
    return opt.split(" ", 1)[0]


def compare_options(
    target: "Target", settings: "Settings", path: str, text: str, before: dict[str, Any], after: dict[str, Any], folder: str
) -> list[Finding]:
    """Return the ways `after` collects or checks less than `before`."""
    out: list[Finding] = []

    def add(key: str, message: str, evidence: str) -> None:
        out.append(finding(KIND, message, file=path, line=_key_line(text, key), evidence=evidence))

    old_opts, new_opts = Counter(before.get("addopts", [])), Counter(after.get("addopts", []))
    for opt in (new_opts - old_opts).elements():
        if _flag(opt) in _SELECTING:
            add("addopts", f"test selection narrowed: addopts gains {_show(opt)}", f"+ addopts: {_show(opt)}")
    for opt in (old_opts - new_opts).elements():
        flag, _, value = opt.partition(" ")
        if flag in _STRICT or (flag in ("-W", "--pythonwarnings") and value.startswith("error")) or opt == "-Werror":
            add("addopts", f"test strictness relaxed: addopts drops {_show(opt)}", f"- addopts: {_show(opt)}")
    if "testpaths" in after or "testpaths" in before:
        lost = _uncovered(target, settings, before.get("testpaths", []), after.get("testpaths", []), folder)
        if lost:
            add(
                "testpaths",
                f"testpaths narrowed: {len(lost)} existing test file(s) no longer collected, e.g. {lost[0]}",
                f"- testpaths = {' '.join(before.get('testpaths', [])) or '(all)'}\n"
                f"+ testpaths = {' '.join(after.get('testpaths', [])) or '(all)'}",
            )
    for key, default in (
        ("python_files", DEFAULT_PYTHON_FILES),
        ("python_functions", DEFAULT_PYTHON_FUNCTIONS),
        ("python_classes", DEFAULT_PYTHON_CLASSES),
    ):
        old_p, new_p = before.get(key, list(default)), after.get(key, list(default))
        dropped = [p for p in old_p if p not in new_p]
        if dropped and (key != "python_files" or _files_dropped(target, settings, old_p, new_p)):
            add(key, f"test collection narrowed: {key} drops {', '.join(dropped)}", f"- {key} = {' '.join(old_p)}\n+ {key} = {' '.join(new_p)}")
    new_dirs = [d for d in after.get("norecursedirs", []) if d not in before.get("norecursedirs", [])]
    hidden = _hidden_by_norecurse(target, settings, new_dirs, folder)
    if hidden:
        add("norecursedirs", f"test collection narrowed: norecursedirs now skips {hidden[0]}", f"+ norecursedirs: {' '.join(new_dirs)}")
    if before.get("xfail_strict") is True and after.get("xfail_strict") is not True:
        add("xfail_strict", "test strictness relaxed: xfail_strict turned off", "- xfail_strict = true")
    for w in before.get("filterwarnings", []):
        if w.startswith("error") and w not in after.get("filterwarnings", []):
            add("filterwarnings", f"test strictness relaxed: filterwarnings drops {w}", f"- filterwarnings: {w}")
    return out


def _base_tests(target: "Target", settings: "Settings") -> list[str]:
    """The base's test modules, by the one rule (`TestLayout.is_module`), among its test files."""
    globs = settings.test_globs or DEFAULT_TEST_GLOBS
    layout = settings.test_layout
    return [p for p in _python_tests_at(str(target.repo_dir), target.base, globs) if layout.is_module(p)]


@lru_cache(maxsize=8)
def _python_tests_at(repo_dir: str, rev: str, globs: tuple[str, ...]) -> tuple[str, ...]:
    # A commit's tree never changes, so (repo, sha) is a safe cache key.
    return tuple(p for p in list_files(repo_dir, rev) if p.endswith(".py") and is_test_path(p, globs))


def _covered(path: str, testpaths: list[str], folder: str) -> bool:
    if not testpaths:
        return True
    for tp in testpaths:
        tp = str(PurePosixPath(folder) / tp) if folder else tp
        tp = tp.rstrip("/").removeprefix("./")
        if tp in ("", "."):
            return True
        if path == tp or path.startswith(tp + "/") or fnmatchcase(path, tp) or fnmatchcase(path, tp + "/*"):
            return True
    return False


def _uncovered(target: "Target", settings: "Settings", old: list[str], new: list[str], folder: str) -> list[str]:
    if old == new:
        return []
    inside = [p for p in _base_tests(target, settings) if not folder or p.startswith(folder + "/")]
    return [p for p in inside if _covered(p, old, folder) and not _covered(p, new, folder)]


def _files_dropped(target: "Target", settings: "Settings", old: list[str], new: list[str]) -> bool:
    for p in _base_tests(target, settings):
        name = PurePosixPath(p).name
        if any(fnmatchcase(name, g) for g in old) and not any(fnmatchcase(name, g) for g in new):
            return True
    return False


def _hidden_by_norecurse(target: "Target", settings: "Settings", dirs: list[str], folder: str) -> list[str]:
    if not dirs:
        return []
    hits: list[str] = []
    for p in _base_tests(target, settings):
        rel = p[len(folder) + 1 :] if folder and p.startswith(folder + "/") else p
        if any(fnmatchcase(part, d) for part in PurePosixPath(rel).parts[:-1] for d in dirs):
            hits.append(p)
    return hits


def collected_by_name(target: "Target", rev: str, path: str) -> bool:
    """True when `path`'s file name matches pytest's python_files at `rev` (root config only)."""
    patterns: list[str] | None = None
    for name in CONFIG_FILES:
        opts = read_options(name, file_text(str(target.repo_dir), rev, name))
        if opts and "python_files" in opts:
            patterns = opts["python_files"]
            break
    fname = PurePosixPath(path).name
    if fname == "conftest.py":
        return True
    return any(fnmatchcase(fname, g) for g in (patterns or DEFAULT_PYTHON_FILES))


# --- conftest.py -------------------------------------------------------------


def compare_conftest(path: str, old: str | None, new: str | None) -> list[Finding]:
    """Return collect_ignore entries and test-hiding hooks the branch adds to a conftest."""
    new_tree = parse(new, path) if new is not None else None
    if new_tree is None:
        return []
    old_tree = parse(old, path) if old is not None else None
    out: list[Finding] = []
    old_ignores = Counter(t for t, _ in _ignores(old_tree)) if old_tree else Counter()
    for text, line in _ignores(new_tree):
        if old_ignores[text] > 0:
            old_ignores[text] -= 1
            continue
        out.append(
            finding(KIND, f"conftest now ignores {text} at collection", file=path, line=line, evidence=f"+ {line}: {text}")
        )
    old_hooks = _hooks(old_tree) if old_tree else {}
    for name, (node, src) in _hooks(new_tree).items():
        before = old_hooks.get(name, (None, ""))[1]
        if src == before:
            continue
        gained = Counter(_HOOKS_THAT_HIDE.findall(src)) - Counter(_HOOKS_THAT_HIDE.findall(before))
        if name == "pytest_ignore_collect" or gained:
            verb = "changed" if name in old_hooks else "added"
            out.append(
                finding(
                    KIND,
                    f"conftest hook {name} {verb} and can hide tests ({', '.join(sorted(gained)) or 'ignores files'})",
                    file=path,
                    line=node.lineno,
                    symbol=name,
                    evidence=f"+ {node.lineno}: def {name}(...)",
                )
            )
    return out


def _ignores(tree: ast.Module) -> list[tuple[str, int]]:
    """(entry, line) for everything put into collect_ignore / collect_ignore_glob."""
    out: list[tuple[str, int]] = []
    names = ("collect_ignore", "collect_ignore_glob")
    for stmt in walk_toplevel(tree.body):
        value: ast.AST | None = None
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id in names for t in stmt.targets):
            value = stmt.value
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and isinstance(stmt.target, ast.Name) and stmt.target.id in names:
            value = stmt.value
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            name = call_name(stmt.value)
            if name.split(".")[0] in names and name.endswith((".append", ".extend", ".insert")):
                value = ast.List(elts=list(stmt.value.args), ctx=ast.Load())
        if value is None:
            continue
        elts = value.elts if isinstance(value, (ast.List, ast.Tuple, ast.Set)) else [value]
        for e in elts:
            text = e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else unparse(e)
            out.append((text, getattr(e, "lineno", stmt.lineno)))
    return out


def _hooks(tree: ast.Module) -> dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    out: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] = {}
    for stmt in walk_toplevel(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("pytest_"):
            out[stmt.name] = (stmt, unparse(stmt))
    return out


# --- text helpers ------------------------------------------------------------


def _key_line(text: str, key: str) -> int | None:
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*[=:]", re.MULTILINE)
    m = pattern.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _show(opt: str) -> str:
    """An option as a user would type it: `-k 'not slow'`."""
    flag, sep, value = opt.partition(" ")
    if flag == "<path>":
        return shlex.quote(value)
    return f"{flag} {shlex.quote(value)}" if sep else flag
