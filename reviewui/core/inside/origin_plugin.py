"""reviewui: record where the changed modules were imported from, who opens changed data files, and
which tests read a changed source file as data (an open that is no import: a hash pinned, a file read,
its text looked up through `inspect`, `linecache`, the loader's `get_source`; not a traceback or a
warning being shown, whose lines the code under test may look up itself). Each test phase starts
with the changed files dropped from linecache's cache, so a lookup opens the file and is seen.
Reaching a code object of the file's functions reads it too (`f.__code__`, `dis`, a frame's `f_code`
in a profile hook or a traceback, a generator's `gi_code`, `gc.get_referents` of a function), by a
test or by the changed module's top level: its bytecode pins the code as the file's bytes do.
Python audits those attributes. No read: the standard library looking at a code object's shape
alone (a signature, a coroutine flag, a file name, `typing.overload`'s first line, logging naming
its caller), an installed package reaching it (a decorator's bookkeeping, a logger naming its
caller: real projects do both at import and in every test), the changed code reaching a frame's
(asking where it runs). So not seen either: an installed serializer handing a test the bytes
(`cloudpickle`), the changed code hashing its own running frame's code.

A test that opens, lists or links anything under the run's `.git` (REVIEWUI_GIT_DIR), or changes
into it, reads git's copy of every changed source file: its objects, packs and refs can tell a
revert's run from a control's (a null revert's objects are all in the packs, a revert's are not),
as the file's own bytes can. Such a test is recorded as a reader of every changed source file.
A path counts by where it resolves (relative, `..`, symlinks), but only one that could lead there
is resolved: one naming `.git` or a symlink into it (the tree's: REVIEWUI_GIT_LINKS; any a run
makes), or a relative one once the working directory has been inside it. Any other costs a
substring test (about 0.1 us an open). A read while a collector runs (a test module's top level,
a conftest or package `__init__` imported at collection) is a read by every test collected under
it; one before collection (the conftests on the command line's paths and plugins start then) by
every test (this Python's reads only: another process's before the first collector are nobody's);
one while a fixture is set up by every test using it. Not seen: a read after collection while no
test runs (a session-end hook), a process a conftest starts before collection, an access through
a descriptor (`dir_fd`) by a path no changed file's path ends with, by `stat` alone, a traceback's
text a test formats itself, the line numbers a caught exception carries (`tb_lineno`: no code
object is reached). What one test read kept in a global for another test is not seen here: the
sweep reruns such bites without the readers (bite/reader_rerun.py). Reads are recorded in every
run, graded ones too (a test may read only where it runs beside fewer tests than in the baseline);
a write-only open is no read, and this folder's frames (a revert batch writing the reverted file)
are passed over as the standard library's are.

A process a test starts (`sha256sum pkg/m.py`, a child Python reading it, `git` reading its
store) is seen through an inotify watch (child_reads.py, made here in every run, drained after
each test phase): an open of a changed file beyond those this Python made during the phase, and
not excused by another process's listing of its directory (a child Python importing the module
lists it first), or another process's listing of `.git`, `.git/objects` or `objects/pack` or
open of a file directly in one, makes the test a reader. Not seen that way: a child that lists
the directory before it reads the file, one still running after its test, a file replaced
(renamed over) during the run, a phase whose events overflowed the kernel's queue, a run
where inotify cannot be had (no ctypes, the watch limit): there only this Python is watched."""
from __future__ import annotations

import json
import os
import sys
from _thread import get_ident as _thread_id
from typing import Any, Iterator

import pytest

# Imported in every run alike (what is loaded never tells a run's kind); they do nothing until asked.
try:
    import reviewui_child_reads as child_reads  # type: ignore[import-not-found]  # copied beside this plugin
except ImportError:  # loaded from reviewui's own tree (its tests)
    try:
        from reviewui.core.inside import child_reads
    except ImportError:
        child_reads = None
try:
    import reviewui_canary_run as canary  # type: ignore[import-not-found]  # copied beside this plugin
