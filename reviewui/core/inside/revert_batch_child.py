"""The revert-batch pytest plugin: many hunk reverts graded in one configured pytest session.

Copied by reviewui into a run's own directory and loaded through
PYTEST_PLUGINS (standard library and pytest only: it runs in the project's
Python, inside the sandbox, like any run). pytest configures once (plugins,
conftests, options: most of a short run's time); then, before anything is
collected, each revert of the request gets a fork. The parent writes the
reverted files and puts the revert's own git commit and index in place (the
code under test cannot ask git what changed); the fork collects the
revert's tests and runs them as a session of their own would, writing its
own JUnit report, origin record and output; the parent waits (killing the
fork's process group past the time limit), puts the head back and goes on.
After the last revert the session's own collection goes on (the guard
batch).

Exact or not at all: a revert of a file imported while pytest configured
(a conftest, a plugin's module) is answered `fallback`, and so is every
revert after a fork that left the tree changed (a test writing files); the
session then collects nothing, so its guards come back too. reviewui runs
those the ordinary way, in a fresh copy. A fork stops right
after writing its reports, before the session-end hooks of other plugins:
those would tear down what the plugin's configure made for the whole
session (a temp dir, say) under the next fork.

Request (JSON file named by REVIEWUI_REVERT_BATCH): {"timeout": s, "mtime_ns" (the
tree's one mtime, given to every file written here), "collect" (false: the session
collects nothing after the forks, it has no guards), "scratch":
dir, "git": {"index", "ref", "objects" (the scratch's object store), "staged" (where
the reverts' own objects wait)}, "reverts": [{"id", "files": {path: file with the
reverted bytes, or null to delete}, "index", "commit", "objects" (`<xx>/<rest>` of the
revert's own objects: put in place for its fork only), "maxfail" (optional:
pytest's --maxfail for the fork), "tests", "dir"}]}. Per revert, in its "dir":
junit.xml, origin.json, output, and reply.json: {"exit", "seconds", "timeout"}
or {"fallback": why}.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import pytest

try:
    import reviewui_forks as forks  # type: ignore[import-not-found]  # copied beside this plugin in a run
    import reviewui_reports as reports  # type: ignore[import-not-found]
except ImportError:  # imported by reviewui itself, for its names
    from reviewui.core.inside import forks, reports

REQUEST_VAR = "REVIEWUI_REVERT_BATCH"
_fork: dict[str, Any] = {"revert": None}
"""In a fork: the revert it runs."""


def _held() -> Any:
    """reviewui's variables of this run: the origin plugin took them out of os.environ (origin_plugin.py)."""
    return getattr(sys.modules.get("reviewui_origin"), "HELD", os.environ)


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: Any) -> bool | None:
    """Before the session collects: one fork per revert of the request."""
    path = _held().get(REQUEST_VAR)
    if _fork["revert"] is not None or not path or session.config.option.collectonly:
        return None
    with open(path, encoding="utf-8") as f:
        request = json.load(f)
    root = request["scratch"]
    swapped = {request["git"]["index"], request["git"]["ref"]}
    objects = request["git"].get("objects", "")
    _warm(session, [t for revert in request["reverts"] for t in revert["tests"]])
    clean: dict[str, tuple[int, int]] | None = _snapshot(root)
    for revert in request["reverts"]:
        why = "an earlier revert's tests changed the tree" if clean is None else _imported(root, revert["files"])
        if why:
            _reply(revert, {"fallback": why})
            continue
        if _run(session, request, revert):
            return None  # this is the fork: pytest collects the revert's tests
        touched = swapped | {os.path.join(root, rel) for rel in revert["files"]} \
            | {os.path.join(objects, rel) for rel in revert.get("objects", [])} \
            | {os.path.dirname(os.path.join(objects, rel)) for rel in revert.get("objects", [])}
        after = _snapshot(root)
        if clean is not None and _without(after, touched) != _without(clean, touched):
            clean = None
        elif clean is not None:
            clean = after
    if clean is not None and request.get("collect", True):
        return None
    # A fork changed the tree under what follows, or no guards follow (a session of reverts
    # alone): nothing is collected. After a changed tree the guard batch answers `fallback`
    # and reviewui runs each guard afresh.
    session.items = []
    session.testscollected = 0
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    """In a fork: write its reports and end, before other plugins' session-end hooks."""
    if _fork["revert"] is None:
        return
    code = int(exitstatus)
    try:
        # What a run's output ends with (errors, failures, the short summary): pytest prints it
        # after the session-end hooks this fork skips.
        reporter = session.config.pluginmanager.getplugin("terminalreporter")
        for section in ("summary_errors", "summary_failures", "short_test_summary"):
            getattr(reporter, section, lambda: None)()
        xml = _junit(session.config)
        if xml is not None:
            xml.pytest_sessionfinish()
        origin = sys.modules.get("reviewui_origin")
        if origin is not None:
            origin.pytest_sessionfinish(session)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 3
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _run(session: Any, request: dict[str, Any], revert: dict[str, Any]) -> bool:
    """Fork for one revert. True in the fork (set up to collect the revert's tests); the parent
    waits, replies and puts the head back, then returns False."""
    root, git = request["scratch"], request["git"]
    head = {rel: _read(os.path.join(root, rel)) for rel in revert["files"]}
    saved_index, saved_ref = _read(git["index"]), _read(git["ref"])
    placed: list[str] = []
    try:
        for rel, src in revert["files"].items():
            _put(os.path.join(root, rel), None if src is None else _read(src))
        _put(git["index"], _read(revert["index"]))
        _put(git["ref"], (revert["commit"] + "\n").encode())
        placed = _objects(git, revert.get("objects", []))
        _stamp(request, [os.path.join(root, rel) for rel in revert["files"]] + [git["index"], git["ref"], *placed])
        sys.stdout.flush()
        sys.stderr.flush()
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                _become(session, revert)
            except BaseException:
                os._exit(3)  # no reports: reviewui runs this revert the ordinary way
            return True
        status = forks.wait(pid, float(request["timeout"]))
        seconds = time.monotonic() - start
        if status is None:
            _reply(revert, {"timeout": True, "seconds": seconds})
        else:
            _reply(revert, {"exit": os.waitstatus_to_exitcode(status), "seconds": seconds})
    except OSError as e:
        _reply(revert, {"fallback": f"{type(e).__name__}: {e}"})
    finally:
        if _fork["revert"] is None:  # the parent puts the head back; a fork never gets here
            for rel, content in head.items():
                _put(os.path.join(root, rel), content)
            _put(git["index"], saved_index)
            _put(git["ref"], saved_ref)
            gone = _unplace(placed)
            _stamp(request, [os.path.join(root, rel) for rel in head] + [git["index"], git["ref"], *gone])
    return False


