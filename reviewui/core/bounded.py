"""Reading files the reviewer names (transcripts, probes, task files) without trusting them.

A transcript or task file comes from the agent's side: it can be a FIFO
that never ends, `/dev/zero`, or a small gzip that inflates to terabytes.
Every such input is opened here: non-regular files are refused before
anything blocks on them, sizes are capped before reading, and decompression
stops at a cap. Each refusal is a ReviewError (one line, exit 2). The caps
are the reviewer's to raise, in the user config (`max-transcript-bytes`,
`max-input-bytes`), never the repository's.

Branch content read outside the sandbox for static analysis (findings,
fixtures, guards, the diff) is bounded too, differently: a file over
`max-analysis-bytes`, or whose syntax tree nests deeper than
`max-analysis-depth`, is not analysed (`NotAnalysed`, which the
`not-analysed` finding reports) instead of refusing the whole branch.
"""

from __future__ import annotations

import ast
import io
import os
import stat
import threading
import warnings
import zlib
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from reviewui.core.errors import ReviewError
from reviewui.core.user_prefs import load_user_prefs, user_config_dir

if TYPE_CHECKING:
    import zipfile

DEFAULT_TRANSCRIPT_BYTES = 1 << 30
"""1 GiB: a transcript (decompressed) larger than this is refused."""
DEFAULT_INPUT_BYTES = 4 << 20
"""4 MiB: a probe, task or note file larger than this is refused."""
DEFAULT_ANALYSIS_BYTES = 1 << 20
"""1 MiB: a branch file larger than this is not read for static analysis (a dense 1 MiB file's
syntax tree already takes ~200 MB)."""
DEFAULT_ANALYSIS_TOTAL = 2 << 20
"""2 MiB: the changed Python files parsed for one analysis, in all (real code's syntax trees take
~40 MB a MiB, dense generated code's up to ~250 MB); the files past it are not analysed."""
DEFAULT_DIFF_TOTAL = 64 << 20
"""64 MiB: the changed files' content whose patches are loaded, in all (each MiB of patch is
~15 MB of parsed hunks); the files past it are listed without hunks."""
DEFAULT_ANALYSIS_DEPTH = 100
"""Syntax trees nesting deeper than this are not analysed (ast's recursive helpers, `unparse` and
NodeVisitor, overflow Python's stack at a few hundred levels)."""


def limit(kind: str) -> int:
    """The byte cap for `kind` (`transcript…` or any other input), from the user config or the default."""
    key, default = (
        ("max-transcript-bytes", DEFAULT_TRANSCRIPT_BYTES) if kind.startswith("transcript")
        else ("max-input-bytes", DEFAULT_INPUT_BYTES)
    )
    value = load_user_prefs().get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def mib(n: int) -> str:
    """`n` bytes for a message: `10 MiB`, or `1,234 bytes` below a MiB."""
    return f"{n / (1 << 20):,.0f} MiB" if n >= 1 << 20 else f"{n:,} bytes"


def check_input(path: str | Path, what: str, cap: int | None = None, *, allow_dir: bool = False) -> int:
    """Refuse anything but a regular file of at most `cap` bytes (a folder too with `allow_dir`).

    Never opens the file, so a FIFO cannot block. Returns the file's size
    (0 for a folder). Raises ReviewError for a missing path, a FIFO, device
    or socket, a file over the cap, or a symlink leading out of the
    repository it lies in (`link_escape`).
    """
    cap = limit(what) if cap is None else cap
    escape = link_escape(path)
    if escape is not None:
        raise ReviewError(f"{what} {path} is not read: {escape}")
    try:
        st = os.stat(path)
    except OSError as e:
        raise ReviewError(f"cannot read {what} {path}: {e.strerror or e}") from e
    if allow_dir and stat.S_ISDIR(st.st_mode):
        return 0
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(
            st.st_mode) else "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise ReviewError(f"{what} {path} is {kind}; give a regular file")
    if st.st_size > cap:
        raise ReviewError(f"{what} {path} is larger than {mib(cap)} ({mib(st.st_size)})")
    return st.st_size


