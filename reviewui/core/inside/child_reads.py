"""reviewui: opens of the changed source files by any process, seen through inotify (Linux).

The origin plugin's audit hook sees the opens its own Python makes; a test that runs `sha256sum
pkg/m.py`, or a child Python that reads it, opens the file in another process. An inotify watch on
each changed source file and on its directory counts every open, whoever makes it; the plugin
subtracts the opens its hook saw in-process during the same test phase, and what is left was made
by another process. A child Python that imports the module opens the file too, so one listing of
the file's directory by another process (an importer's first look into a package) excuses one such
open of each file in it: an importing child is no reader, a child that reads the file as well, or
only reads it, is. The same watch on the run's `.git`, `.git/objects` and its `pack` directory
counts a child listing them or opening a pack (`git` itself).

The watch is made in the run's own process (a fork of a warm server makes its own), close-on-exec
(no test's child inherits it), non-blocking: drained once after each test phase, one `read` when
nothing happened. Where inotify is missing (no ctypes, no libc symbol, ENOSYS, the user's watch
limit, a filesystem without it) `open_watch` returns None and nothing changes. An overflowed queue
(more than the kernel keeps between two drains) says nothing for that phase.

Standard library only; imported by the origin plugin as `reviewui_child_reads`, beside it.
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import Any, Iterable

MODULE = "reviewui_child_reads"
"""The name a run imports this module under (inside.HELPERS)."""

IN_OPEN = 0x00000020
IN_Q_OVERFLOW = 0x00004000
IN_ISDIR = 0x40000000
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then `len` bytes of name


@dataclass
class Drained:
    """What the watch saw since the last drain."""

    opens: dict[str, int] = field(default_factory=dict)
    """Watched file (real path) -> times it was opened."""
    listings: dict[str, int] = field(default_factory=dict)
    """Watched directory (real path) -> times it was opened itself (a listing)."""
    inside: dict[str, int] = field(default_factory=dict)
    """Watched directory -> opens of files directly in it (the `.git` watches only)."""
    overflow: bool = False
    """The kernel dropped events: the counts are not all there."""


class Watch:
    """An inotify instance watching files for opens and directories for listings."""

    def __init__(self, fd: int, files: dict[int, str], dirs: dict[int, str], contents: set[int]) -> None:
        self.fd = fd
        self.files = files
        self.dirs = dirs
        self.contents = contents  # directories whose files' opens are counted too (`.git`'s)

    def drain(self) -> Drained:
        """Every event queued since the last drain, counted."""
        out = Drained()
        while True:
            try:
                data = os.read(self.fd, 65536)
            except (BlockingIOError, InterruptedError):
                return out
            except OSError:
                out.overflow = True
                return out
            if not data:
                return out
            self._count(data, out)

    def _count(self, data: bytes, out: Drained) -> None:
        at = 0
        while at + _EVENT.size <= len(data):
            wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
            at += _EVENT.size + size
            if mask & IN_Q_OVERFLOW:
                out.overflow = True
            elif not mask & IN_OPEN:
                continue
            elif wd in self.files:
                out.opens[self.files[wd]] = out.opens.get(self.files[wd], 0) + 1
            elif wd in self.dirs and size == 0:
                out.listings[self.dirs[wd]] = out.listings.get(self.dirs[wd], 0) + 1
            elif wd in self.contents and not mask & IN_ISDIR:
                out.inside[self.dirs[wd]] = out.inside.get(self.dirs[wd], 0) + 1

    def close(self) -> None:
        """Stop watching."""
        try:
            os.close(self.fd)
        except OSError:
            pass


class Tally:
    """One baseline's watch and what its own Python opened during the current test phase (the
    origin plugin's audit hook reports those): the rest another process made."""

    def __init__(self, watch: Watch, sources: Iterable[str], store: Iterable[str]) -> None:
        self.watch = watch
        self.sources = sorted(sources)
        self.dirs = set(watch.dirs.values())
        self.store = set(store) & self.dirs
        self.names = {os.path.basename(d) for d in self.dirs}
        self.here: dict[str, int] = {}
        """Changed source file -> its opens by this Python this phase."""
        self.listed: dict[str, int] = {}
        self.in_store = 0

    @classmethod
    def watching(cls, sources: Iterable[str], store: Iterable[str] = ()) -> Tally | None:
        """A tally of `sources` (real paths) and, where given, `.git`'s store directories; None
        where inotify cannot watch them."""
        files, store = sorted(sources), list(store)
        watch = open_watch(files, sorted({os.path.dirname(p) for p in files}), store)
        return None if watch is None else cls(watch, files, store)

    def listing(self, raw: str) -> None:
        """An open or listing of `raw` by this Python: counted when it is a watched directory."""
        name = os.path.basename(raw.rstrip(os.sep))
        if name in self.names or name in ("", ".", ".."):
            path = os.path.realpath(raw or ".")
            if path in self.dirs:
                self.listed[path] = self.listed.get(path, 0) + 1

    def git(self, raw: str) -> None:
        """An open or listing of `raw` (under `.git`) by this Python: counted when the watch sees
        it (a watched directory, or a file directly in one)."""
        path = os.path.realpath(raw or ".")
        if path in self.store or (os.path.dirname(path) in self.store and not os.path.isdir(path)):
            self.in_store += 1

    def end(self, count: bool = True) -> list[str]:
        """The phase is over: the changed files another process read in it (`count`; else none),
        all of them when one read `.git`'s store. A file opened by other processes more often than
        they listed its directory (an importer lists it once) was read. The counts start again."""
        seen = self.watch.drain()
        here, listed, in_store = self.here, self.listed, self.in_store
        self.here, self.listed, self.in_store = {}, {}, 0
        if seen.overflow or not count:
            return []
        if sum(seen.listings.get(d, 0) + seen.inside.get(d, 0) for d in self.store) > in_store:
            return list(self.sources)
        read = []
        for path in self.sources:
            folder = os.path.dirname(path)
            importers = max(0, seen.listings.get(folder, 0) - listed.get(folder, 0))
            if seen.opens.get(path, 0) - here.get(path, 0) > importers:
                read.append(path)
        return read