except ImportError:  # loaded from reviewui's own tree (its tests)
    from reviewui.core.inside import canary_run as canary

# What this run was given for reviewui's plugins is taken out of the test's sight before any
# test module is imported (pytest imports PYTEST_PLUGINS first): every run, baseline, revert or
# guard, measured or not, then shows the same environment. The other reviewui plugins, imported
# after this one, find their values in HELD. COVERAGE_PROCESS_CONFIG (coverage's subprocess
# patch) leaves os.environ only: it stays in the process environment, so subprocesses are measured.
_OURS = ("COVERAGE_RCFILE", "COVERAGE_CORE", "COVERAGE_RUN")
_KEEP = ("REVIEWUI_IN_SANDBOX",)
_PLUGINS = ("reviewui_origin", "reviewui_covctx", "reviewui_guard_batch", "reviewui_revert_batch", "reviewui_witness")
HELD: dict[str, str] = {}
for _k in list(os.environ):
    if (_k.startswith("REVIEWUI_") and _k not in _KEEP) or _k in _OURS:
        HELD[_k] = os.environ.pop(_k)
if "COVERAGE_PROCESS_CONFIG" in os.environ:
    HELD["COVERAGE_PROCESS_CONFIG"] = os.environ._data.pop(  # type: ignore[attr-defined,unused-ignore]
        os.environ.encodekey("COVERAGE_PROCESS_CONFIG"))  # type: ignore[attr-defined,unused-ignore]
_left = [p for p in os.environ.get("PYTEST_PLUGINS", "").split(",") if p.strip() and p.strip() not in _PLUGINS]
if _left:
    os.environ["PYTEST_PLUGINS"] = ",".join(_left)
else:
    os.environ.pop("PYTEST_PLUGINS", None)


def _var(name: str) -> str:
    return HELD.get(name, "")


def _is_coverage(tracer: Any) -> bool:
    owner = getattr(tracer, "__self__", tracer)
    return type(owner).__module__.split(".")[0] == "coverage"


def _hiding(real: Any) -> Any:
    def gettrace() -> Any:
        tracer = real()
        return None if tracer is not None and _is_coverage(tracer) else tracer
    gettrace.__name__, gettrace.__qualname__, gettrace.__doc__ = real.__name__, real.__qualname__, real.__doc__
    return gettrace


# The same in every run: measured by coverage.py or not, a test sees no tracer of coverage's.
sys.gettrace = _hiding(sys.gettrace)  # type: ignore[method-assign,assignment,unused-ignore]
import threading as _threading
if hasattr(_threading, "gettrace"):
    _threading.gettrace = _hiding(_threading.gettrace)
_monitoring = getattr(sys, "monitoring", None)
if _monitoring is not None:
    _get_tool = _monitoring.get_tool

    def _tool(tool_id: int) -> Any:
        name = _get_tool(tool_id)
        return None if name == "coverage.py" else name
    _tool.__name__, _tool.__qualname__ = "get_tool", "get_tool"
    _monitoring.get_tool = _tool  # type: ignore[method-assign,assignment,unused-ignore]

_data = {p for p in _var("REVIEWUI_DATA_FILES").split(os.pathsep) if p}
_sources = {p for p in _var("REVIEWUI_SOURCE_FILES").split(os.pathsep) if p}
_names = {os.path.basename(p) for p in _data | _sources}
_git = os.path.realpath(_var("REVIEWUI_GIT_DIR")) if _var("REVIEWUI_GIT_DIR") and _sources else ""
# Names that may lead into `.git` without spelling it: the tree's symlinks into it, and any link
# a test makes to something in it (only then is a path without `.git` in it resolved).
_aliases = {os.path.basename(p) for p in _var("REVIEWUI_GIT_LINKS").split(os.pathsep) if p} if _git else set()
_LINK_EVENTS = frozenset({"os.symlink", "os.link", "os.rename"})
_GIT_EVENTS = frozenset({"os.listdir", "os.scandir", "os.chdir", *_LINK_EVENTS})
_stashed: dict[str, Any] = {}
_opens: dict[str, set[str]] = {}
_reads: dict[str, set[str]] = {}
# The import system's own frames: an open under one of them imports the file, which is no read as
# data (`get_source`, `get_data` called by a test are: they are passed over to find the caller).
_IMPORTING = frozenset({"get_code", "exec_module", "_load_unlocked", "_find_and_load", "_find_and_load_unlocked",
                        "_call_with_frames_removed", "_load", "load_module"})
