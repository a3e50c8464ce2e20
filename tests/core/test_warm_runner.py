"""The warm pytest runner keeps every promise of a cold run, and falls back to one when it cannot serve."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from reviewui.core.run import storage
from reviewui.core.run.runner import run_tests
from reviewui.core.run.warm_runner import WarmPytest, warm_form
from tests.core.bite.helpers import Watch, alive

PY = sys.executable
CMD = [PY, "-m", "pytest"]


@pytest.fixture
def server():
    w = WarmPytest(PY)
    yield w
    w.close()


def project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def outcomes(run) -> dict[str, str]:
    return {t.id.split("::")[-1]: t.outcome for t in run.tests}


def test_warm_form() -> None:
    assert warm_form(["python", "-m", "pytest", "-x"])
    assert not warm_form(["pytest"]) and not warm_form(["python", "-m", "unittest"])


def test_code_changed_between_runs_is_seen(tmp_path: Path, server: WarmPytest) -> None:
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/calc.py": "def f():\n    return 1\n",
                              "tests/test_calc.py": "from pkg.calc import f\n\ndef test_f():\n    assert f() == 1\n"})
    first = run_tests(root, CMD, ["tests/test_calc.py"], 30, warm=server)
    assert first.warm and first.returncode == 0 and outcomes(first) == {"test_f": "passed"}, first.output
    (root / "pkg/calc.py").write_text("def f():\n    return 2\n")  # what a revert does between two runs
    second = run_tests(root, CMD, ["tests/test_calc.py"], 30, warm=server)
    assert second.warm and second.returncode == 1 and outcomes(second) == {"test_f": "failed"}
    assert "assert 2 == 1" in second.tests[0].message  # the test's asserts are rewritten as usual
    assert "cannot be rewritten" not in second.output  # no plugin was imported behind pytest's back


def test_secrets_scrubbed_and_home_fresh_per_run(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MY_API_TOKEN", "s3cret")
    test = (
        "import os\n\ndef test_env():\n"
        "    assert 'MY_API_TOKEN' not in os.environ\n"
        "    assert not os.path.exists(os.path.join(os.environ['HOME'], 'left-behind'))\n"
        "    print('HOME=' + os.environ['HOME'])\n"
        "    open(os.path.join(os.environ['HOME'], 'left-behind'), 'w').write('x')\n"
    )
    root = project(tmp_path / "p", {"test_env.py": test})
    w = WarmPytest(PY)
    try:
        runs = [run_tests(root, [PY, "-m", "pytest", "-s"], ["test_env.py"], 30, warm=w) for _ in range(2)]
    finally:
        w.close()
    assert all(r.warm and r.returncode == 0 for r in runs), runs[0].output
    first, second = (r.output.split("HOME=", 1)[1].split()[0] for r in runs)
    # Each run its own HOME, fresh (the second run found nothing the first left there), at the same
    # fixed path inside (run/room.py: a test cannot tell one run from another by it).
    assert first == second == (storage.home_inside() if storage.level() == "tmpfs" else "/reviewui/io/run/home")
    assert not Path(first).exists()


def test_timeout_kills_the_run_and_its_grandchildren(tmp_path: Path, server: WarmPytest) -> None:
    tag = "300.515151"  # the run is in the server's PID namespace: found by this tag, not a pid it reports
    test = (
        "import os, subprocess, time\n\ndef test_hang():\n"
        f"    child = subprocess.Popen(['sleep', {tag!r}])\n"
        "    time.sleep(300)\n"
    )
    root = project(tmp_path / "p", {"test_hang.py": test})
    t0 = time.monotonic()
    with Watch(tag) as watch:
        # 8 s, not 3: on a loaded machine the run may need more than 3 s to reach the test, and
        # then there is no grandchild to find (as in test_runner's cold twin)
        run = run_tests(root, CMD, ["test_hang.py"], 8, warm=server)
    assert run.warm and run.timed_out and run.returncode is None
    assert time.monotonic() - t0 < 20
    [(grandchild, run_pid)] = watch.seen.items()
    deadline = time.monotonic() + 5
    while (alive(run_pid) or alive(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(run_pid) and not alive(grandchild)
    # and the server still serves
    project(root, {"test_ok.py": "def test_ok():\n    pass\n"})
    assert run_tests(root, CMD, ["test_ok.py"], 30, warm=server).returncode == 0


def test_cancel_stops_a_run(tmp_path: Path, server: WarmPytest) -> None:
    root = project(tmp_path, {"test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(300)\n"})
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    run = run_tests(root, CMD, ["test_slow.py"], 60, warm=server, cancel=cancel)
    assert run.warm and run.cancelled and run.returncode is None and run.seconds < 20


def test_output_is_capped(tmp_path: Path, server: WarmPytest) -> None:
    root = project(tmp_path, {"test_loud.py": "def test_loud():\n    print('x' * 1_000_000)\n    assert False\n"})
    run = run_tests(root, CMD, ["test_loud.py", "-s"], 30, warm=server, output_cap=1000)
    assert run.warm and run.output_bytes > 1_000_000
    assert "bytes of output dropped" in run.output and len(run.output) < 3000


def test_two_runs_at_once_get_their_own_answers(tmp_path: Path, server: WarmPytest) -> None:
    good = project(tmp_path / "good", {"test_a.py": "import time\n\ndef test_a():\n    time.sleep(0.5)\n"})
    bad = project(tmp_path / "bad", {"test_a.py": "import time\n\ndef test_a():\n    time.sleep(0.5)\n    assert 0\n"})
    results: dict[str, object] = {}

    def go(name: str, root: Path) -> None:
        results[name] = run_tests(root, CMD, ["test_a.py"], 30, warm=server)

    threads = [threading.Thread(target=go, args=("good", good)), threading.Thread(target=go, args=("bad", bad))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["good"].warm and results["good"].returncode == 0
    assert results["bad"].warm and results["bad"].returncode == 1


def test_a_server_that_cannot_serve_means_a_cold_run(tmp_path: Path) -> None:
    root = project(tmp_path, {"test_a.py": "def test_a():\n    assert 1 == 2\n"})
    w = WarmPytest(PY)
    w.close()  # gone before it was ever asked
    run = run_tests(root, CMD, ["test_a.py"], 30, warm=w)
    assert not run.warm and run.returncode == 1 and outcomes(run) == {"test_a": "failed"}
    other = WarmPytest(PY)
    try:
        # another Python than the server's: not its to run
        run = run_tests(root, ["python3", "-m", "pytest"], ["test_a.py"], 30, warm=other)
        assert not run.warm
    finally:
        other.close()


def test_a_replaced_slot_dir_gets_a_new_server(tmp_path: Path, server: WarmPytest) -> None:
    """The server sees its slot through a bind mount: a slot dir deleted and made again is a new
    directory to it, so a new server is started instead of running in the old, empty one."""
    import shutil

    files = {"test_a.py": "def test_a():\n    assert 1 == 1\n"}
    root = project(tmp_path / "slot" / "tree", files)
    assert run_tests(root, CMD, ["test_a.py"], 60, warm=server).returncode == 0
    shutil.rmtree(tmp_path / "slot")
    root = project(tmp_path / "slot" / "tree", files)
    run = run_tests(root, CMD, ["test_a.py"], 60, warm=server)
    assert run.warm and run.returncode == 0 and outcomes(run) == {"test_a": "passed"}, run.output


def test_installed_plugins_stay_imported_in_the_server() -> None:
    # Each forked run re-imported every pytest11 plugin (through assert rewriting) when the
    # server could not build pytest's import hook: about 0.3 s a run with this test extras set.
    import subprocess

    from reviewui.core.inside import warm_server

    probe = (
        "import sys\n"
        f"exec(compile(open({warm_server.__file__!r}).read(), 'warm_server', 'exec'), ns := {{'__name__': 'w'}})\n"
        "assert ns['_rewriting_hook']() is not None, 'no rewriting hook'\n"
        "ns['preload']()\n"
        "kept = sorted(m for m in ('xdist', 'pytest_cov') if m in sys.modules)\n"
        "print(','.join(kept))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "pytest_cov,xdist"


WIPE_TMP = '''import os, shutil, tempfile


def test_wipe():
    # What a suite that cleans its temp dir does (reviewui's own sweeps reviewui-* dirs there).
    d = tempfile.gettempdir()
    for name in os.listdir(d):
        p = os.path.join(d, name)
        shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)


def test_after():
    assert False
'''


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_test_that_empties_its_temp_dir_cannot_take_the_runs_report(tmp_path: Path, server: WarmPytest,
                                                                      warm: bool) -> None:
    root = project(tmp_path / "p", {"test_wipe.py": WIPE_TMP})
    run = run_tests(root, CMD, ["test_wipe.py"], 60, warm=server if warm else None)
    assert run.warm is warm and run.junit_error is None
    assert outcomes(run) == {"test_wipe": "passed", "test_after": "failed"}


@pytest.mark.parametrize(("own", "run"), [("/tmp", "/tmp/run"), ("/tmp/run", "/tmp/run+"), ("/tmp/run/x", "/tmp/run+"),
                                          ("/tmp/run+", "/tmp/run"), ("/var/tmp", "/tmp/run")])
def test_a_runs_temp_dir_never_holds_reviewuis_own(own: str, run: str, monkeypatch) -> None:
    # A reviewui inside a run (its own suite under `reviewui bite`) has the run's TMPDIR as its
    # own temp dir: the runs it starts get another, or emptying theirs would empty its run dirs.
    from reviewui.core.run import sandbox

    monkeypatch.setattr("tempfile.tempdir", own)
    assert sandbox.run_tmpdir() == run


LOOKUPS = '''import inspect


def test_lookups():
    assert "_pytest.main" in inspect._filesbymodname
'''


def test_a_run_inherits_the_servers_module_lookups(tmp_path: Path, server: WarmPytest) -> None:
    # A run's first module lookup (pytest's failure report, coverage.py's start-up) walks every
    # loaded module; the server made it once for the modules it preloaded, before any fork.
    root = project(tmp_path, {"test_l.py": LOOKUPS})
    run = run_tests(root, CMD, ["test_l.py"], 30, warm=server)
    assert run.warm and outcomes(run) == {"test_lookups": "passed"}, run.output


COLLECTOR = '''import gc


def test_collector():
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0
'''


def test_a_run_has_the_garbage_collector_a_cold_run_has(tmp_path: Path, server: WarmPytest) -> None:
    # The server imports with the collector off (faster); a run must get it back on, or
    # finalizers and weakref callbacks would not fire as they do in a cold run. What the
    # server imported is frozen, out of the collector's way.
    root = project(tmp_path, {"test_c.py": COLLECTOR})
    run = run_tests(root, CMD, ["test_c.py"], 30, warm=server)
    assert run.warm and outcomes(run) == {"test_collector": "passed"}, run.output


def test_an_editable_coverage_is_not_preloaded(tmp_path: Path) -> None:
    # Only site-packages is imported by the server: a coverage.py checkout ahead of it on the
    # path (the project under review could be coverage.py) is left for the runs to import.
    import subprocess

    from reviewui.core.inside import warm_server

    fake = tmp_path / "src" / "coverage"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise SystemExit('the checkout was imported')\n")
    probe = (
        "import sys\n"
        f"exec(compile(open({warm_server.__file__!r}).read(), 'warm_server', 'exec'), ns := {{'__name__': 'w'}})\n"
        "ns['warm_lookups']()\n"
        "print('coverage' in sys.modules, 'pdb' in sys.modules)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path / "src")}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd="/", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True"]


class _FakeServer:
    def __init__(self, owner: WarmPytest, slot: Path) -> None:
        self._ready = threading.Event()
        self.slot_id = (slot.stat().st_dev, slot.stat().st_ino)
        self.problem = None
        self.running = True

    def close(self) -> None:
        pass


def test_first_ready_names_the_server_that_is_ready_first(tmp_path: Path, monkeypatch) -> None:
    import reviewui.core.run.warm_runner as wr

    monkeypatch.setattr(wr, "_Server", _FakeServer)
    w = WarmPytest(PY)
    cwds = [tmp_path / "s0" / "tree", tmp_path / "s1" / "tree"]
    assert w.first_ready(cwds, timeout=0.1) is None  # none ready: gives up at the timeout
    servers = [w._server(c) for c in cwds]

    def ready_later() -> None:
        time.sleep(0.2)
        servers[1]._ready.set()
        w._notify()

    threading.Thread(target=ready_later).start()
    start = time.monotonic()
    assert w.first_ready(cwds, timeout=10) == 1
    assert time.monotonic() - start < 5  # woken by the server, not the timeout
    servers[0]._ready.set()
    assert w.first_ready(cwds, timeout=10) == 0


POISON = '''import os, sys


def test_poison():
    cache = os.environ["CACHE_UNDER_TEST"]
    import _pytest.assertion.rewrite as rewrite

    # pytest's own place for rewritten modules, as in a cold run: not reviewui's cache
    assert rewrite.get_cache_dir.__module__ == "_pytest.assertion.rewrite"
    assert rewrite.get_cache_dir.__qualname__ == "get_cache_dir"
    wrote = []
    for root, dirs, files in os.walk(cache):
        for name in files:
            try:
                with open(os.path.join(root, name), "ab") as f:
                    f.write(b"poison")
                wrote.append(name)
            except OSError:
                pass
    try:
        open(os.path.join(cache, "new.pyc"), "wb").close()
        wrote.append("new.pyc")
    except OSError:
        pass
    assert not wrote, wrote
'''


def test_rewritten_plugins_are_cached_and_no_run_can_write_them(tmp_path: Path, monkeypatch) -> None:
    """The first server rewrites the installed plugins (site-packages is read-only in its
    sandbox) and a cache-filling server writes them to reviewui's cache; the next server reads
    them there. A run sees the cache read-only, and pytest's own cache place, as a cold run."""
    from reviewui.core.run import sandbox
    from reviewui.core.run.warm_runner import plugin_cache_dir

    if sandbox.level() != "bwrap":
        pytest.fail("bubblewrap is part of the test environment")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cache = plugin_cache_dir(PY)
    first = WarmPytest(PY)
    try:
        root = project(tmp_path / "a" / "tree", {"test_a.py": "def test_a():\n    assert True\n"})
        assert run_tests(root, CMD, ["test_a.py"], 60, warm=first).warm
        server = first._server(root)
        assert server.rewrote and server.rewrote > 5  # asyncio, cov, xdist, syrupy... none cached yet
        assert server.own and server.own_compiled == server.own  # reviewui's own modules: none stored yet
        assert first.cache_filled.wait(120)
    finally:
        first.close()
    assert len(list(cache.rglob("*.pyc"))) >= server.rewrote
    second = WarmPytest(PY)
    try:
        root = project(tmp_path / "b" / "tree", {"test_poison.py": POISON})
        run = run_tests(root, CMD, ["test_poison.py"], 60, warm=second, extra_env={"CACHE_UNDER_TEST": str(cache)})
        assert run.warm and outcomes(run) == {"test_poison": "passed"}, run.output
        assert second._server(root).rewrote == 0  # every plugin module read from the cache
        # and reviewui's own run-side modules taken as the filling server compiled them (inside/own_code.py)
        assert second._server(root).own == server.own and second._server(root).own_compiled == 0
        assert [p.name for p in (cache / "own-modules").iterdir()] == ["reviewui_own_code.pyc"]  # that, and no bytecode
    finally:
        second.close()


