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


def run_as(test, fn):  # `fn` called while pytest would say `test` runs
    os.environ["PYTEST_CURRENT_TEST"] = test
    try:
        return fn()
    finally:
        os.environ.pop("PYTEST_CURRENT_TEST")
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
plugin.reads._collected[0] = True  # collection is over (before it, a read is every test's: test_collection_reads)
os.listdir(git)  # while no test runs: no test to name
print(json.dumps({k: sorted(v) for k, v in plugin.reads._reads.items()}))
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
plugin.reads._collecting.append("tests/t.py")  # a test module's top level, imported while collected
os.symlink(git, os.path.join(tmp, "stash"))  # nor while collecting
os.chdir(git)  # nor a change of directory
os.chdir(tree)
open(os.path.join(tmp, "stash", "HEAD")).close()  # a read through it is
plugin.reads._collecting.pop()
plugin.reads._collecting.append("tests/sub")  # a folder (its conftest imported while it is collected)
os.listdir(os.path.join(git, "objects"))
plugin.reads._collecting.pop()
plugin.reads._items.update(dict.fromkeys(["tests/t.py::a", "tests/t.py::b", "tests/sub/u.py::c", "tests/subway.py::d",
                                     "top.py::e"], frozenset()))
plugin.reads._collected[0] = True
print(json.dumps({k: v for k, v in plugin.reads._named(plugin.reads._reads).items()}))
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
plugin.reads._items.update(dict.fromkeys(["sub/t.py::a", "subway/t.py::b", "t.py::c"], frozenset()))
plugin.reads._collected[0] = True
print(json.dumps(plugin.reads._named(plugin.reads._reads)))
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
plugin.reads._collected[0] = True
plugin.reads._fixtures.append(plugin.reads._FIXTURE + "digest sub")  # tests/sub's conftest's fixture, being set up
open(os.path.join(tree, "a.py")).close()
plugin.reads._fixtures.pop()
plugin.reads._items.update({"sub/t.py::a": frozenset({"digest"}), "subway/t.py::b": frozenset({"digest"}),
                      "sub/u.py::c": frozenset({"tmp_path"})})
print(json.dumps(plugin.reads._named(plugin.reads._reads)))
'''


def test_a_fixtures_read_is_read_by_its_users_within_its_reach(tmp_path: Path) -> None:
    """Its users below its conftest's folder; not a test outside it using a fixture of the same name."""
    source, reads = _run_alone(tmp_path, FIXTURE)
    assert reads == {str(source): ["sub/t.py::a"]}



CHILDREN = LOAD + r'''
import subprocess
source = os.path.join(tree, "a.py")
assert plugin.reads._watch is not None, "no inotify watch here"
subprocess.run(["cat", source], capture_output=True)  # another process, before any collector: nobody's


class Module:
    nodeid = "t.py"


collecting = plugin.pytest_make_collect_report(Module())
next(collecting)
subprocess.run(["cat", source], capture_output=True)  # while t.py is collected: its tests'
next(collecting, None)
plugin.reads._items.update(dict.fromkeys(["t.py::a", "u.py::b"], frozenset()))
plugin.reads._collected[0] = True
print(json.dumps(plugin.reads._named(plugin.reads._reads)))
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
plugin.reads._collected[0] = True


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
plugin.reads._items.update(dict.fromkeys(["t.py::every"], frozenset()))  # what a read before collection would name
print(json.dumps(plugin.reads._named(plugin.reads._reads)))
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
plugin.reads._collected[0] = True


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
plugin.reads._forget_lines()  # as each test phase begins
os.environ["PYTEST_CURRENT_TEST"] = "t.py::after_the_cache (call)"
inspect.getsource(a)  # opens the file again: seen
os.environ.pop("PYTEST_CURRENT_TEST")
print(json.dumps(plugin.reads._named(plugin.reads._reads)))
'''


def test_the_source_text_read_by_a_test_is_data_an_import_or_a_traceback_is_not(tmp_path: Path) -> None:
    """`inspect.getsource`, `linecache`, the loader's `get_source` and `pkgutil.get_data` called by a test
    read the file's text, which pins the code as its bytes do (each forged the bites of every revert
    of the file); an import, a reload and a traceback the code under test logs read nothing."""
    source, reads = _run_alone(tmp_path, TEXT)
    assert reads == {str(source): sorted(f"t.py::{n}" for n in (
        "getsource", "getlines", "loader_get_source", "pkgutil_get_data", "after_the_cache"))}


CODE = LOAD + r'''
import dis, gc, importlib, inspect, json as json_module, logging, sys, traceback, types
from unittest import mock
source = os.path.join(tree, "a.py")
with open(source, "w") as f:
    f.write("import logging, os\n\n\ndef f(x, y=2):\n    return x * y\n\n\ndef logs():\n"
            "    logging.getLogger('a').warning('said')\n\n\ndef gen():\n    yield 1\n\n\n"
            "def boom():\n    raise ValueError('x')\n\n\nasync def later():\n    return 1\n")
sys.path.insert(0, tree)
import a  # while no test runs: nobody's
a.f.__code__  # while no test runs: nobody's
plugin.reads._collected[0] = True
act = lambda name, fn: run_as(f"t.py::{name} (call)", fn)  # noqa: E731


def profiled():
    sys.setprofile(lambda frame, event, arg: frame.f_code.co_code if event == "call" else None)
    try:
        a.f(1)
    finally:
        sys.setprofile(None)


def raised_frame():
    try:
        a.boom()
    except ValueError as e:
        return e.__traceback__.tb_next.tb_frame.f_code.co_code


def shown():
    try:
        a.boom()
    except ValueError:
        return traceback.format_exc()


