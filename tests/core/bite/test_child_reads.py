"""Which opens of a changed source file by another process the origin plugin counts as a test
reading it (inside/origin_plugin.py with its inotify watch, inside/child_reads.py): the plugins
placed as a run gets them and loaded alone in a fresh Python, each test phase driven through the
plugin's own hook wrappers (the sandboxed sweep is tests/hostile/test_child_source_reads.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core import inside

SCRIPT = r'''
import importlib, json, os, subprocess, sys
plugin_dir, tree = sys.argv[1], sys.argv[2]
sys.path.insert(0, plugin_dir)
sys.path.insert(0, tree)
import reviewui_origin as plugin
a, b = (os.path.join(tree, "pkg", n) for n in ("a.py", "b.py"))
py = [sys.executable, "-c"]


class Item:
    def __init__(self, nodeid):
        self.nodeid = nodeid


def phase(hook, name, fn):
    gen = getattr(plugin, hook)(item=Item(f"t.py::{name}"))
    next(gen)
    os.environ["PYTEST_CURRENT_TEST"] = f"t.py::{name} ({hook.rsplit('_', 1)[1]})"  # as pytest sets it
    try:
        fn()
    finally:
        os.environ.pop("PYTEST_CURRENT_TEST")
        try:
            gen.send(None)
        except StopIteration:
            pass


def act(name, *argv):
    phase("pytest_runtest_call", name, lambda: subprocess.run(argv, cwd=tree, check=True, capture_output=True))


def as_pytest(path):  # a listing made by pytest's own code: no read, in-process or not
    code = compile("import os\ndef run(path):\n    os.listdir(path)\n", os.path.join(tree, "_pytest", "x.py"), "exec")
    scope = {}
    exec(code, scope)
    return lambda: scope["run"](path)


def lists_then_reads():  # this Python's listing of pkg/ excuses no other process's open
    os.listdir(os.path.dirname(a))
    subprocess.run(["cat", a], check=True, capture_output=True)


def cat(path):
    subprocess.run(["cat", path], check=True, capture_output=True)


def flood():  # more events than the kernel queues (alike ones in a row would be merged: two files)
    n = int(open("/proc/sys/fs/inotify/max_queued_events").read()) // 2 + 100
    init, other = os.path.join(tree, "pkg", "__init__.py"), os.path.join(tree, "pkg", "c.txt")
    code = f"for _ in range({n}):\n    open({init!r}).close()\n    open({other!r}).close()"
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


watching = plugin.reads._watch is not None
if watching:
    act("cat", "cat", a)
    act("child_reads", *py, f"open({a!r}).read()")
    act("child_imports", *py, "import pkg.a")
    act("child_imports_both", *py, "import pkg.a, pkg.b")
    act("child_imports_and_reads", *py, "import pkg.a; open(pkg.a.__file__).read()")
    act("child_lists_pkg", "ls", os.path.dirname(a))
    act("child_touches_nothing", *py, "print(1)")
    act("child_reads_gitignore", "cat", os.path.join(tree, ".gitignore"))
    act("child_lists_store", "ls", os.path.join(tree, ".git", "objects"))
    act("child_reads_pack_index", "cat", os.path.join(tree, ".git", "objects", "pack", "p.idx"))
    phase("pytest_runtest_call", "imports", lambda: importlib.import_module("pkg.a"))
    phase("pytest_runtest_call", "reimports", lambda: importlib.reload(sys.modules["pkg.a"]))
    phase("pytest_runtest_call", "lists_store", lambda: os.listdir(os.path.join(tree, ".git", "objects")))
    phase("pytest_runtest_call", "listed_by_pytest", as_pytest(os.path.join(tree, ".git", "objects")))
    phase("pytest_runtest_call", "lists_then_child_reads", lists_then_reads)
    phase("pytest_runtest_call", "reimports_then_cat", lambda: (importlib.reload(sys.modules["pkg.a"]),
                                                               cat(a)))
    phase("pytest_runtest_call", "cat_twice_reads_once", lambda: [cat(a) for _ in "12"])
    phase("pytest_runtest_call", "overflowed", lambda: (cat(a), flood()))
    phase("pytest_runtest_call", "after_overflow", lambda: cat(b))
    phase("pytest_runtest_setup", "fixture_child", lambda: subprocess.run(["cat", b], check=True, capture_output=True))
    phase("pytest_runtest_teardown", "teardown_child", lambda: subprocess.run(["cat", b], check=True, capture_output=True))
    subprocess.run(["cat", a, b], check=True, capture_output=True)  # between tests: nobody's
    phase("pytest_runtest_call", "after_a_gap", lambda: None)
    fds = subprocess.run(["ls", "-l", "/proc/self/fd/"], capture_output=True, text=True, close_fds=False).stdout
    assert "inotify" not in fds, fds  # close-on-exec: no test's child holds the watch
else:
    import subprocess as s2
    s2.run(["cat", a], check=True, capture_output=True)
print(json.dumps({"watching": watching, "reads": {k: sorted(v) for k, v in plugin.reads._reads.items()}}))
'''


def _run(tmp_path: Path, on: bool) -> dict[str, object]:
    tree = tmp_path / "tree"
    for d in (tree / ".git" / "objects" / "pack", tree / "pkg"):
        d.mkdir(parents=True, exist_ok=True)
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/scratch\n")
    (tree / ".git" / "objects" / "pack" / "p.idx").write_bytes(b"\377tOc")
    (tree / ".gitignore").write_text("*.pyc\n")
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "c.txt").write_text("")
    sources = [str(tree / "pkg" / "a.py"), str(tree / "pkg" / "b.py")]
    for s in sources:
        Path(s).write_text("X = 1\n")
    plugins = tmp_path / "plugin"
    inside.place_all(plugins)
    env = {**os.environ, "REVIEWUI_SOURCE_FILES": os.pathsep.join(sources), "REVIEWUI_GIT_DIR": str(tree / ".git"),
           "PYTHONDONTWRITEBYTECODE": "1"}  # as in the sandbox: an importing child opens the source
    if on:
        env["REVIEWUI_CHILD_READS"] = "1"
    for k in ("PYTEST_CURRENT_TEST", "PYTHONPATH", "REVIEWUI_CHILD_READS" if not on else ""):
        env.pop(k, None)
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(plugins), str(tree)], env=env, cwd=tree,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout)
    return {"watching": result["watching"], "reads": result["reads"], "a": sources[0], "b": sources[1]}


def test_a_child_opening_a_changed_file_reads_it_and_an_importer_does_not(tmp_path: Path) -> None:
    got = _run(tmp_path, on=True)
    assert got["watching"] is True, "no inotify watch was made"
    a, b = str(got["a"]), str(got["b"])
    store = ["t.py::child_lists_store", "t.py::child_reads_pack_index", "t.py::lists_store"]
    assert got["reads"] == {
        a: sorted(["t.py::cat", "t.py::child_reads", "t.py::child_imports_and_reads", "t.py::lists_then_child_reads",
                   "t.py::reimports_then_cat", "t.py::cat_twice_reads_once", *store]),
        # a phase whose events overflowed the kernel's queue says nothing; the next is watched again
        b: sorted(["t.py::fixture_child", "t.py::teardown_child", "t.py::after_overflow", *store]),
    }


def test_without_the_switch_no_child_is_watched(tmp_path: Path) -> None:
    got = _run(tmp_path, on=False)
    assert got == {"watching": False, "reads": {}, "a": got["a"], "b": got["b"]}


def test_where_inotify_cannot_watch_there_is_no_watch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewui.core.inside import child_reads

    real = tmp_path / "a.py"
    real.write_text("X = 1\n")
    assert child_reads.open_watch([str(tmp_path / "gone.py"), str(real)]) is None  # one file unwatched: none
    watch = child_reads.open_watch([str(real)])
    assert watch is not None
    watch.close()

    def missing() -> None:
        raise AttributeError("inotify_init1")  # a libc without it, or no ctypes

    monkeypatch.setattr(child_reads, "_libc", missing)
    assert child_reads.open_watch([str(real)]) is None