# A traceback or warning being shown (the code under test logging an error, a warning printed):
# the lines it looks up are no read as data. `inspect.getsource`, `linecache.getlines` and
# `pkgutil.get_data` called by a test are: its text can pin the code as its bytes can.
_SHOWING = ("traceback.py", "warnings.py")
_INFRA = (os.sep + "_pytest" + os.sep, os.sep + "pluggy" + os.sep, os.sep + "coverage" + os.sep,
          os.sep + os.path.join("importlib", "metadata") + os.sep)


def _stdlib() -> str:
    import sysconfig

    return os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep


# reviewui's own plugins (this folder): a revert batch writes the reverted files and git's
# records before its forks. Their frames are passed over as the standard library's are, so a
# test calling into one is still the reader.
_OWN = os.path.dirname(os.path.realpath(__file__)) + os.sep


_STDLIB = _stdlib() if _sources else ""


def _site() -> tuple[str, ...]:
    """The folders installed packages are imported from (the venv's, the user's), never the tree's."""
    import site
    import sysconfig

    paths = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")} | set(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        paths.add(site.getusersitepackages())
    return tuple(sorted({os.path.realpath(p) + os.sep for p in paths if p}))


_SITE = _site() if _sources else ()


def _read_as_data(depth: int = 3, code_of: str = "") -> str:
    """The file of the code that made the open being audited (`depth` frames above this one) when
    that is no import, pytest or traceback shown (the first frame outside the standard library is
    not pytest's, and no frame on the way is an import's or a traceback's), else "".

    For a code object reached (`code_of`: through that attribute) also "" where a standard library
    function on the way looks at its shape alone (`_SHAPE`), where an installed package reached it
    (a decorator's bookkeeping, a logger naming its caller), and where the changed code itself
    reached a frame's or a generator's (asking where it runs)."""
    frame = sys._getframe(depth)
    while frame is not None:
        code = frame.f_code
        name = code.co_filename
        if name.startswith("<frozen"):
            if code.co_name in _IMPORTING:
                return ""
        elif name.endswith(_SHOWING) or any(i in name for i in _INFRA):
            return ""
        else:
            real = os.path.realpath(name)
            if code_of and real.startswith(_SITE):
                return ""
            if not real.startswith(_STDLIB) and not real.startswith(_OWN):
                return "" if code_of not in ("", "__code__") and real in _sources else name
            if code_of and code.co_name in _SHAPE and real.startswith(_STDLIB):
                return ""
        frame = frame.f_back  # type: ignore[assignment]
    return ""


def _reading(args: Any) -> bool:
    """Whether an audited open (`path, mode, flags`) can read: any but a write-only one."""
    mode, flags = args[1], args[2]
    if isinstance(mode, str):
        return "r" in mode or "+" in mode
    return not isinstance(flags, int) or flags & os.O_ACCMODE != os.O_WRONLY


def _in_git(raw: str) -> bool:
    """Whether `raw` (a path as opened, "" the working directory) is the run's `.git` or under it,
    symlinks resolved."""
    path = os.path.realpath(raw or ".")
    return path == _git or path.startswith(_git + os.sep)


def _may_lead(raw: str) -> bool:
    """Whether `raw` could lead into `.git` (a cheap test: only then is it resolved)."""
    return (".git" in raw or (_cwd[0] and not raw.startswith(os.sep))
            or bool(_aliases and any(a in raw for a in _aliases)))