def _objects(git: dict[str, Any], wanted: list[str]) -> list[str]:
    """Put the revert's own git objects (`<xx>/<rest>`, staged in the run's directory) in place;
    return each path made (object files, then any folder made for them)."""
    made: list[str] = []
    for rel in wanted:
        target = os.path.join(git["objects"], rel)
        if os.path.exists(target):
            continue
        folder = os.path.dirname(target)
        if not os.path.isdir(folder):
            os.mkdir(folder)
            made.append(folder)
        _put(target, _read(os.path.join(git["staged"], rel)))
        os.chmod(target, 0o444)
        made.insert(0, target)
    return made


def _unplace(placed: list[str]) -> list[str]:
    """Take away what `_objects` put in place (files first, then folders); return the paths whose
    parents changed, for their mtimes."""
    for path in placed:
        try:
            (os.rmdir if os.path.isdir(path) else os.unlink)(path)
        except OSError:
            pass
    return [os.path.dirname(p) for p in placed]


def _stamp(request: dict[str, Any], paths: list[str]) -> None:
    """Give `paths` and the directories above them (up to the scratch) the tree's one mtime, as
    every edit of a scratch does: the code under test cannot tell a reverted file by its mtime."""
    stamp, root = request.get("mtime_ns"), request["scratch"]
    if not isinstance(stamp, int):
        return
    seen = set()
    for path in paths:
        while path.startswith(root) and path not in seen:
            seen.add(path)
            try:
                os.utime(path, ns=(stamp, stamp), follow_symlinks=False)
            except OSError:
                pass
            path = os.path.dirname(path)