def library(folder, body):  # a function whose code lives in a module under `folder`
    code = compile(f"import sys\ndef run(x):\n    {body}\n", os.path.join(folder, "lib", "x.py"), "exec")
    scope = {}
    exec(code, scope)
    return scope["run"]


import sysconfig
site = sysconfig.get_paths()["purelib"]  # an installed package's frames
decorator = library(site, "return x.__code__.co_firstlineno")  # a package's bookkeeping (pydantic, wrapt)
caller_name = library(site, "return sys._getframe(1).f_code.co_name")  # a logger naming its caller (loguru)
vendored = library(os.path.join(tree, "site-packages"), "return x.__code__.co_code")  # in the tree
with open(source, "a") as f:
    f.write("\n\ndef calls(fn):\n    return fn(0)\n\n\n"
            "def where():\n    return sys._getframe(0).f_code.co_name\n\n\n"
            "import sys, typing\n\n\n@typing.overload\ndef over(x: int) -> int: ...\n"
            "def over(x):\n    return x\n\n\nif os.environ.get('PIN_CODE'):\n    SEEN = over.__code__.co_code\n")
a = importlib.reload(a)


# what the code is: reads
act("code_attr", lambda: a.f.__code__.co_code)
act("dis", lambda: dis.Bytecode(a.f).dis())
act("referents", lambda: [c for c in gc.get_referents(a.f) if isinstance(c, types.CodeType)])
act("profiled_frame", profiled)
act("generator_code", lambda: a.gen().gi_code.co_code)
act("raised_frame", raised_frame)
act("through_the_trees_site_packages", lambda: vendored(a.f))
os.environ["PIN_CODE"] = "1"
act("reimported_pinning", lambda: importlib.reload(a))  # its top level reaching `over`'s code
del os.environ["PIN_CODE"]
# its shape, or someone else's code: none
act("signature", lambda: inspect.signature(a.f))
act("is_coroutine", lambda: (inspect.iscoroutinefunction(a.f), inspect.iscoroutinefunction(a.later)))
act("autospec", lambda: mock.create_autospec(a.f)(1))
act("getfile", lambda: inspect.getfile(a.f))
act("logs", a.logs)  # logging names its caller: the code under test's frame
act("shown", shown)
act("other_code", lambda: json_module.dumps.__code__.co_code)
act("referents_of_module", lambda: gc.get_referents(a))
act("a_library_names_its_caller", lambda: a.calls(caller_name))
act("a_package_decorates", lambda: decorator(a.f))
act("the_code_asks_where_it_runs", a.where)
act("reimported", lambda: importlib.reload(a))  # typing.overload's bookkeeping alone
print(json.dumps(plugin.reads._named(plugin.reads._reads)))
'''


def test_the_code_objects_reached_by_a_test_are_data_a_signature_or_a_caller_lookup_is_not(tmp_path: Path) -> None:
    """A test reaching the code object of a changed file's function (`__code__`, `dis`, `gc.get_referents`,
    a profiled or raised frame's `f_code`, a generator's `gi_code`) can pin its bytecode as the file's
    bytes can (each forged the bites of every revert and guard of the file); the standard library
    reading a signature, a coroutine flag or a file name, logging naming its caller and a traceback
    shown read nothing of what the code does, and neither does another file's code. Nor does an installed
    package reaching it (a decorator's bookkeeping, a logger naming its caller), unless it lies in the tree
    (a folder named site-packages there is the branch's), nor the changed code asking where it runs; the
    changed module's top level reaching its own function's code is a read while it is imported."""
    source, reads = _run_alone(tmp_path, CODE)
    assert reads == {str(source): sorted(f"t.py::{n}" for n in (
        "code_attr", "dis", "referents", "profiled_frame", "generator_code", "raised_frame",
        "through_the_trees_site_packages", "reimported_pinning"))}


DIR_FD = LOAD + r'''
source = os.path.join(tree, "a.py")
os.makedirs(os.path.join(tmp, "elsewhere"))
os.makedirs(os.path.join(tree, "x"))
with open(os.path.join(tmp, "elsewhere", "a.py"), "w") as f:  # another file of the same name
    f.write("X = 2\n")
os.chdir(tmp)  # "a.py" from here names no changed file
plugin.reads._collected[0] = True
folder = os.open(tree, os.O_RDONLY)
run_as("t.py::by_dir_fd (call)", lambda: os.close(os.open("a.py", os.O_RDONLY, dir_fd=folder)))
run_as("t.py::by_dir_fd_walked (call)", lambda: os.close(os.open("x/../a.py", os.O_RDONLY, dir_fd=folder)))
elsewhere = os.path.join(tmp, "elsewhere", "a.py")
run_as("t.py::another_by_its_path (call)", lambda: os.close(os.open(elsewhere, os.O_RDONLY)))
run_as("t.py::another_by_its_folder (call)", lambda: os.close(os.open(os.path.join("elsewhere", "a.py"), os.O_RDONLY)))
print(json.dumps(plugin.reads._named(plugin.reads._reads)))
'''


def test_a_name_opened_by_a_directory_descriptor_reads_every_changed_file_it_can_name(tmp_path: Path) -> None:
    """`os.open("a.py", dir_fd=...)`: the audit event carries no descriptor, so the name resolved against the
    working directory missed the changed file (a pin read it unseen wherever no inotify watch ran). Now a
    relative name that resolves to no changed file is an open of every changed file whose path ends with it;
    another file of that name opened by a path that names its own folder is none."""
    source, reads = _run_alone(tmp_path, DIR_FD)
    assert reads == {str(source): ["t.py::by_dir_fd", "t.py::by_dir_fd_walked"]}