def _work_tree(folder: Path) -> Path | None:
    """The git working tree `folder` lies in (the nearest folder up holding `.git`), or None."""
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def link_escape(path: str | Path) -> str | None:
    """Why opening `path` would follow a symlink out of the repository it sits in, or None.

    A symlink inside a git working tree may be the agent's (its branch checked
    out): it is followed only when its target stays inside that tree. A
    symlink outside every working tree is the reviewer's own and is followed.
    """
    here = Path(os.path.abspath(path))
    if os.path.realpath(here) == str(here):
        return None
    walked = Path(here.anchor)
    for part in here.parts[1:]:
        walked = walked / part
        if walked.is_symlink():
            real = Path(os.path.realpath(walked))
            tree = _work_tree(walked.parent)
            if tree is not None:
                tree = Path(os.path.realpath(tree))
                if real != tree and tree not in real.parents:
                    return f"{walked} is a symlink inside {tree} pointing out of it ({real})"
            walked = real
    return None


def open_regular(path: str | Path, what: str, cap: int | None = None) -> IO[bytes]:
    """Open a regular file for reading bytes, after `check_input`; raced swaps to a FIFO are refused too."""
    check_input(path, what, cap)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise ReviewError(f"cannot read {what} {path}: {e.strerror or e}") from e
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped after the check
        os.close(fd)
        raise ReviewError(f"{what} {path} is not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


class _Capped(io.RawIOBase):
    """A readable stream that raises ReviewError once more than `cap` bytes came out of `inner`."""

    def __init__(self, inner: io.BufferedIOBase, cap: int, what: str, path: str | Path) -> None:
        self.inner, self.cap, self.what, self.path, self.seen = inner, cap, what, path, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)
        data = self.inner.read(min(len(view), self.cap - self.seen + 1))
        self.seen += len(data)
        if self.seen > self.cap:
            raise ReviewError(f"{self.what} {self.path} decompresses to more than {mib(self.cap)}")
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.inner.close()
        super().close()


def open_gzip(path: str | Path, what: str = "transcript", cap: int | None = None) -> IO[bytes]:
    """Open a gzip file for reading its decompressed bytes, stopping (ReviewError) past `cap` of them."""
    import gzip  # not at the top: the review app's start-up reads no gzip

    cap = limit(what) if cap is None else cap
    raw = open_regular(path, what)
    return io.BufferedReader(_Capped(gzip.GzipFile(fileobj=raw, mode="rb"), cap, what, path), 1 << 16)


def read_input_text(path: str | Path, what: str, cap: int | None = None) -> str:
    """Read a small input file (probe, task, note) as UTF-8 text (undecodable bytes replaced), capped.

    A gzip file is decompressed, within the same cap. Raises ReviewError
    for anything `check_input` refuses or an unreadable file.
    """
    cap = limit(what) if cap is None else cap
    try:
        with open_regular(path, what, cap) as f:
            head = f.read(2)
            f.seek(0)
            stream: IO[bytes] = f
            if head == b"\x1f\x8b":
                import gzip  # only for a gzip input (see open_gzip)

                stream = io.BufferedReader(_Capped(gzip.GzipFile(fileobj=f), cap, what, path))
            data = stream.read(cap + 1)
    except (OSError, EOFError, zlib.error) as e:  # a truncated or corrupt gzip too
        raise ReviewError(f"cannot read {what} {path}: {getattr(e, 'strerror', None) or e}") from e
    if len(data) > cap:
        raise ReviewError(f"{what} {path} is larger than {mib(cap)}")
    return data.decode("utf-8", "replace")


def read_zip_member(z: zipfile.ZipFile, name: str, what: str, path: str | Path, cap: int | None = None) -> bytes:
    """Read one member of a zip archive, refusing it when it declares or inflates past `cap` bytes."""
    cap = limit(what) if cap is None else cap
    info = z.getinfo(name)
    if info.file_size > cap:
        raise ReviewError(f"{what} {path}: {name} is larger than {mib(cap)}")
    with z.open(info) as member:
        data = member.read(cap + 1)  # the declared size can lie; the read cannot
    if len(data) > cap:
        raise ReviewError(f"{what} {path}: {name} decompresses to more than {mib(cap)}")
    return data


class AnalysisLimits(NamedTuple):
    """The caps on branch content read for static analysis."""

    bytes: int
    """Largest file (in bytes) that is read and parsed."""
    depth: int
    """Deepest syntax tree (in nodes from the module down) that is analysed."""
    total: int = DEFAULT_ANALYSIS_TOTAL
    """Bytes of changed Python files parsed in all (files past it are not analysed)."""
    diff: int = DEFAULT_DIFF_TOTAL
    """Bytes of changed files whose patches are loaded, in all (past it: no hunks)."""


_limits_seen: tuple[object, AnalysisLimits] | None = None


