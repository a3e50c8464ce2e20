"""reviewui's run-side modules compiled once in the warm server (inside/own_code.py): the very code each
run would make, handed back only for a file at the runs' path whose bytes are the ones compiled."""

from __future__ import annotations

import json
import marshal
import subprocess
import sys
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import _rewrite_test

from reviewui.core import inside
from reviewui.core.inside import own_code


def test_every_plugin_and_helper_is_compiled_as_the_run_would_compile_it(tmp_path: Path) -> None:
    placed, at = tmp_path / "placed", tmp_path / "run" / "plugin"
    inside.place_own(placed)
    inside.place_all(at)  # the run's own copies, at the path the code is compiled under
    table = own_code.compiled(str(placed), str(at))
    names = {f"{module}.py" for module, _ in (*inside.PLUGINS, *inside.HELPERS)}
    assert {Path(f).name for f in table} == names  # none left out (none holds an assert), own_code.py not among them
    for filename, (source, plain, rewritten) in table.items():
        assert source == Path(filename).read_bytes()
        fresh = compile(source, filename, "exec", dont_inherit=True)  # what the source loader makes
        assert marshal.dumps(plain) == marshal.dumps(fresh)
        assert marshal.dumps(rewritten) == marshal.dumps(_rewrite_test(Path(filename), None)[1])  # pytest's hook
        assert rewritten.co_filename == plain.co_filename == filename  # the read audit tells our frames by it


@pytest.mark.parametrize("body", ["assert True\n", "def broken(:\n", "x = '\0'\n"])
def test_a_module_with_an_assert_or_that_does_not_compile_is_left_to_the_run(tmp_path: Path, body: str) -> None:
    (tmp_path / "reviewui_ok.py").write_text("X = 1\n")
    (tmp_path / "reviewui_odd.py").write_text(body)
    assert [Path(f).name for f in own_code.compiled(str(tmp_path), "/at")] == ["reviewui_ok.py"]


CHILD = r'''
import importlib, json, sys
from pathlib import Path
sys.dont_write_bytecode = True  # as in every run (PYTHONDONTWRITEBYTECODE): no .pyc answers for the source
sys.path.insert(0, sys.argv[1])
import own_code
import _pytest.assertion.rewrite as rewrite

placed, at = sys.argv[2], sys.argv[3]
count = own_code.install(placed, at)
sys.path.insert(0, at)
helper = importlib.import_module("reviewui_helper")
loader = helper.__spec__.loader
same_loaded = loader.get_code("reviewui_helper")
same_rewritten = rewrite._rewrite_test(Path(at) / "reviewui_plugin.py", None)[1]
again_loaded = loader.get_code("reviewui_helper")
(Path(at) / "reviewui_helper.py").write_text("VALUE = 'changed by a test'\n")
changed_loaded = loader.get_code("reviewui_helper")
(Path(at) / "reviewui_plugin.py").write_text("NAME = 'changed'\n")
changed_rewritten = rewrite._rewrite_test(Path(at) / "reviewui_plugin.py", None)[1]
print(json.dumps({
    "count": count,
    "helper": helper.VALUE,
    "loaded_is_stored": same_loaded is again_loaded,
    "rewritten_consts": list(map(repr, same_rewritten.co_consts)),
    "changed_loaded": changed_loaded is same_loaded,
    "changed_consts": list(map(repr, changed_loaded.co_consts)),
    "changed_rewritten_consts": list(map(repr, changed_rewritten.co_consts)),
}))
'''


