"""uncalled-function and test-mentions-only on real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.findings import calls
from reviewui.core.findings.refs import RefIndex
from reviewui.core.findings.source import TreeSource
from reviewui.core.fixtures import analyze, changed_symbols
from reviewui.core.fixtures.model import FixtureReport, SymbolUse
from tests.core.findings.helpers import branch, only

BASE = {
    "pkg/__init__.py": "",
    "pkg/guard.py": "def check(prompt):\n    return 'ghp_' in prompt\n",
    "pkg/app.py": "from pkg.guard import check\n\n\ndef handle(prompt):\n    return check(prompt)\n",
    "tests/test_guard.py": "from pkg.guard import check\n\n\ndef test_check():\n    assert check('ghp_x')\n",
}


def uncalled(tmp_path: Path, change: dict, base: dict | None = None):
    target, diff, settings = branch(tmp_path / "r", base or BASE, change)
    paths = [f.path for f in diff.files if f.status != "deleted"]
    syms = changed_symbols(target.repo_dir, target.base, target.head, paths)
    return calls.uncalled_function(syms, RefIndex(TreeSource(str(target.repo_dir), target.head)), settings.test_globs)


GUARD_PLUS = BASE["pkg/guard.py"] + "\n\ndef reject_github_tokens_in_prompt(prompt: str) -> bool:\n    return 'github_token' in prompt\n"


def test_function_nothing_calls_fires(tmp_path: Path) -> None:
    f = only(uncalled(tmp_path, {"pkg/guard.py": GUARD_PLUS}))
    assert (f.kind, f.severity, f.file, f.line) == ("uncalled-function", "warning", "pkg/guard.py", 5)
    assert f.symbol == "pkg.guard.reject_github_tokens_in_prompt"
    assert "nothing in the repository calls or references it" in f.message


def test_recursion_is_not_a_caller(tmp_path: Path) -> None:
    rec = BASE["pkg/guard.py"] + "\n\ndef walk(n):\n    return walk(n - 1) if n else 0\n"
    assert only(uncalled(tmp_path, {"pkg/guard.py": rec})).symbol == "pkg.guard.walk"


def test_imported_but_never_called_says_so(tmp_path: Path) -> None:
    test = "from pkg.guard import check, reject_github_tokens_in_prompt\n\n\ndef test_check():\n    assert check('ghp_x')\n"
    f = only(uncalled(tmp_path, {"pkg/guard.py": GUARD_PLUS, "tests/test_guard.py": test}))
    assert f.severity == "warning" and "imported by tests/test_guard.py but never called" in f.message


def test_called_only_from_tests_is_info(tmp_path: Path) -> None:
    test = BASE["tests/test_guard.py"] + "\n\ndef test_reject():\n    from pkg.guard import reject_github_tokens_in_prompt as r\n    assert r('github_token')\n"
    f = only(uncalled(tmp_path, {"pkg/guard.py": GUARD_PLUS, "tests/test_guard.py": test}))
    assert f.severity == "info" and "called only from tests (tests/test_guard.py)" in f.message


def test_a_test_helper_used_by_tests_is_quiet_and_an_unused_one_is_not(tmp_path: Path) -> None:
    # As in reviewui's own change: `_pidfds` in a test file, called by the test below it.
    helper = "\n\ndef _pidfds():\n    return 0\n"
    used = BASE["tests/test_guard.py"] + helper + "\n\ndef test_none():\n    assert _pidfds() == 0\n"
    assert uncalled(tmp_path / "used", {"tests/test_guard.py": used}) == []
    f = only(uncalled(tmp_path / "unused", {"tests/test_guard.py": BASE["tests/test_guard.py"] + helper}))
    assert f.severity == "warning" and f.symbol.endswith("_pidfds") and "nothing in the repository" in f.message


def test_called_from_source_is_quiet(tmp_path: Path) -> None:
    app = "from pkg.guard import check, reject_github_tokens_in_prompt\n\n\ndef handle(prompt):\n    return check(prompt) and reject_github_tokens_in_prompt(prompt)\n"
    assert uncalled(tmp_path, {"pkg/guard.py": GUARD_PLUS, "pkg/app.py": app}) == []


def test_passed_as_a_callback_counts(tmp_path: Path) -> None:
    app = BASE["pkg/app.py"] + "\n\nfrom pkg import guard\nCHECKS = [guard.reject_github_tokens_in_prompt]\n"
    assert uncalled(tmp_path, {"pkg/guard.py": GUARD_PLUS, "pkg/app.py": app}) == []


def test_function_registered_by_a_decorator_route_is_quiet(tmp_path: Path) -> None:
    web = "from flask import Flask\n\napp = Flask(__name__)\n\n\n@app.route('/health')\ndef health():\n    return 'ok'\n"
    assert uncalled(tmp_path, {"pkg/web.py": web}) == []


def test_function_called_only_from_a_decorator_registered_route_is_quiet(tmp_path: Path) -> None:
    web = (
        "from flask import Flask\n\napp = Flask(__name__)\n\n\ndef render_status(code):\n    return f'status {code}'\n\n\n"
        "@app.get('/health')\ndef health():\n    return render_status(200)\n"
    )
    assert uncalled(tmp_path, {"pkg/web.py": web}) == []
    orphan = web.replace("return render_status(200)", "return 'ok'")
    assert only(uncalled(tmp_path / "2", {"pkg/web.py": orphan})).symbol == "pkg.web.render_status"


def test_plain_decorators_do_not_hide_an_uncalled_function(tmp_path: Path) -> None:
    code = "import functools\n\n\n@functools.lru_cache\ndef cached(n):\n    return n * 2\n"
    assert only(uncalled(tmp_path, {"pkg/c.py": code})).symbol == "pkg.c.cached"


@pytest.mark.parametrize(
    "code",
    [
        "__all__ = ['public_api']\n\n\ndef public_api():\n    return 1\n",
        "class Box:\n    def __len__(self):\n        return 0\n\n\nBox()\n",
        "def main():\n    return 0\n",
        "import ast\n\n\nclass V(ast.NodeVisitor):\n    def visit_Name(self, node):\n        return node\n\n\nV()\n",
        "from textual.app import App\n\n\nclass MyApp(App):\n    def compose(self):\n        return []\n\n\nMyApp()\n",
    ],
)
def test_entry_points_are_quiet(tmp_path: Path, code: str) -> None:
    assert uncalled(tmp_path, {"pkg/entry.py": code}) == []


def test_framework_named_methods_are_quiet(tmp_path: Path) -> None:
    code = (
        "class Bus:\n    def emit(self, name):\n        return getattr(self, f'on_{name}')()\n\n"
        "    def on_click(self):\n        return 1\n\n\nBus().emit('click')\n"
    )
    assert uncalled(tmp_path, {"pkg/bus.py": code}) == []
    # the same method as a plain function is not a framework hook
    assert only(uncalled(tmp_path / "2", {"pkg/bus2.py": "def on_click():\n    return 1\n"})).symbol == "pkg.bus2.on_click"


def test_private_method_of_a_library_subclass_still_fires(tmp_path: Path) -> None:
    code = "from textual.app import App\n\n\nclass MyApp(App):\n    def _unused(self):\n        return 1\n\n\nMyApp()\n"
    assert only(uncalled(tmp_path, {"pkg/entry.py": code})).symbol == "pkg.entry.MyApp._unused"


def test_public_method_of_an_in_repo_class_fires_and_a_call_silences_it(tmp_path: Path) -> None:
    code = "class Ledger:\n    def total(self):\n        return 0\n\n\nLedger()\n"
    assert only(uncalled(tmp_path, {"pkg/ledger.py": code})).symbol == "pkg.ledger.Ledger.total"
    used = code + "Ledger().total()\n"
    assert uncalled(tmp_path / "2", {"pkg/ledger.py": used}) == []


def test_entry_point_in_pyproject_is_a_reference(tmp_path: Path) -> None:
    code = "def cli_entry():\n    return 0\n"
    toml = "[project]\nname = 'x'\n\n[project.scripts]\nx = 'pkg.cli:cli_entry'\n"
    assert uncalled(tmp_path, {"pkg/cli.py": code, "pyproject.toml": toml}) == []


def test_changed_functions_and_test_functions_are_not_judged(tmp_path: Path) -> None:
    change = {
        "pkg/guard.py": BASE["pkg/guard.py"].replace("'ghp_'", "'ghp_' or 'gho_'"),
        "tests/test_guard.py": BASE["tests/test_guard.py"] + "\n\ndef test_more():\n    assert check('gho_')\n",
    }
    assert uncalled(tmp_path, change) == []


def test_unused_helper_in_a_test_file_fires(tmp_path: Path) -> None:
    test = BASE["tests/test_guard.py"] + "\n\ndef make_prompt():\n    return 'x'\n"
    assert only(uncalled(tmp_path, {"tests/test_guard.py": test})).symbol == "tests.test_guard.make_prompt"


# --- test-mentions-only ------------------------------------------------------------


def mentions(tmp_path: Path, change: dict):
    target, diff, settings = branch(tmp_path / "r", BASE, change)
    report = analyze(target.repo_dir, target.base, target.head, [f.path for f in diff.files], settings.test_globs)
    return calls.test_mentions_only(report)


def test_test_that_only_imports_the_symbol_fires(tmp_path: Path) -> None:
    test = "from pkg.guard import check, reject_github_tokens_in_prompt\n\n\ndef test_check():\n    assert check('ghp_x')\n"
    f = only(mentions(tmp_path, {"pkg/guard.py": GUARD_PLUS, "tests/test_guard.py": test}))
    assert (f.kind, f.severity, f.symbol, f.line) == ("test-mentions-only", "warning", "pkg.guard.reject_github_tokens_in_prompt", 5)
    assert "tests/test_guard.py::test_check" in f.message


def test_calling_test_or_named_test_is_quiet(tmp_path: Path) -> None:
    calling = "from pkg.guard import reject_github_tokens_in_prompt\n\n\ndef test_x():\n    assert reject_github_tokens_in_prompt('github_token')\n"
    assert mentions(tmp_path, {"pkg/guard.py": GUARD_PLUS, "tests/test_guard.py": calling}) == []


def test_mentions_only_reads_the_fixture_report() -> None:
    def symbol(named: tuple[str, ...]) -> SymbolUse:
        return SymbolUse(
            name="m.f", file="m.py", line=3, end_line=4, start_line=3, status="added", kind="function",
            tests_calling=(), tests_importing_only=("tests/test_m.py::test_a",), tests_named_after=named,
        )

    assert only(calls.test_mentions_only(FixtureReport(tests=(), symbols=(symbol(()),)))).file == "m.py"
    named = FixtureReport(tests=(), symbols=(symbol(("tests/test_m.py::test_f",)),))
    assert calls.test_mentions_only(named) == []
    assert calls.test_mentions_only(None) == []


def test_class_only_named_by_a_test_is_quiet(tmp_path: Path) -> None:
    # isinstance/query_one/pytest.raises name a class the code under test built: not provably unexercised.
    change = {
        "pkg/errors.py": "class GuardError(Exception):\n    pass\n",
        "tests/test_errors.py": "from pkg.errors import GuardError\n\n\ndef test_x():\n    assert issubclass(GuardError, Exception)\n",
    }
    assert mentions(tmp_path, change) == []