# Whether the working directory is, or has been, inside `.git`: relative paths are then resolved.
_cwd = [bool(_git) and _in_git("")]


def _linked(event: str, args: Any) -> bool:
    """Whether a link, symlink or rename (`args`: source, destination) takes something in `.git`:
    the destination's name is then watched as `.git` is."""
    src, dst = os.fsdecode(args[0]), os.fsdecode(args[1])
    if event == "os.symlink" and not os.path.isabs(src):
        src = os.path.join(os.path.dirname(dst), src)
    if not (_may_lead(src) and _in_git(src)):
        return False
    name = os.path.basename(dst.rstrip(os.sep))
    if name:
        _aliases.add(name)
    return True


def _other(event: str, args: Any) -> None:
    """A listing, a change of directory or a link: into `.git`, by a test, is a read of it."""
    try:
        if event in _LINK_EVENTS:
            hit = bool(_git) and _linked(event, args)
        elif isinstance(args[0], int):  # a descriptor (fchdir): where it leads is not known here
            hit, _cwd[0] = False, _cwd[0] or event == "os.chdir"
        else:
            raw = "" if args[0] is None else os.fsdecode(args[0])
            hit = bool(_git) and _may_lead(raw) and _in_git(raw)
            if _watch and event != "os.chdir":
                _watch.listing(raw)
                if hit:
                    _watch.git(raw)
            if hit and event == "os.chdir":
                _cwd[0] = True
    except Exception:
        return
    # A link or a change of directory reads nothing by itself: by a test it counts (the test may
    # read through it); while collecting, what is later read through it counts (the link's name
    # and the directory are watched from then on), not the link.
    if hit and (event not in (*_LINK_EVENTS, "os.chdir") or not _test().startswith(_COLLECT)):
        _read_git(4)  # _read_as_data, _read_git, _other, _audit, then the call audited


# Reaching a code object of the changed code: its bytecode, constants and names pin the code as
# its file's bytes do (`mul.__code__.co_code`, `dis`, a profile hook's `frame.f_code`). Python
# audits these attributes; `gc.get_referents` of a function hands its code over unaudited.
_CODE_ATTRS = frozenset({"__code__", "f_code", "gi_code", "cr_code", "ag_code"})
# The standard library's lookups of a code object's shape alone (its signature, whether it is a
# coroutine function, its file, its first line for `typing.overload`, the caller logging names): no
# read of what the code does.
_SHAPE = frozenset({"_signature_from_function", "_signature_is_functionlike", "_has_code_flag", "isawaitable",
                    "getfile", "findsource", "getargvalues", "getframeinfo", "_get_code_position_from_tb",
                    "overload", "coroutine", "wrapped", "findCaller", "_is_internal_frame", "_is_async_func",
                    "_mock_add_spec", "_get_function_source", "_format_coroutine", "is_running",
                    "_task_print_stack", "_text_encoding", "_find_lineno"})
_busy: set[int] = set()
"""The threads inside `_audit` now: what the hook itself touches (frames, code) is not audited again."""


def _audit(event: str, args: Any) -> None:
    if event == "object.__getattr__":
        if args[1] not in _CODE_ATTRS or not _sources:
            return
    elif event != "open" and event != "gc.get_referents" and event not in _GIT_EVENTS:
        return
    me = _thread_id()
    if me in _busy:
        return
    _busy.add(me)
    try:
        if event == "open":
            _opened(args)
        elif event == "object.__getattr__":
            _code_read(getattr(args[0], args[1], None), args[1])
        elif event == "gc.get_referents":
            for obj in args[0] if _sources else ():
                attr = _CODE_OF.get(type(obj).__name__, "")
                _code_read(getattr(obj, attr, None) if attr else None, attr)
        elif _git or _watch:
            _other(event, args)
    finally:
        _busy.discard(me)