def analysis_limits() -> AnalysisLimits:
    """The analysis caps from the user config (`max-analysis-bytes`, `max-analysis-depth`) or the defaults."""
    global _limits_seen
    try:  # read the config again only when it changed: parse_python is called once per file
        st = os.stat(user_config_dir() / "config.toml")
        stamp: object = (st.st_ino, st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = None
    if _limits_seen is not None and _limits_seen[0] == stamp and stamp is not None:
        return _limits_seen[1]
    prefs = load_user_prefs()

    def positive(key: str, default: int) -> int:
        value = prefs.get(key, default)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default

    found = AnalysisLimits(positive("max-analysis-bytes", DEFAULT_ANALYSIS_BYTES),
                           positive("max-analysis-depth", DEFAULT_ANALYSIS_DEPTH),
                           positive("max-analysis-total-bytes", DEFAULT_ANALYSIS_TOTAL),
                           positive("max-diff-bytes", DEFAULT_DIFF_TOTAL))
    _limits_seen = (stamp, found)
    return found


class NotAnalysed(ValueError):
    """Branch content static analysis leaves alone: over the byte cap or nested too deeply.

    A ValueError, so every `except (SyntaxError, ValueError)` around a parse
    already treats it as a file that does not parse.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        """What was over which cap, e.g. `larger than 1 MiB (10 MiB)`."""


def over_bytes(size: int, cap: int | None = None) -> str | None:
    """Why a file of `size` bytes is not analysed, or None when it is within the cap."""
    cap = analysis_limits().bytes if cap is None else cap
    if size <= cap:
        return None
    return f"{mib(size)}, over the {mib(cap)} cap (max-analysis-bytes)"


def over_budget(sizes: dict[str, int], limits: AnalysisLimits | None = None) -> dict[str, str]:
    """Path -> why it is not analysed, for the files of `sizes` (in order) past the total budget.

    A file over the per-file cap costs nothing (it is not parsed anyway); the
    first file that does not fit ends the budget, so the files analysed are
    always a prefix of the changed ones, in diff order.
    """
    limits = analysis_limits() if limits is None else limits
    spent = 0
    out: dict[str, str] = {}
    for path, size in sizes.items():
        if size > limits.bytes:
            continue
        if out or spent + size > limits.total:
            out[path] = f"past the {mib(limits.total)} analysed in all (max-analysis-total-bytes)"
            continue
        spent += size
    return out


def tree_depth(tree: ast.AST, stop: int) -> int:
    """The depth of `tree` (the root counts 1), counted without recursion; stops early past `stop`."""
    best = 0
    stack = [(tree, 1)]
    children = ast.iter_child_nodes
    while stack:
        node, d = stack.pop()
        if d > best:
            best = d
            if best > stop:
                return best
        stack.extend((c, d + 1) for c in children(node))
    return best


_PARSE_LOCK = threading.Lock()


def parse_python(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse` within the analysis caps.

    Raises SyntaxError as ast.parse does, and NotAnalysed (a ValueError) when
    the source is over `max-analysis-bytes`, nests deeper than
    `max-analysis-depth`, or exhausts the parser (recursion or memory).
    """
    limits = analysis_limits()
    size = len(source) if isinstance(source, bytes) or len(source) * 4 <= limits.bytes \
        else len(source.encode("utf-8", "surrogatepass"))  # chars × 4 within the cap: bytes are too
    reason = over_bytes(size, limits.bytes)
    if reason is not None:
        raise NotAnalysed(reason)
    try:
        # One parse at a time: CPython 3.11's ast.parse is not safe from two threads at once
        # ("AST constructor recursion depth mismatch", seen in a sweep's grading threads), and
        # catch_warnings changes the process's warning filters.
        with _PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes in old code
            tree = ast.parse(source, filename=filename)
    except (RecursionError, MemoryError) as e:
        raise NotAnalysed(f"nested too deeply to parse (max-analysis-depth {limits.depth})") from e
    if tree_depth(tree, limits.depth) > limits.depth:
        raise NotAnalysed(f"nested deeper than {limits.depth} levels (max-analysis-depth)")
    return tree


def parse_python_or_none(source: str | bytes | None, filename: str = "<unknown>") -> ast.Module | None:
    """The syntax tree of `source`, or None when there is none, it does not parse or is over the caps."""
    if source is None:
        return None
    try:
        return parse_python(source, filename)
    except (SyntaxError, ValueError):  # NotAnalysed is a ValueError
        return None
