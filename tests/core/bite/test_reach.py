"""What a test run can read (reach.py): the files a kept grade's key holds, and when it is the whole tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.bite.reach import EVERYTHING, Reach, read_tree
from reviewui.core.git import show_file
from tests.gitrepo import RepoBuilder

FILES = {
    "conftest.py": "import pytest\n",
    "pkg/__init__.py": "",
    "pkg/a.py": "from . import b\nfrom .sub.c import thing\n",
    "pkg/b.py": "import os\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/c.py": "thing = 1\n",
    "pkg/unused.py": "x = 1\n",
    "tests/__init__.py": "",
    "tests/deep/conftest.py": "",
    "tests/deep/test_a.py": "import pkg.a\n\n\ndef test_a():\n    assert pkg.a.b\n",
    "tests/test_other.py": "def test_x():\n    import pkg.unused\n",
    "data.json": "{}\n",
}


def _reach(rb: RepoBuilder) -> Reach:
    head = rb.git("rev-parse", "HEAD")
    return Reach(read_tree(str(rb.root), head), lambda p: show_file(rb.root, head, p))


@pytest.fixture
def rb(tmp_path: Path) -> RepoBuilder:
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit(FILES)
    return rb


def test_closure_follows_imports_conftests_and_packages(rb: RepoBuilder) -> None:
    files = _reach(rb).closure(["tests/deep/test_a.py::test_a"])
    assert files == frozenset({
        "tests/deep/test_a.py", "tests/deep/conftest.py", "conftest.py", "tests/__init__.py",
        "pkg/__init__.py", "pkg/a.py", "pkg/b.py", "pkg/sub/__init__.py", "pkg/sub/c.py"})
    assert "pkg/unused.py" in _reach(rb).closure(["tests/test_other.py"])  # an import inside a function counts


def test_what_is_not_read_leaves_the_digest_and_what_is_moves_it(rb: RepoBuilder) -> None:
    tests = ["tests/deep/test_a.py::test_a"]
    before = _reach(rb)
    key = before.digest(before.closure(tests))
    rb.commit({"pkg/unused.py": "x = 2\n", "docs/notes.py": "y = 1\n"})
    assert _reach(rb).digest(_reach(rb).closure(tests)) == key
    for change in ({"pkg/sub/c.py": "thing = 2\n"},           # imported, two levels down
                   {"tests/deep/conftest.py": "X = 1\n"},      # a conftest above the test
                   {"data.json": "[]\n"},                      # every file that is not Python
                   {"tests/deep/pkg.py": "shadow = 1\n"}):     # a new file `import pkg` could now find
        rb.commit(change)
        now = _reach(rb)
        assert now.digest(now.closure(tests)) != key, change
        key = now.digest(now.closure(tests))


@pytest.mark.parametrize("source", [
    "import importlib\nimportlib.import_module('pkg.unused')\n",
    "__import__('pkg.unused')\n",
    "exec(open('pkg/unused.py').read())\n",
    "import subprocess\n",
    "pytest_plugins = ['pkg.unused']\n",
    "import inspect\nSRC = inspect.getsource(inspect)\n",
    "PATH = 'pkg/unused.py'\n",
    "def broken(:\n",
])
def test_what_static_imports_cannot_bound_is_everything(rb: RepoBuilder, source: str) -> None:
    rb.commit({"tests/deep/test_a.py": source})
    assert _reach(rb).closure(["tests/deep/test_a.py"]) == EVERYTHING


def test_a_whole_suite_run_a_directory_or_plugins_in_config_are_everything(rb: RepoBuilder) -> None:
    reach = _reach(rb)
    assert reach.closure([]) == EVERYTHING
    assert reach.closure(["tests/deep"]) == EVERYTHING
    assert reach.closure(["tests/deep/test_a.py"], [("pkg/a.py", b"import runpy\n")]) == EVERYTHING
    rb.commit({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = \"-p pkg.unused\"\n"})
    assert _reach(rb).closure(["tests/deep/test_a.py"]) == EVERYTHING


def test_an_edit_brings_its_own_imports(rb: RepoBuilder) -> None:
    reach = _reach(rb)
    plain = reach.closure(["tests/deep/test_a.py"])
    edited = reach.closure(["tests/deep/test_a.py"], [("pkg/a.py", b"from . import unused\n")])
    assert isinstance(plain, frozenset) and isinstance(edited, frozenset)
    assert edited - plain == {"pkg/unused.py"}


def test_a_star_import_reaches_the_package_s_modules_and_re_compile_is_no_escape(rb: RepoBuilder) -> None:
    rb.commit({"tests/deep/test_a.py": "import re\nfrom pkg.sub import *\n\nPAT = re.compile('x')\n",
               "pkg/sub/d.py": "y = 2\n"})
    files = _reach(rb).closure(["tests/deep/test_a.py"])
    assert isinstance(files, frozenset) and {"pkg/sub/c.py", "pkg/sub/d.py"} <= files
    for source in ("import os\nos.listdir('.')\n", "x = compile('1', 'f', 'eval')\n", "import glob\n"):
        rb.commit({"tests/deep/test_a.py": source})
        assert _reach(rb).closure(["tests/deep/test_a.py"]) == EVERYTHING, source