_CODE_OF = {"function": "__code__", "frame": "f_code", "generator": "gi_code", "coroutine": "cr_code",
            "async_generator": "ag_code"}
"""The attribute holding the code object of each kind of object whose referents include it."""


def _code_read(code: Any, attr: str) -> None:
    """A test reaching `code` (a code object, or anything else; through the attribute `attr`) of a
    changed source file reads it."""
    name = getattr(code, "co_filename", None)
    if not isinstance(name, str) or os.path.basename(name) not in _names:
        return
    path = os.path.realpath(name)
    test = _test() if path in _sources else ""
    # _read_as_data, _code_read, _audit, then the code that asked
    reader = _read_as_data(3, attr) if test else ""
    if reader:
        _reads.setdefault(path, set()).add(_scoped(test, reader))


def _opened(args: Any) -> None:
    """An open (`path, mode, flags`): of `.git`'s store or a changed file, by a test, is a read."""
    try:
        raw = os.fsdecode(args[0])
        # os.open (mode None) of a bare name is how the standard library walks a tree by
        # descriptor (shutil.rmtree, os.fwalk: the name is relative to a directory descriptor the
        # event does not carry), and resolved against the working directory a `.git` met so in
        # another repository would be the run's own. Opening `.git` itself reads nothing: what
        # is read through it is a listing by descriptor, not seen either way (see the docstring).
        by_name = args[1] is None and os.sep not in raw
        if _git and not by_name and _may_lead(raw) and _in_git(raw):
            if _watch:
                _watch.git(raw)
            _read_git(4)  # _read_as_data, _read_git, _opened, _audit, then the call audited
        if _watch:
            _watch.listing(raw)
        if os.path.basename(raw) not in _names:
            return
        paths = [os.path.realpath(raw)]
        if args[1] is None and paths[0] not in _sources and paths[0] not in _data:
            # A path given to os.open may be relative to a directory descriptor (`dir_fd`) the event
            # does not carry: it is an open of every changed file whose path ends with it.
            tail = os.sep + os.path.normpath(raw)
            paths = sorted(p for p in _sources | _data if p.endswith(tail)) or paths
    except Exception:
        return
    for path in paths if _watch else ():
        if path in _sources:
            _watch.here[path] = _watch.here.get(path, 0) + 1
    if not _reading(args):
        return  # written, not read (a revert batch writes the reverted file before its forks)
    test = _test()
    if not test:
        return
    for path in paths:
        if path in _data:
            _opens.setdefault(path, set()).add(test)
        reader = _read_as_data() if path in _sources else ""  # _read_as_data, _opened, _audit, the call
        if reader:
            _reads.setdefault(path, set()).add(_scoped(test, reader))


_COLLECT = "\0collect "
"""Names, with a collector's node id after it, what is read while that collector runs."""
_FIXTURE = "\0fixture "
"""Names, with a fixture's name and base node id after it, what is read while it is set up."""
_collecting: list[str] = []
"""The node ids of the collectors running now, innermost last."""
_fixtures: list[str] = []
"""The marks (`_FIXTURE`) of the fixtures being set up now, innermost last."""
_items: dict[str, frozenset[str]] = {}
"""The node id of every test collected, with the fixtures it uses (at the end of collection)."""


_collected = [False]
"""Whether collection has ended."""


def _test() -> str:
    """The fixture being set up (marked `_FIXTURE`: every test using it gets what it read), else the
    test running now, else the collector running (marked `_COLLECT`), else before collection every
    test (the conftests on the command line's paths and plugins start up then: a hook of theirs can
    fail any test), else ""."""
    if _fixtures:
        return _fixtures[-1]
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    if test:
        return test
    if _collecting:
        return _COLLECT + _collecting[-1]
    return "" if _collected[0] else _COLLECT