def _libc() -> Any:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    init, add = libc.inotify_init1, libc.inotify_add_watch
    init.argtypes, init.restype = [ctypes.c_int], ctypes.c_int
    add.argtypes, add.restype = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32], ctypes.c_int
    return libc


def open_watch(files: Iterable[str], dirs: Iterable[str] = (), contents: Iterable[str] = ()) -> Watch | None:
    """A watch on the opens of `files`, the listings of `dirs` and the listings of `contents` and
    opens of the files directly in them (real paths); None where inotify cannot watch one of
    `files` or `dirs`."""
    try:
        libc = _libc()
        fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
    except Exception:  # no ctypes, no such symbol (not Linux, a libc without it)
        return None
    if fd < 0:
        return None
    watch = Watch(fd, {}, {}, set())
    ok = True
    for path in files:
        wd = int(libc.inotify_add_watch(fd, os.fsencode(path), IN_OPEN))
        ok = ok and wd >= 0
        if wd >= 0:
            watch.files[wd] = path
    # The directories' watches are no extra: the kernel merges an event into the one queued just
    # before it when they are alike, so two opens of a file in a row would count once; each open
    # also gives its directory's watch an event (with the file's name), so none are alike in a row.
    spans = [(d, False) for d in dirs] + [(d, True) for d in contents]
    for path, inner in spans:
        wd = int(libc.inotify_add_watch(fd, os.fsencode(path), IN_OPEN))
        ok = ok and (wd >= 0 or inner)
        if wd >= 0 and wd not in watch.files:
            watch.dirs[wd] = path
            if inner:
                watch.contents.add(wd)
    if not ok or not watch.files:  # one left unwatched would read as never opened by another process
        watch.close()
        return None
    return watch
