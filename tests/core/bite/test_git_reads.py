"""Which accesses to the run's `.git` the origin plugin counts as a test reading every changed
source file (inside/origin_plugin.py), the plugin loaded alone in a fresh Python: fast, and exact
about each path (the sandboxed sweep is tests/hostile/test_git_store_reads.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core import inside

LOAD = r'''
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("reviewui_origin", sys.argv[1])
plugin = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plugin)
tree, tmp = sys.argv[2], sys.argv[3]
git = os.path.join(tree, ".git")
'''
"""The plugin loaded alone in a fresh Python (argv: the plugin's file, the tree, a scratch folder)."""

SCRIPT = LOAD + r'''

def act(name, fn):
    os.environ["PYTEST_CURRENT_TEST"] = f"t.py::{name} (call)"
    try:
        fn()
    finally:
        os.environ.pop("PYTEST_CURRENT_TEST")
        os.chdir(tree)


def as_pytest(call, path):  # a listing or an open made by pytest's own code
    code = compile(f"import os\ndef run(path):\n    {call}(path)\n", os.path.join(tmp, "_pytest", "x.py"), "exec")
    scope = {}
    exec(code, scope)
    return lambda: scope["run"](path)


act("by_name", lambda: open(os.path.join(git, "HEAD")).close())
act("listed", lambda: os.listdir(os.path.join(git, "objects")))
act("scanned", lambda: list(os.scandir(os.path.join(tree, "pkg", "..", ".git"))))
act("relative", lambda: (os.chdir(os.path.join(git, "objects")), os.listdir("pack")))
os.chdir(os.path.join(git, "objects"))  # while no test runs
act("relative_later", lambda: os.listdir("pack"))
act("through_link", lambda: os.listdir(os.path.join(tree, "store", "objects")))  # the tree's link (argv)
os.symlink(git, os.path.join(tmp, "stash"))  # a link made while no test runs
act("through_new_link", lambda: os.listdir(os.path.join(tmp, "stash", "refs")))
act("linking", lambda: os.symlink(os.path.join(git, "HEAD"), os.path.join(tmp, "head")))
act("gitignore", lambda: open(os.path.join(tree, ".gitignore")).close())
act("tree", lambda: os.listdir(tree))
act("other_repo", lambda: os.listdir(os.path.join(tmp, "other", ".git")))
# Another repository deleted: shutil walks it by descriptor, opening its `.git` by bare name
# relative to a directory descriptor, a name that relative to the working directory (the tree)
# would be the run's own `.git` (every test that makes and deletes a repository was a reader).
act("rmtree_other_repo", lambda: __import__("shutil").rmtree(os.path.join(tmp, "doomed")))
act("listed_by_pytest", as_pytest("os.listdir", os.path.join(git, "objects")))
act("opened_by_pytest", as_pytest("open", os.path.join(git, "HEAD")))
plugin._collected[0] = True  # collection is over (before it, a read is every test's: test_collection_reads)
os.listdir(git)  # while no test runs: no test to name
print(json.dumps({k: sorted(v) for k, v in plugin._reads.items()}))
'''


def test_each_way_into_git_counts_and_nothing_else_does(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    for d in (tree / ".git" / "objects" / "pack", tree / ".git" / "refs", tree / "pkg",
              tmp_path / "other" / ".git", tmp_path / "_pytest", tmp_path / "doomed" / ".git" / "objects"):
        d.mkdir(parents=True)
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/scratch\n")
    (tree / ".gitignore").write_text("*.pyc\n")
    sources = [str(tree / "pkg" / "a.py"), str(tree / "pkg" / "b.py")]
    for s in sources:
        Path(s).write_text("X = 1\n")
    os.symlink(".git", tree / "store")  # a link of the tree's own into .git
    env = {**os.environ, "REVIEWUI_SOURCE_FILES": os.pathsep.join(sources),
           "REVIEWUI_GIT_DIR": str(tree / ".git"), "REVIEWUI_GIT_LINKS": str(tree / "store")}
    env.pop("PYTEST_CURRENT_TEST", None)
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(inside.source("origin_plugin.py")), str(tree),
                          str(tmp_path)], env=env, cwd=tree, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    reads = json.loads(out.stdout)
    want = sorted(f"t.py::{n}" for n in ("by_name", "listed", "scanned", "relative", "relative_later", "through_link",
                                         "through_new_link", "linking"))
    assert reads == dict.fromkeys(sources, want)


def _run_alone(tmp_path: Path, script: str, *args: str, watch: bool = False) -> tuple[Path, dict[str, list[str]]]:
    """`script` run with the plugin loaded alone, a tree with one changed source `a.py` (`watch`: other
    processes' opens watched too): (that file, what the script printed)."""
    tree = tmp_path / "tree"
    (tree / ".git" / "objects").mkdir(parents=True)
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/scratch\n")
    source = tree / "a.py"
    source.write_text("X = 1\n")
    env = {**os.environ, "REVIEWUI_SOURCE_FILES": str(source), "REVIEWUI_GIT_DIR": str(tree / ".git")}
    env.pop("PYTEST_CURRENT_TEST", None)
    if watch:
        env["REVIEWUI_CHILD_READS"] = "1"
    out = subprocess.run([sys.executable, "-c", script, str(inside.source("origin_plugin.py")), str(tree),
                          str(tmp_path), *args], env=env, cwd=tree, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return source, json.loads(out.stdout)


COLLECTING = LOAD + r'''os.symlink(git, os.path.join(tmp, "before"))  # a link before collection: no read by itself
plugin._collecting.append("tests/t.py")  # a test module's top level, imported while collected
os.symlink(git, os.path.join(tmp, "stash"))  # nor while collecting
os.chdir(git)  # nor a change of directory
os.chdir(tree)
open(os.path.join(tmp, "stash", "HEAD")).close()  # a read through it is
plugin._collecting.pop()
plugin._collecting.append("tests/sub")  # a folder (its conftest imported while it is collected)
os.listdir(os.path.join(git, "objects"))
plugin._collecting.pop()
plugin._items.update(dict.fromkeys(["tests/t.py::a", "tests/t.py::b", "tests/sub/u.py::c", "tests/subway.py::d",
                                     "top.py::e"], frozenset()))
plugin._collected[0] = True
print(json.dumps({k: v for k, v in plugin._named(plugin._reads).items()}))
'''


def test_reads_while_collecting_are_read_by_the_tests_collected_there(tmp_path: Path) -> None:
    """A test module's top level (or a folder's conftest) reading `.git` while it is collected reads for
    every test collected under it, and only for them; a link or a change of directory then is none."""
    source, reads = _run_alone(tmp_path, COLLECTING)
    assert reads == {str(source): ["tests/sub/u.py::c", "tests/t.py::a", "tests/t.py::b"]}


BEFORE = LOAD + r'''
source = os.path.join(tree, "a.py")


def read_from(path):  # an open made by code in the file at `path` (a conftest pytest imports early)
    code = compile("def run(p):\n    open(p).close()\n", path, "exec")
    scope = {}
    exec(code, scope)
    scope["run"](source)


read_from(os.path.join(tree, sys.argv[4], "conftest.py"))
plugin._items.update(dict.fromkeys(["sub/t.py::a", "subway/t.py::b", "t.py::c"], frozenset()))
plugin._collected[0] = True
print(json.dumps(plugin._named(plugin._reads)))
'''


@pytest.mark.parametrize(("conftest", "readers"), [
    ("sub", ["sub/t.py::a"]),  # the tests below its folder, not a folder that only starts the same
    (".", ["sub/t.py::a", "subway/t.py::b", "t.py::c"]),  # the tree's own: every test
    ("../elsewhere", ["sub/t.py::a", "subway/t.py::b", "t.py::c"]),  # not the tree's: every test
])
def test_a_conftest_read_before_collection_is_read_by_the_tests_below_it(tmp_path: Path, conftest: str,
                                                                        readers: list[str]) -> None:
    source, reads = _run_alone(tmp_path, BEFORE, conftest)
    assert reads == {str(source): readers}


FIXTURE = LOAD + r'''
plugin._collected[0] = True
plugin._fixtures.append(plugin._FIXTURE + "digest sub")  # tests/sub's conftest's fixture, being set up
open(os.path.join(tree, "a.py")).close()
plugin._fixtures.pop()
plugin._items.update({"sub/t.py::a": frozenset({"digest"}), "subway/t.py::b": frozenset({"digest"}),
                      "sub/u.py::c": frozenset({"tmp_path"})})
print(json.dumps(plugin._named(plugin._reads)))
'''


def test_a_fixtures_read_is_read_by_its_users_within_its_reach(tmp_path: Path) -> None:
    """Its users below its conftest's folder; not a test outside it using a fixture of the same name."""
    source, reads = _run_alone(tmp_path, FIXTURE)
    assert reads == {str(source): ["sub/t.py::a"]}



CHILDREN = LOAD + r'''
import subprocess
source = os.path.join(tree, "a.py")
assert plugin._watch is not None, "no inotify watch here"
subprocess.run(["cat", source], capture_output=True)  # another process, before any collector: nobody's


class Module:
    nodeid = "t.py"


collecting = plugin.pytest_make_collect_report(Module())
next(collecting)
subprocess.run(["cat", source], capture_output=True)  # while t.py is collected: its tests'
next(collecting, None)
plugin._items.update(dict.fromkeys(["t.py::a", "u.py::b"], frozenset()))
plugin._collected[0] = True
print(json.dumps(plugin._named(plugin._reads)))
'''


def test_another_process_reading_while_collecting_counts_and_before_it_does_not(tmp_path: Path) -> None:
    """Before the first collector what other processes open is nobody's: pytest's start overlaps
    reviewui's own work on the tree (seen: every test a reader, one unsandboxed run in three)."""
    source, reads = _run_alone(tmp_path, CHILDREN, watch=True)
    assert reads == {str(source): ["t.py::a"]}


WRITES = LOAD + r'''
import shutil
source = os.path.join(tree, "a.py")
own = os.path.join(os.path.dirname(sys.argv[1]), "reviewui_revert_batch_like.py")


def from_file(path, body):  # a function whose code lives in the file at `path`
    scope = {}
    exec(compile("import os\ndef run(p):\n" + body, path, "exec"), scope)
    return scope["run"]


os.makedirs(os.path.join(tmp, "_pytest"), exist_ok=True)
scope = {}
exec(compile("def hook(fn, p):\n    fn(p)\n", os.path.join(tmp, "_pytest", "hooks.py"), "exec"), scope)
as_hook = scope["hook"]  # pytest calling a plugin's hook
# Before collection a revert batch, called by pytest, writes the reverted file and puts git's
# records in place from our own plugins' folder: no read.
as_hook(from_file(own, "    with open(p, 'w') as f:\n        f.write('X = 2\\n')\n"), source)
as_hook(from_file(own, "    os.close(os.open(p, os.O_WRONLY))\n"), source)
as_hook(from_file(own, "    open(p, 'wb').close()\n    os.listdir(os.path.dirname(p))\n"), os.path.join(git, "index"))
plugin._collected[0] = True


def act(name, fn):
    os.environ["PYTEST_CURRENT_TEST"] = f"t.py::{name} (call)"
    try:
        fn(source)
    finally:
        os.environ.pop("PYTEST_CURRENT_TEST")


act("writes", lambda p: open(p, "a").close())
act("reads", lambda p: open(p, "rb").close())
act("updates", lambda p: open(p, "r+").close())
act("reads_by_fd", lambda p: os.close(os.open(p, os.O_RDONLY)))
# a test calling into one of our plugins' functions is still the reader
act("through_ours", lambda p: from_file(own, "    open(p).close()\n")(p))
plugin._items.update(dict.fromkeys(["t.py::every"], frozenset()))  # what a read before collection would name
print(json.dumps(plugin._named(plugin._reads)))
'''


def test_a_write_is_no_read_and_our_own_plugins_code_hides_no_reader(tmp_path: Path) -> None:
    """A revert batch writes the reverted file from our plugins' folder before collection (once read as
    every test reading it in every graded run); a test's write-only open is none either; a test that
    reads through a function of our plugins' folder still reads."""
    source, reads = _run_alone(tmp_path, WRITES)
    assert reads == {str(source): sorted(f"t.py::{n}" for n in ("reads", "updates", "reads_by_fd", "through_ours"))}


TEXT = LOAD + r'''
import importlib, inspect, linecache, logging, pkgutil, traceback
source = os.path.join(tree, "a.py")
with open(source, "w") as f:  # while no test runs, and a write: no read
    f.write("import logging\n\n\ndef f():\n    try:\n        raise ValueError('x')\n"
            "    except ValueError:\n        logging.getLogger('a').exception('shown')\n")
sys.path.insert(0, tree)
plugin._collected[0] = True


def act(name, fn):
    os.environ["PYTEST_CURRENT_TEST"] = f"t.py::{name} (call)"
    linecache.clearcache()  # each way reads the file afresh
    try:
        fn()
    finally:
        os.environ.pop("PYTEST_CURRENT_TEST")


act("imports", lambda: importlib.import_module("a"))
a = sys.modules["a"]
act("reloads", lambda: importlib.reload(a))
act("logs_its_error", a.f)  # the code under test showing a traceback: its lines are no data
act("formats_a_stack", lambda: traceback.format_stack())
act("getsource", lambda: inspect.getsource(a))
act("getlines", lambda: linecache.getlines(source))
act("loader_get_source", lambda: a.__loader__.get_source("a"))
act("pkgutil_get_data", lambda: pkgutil.get_data("a", "a.py"))
linecache.getlines(source)  # while no test runs: the lines cached, nobody's read
plugin._forget_lines()  # as each test phase begins
os.environ["PYTEST_CURRENT_TEST"] = "t.py::after_the_cache (call)"
inspect.getsource(a)  # opens the file again: seen
os.environ.pop("PYTEST_CURRENT_TEST")
print(json.dumps(plugin._named(plugin._reads)))
'''


def test_the_source_text_read_by_a_test_is_data_an_import_or_a_traceback_is_not(tmp_path: Path) -> None:
    """`inspect.getsource`, `linecache`, the loader's `get_source` and `pkgutil.get_data` called by a test
    read the file's text, which pins the code as its bytes do (each forged the bites of every revert
    of the file); an import, a reload and a traceback the code under test logs read nothing."""
    source, reads = _run_alone(tmp_path, TEXT)
    assert reads == {str(source): sorted(f"t.py::{n}" for n in (
        "getsource", "getlines", "loader_get_source", "pkgutil_get_data", "after_the_cache"))}