def _scoped(test: str, reader: str) -> str:
    """`test`, or for a read before collection by a conftest in the tree, the tests below its folder
    (pytest imports the conftests on the command line's paths before it collects)."""
    if test != _COLLECT or os.path.basename(reader) != "conftest.py":
        return test
    folder = os.path.relpath(os.path.dirname(os.path.realpath(reader)), os.path.realpath(os.getcwd()))
    if folder == os.pardir or folder.startswith(os.pardir + os.sep):
        return test
    return _COLLECT + ("" if folder == os.curdir else folder.replace(os.sep, "/"))


def _under(node: str, item: str) -> bool:
    """Whether test `item` is collected under the node `node` ("": the session)."""
    return not node or item == node or item.startswith((node + "::", node + "/"))


def _named(found: dict[str, set[str]]) -> dict[str, list[str]]:
    """`found` (path -> readers) with each collector named by the tests collected under it and each
    fixture by the tests using it (within its conftest's or module's reach)."""
    out: dict[str, list[str]] = {}
    for path, readers in found.items():
        named = {t for t in readers if not t.startswith("\0")}
        for mark in {t for t in readers if t.startswith("\0")}:
            if mark.startswith(_COLLECT):
                named.update(i for i in _items if _under(mark[len(_COLLECT):], i))
            else:
                name, _, base = mark[len(_FIXTURE):].partition(" ")
                named.update(i for i, uses in _items.items() if name in uses and _under(base, i))
        out[path] = sorted(named)
    return out


def _read_git(depth: int) -> None:
    """The current test, reading git's store, reads every changed source file (by test code only:
    the audited call is `depth` frames above `_read_as_data`'s)."""
    test = _test()
    reader = _read_as_data(depth) if test else ""
    if reader:
        for path in _sources:
            _reads.setdefault(path, set()).add(_scoped(test, reader))


def _open_watch() -> Any:
    """The tally of other processes' opens (child_reads.Tally) of the changed source files, their
    directories and `.git`'s store, or None: no changed source file named, switched off, or no inotify here."""
    if not _sources or not _var("REVIEWUI_CHILD_READS") or child_reads is None:
        return None
    store = [os.path.join(_git, *p) for p in ((), ("objects",), ("objects", "pack"))] if _git else []
    return child_reads.Tally.watching(_sources, [p for p in store if os.path.isdir(p)])


# Opens of the changed source files by any process (a test's `sha256sum`, a child Python reading
# one): the watch counts them all, the audit hook tells the tally those of this Python.
_watch = _open_watch()


def _phase_reads(test: str) -> None:
    """After one phase of `test`: the changed files another process read (all of them when it
    read `.git`'s store) are read by the test."""
    for path in _watch.end(bool(test)):
        _reads.setdefault(path, set()).add(test)


def _forget_lines() -> None:
    """Drop the changed source files' lines linecache holds (a traceback shown before, another test's
    `inspect.getsource`): a test asking for their text then opens the file, and is seen reading it."""
    cached = getattr(sys.modules.get("linecache"), "cache", None)
    if _sources and isinstance(cached, dict):
        for path in [p for p in cached if isinstance(p, str) and os.path.basename(p) in _names]:
            if os.path.realpath(path) in _sources:
                cached.pop(path, None)


def _watched(phase: str) -> Any:
    # The same hooks in every run; they drain the watch only where there is one.
    @pytest.hookimpl(hookwrapper=True)
    def hook(item: Any) -> Iterator[None]:
        _forget_lines()
        if _watch is None:
            yield
            return
        _phase_reads("")  # what happened between phases is nobody's
        try:
            yield
        finally:
            _phase_reads(item.nodeid)
    hook.__name__ = hook.__qualname__ = phase
    return hook


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: Any) -> Iterator[None]:
    # Collecting imports test modules, conftests and packages: what their top level reads is read
    # for the tests collected under them (`_named`), what a process it starts reads too.
    if _watch is not None:
        # What other processes opened before this: the enclosing collector's; before the first
        # collector, nobody's (pytest's start-up overlaps reviewui's own work on the tree: a process
        # opening a changed file then, seen by the watch, made every test a reader, one run in three
        # unsandboxed)
        _phase_reads(_test() if _collecting else "")
    _collecting.append(collector.nodeid)
    try:
        yield
    finally:
        if _watch is not None:
            _phase_reads(_test())
        _collecting.pop()


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Iterator[None]:
    # A fixture's value is every user's (a session-scoped one is made once, in its first user's
    # setup): what its setup reads is read by every test that uses it.
    if _watch is not None:
        _phase_reads(_test())
    _fixtures.append("%s%s %s" % (_FIXTURE, fixturedef.argname, fixturedef.baseid))
    try:
        yield
    finally:
        if _watch is not None:
            _phase_reads(_test())
        _fixtures.pop()


