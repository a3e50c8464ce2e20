"""Reading files the reviewer names (transcripts, probes, task files) without trusting them.

A transcript or task file comes from the agent's side: it can be a FIFO
that never ends, `/dev/zero`, or a small gzip that inflates to terabytes.
Every such input is opened here: non-regular files are refused before
anything blocks on them, sizes are capped before reading, and decompression
stops at a cap. Each refusal is a ReviewError (one line, exit 2). The caps
are the reviewer's to raise, in the user config (`max-transcript-bytes`,
`max-input-bytes`), never the repository's.
"""

from __future__ import annotations

import io
import os
import stat
import zlib
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from reviewui.core.errors import ReviewError

if TYPE_CHECKING:
    import zipfile

DEFAULT_TRANSCRIPT_BYTES = 1 << 30
"""1 GiB: a transcript (decompressed) larger than this is refused."""
DEFAULT_INPUT_BYTES = 4 << 20
"""4 MiB: a probe, task or note file larger than this is refused."""


def limit(kind: str) -> int:
    """The byte cap for `kind` (`transcript…` or any other input), from the user config or the default."""
    from reviewui.core.config import load_user_prefs

    key, default = (
        ("max-transcript-bytes", DEFAULT_TRANSCRIPT_BYTES) if kind.startswith("transcript")
        else ("max-input-bytes", DEFAULT_INPUT_BYTES)
    )
    value = load_user_prefs().get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB" if n >= 1 << 20 else f"{n:,} bytes"


def check_input(path: str | Path, what: str, cap: int | None = None, *, allow_dir: bool = False) -> int:
    """Refuse anything but a regular file of at most `cap` bytes (a folder too with `allow_dir`).

    Never opens the file, so a FIFO cannot block. Returns the file's size
    (0 for a folder). Raises ReviewError for a missing path, a FIFO, device
    or socket, or a file over the cap.
    """
    cap = limit(what) if cap is None else cap
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
        raise ReviewError(f"{what} {path} is larger than {_mib(cap)} ({_mib(st.st_size)})")
    return st.st_size


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
            raise ReviewError(f"{self.what} {self.path} decompresses to more than {_mib(self.cap)}")
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
        raise ReviewError(f"{what} {path} is larger than {_mib(cap)}")
    return data.decode("utf-8", "replace")


def read_zip_member(z: zipfile.ZipFile, name: str, what: str, path: str | Path, cap: int | None = None) -> bytes:
    """Read one member of a zip archive, refusing it when it declares or inflates past `cap` bytes."""
    cap = limit(what) if cap is None else cap
    info = z.getinfo(name)
    if info.file_size > cap:
        raise ReviewError(f"{what} {path}: {name} is larger than {_mib(cap)}")
    with z.open(info) as member:
        data = member.read(cap + 1)  # the declared size can lie; the read cannot
    if len(data) > cap:
        raise ReviewError(f"{what} {path}: {name} decompresses to more than {_mib(cap)}")
    return data
