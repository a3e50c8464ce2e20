"""reviewui: which tests read a changed source file as data and which open a changed data file: an
audit hook the origin plugin (origin_plugin.py) starts in every run that names a changed file, with
the collectors, fixtures and test phases it is told of, and an inotify watch for other processes.

A read as data is an open that is no import (a hash pinned, a file read, its text looked up through
`inspect`, `linecache`, the loader's `get_source`), nor a traceback or a warning being shown, whose
lines the code under test may look up itself. Each test phase starts
with the changed files dropped from linecache's cache, so a lookup opens the file and is seen.
Reaching a code object of the file's functions reads it too (`f.__code__`, `dis`, a frame's `f_code`
in a profile hook or a traceback, a generator's `gi_code`, `gc.get_referents` of a function), by a
test or by the changed module's top level: its bytecode pins the code as the file's bytes do.
Python audits those attributes. No read: the standard library looking at a code object's shape
alone (a signature, a coroutine flag, a file name, `typing.overload`'s first line, logging naming
its caller), an installed package reaching it (a decorator's bookkeeping, a logger naming its
caller: real projects do both at import and in every test), the changed code reaching a frame's
(asking where it runs). So not seen either: an installed serializer handing a test the bytes
(`cloudpickle`), the changed code hashing its own running frame's code. Hypothesis's scan of the
project's modules for constants is kept off the changed files (`hide_from_hypothesis`): made by no
test, its reads would be every test's.

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

import os
import sys
from _thread import get_ident as _thread_id
from contextlib import contextmanager
from typing import Any, Iterator, Mapping

try:
    import reviewui_child_reads as child_reads  # type: ignore[import-not-found]  # copied beside this module
except ImportError:  # loaded from reviewui's own tree (its tests)
    try:
        from reviewui.core.inside import child_reads
    except ImportError:
        child_reads = None

MODULE = "reviewui_read_audit"
"""The name a run imports this module under (inside.HELPERS)."""

# What this run watches, set once by `start` (empty: nothing is changed, nothing is watched).
_data: set[str] = set()
"""The changed data files: who opens one is recorded (`_opens`)."""
_sources: set[str] = set()
"""The changed source files: who reads one as data is recorded (`_reads`)."""
_names: set[str] = set()
"""Their base names: the cheap test every open passes first."""
_git = ""
"""The run's `.git`, resolved ("" when no source file changed or none was given)."""
_aliases: set[str] = set()
"""Names that may lead into `.git` without spelling it: the tree's symlinks into it, and any link
a test makes to something in it (only then is a path without `.git` in it resolved)."""
_LINK_EVENTS = frozenset({"os.symlink", "os.link", "os.rename"})
_GIT_EVENTS = frozenset({"os.listdir", "os.scandir", "os.chdir", *_LINK_EVENTS})
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
_OWN: tuple[str, ...] = (os.path.dirname(os.path.realpath(__file__)) + os.sep,)
"""This module's folder and the plugins' (`start`): one folder in a run, two where reviewui's own tests
load the origin plugin from a file and this module from the installed package."""


_STDLIB = ""
"""The standard library's folder (set by `start` where a source file changed)."""


def _site() -> tuple[str, ...]:
    """The folders installed packages are imported from (the venv's, the user's), never the tree's."""
    import site
    import sysconfig

    paths = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")} | set(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        paths.add(site.getusersitepackages())
    return tuple(sorted({os.path.realpath(p) + os.sep for p in paths if p}))


_SITE: tuple[str, ...] = ()
"""The installed packages' folders (set by `start` where a source file changed)."""


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
_cwd = [False]


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


def _open_watch(wanted: bool) -> Any:
    """The tally of other processes' opens (child_reads.Tally) of the changed source files, their
    directories and `.git`'s store, or None: no changed source file named, not `wanted`, or no inotify here."""
    if not _sources or not wanted or child_reads is None:
        return None
    store = [os.path.join(_git, *p) for p in ((), ("objects",), ("objects", "pack"))] if _git else []
    return child_reads.Tally.watching(_sources, [p for p in store if os.path.isdir(p)])


# Opens of the changed source files by any process (a test's `sha256sum`, a child Python reading
# one): the watch counts them all, the audit hook tells the tally those of this Python.
_watch: Any = None


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