def test_a_second_run_in_a_slot_waits_for_the_first_runs_directory(tmp_path: Path, server: WarmPytest) -> None:
    # Every run of a slot's server has its files at the one path `<io>/run` (seen at a fixed path
    # inside): a second run at once must not empty the first one's directory under it.
    a, b = tmp_path / "a", tmp_path / "b"  # one parent: one slot, one server
    a.mkdir()
    b.mkdir()
    first = server.work_dir(a)
    (first / "junit.xml").write_text("the first run's report")
    got: list[Path] = []
    second = threading.Thread(target=lambda: got.append(server.work_dir(b)))
    second.start()
    second.join(0.5)
    assert second.is_alive() and (first / "junit.xml").read_text() == "the first run's report"
    server.release(first)
    second.join(10)
    assert got == [first] and not (first / "junit.xml").exists()  # then it has the directory, fresh
    server.release(got[0])


HOOKS = '''import importlib.machinery

import _pytest.assertion.rewrite as rewrite


def test_hooks():
    print("HOOKS", rewrite._rewrite_test.__qualname__, importlib.machinery.SourceFileLoader.source_to_code.__qualname__)
'''


def test_the_server_compiles_reviewuis_own_modules_once_for_its_runs(tmp_path: Path, server: WarmPytest) -> None:
    """Each run's copies of the plugins and helpers were parsed and compiled again (~20 ms a run):
    a server compiles them once (inside/own_code.py) and its runs take that code for the same bytes."""
    from reviewui.core import inside
    from reviewui.core.run import sandbox

    if sandbox.level() != "bwrap":
        pytest.fail("bubblewrap is part of the test environment")
    root = project(tmp_path / "tree", {"test_hooks.py": HOOKS})
    cold = run_tests(root, [*CMD, "-s"], ["test_hooks.py"], 60)
    assert not cold.warm and "HOOKS _rewrite_test SourceLoader.source_to_code" in cold.output  # the differential
    run = run_tests(root, [*CMD, "-s"], ["test_hooks.py"], 60, warm=server)
    assert run.warm and outcomes(run) == {"test_hooks": "passed"}, run.output
    assert "HOOKS _wrap_rewrite.<locals>.stored _wrap_loader.<locals>.source_to_code" in run.output
    assert server._server(root).own == len(inside.PLUGINS) + len(inside.HELPERS)
