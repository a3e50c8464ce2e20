"""The warm pytest server: run by reviewui as `<project python> -c <this file's text>`.

Standard library only and no reviewui imports: it runs in the project's
Python, inside the same sandbox as a cold test run (scrubbed environment,
no network). It imports pytest and the pytest plugins installed in
site-packages once, then forks one child per request; the child becomes
its own process group, points stdout/stderr at the FIFO it is given, takes
the request's environment and working directory, and runs pytest.main.

Nothing is ever imported from a working tree here: the code under test is
imported by each child afresh, so a hunk reverted between two runs is seen.

Protocol, one JSON object per line. In: {"id", "cwd", "args", "env", "output"}
(and "coverage": true to measure the run with coverage.py, as `python -m coverage
run -m pytest` would, its rcfile named by COVERAGE_RCFILE in "env"), or
{"kill": id} to kill a run. Out: {"ready": true, "pytest": version, "moved": [the private pytest
names of INTERNALS this pytest lacks]} once (with `--plugin-cache`,
also "rewrote": the plugin modules rewritten for want of a cached copy; with `--own-modules`,
"own" and "own_compiled": reviewui's run-side modules made ready for the runs, and how many of
them had to be compiled for want of a stored copy), then per request
{"id", "pid"} and {"id", "exit"} (a negative exit is the signal that ended
the child), or {"id", "error"}. Replies carry their id.

Started with the argument `sweep` (only ever inside its own bubblewrap PID
namespace, where it and the namespace's init are the only processes that are
not a run's), it kills every other process of the namespace when a run ends
or is killed: `setsid` and double-forked daemons go with the run.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import sys
from typing import Any


def _write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _site_dirs() -> tuple[str, ...]:
    import site
    import sysconfig

    def user_site() -> list[str]:
        return [site.getusersitepackages()]

    dirs: set[str] = set()
    for getter in (site.getsitepackages, user_site):
        try:
            dirs.update(os.path.realpath(d) for d in getter())
        except Exception:
            pass
    for key in ("purelib", "platlib"):
        dirs.add(os.path.realpath(sysconfig.get_paths()[key]))
    return tuple(d.rstrip(os.sep) + os.sep for d in dirs)


INTERNALS = (
    ("_pytest.runner", "runtestprotocol"),
    ("_pytest.junitxml", "bin_xml_escape"),
    ("_pytest.junitxml", "xml_key"),
    ("_pytest.assertion", "install_importhook"),
    ("_pytest.assertion.rewrite", "get_cache_dir"),
    ("_pytest.assertion.rewrite", "_rewrite_test"),
    ("_pytest.config", "_iter_rewritable_modules"),
    ("_pytest.config", "get_config"),
)
"""The private pytest names the batch children and this server lean on (tested with pytest 8.x)."""


def moved_internals() -> list[str]:
    """The INTERNALS this pytest lacks, as `module.name`: a release moved them, and batching is off."""
    import importlib

    out = []
    for module, name in INTERNALS:
        try:
            if not hasattr(importlib.import_module(module), name):
                out.append(module + "." + name)
        except Exception:
            out.append(module + "." + name)
    return out


def preload() -> None:
    """Import pytest and the site-packages pytest plugins; never anything from the working tree."""
    sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]
    import importlib
    import importlib.util

    import pytest  # noqa: F401

    try:  # what the origin plugin imports in every run (its watch, its standard-library test): ~9 ms a start
        import ctypes  # noqa: F401
        import sysconfig  # noqa: F401
    except ImportError:
        pass
    try:
        from importlib.metadata import entry_points

        found = entry_points()
        eps: Any = found.select(group="pytest11") if hasattr(found, "select") else found.get("pytest11", [])
    except Exception:
        eps = []
    hook = _rewriting_hook()
    site_dirs = _site_dirs()
    own: set[str] = set()
    for ep in eps:
        module = ep.value.split(":")[0].strip()
        dist = getattr(ep, "dist", None)
        if dist is None:
            continue  # without its distribution its own modules cannot be told apart: leave it
        try:
            spec = importlib.util.find_spec(module.split(".")[0])
            origin = os.path.realpath(spec.origin or "") if spec is not None else ""
            # An editable install points into a source tree (perhaps the one under
            # review): left for the children to import, like any project code.
            if not origin.startswith(site_dirs):
                continue
            own.update(_top_level_names(dist))
            importlib.import_module(module)
        except Exception:
            pass  # the child imports it the ordinary way and reports any error
    if hook is not None:
        sys.meta_path.remove(hook)
        return
    # Without pytest's hook the plugins' own modules were imported unrewritten:
    # they are dropped again (each child imports them); what they imported stays warm.
    for name in list(sys.modules):
        if name.split(".")[0] in own:
            del sys.modules[name]


def warm_lookups() -> None:
    """Do once here what every run would otherwise do again in its child.

    The first `inspect.getmodule` lookup walks every loaded module (a realpath
    each); pytest's report of a failure and coverage.py's start-up both make
    one, ~15 ms with a large plugin set. tokenize compiles its pattern on first
    use (pytest's traceback source ranges). pytest imports pdb and faulthandler
    in every run's configure, and a measured run imports coverage.py: taken
    from site-packages here, as the plugins are (never from a working tree).
    """
    import importlib
    import importlib.util
    import inspect
    import io
    import tokenize

    site_dirs = _site_dirs()
    for name, site_only in (("pdb", False), ("faulthandler", False), ("coverage", True)):
        try:
            spec = importlib.util.find_spec(name)
            if spec is None or (site_only and not os.path.realpath(spec.origin or "").startswith(site_dirs)):
                continue  # not installed, or an editable checkout: the child imports it as a cold run would
            importlib.import_module(name)
        except Exception:
            pass
    try:
        for _ in tokenize.generate_tokens(io.StringIO("pass\n").readline):
            pass
        inspect.getmodule(warm_lookups.__code__)
    except Exception:
        pass  # only time is lost: each child makes its own lookups


def _rewriting_hook() -> Any:
    """pytest's assert-rewriting import hook, installed with the names pytest itself
    marks (every module of a distribution that has a pytest11 plugin), or None.

    Plugins imported through it are rewritten as a cold pytest run rewrites them,
    and pytest in the children sees them as its own (no "already imported" warning).
    """
    try:
        import importlib.metadata as metadata

        from _pytest.assertion import install_importhook
        from _pytest.config import _iter_rewritable_modules, get_config

        config = get_config()
        if not hasattr(config, "inicfg"):
            # pytest >= 8.4 reads the ini files only when it parses arguments; the hook
            # asks for `python_files` when it is made, and an empty ini gives the default.
            config.inicfg = {}
        hook = install_importhook(config)
        files = (
            str(f)
            for dist in metadata.distributions()
            if any(ep.group == "pytest11" for ep in dist.entry_points)
            for f in dist.files or []
        )
        hook.mark_rewrite(*_iter_rewritable_modules(files))
        return hook
    except Exception:
        return None  # another pytest than the one this was written against: the fallback below


def _rewrite_cache(directory: str) -> Any:
    """Keep pytest's rewritten plugin modules in `directory` (`--plugin-cache`) while the
    plugins are imported, instead of beside their sources (site-packages is read-only in the
    sandbox, so each server rewrote them all again: ~0.1 s). Returns a function that puts
    pytest's own cache location back and says how many modules had to be rewritten because
    `directory` had no valid copy; None when this pytest has no such place.

    reviewui binds `directory` read-only into a server's sandbox: it is written only by a
    server started with `fill-plugin-cache`, which imports the plugins and exits before any
    code under test could run. Runs get pytest's own location back, as a cold run has it.
    """
    try:
        from pathlib import Path

        import _pytest.assertion.rewrite as rewrite

        own, rewrite_test = rewrite.get_cache_dir, rewrite._rewrite_test
    except (ImportError, AttributeError):
        return None
    root = Path(directory)
    missed = [0]

    def cache_dir(file_path: Any) -> Any:
        return root.joinpath(*Path(file_path).parts[1:-1])

    def counted(*args: Any, **kwargs: Any) -> Any:
        missed[0] += 1
        return rewrite_test(*args, **kwargs)

    rewrite.get_cache_dir, rewrite._rewrite_test = cache_dir, counted

    def restore() -> int:
        rewrite.get_cache_dir, rewrite._rewrite_test = own, rewrite_test
        return missed[0]

    return restore


def own_code() -> int | None:
    """Compile reviewui's plugins and helpers once for every run (own_code.py, loaded from the
    read-only `--own-modules` directory, for the runs' copies at `--own-at`): how many, or None
    without them (each run compiles its copies, as a cold run does)."""
    counted = own_code_counted()
    return None if counted is None else counted[0]


def own_code_counted(store: bool = False) -> tuple[int, int] | None:
    """As `own_code`, each module's code taken from what a cache-filling server stored there when
    made from its very bytes: (how many, how many compiled here), or None. With `store` (the
    cache-filling server), what was compiled here is written there for later servers."""
    directory, at = _option("--own-modules"), _option("--own-at")
    if not directory or not at:
        return None
    try:
        import importlib.util

        spec = importlib.util.spec_from_file_location("reviewui_own_code", os.path.join(directory, "reviewui_own_code.py"))
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)  # never in sys.modules: no run imports it
        spec.loader.exec_module(module)
        count, fresh = module.install_counted(directory, at, store=store)
        return int(count), int(fresh)
    except Exception:
        return None


def _option(name: str) -> str | None:
    """The value after `name` in this server's arguments."""
    args = sys.argv[1:]
    return args[args.index(name) + 1] if name in args[:-1] else None


def _top_level_names(dist: Any) -> set[str]:
    names: set[str] = set()
    for path in dist.files or ():
        parts = str(path).replace("\\", "/").split("/")
        if parts[0].endswith((".dist-info", ".egg-info")) or parts[0] in ("..", ""):
            continue
        if len(parts) == 1:
            if parts[0].endswith(".py"):
                names.add(parts[0][:-3])
        else:
            names.add(parts[0])
    return names


def child(request: dict[str, Any]) -> None:
    """Run pytest for one request in this forked process; never returns."""
    code = 3
    try:
        os.setsid()
        fd = os.open(request["output"], os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.chdir(request["cwd"])
        _own_pythonpath = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        os.environ.clear()
        os.environ.update(request["env"])
        # As a cold `python -m pytest` in cwd: the working directory, then the request's
        # PYTHONPATH (relative entries against cwd), and none of the server's own entries.
        sys.path[:] = [p for p in sys.path if p not in _own_pythonpath]
        added = [request["cwd"]] + [
            os.path.join(request["cwd"], p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[0:0] = added
        # Looked up afresh, as a cold run does: one the server met before it existed (its own
        # PYTHONPATH naming the run's plugin folder, as inside another reviewui run) is cached as
        # "no finder", and the run's plugins would not be found there.
        for entry in added:
            sys.path_importer_cache.pop(entry, None)
        sys.argv = ["pytest"] + list(request["args"])
        if not request.get("coverage"):  # preloaded for measured runs only: a cold run has none of it
            _hide([m for m in sys.modules if m.split(".")[0] == "coverage"])
        import pytest

        if request.get("coverage"):
            code = _measured(lambda: int(pytest.main(list(request["args"]))))
        else:
            code = int(pytest.main(list(request["args"])))
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


class _Preloaded:
    """Gives back a hidden module's own object when the run imports it (an import finder).

    A module the server preloaded is out of sys.modules, as in a cold run, until the run
    imports it; it then gets the same object, never a fresh copy: coverage's C tracer
    imported a second time in one process has no CTracer, and the project's pytest-cov
    would fail to start.
    """

    def __init__(self, modules: dict[str, Any]) -> None:
        self.modules = modules

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        import importlib.util

        module = self.modules.pop(name, None)
        if module is None:
            return None
        return importlib.util.spec_from_loader(name, _Same(module))  # type: ignore[arg-type]  # a loader by its two methods


class _Same:
    """The loader of a preloaded module: its own object, its own spec kept."""

    def __init__(self, module: Any) -> None:
        self.module = module
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec: Any) -> Any:
        return self.module

    def exec_module(self, module: Any) -> None:
        module.__spec__ = self.spec  # importlib set ours: the module's own, as before


def _hide(names: list[str]) -> None:
    """Take `names` out of sys.modules, to be given back as they were on import (_Preloaded)."""
    hidden = {name: sys.modules.pop(name) for name in names if name in sys.modules}
    if hidden:
        sys.meta_path.insert(0, _Preloaded(hidden))


def _measured(run: Any) -> int:
    """`run()` under coverage.py as `coverage run` would measure it: the rcfile named by
    COVERAGE_RCFILE, data saved even when the run raises."""
    import coverage

    os.environ["COVERAGE_RUN"] = "true"
    cov = coverage.Coverage()
    cov.start()
    try:
        return int(run())
    finally:
        cov.stop()
        cov.save()


def _in_own_pid_namespace() -> bool:
    """True only inside bwrap's PID namespace: our parent is its pid 1, and pid 1 is bwrap."""
    try:
        with open("/proc/1/comm") as f:
            return os.getppid() == 1 and f.read().strip() == "bwrap"
    except OSError:
        return False


# The sweep kills every process it can see but two: never on a host, whatever argv says.
SWEEP = len(sys.argv) > 1 and sys.argv[1] == "sweep" and _in_own_pid_namespace()


def _sweep() -> None:
    """Kill every process of this PID namespace but init and the server (sandboxed servers only)."""
    if not SWEEP:
        return
    me = os.getpid()
    for _ in range(3):
        found = False
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in (1, me):
                found = True
                try:
                    os.kill(int(name), signal.SIGKILL)
                except OSError:
                    pass
        if not found:
            return


SCRATCH_DIRS = ("/dev/shm", "/tmp")
"""The writable dirs every fork of this server shares, emptied before each (hermetic runs)."""


def _empty(top: str) -> None:
    import shutil

    try:
        names = os.listdir(top)
    except OSError:
        return
    for name in names:
        path = os.path.join(top, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass


def _no_sysv_ipc() -> None:
    """Remove every System V shared memory segment, message queue and semaphore set of this IPC
    namespace (the server's and its forks': a segment is a counter a later run could read)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except Exception:
        return
    for kind, remove in (("shm", libc.shmctl), ("msg", libc.msgctl), ("sem", libc.semctl)):
        try:
            with open("/proc/sysvipc/" + kind) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 1 and fields[1].isdigit():
                if kind == "sem":
                    remove(int(fields[1]), 0, 0)  # IPC_RMID is 0
                else:
                    remove(int(fields[1]), 0, None)


KEYCTL = {"x86_64": 250, "aarch64": 219, "i686": 288, "armv7l": 311, "ppc64le": 271, "s390x": 281, "riscv64": 219}
"""The keyctl system call's number per machine (no libc wrapper without libkeyutils)."""


def _no_keys() -> None:
    """Empty the user, user-session and session keyrings this server's forks share (a key is a
    counter too); unknown machines keep them (said in docs/REFERENCE.md)."""
    import platform

    number = KEYCTL.get(platform.machine())
    if number is None:
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        for ring in (-4, -5, -3):  # KEY_SPEC_USER_KEYRING, _USER_SESSION_KEYRING, _SESSION_KEYRING
            libc.syscall(number, 7, ring)  # KEYCTL_CLEAR
    except Exception:
        pass


def _fresh(env: dict[str, str]) -> None:
    """Only ever in the server's own sandbox (SWEEP): before any run forks: nothing a previous run wrote survives (issue 37). /dev/shm and /tmp
    emptied (TMPDIR made again), every System V IPC object of this namespace removed, the
    keyrings the forks share emptied. The root,
    /dev and the rest are read-only; the io dir is emptied by reviewui itself; the slot by
    `_prepare`. Done here, not in the fork: no run's code has run in this process."""
    for top in SCRATCH_DIRS:
        _empty(top)
    os.makedirs(env.get("TMPDIR") or "/tmp", exist_ok=True)
    _no_sysv_ipc()
    _no_keys()


def _prepare(tree: dict[str, Any], env: dict[str, str]) -> None:
    """Before a run forks (reviewui's sized storage, its storage.py): the run's tmpfs emptied of what
    the last run left, the tree unpacked from the tar reviewui wrote, HOME made, the tar gone.
    Done here, not in the fork: no run's code has run in this process."""
    import subprocess

    _empty(tree["slot"])
    os.makedirs(tree["dir"])
    os.makedirs(tree["home"])
    try:
        done = subprocess.run([tree.get("exe", "tar"), "-xpf", tree["tar"], "-C", tree["dir"], "--no-same-owner",
                               "--delay-directory-restore"], stdin=subprocess.DEVNULL, capture_output=True)
    finally:
        os.unlink(tree["tar"])
    if done.returncode != 0:
        raise OSError("cannot unpack the tree: " + done.stderr.decode("utf-8", "replace").strip()[-300:])


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def serve() -> None:
    """Answer requests until stdin closes, children reported as they end."""
    running: dict[int, Any] = {}
    pidfds: dict[int, int] = {}  # pid -> pidfd: readable the moment that run ends
    stdin = sys.stdin.buffer
    pending = b""
    while True:
        # Woken by a request or by a run's end; polled only for a run without a pidfd (old kernel).
        polled = any(pid not in pidfds for pid in running)
        ready, _, _ = select.select([stdin, *pidfds.values()], [], [], 0.02 if polled else None)
        if stdin in ready:
            chunk = os.read(stdin.fileno(), 65536)
            if not chunk:
                # reviewui has gone (even killed with SIGKILL): its runs go with it.
                for pid in running:
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except OSError:
                        pass
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request: dict[str, Any] = {}
                try:
                    request = json.loads(line)
                    if "kill" in request:
                        for pid, rid in running.items():
                            if rid == request["kill"]:
                                # The run itself too: a child not yet through its setsid()
                                # has no group of its own to kill.
                                for kill in (os.killpg, os.kill):
                                    try:
                                        kill(pid, signal.SIGKILL)
                                    except OSError:
                                        pass
                                _sweep()
                        continue
                    if SWEEP:  # sandboxed only: unsandboxed, /tmp and the keyrings are the host's own
                        _fresh(request["env"])
                    if "tree" in request:
                        _prepare(request["tree"], request["env"])
                    sys.stdout.flush()
                    pid = os.fork()
                except Exception as e:
                    _write({"id": request.get("id"), "error": "%s: %s" % (type(e).__name__, e)})
                    continue
                if pid == 0:
                    for fd in pidfds.values():  # other runs' handles are not this run's to hold
                        os.close(fd)
                    child(request)
                running[pid] = request.get("id")
                try:
                    pidfds[pid] = os.pidfd_open(pid)
                except (AttributeError, OSError):
                    pass  # polled instead
                _write({"id": request.get("id"), "pid": pid})
        for pid in list(running):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                if pid in pidfds:
                    os.close(pidfds.pop(pid))
                try:
                    os.killpg(pid, signal.SIGKILL)  # what the run left in its group
                except OSError:
                    pass
                if len(running) == 1:
                    _sweep()  # and what escaped the group (setsid, double fork)
                _write({"id": running.pop(pid), "exit": _exit_code(status)})


def _not_dumpable() -> None:
    """Make the server (and so every run it forks) non-dumpable: no run can open the server's
    own stdout through /proc/<server>/fd/1, nor another run's, to write into reviewui's reply
    channel (reviewui caps that channel as well)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except Exception:
        pass  # the cap on the channel still holds


if __name__ == "__main__":
    if SWEEP:
        _not_dumpable()
    # Importing the plugins makes objects by the hundred thousand, and the collector would walk
    # them again and again (about a tenth of the start-up): it resumes before any run forks.
    gc.disable()
    filling = len(sys.argv) > 1 and sys.argv[1] == "fill-plugin-cache"
    cache = _option("--plugin-cache")
    restore = _rewrite_cache(cache) if cache else None
    if filling:
        sys.dont_write_bytecode = False  # this server's one job: write the rewritten plugins
    try:
        preload()
    except BaseException as e:
        _write({"error": "preload failed: %s: %s" % (type(e).__name__, e)})
        sys.exit(1)
    rewrote = restore() if restore is not None else None
    if filling:
        sys.dont_write_bytecode = True  # own_code.py's own bytecode is no cache's business
        own_code_counted(store=True)
        sys.exit(0)
    own = own_code_counted()
    warm_lookups()
    # Everything imported so far lives as long as the server: out of the collector's
    # sight, the children's collections (pytest forces several per run) stay small
    # and do not copy the parent's pages. Frozen without a collection first (as Python's
    # gc.freeze documentation advises for fork servers): one would walk some 100 000 objects
    # (~45 ms per server) to free a few hundred (classes the stdlib replaces as it imports),
    # and leave holes the children's allocations would copy. The runs get the collector back.
    gc.freeze()
    gc.enable()
    import pytest

    ready: dict[str, Any] = {"ready": True, "pytest": str(getattr(pytest, "__version__", "?")),
                             "moved": moved_internals()}
    if rewrote is not None:
        ready["rewrote"] = rewrote
    if own is not None:
        ready["own"], ready["own_compiled"] = own
    _write(ready)
    serve()