def start(held: Mapping[str, str], plugins: str) -> None:
    """Watch what `held` (the origin plugin's HELD) names: the changed data and source files, the
    run's `.git` and its links, the inotify watch (REVIEWUI_CHILD_READS); the audit hook is
    installed only where a changed file is named. `plugins`: the folder of reviewui's plugins, whose
    frames are passed over. Called once, before any test module is imported."""
    global _git, _STDLIB, _SITE, _watch, _OWN
    _OWN = tuple(dict.fromkeys([*_OWN, os.path.realpath(plugins) + os.sep]))

    def names(key: str) -> set[str]:
        return {p for p in held.get(key, "").split(os.pathsep) if p}

    _data.update(names("REVIEWUI_DATA_FILES"))
    _sources.update(names("REVIEWUI_SOURCE_FILES"))
    _names.update(os.path.basename(p) for p in _data | _sources)
    _git = os.path.realpath(held["REVIEWUI_GIT_DIR"]) if held.get("REVIEWUI_GIT_DIR") and _sources else ""
    if _git:
        _aliases.update(os.path.basename(p) for p in names("REVIEWUI_GIT_LINKS"))
    _cwd[0] = bool(_git) and _in_git("")
    if _sources:
        _STDLIB, _SITE = _stdlib(), _site()
    _watch = _open_watch(bool(held.get("REVIEWUI_CHILD_READS")))
    if _data or _sources:
        sys.addaudithook(_audit)


@contextmanager
def collecting(nodeid: str) -> Iterator[None]:
    """While a collector runs (a test module's top level, a conftest or package `__init__` imported):
    what is read, by this Python or a process it starts, is read by the tests collected under it."""
    if _watch is not None:
        # What other processes opened before this: the enclosing collector's; before the first
        # collector, nobody's (pytest's start-up overlaps reviewui's own work on the tree: a process
        # opening a changed file then, seen by the watch, made every test a reader, one run in three
        # unsandboxed)
        _phase_reads(_test() if _collecting else "")
    _collecting.append(nodeid)
    try:
        yield
    finally:
        if _watch is not None:
            _phase_reads(_test())
        _collecting.pop()


@contextmanager
def fixture(argname: str, baseid: str) -> Iterator[None]:
    """While a fixture is set up: its value is every user's (a session-scoped one is made once, in its
    first user's setup), so what its setup reads is read by every test that uses it."""
    if _watch is not None:
        _phase_reads(_test())
    _fixtures.append("%s%s %s" % (_FIXTURE, argname, baseid))
    try:
        yield
    finally:
        if _watch is not None:
            _phase_reads(_test())
        _fixtures.pop()


@contextmanager
def phase(nodeid: str) -> Iterator[None]:
    """One phase of a test (setup, call, teardown): linecache forgets the changed files first, and what
    other processes read during it is the test's (what they read between phases is nobody's)."""
    _forget_lines()
    if _watch is None:
        yield
        return
    _phase_reads("")
    try:
        yield
    finally:
        _phase_reads(nodeid)


def collected(nodeids: Mapping[str, frozenset[str]]) -> None:
    """Collection has ended with these tests (node id -> the fixtures each uses)."""
    _items.clear()
    _items.update(nodeids)
    _collected[0] = True


def hide_from_hypothesis() -> None:
    """Keep the changed source files out of Hypothesis's scan of the project's own modules.

    Hypothesis (6.131 and later) draws examples near the constants of local modules, which it reads
    from their source when tests are collected and as examples are made. A changed file's text would
    then steer every Hypothesis test's inputs (a revert's run drawing other examples than its
    control's, a test able to tell them apart), and the scan's reads, made by no test, were read by
    every test collected: every bite of the file became `toothless`. Called once collection has
    imported the tests' modules; where Hypothesis is not imported, or not as this expects, nothing
    changes (its reads are then every test's, as before)."""
    providers = sys.modules.get("hypothesis.internal.conjecture.providers")
    local = getattr(providers, "is_local_module_file", None)
    if not _sources or not callable(local) or getattr(local, "_reviewui_hides", False):
        return

    def is_local_module_file(path: str) -> bool:
        try:
            if os.path.realpath(path) in _sources:
                return False
        except (TypeError, ValueError, OSError):
            pass
        return bool(local(path))

    is_local_module_file._reviewui_hides = True  # type: ignore[attr-defined]
    providers.is_local_module_file = is_local_module_file  # type: ignore[union-attr]


def found() -> dict[str, dict[str, list[str]]]:
    """What was recorded: `opens` (changed data file -> the tests that opened it) and `reads`
    (changed source file -> the tests that read it as data), each collector and fixture named by its tests."""
    return {"opens": _named(_opens), "reads": _named(_reads)}