def _become(session: Any, revert: dict[str, Any]) -> None:
    """Make this fork a session of the revert's tests with reports of its own."""
    import importlib
    import linecache

    os.setpgid(0, 0)
    _fork["revert"] = revert
    out = revert["dir"]
    held = _held()  # read by the other plugins, out of the test's sight (origin_plugin.py)
    held.pop("REVIEWUI_GUARD_BATCH", None)  # the guard loop is the parent session's
    held["REVIEWUI_QUIET_STOP"] = "1"  # graded by its first collection error, like any revert run
    held["REVIEWUI_ORIGIN_OUT"] = os.path.join(out, "origin.json")
    xml = _junit(session.config)
    if xml is not None:
        xml.logfile = os.path.join(out, "junit.xml")
    fd = os.open(os.path.join(out, "output"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    # pytest's global capture keeps the real stdout/stderr in saved descriptors: point those
    # (and the current ones) at this fork's own output file.
    capman = session.config.pluginmanager.getplugin("capturemanager")
    capturing = getattr(capman, "_global_capturing", None)
    saved = [getattr(getattr(capturing, name, None), "targetfd_save", None) for name in ("out", "err")]
    for target in {1, 2, *(t for t in saved if isinstance(t, int))}:
        os.dup2(fd, target)
    os.close(fd)
    session.config.args = list(revert["tests"])
    if revert.get("maxfail"):
        session.config.option.maxfail = int(revert["maxfail"])
    importlib.invalidate_caches()  # the reverted files changed on disk since the parent looked
    linecache.clearcache()


def _warm(session: Any, forked: list[str]) -> None:
    """Compile here, once, the patterns each fork would otherwise compile for itself: the JUnit
    report's escape (about 8 ms: a character class spanning Unicode) and the collection globs.
    Pure functions of their text, so a fork sees exactly what it would have compiled. Map the
    modules pytest's configuration loaded (a failure report looks each one up), and rewrite
    the test files this session collects after the forks and those the forks collect (`forked`:
    their tests; a revert's selection is often wider than the session's guards') once
    (`_rewrite_once`). Let each fork's failure reports parse a source file once, not once per
    failing test (reports.py)."""
    import fnmatch
    import inspect

    try:
        from _pytest.junitxml import bin_xml_escape

        bin_xml_escape("")
        inspect.getmodule(_warm.__code__)
        for name in ("norecursedirs", "python_files"):
            for pattern in session.config.getini(name):
                fnmatch.fnmatch("x", pattern)
        _rewrite_once(session.config, [a.split("::", 1)[0] for a in [*session.config.args, *forked]])
        reports.share()
    except Exception:
        pass  # only time is lost: each fork compiles what it needs


def _rewrite_once(config: Any, paths: list[str]) -> None:
    """Rewrite the asserts of the test files at `paths` here, once, and hand each fork (and this
    session's own collection) the code made from the same bytes instead of rewriting them again.

    A revert's fork imports its test module afresh, and pytest parses, rewrites and compiles
    it each time (about a quarter of a fork's time). Only a file read back byte for byte as
    it was rewritten gets the stored code, for this session's configuration; anything else
    (a file a test or a revert changed) is rewritten as pytest would.
    """
    from pathlib import Path

    import _pytest.assertion.rewrite as rewrite

    real = rewrite._rewrite_test
    done: dict[str, tuple[bytes, Any]] = {}

    def once(fn: Any, cfg: Any) -> Any:
        hit = done.get(str(fn))
        if hit is not None and cfg is config and fn.read_bytes() == hit[0]:
            return hit[1]
        return real(fn, cfg)

    for path in dict.fromkeys(paths):
        fn = Path(path).absolute()
        if fn.suffix != ".py" or not fn.is_file():
            continue
        try:
            before = fn.read_bytes()
            made = real(fn, config)
        except Exception:
            continue  # a file pytest cannot rewrite (a syntax error): each fork meets it as pytest would
        if fn.read_bytes() == before:
            done[str(fn)] = (before, made)
    rewrite._rewrite_test = once  # type: ignore[assignment]


def _junit(config: Any) -> Any:
    try:
        from _pytest.junitxml import xml_key

        return config.stash.get(xml_key, None)
    except (ImportError, AttributeError):
        return None


_real: dict[str, str] = {}
"""Each loaded module's file as given -> its real path (resolved once: the session's modules
stay loaded between reverts, and realpath costs a system call per path component)."""


def _imported(root: str, files: dict[str, Any]) -> str | None:
    """Why a revert cannot be forked for: one of its files was imported while pytest configured."""
    paths = {os.path.realpath(os.path.join(root, rel)) for rel in files}
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if not isinstance(where, str):
            continue
        real = _real.get(where)
        if real is None:
            real = _real[where] = os.path.realpath(where)
        if real in paths:
            return f"{name} was imported while pytest configured"
    return None


def _snapshot(root: str) -> dict[str, tuple[int, int]]:
    """Every file under `root` with its size and modification time."""
    seen: dict[str, tuple[int, int]] = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            seen[path] = (st.st_size, st.st_mtime_ns)
    return seen


def _without(snapshot: dict[str, tuple[int, int]], paths: set[str]) -> dict[str, tuple[int, int]]:
    return {k: v for k, v in snapshot.items() if k not in paths}


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _put(path: str, content: bytes | None) -> None:
    if content is None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content)


def _reply(revert: dict[str, Any], reply: dict[str, Any]) -> None:
    path = os.path.join(revert["dir"], "reply.json")
    with open(path + ".part", "w", encoding="utf-8") as f:
        json.dump(reply, f)
    os.replace(path + ".part", path)