def test_a_run_takes_the_stored_code_only_for_the_bytes_compiled(tmp_path: Path) -> None:
    placed, at = tmp_path / "placed", tmp_path / "run" / "plugin"
    placed.mkdir()
    at.mkdir(parents=True)
    for d in (placed, at):
        (d / "reviewui_helper.py").write_text("VALUE = 'as placed'\n")
        (d / "reviewui_plugin.py").write_text("NAME = 'plugin'\n")
    done = subprocess.run([sys.executable, "-c", CHILD, str(Path(own_code.__file__).parent), str(placed), str(at)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["count"] == 2 and seen["helper"] == "as placed"
    assert seen["loaded_is_stored"]  # the same object each time: the stored one, not a fresh compile
    assert "'plugin'" in seen["rewritten_consts"]
    # a file a test changed compiles from its own bytes, through pytest's hook and the loader alike
    assert not seen["changed_loaded"] and "'changed by a test'" in seen["changed_consts"]
    assert "'changed'" in seen["changed_rewritten_consts"]


def test_own_code_hooks_the_runs_for_the_placed_modules_and_nothing_without_them(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    # What a server does before its first fork, here in this process: monkeypatch puts both hooks back.
    from importlib.machinery import SourceFileLoader

    import _pytest.assertion.rewrite as rewrite

    from reviewui.core.inside import warm_server

    monkeypatch.setattr(SourceFileLoader, "source_to_code", SourceFileLoader.source_to_code)
    monkeypatch.setattr(rewrite, "_rewrite_test", rewrite._rewrite_test)
    before = (SourceFileLoader.source_to_code, rewrite._rewrite_test)
    placed = tmp_path / "placed"
    inside.place_own(placed)
    for argv in (["-c", "sweep"], ["-c", "sweep", "--own-modules", str(tmp_path / "absent"), "--own-at", "/at"]):
        monkeypatch.setattr(sys, "argv", argv)
        assert warm_server.own_code() is None  # each run compiles its own copies, as a cold run does
        assert (SourceFileLoader.source_to_code, rewrite._rewrite_test) == before
    monkeypatch.setattr(sys, "argv", ["-c", "sweep", "--own-modules", str(placed), "--own-at", "/reviewui/io/run/plugin"])
    assert warm_server.own_code() == len(inside.PLUGINS) + len(inside.HELPERS)
    assert SourceFileLoader.source_to_code is not before[0] and rewrite._rewrite_test is not before[1]
    assert "reviewui_own_code" not in sys.modules  # loaded by path: no run can import it


def test_stored_code_is_taken_only_for_the_same_bytes_python_pytest_and_run_path(tmp_path: Path,
                                                                                 monkeypatch) -> None:
    """A cache-filling server stores what it compiled; a later server takes a module from there only
    when it would have compiled exactly that, and compiles anything else as before."""
    import pytest as pytest_module

    placed, at = tmp_path / "placed", "/reviewui/io/run/plugin"
    # The plugins and helpers a server compiles; own_code.py itself (which place_own adds) never is, and
    # copying it would read it as data: a bite sweep of own_code.py could not count this test's failures.
    inside.place_all(placed)
    first, fresh = own_code.compiled_or_stored(str(placed), at)
    assert fresh == len(first) == len(inside.PLUGINS) + len(inside.HELPERS)  # nothing stored yet
    own_code._store(str(placed), at, first)
    again, fresh = own_code.compiled_or_stored(str(placed), at)
    assert fresh == 0 and again.keys() == first.keys()
    for filename, (source, plain, rewritten) in again.items():  # what a compile of those bytes makes
        assert source == (placed / Path(filename).name).read_bytes()
        assert marshal.dumps(plain) == marshal.dumps(compile(source, filename, "exec", dont_inherit=True))
        assert marshal.dumps(rewritten) == marshal.dumps(first[filename][2])
    # one module's bytes changed since: that one compiled from its own bytes, the rest stored
    changed = placed / f"{inside.FORKS_MODULE}.py"
    changed.write_bytes(changed.read_bytes() + b"\nCHANGED_SINCE = 1\n")
    table, fresh = own_code.compiled_or_stored(str(placed), at)
    assert fresh == 1 and "CHANGED_SINCE" in table[f"{at}/{changed.name}"][1].co_names
    # another run path, another pytest, a damaged store: everything compiled, nothing raised
    assert own_code.compiled_or_stored(str(placed), "/elsewhere")[1] == len(first)
    version = pytest_module.__version__  # another of the same length: the code after the stamp reads as before
    monkeypatch.setattr(pytest_module, "__version__", version[:-1] + ("0" if version[-1] != "0" else "1"))
    assert own_code.compiled_or_stored(str(placed), at)[1] == len(first)
    monkeypatch.undo()
    stored = placed / own_code.STORED
    whole = stored.read_bytes()
    stored.write_bytes(whole[:200])
    assert own_code.compiled_or_stored(str(placed), at)[1] == len(first)
    # a store of the right stamp but the wrong shape: no table, or entries that are not (bytes, code, code)
    stamp, plain = own_code._stamp(at), first[f"{at}/{changed.name}"][1]
    for table in ([1, 2], {f"{at}/{changed.name}": (changed.read_bytes(), plain)},
                  {f"{at}/{changed.name}": (changed.read_bytes(), plain, "not code")}):
        stored.write_bytes(stamp + marshal.dumps(table))
        assert own_code.compiled_or_stored(str(placed), at)[1] == len(first)