pytest_runtest_setup = _watched("pytest_runtest_setup")
pytest_runtest_call = _watched("pytest_runtest_call")
pytest_runtest_teardown = _watched("pytest_runtest_teardown")

if _data or _sources:
    sys.addaudithook(_audit)


_session: list[Any] = []
_progress: dict[str, Any] = {"path": _var("REVIEWUI_PROGRESS"), "done": 0, "total": 0, "at": 0.0}


def _say_progress(force: bool = False) -> None:
    # "done total" in the run's own directory, at most every quarter second: reviewui's progress
    # line for long runs, from pytest's own collection count. Every run writes it alike.
    import time

    path = _progress["path"]
    now = time.monotonic()
    if not path or (not force and now - _progress["at"] < 0.25):
        return
    _progress["at"] = now
    try:
        with open(path, "w", encoding="ascii") as f:
            f.write("%d %d\n" % (min(_progress["done"], _progress["total"]), _progress["total"]))
    except OSError:
        _progress["path"] = ""


def pytest_sessionstart(session: Any) -> None:
    _session[:] = [session]


def pytest_collection_finish(session: Any) -> None:
    _items.clear()
    _items.update((item.nodeid, frozenset(getattr(item, "fixturenames", ()))) for item in session.items)
    _collected[0] = True
    _progress["total"] = len(session.items)
    _say_progress(force=True)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    _progress["done"] += 1
    _say_progress()


def pytest_collectreport(report: Any) -> None:
    # A run of reverted code is graded by its first collection error alone: the modules
    # after it need not be imported. pytest's own check before the next collector then
    # ends the session as --maxfail does (quietly, exit code 1).
    if (report.failed and _var("REVIEWUI_QUIET_STOP") and _session
            and not _session[0].config.option.continue_on_collection_errors):
        _session[0].shouldfail = "reviewui: stopped at the first collection error"


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: Any) -> bool | None:
    # A run of reverted code whose collection failed: nothing more is learned by running
    # tests (the revert is graded by the collection error), so end here quietly.
    if (session.testsfailed and _var("REVIEWUI_QUIET_STOP")
            and not session.config.option.continue_on_collection_errors):
        return True
    return None


@pytest.hookimpl(trylast=True)
def pytest_configure(config: Any) -> None:
    # coverage.py's modules (a measured run's, a warm server's preload) are out of sys.modules
    # while tests run, in every run alike, and back before coverage saves its data.
    for name in list(sys.modules):
        if name == "coverage" or name.startswith("coverage."):
            _stashed[name] = sys.modules.pop(name)
    canary.register(config)


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: Any) -> None:
    for name, module in _stashed.items():
        sys.modules.setdefault(name, module)


def pytest_sessionfinish(session: Any) -> None:
    _say_progress(force=True)
    out = _var("REVIEWUI_ORIGIN_OUT")
    if not out:
        return
    found: dict[str, str] = {}
    for name in _var("REVIEWUI_ORIGIN_MODULES").split(","):
        module = sys.modules.get(name) if name else None
        path = getattr(module, "__file__", None) if module is not None else None
        if path:
            found[name] = os.path.realpath(path)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"modules": found, "opens": _named(_opens), "reads": _named(_reads),
                   "canary": canary.ran()}, f)
