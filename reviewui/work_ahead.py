"""Work done ahead in a forked helper process and handed back pickled: `reviewui open`'s session.

`reviewui open` imports Textual and the screens (all CPU) while it opens the
review session (a dozen git processes, and parsing what they say). In one
process both need the one GIL: the session's ~20 ms of Python, and a wake-up
for each answer from git, slowed the import by about twice that. Forked before
any thread starts, a helper does the session's work on another core and hands
the result back over a pipe; unpickling it costs the app ~2 ms (bench/README.md,
"first paint", session 26).

The helper changes when the work is done, never what it finds:
- a ReviewError in the helper is raised here, with the same words and exit code;
- any other failure (a bug, a result that does not pickle, the helper killed,
  no `fork` on this platform, threads already running, no process to be had)
  does the work here as if there were no helper, so a bug's traceback is the
  one the reviewer would have seen without it.

Only reviewui's own code runs in the helper (git reads, as in the app); the pipe
is private to the two processes (pipe descriptors are not inherited by what the
helper starts), so what comes through it is our own code's pickle.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
from typing import Callable, Generic, NoReturn, TypeVar

from reviewui.core.errors import ReviewError

T = TypeVar("T")

_DONE = b"D"
_REFUSED = b"R"
_UNREAD = object()
"""No answer could be read (a value of None is an answer)."""


class WorkAhead(Generic[T]):
    """`work()` started in a forked helper at once; `result()` is its value, or `work()` done here."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._pid: int | None = None
        self._fd: int | None = None
        self.helped = False
        """True once `result()` came from the helper (tests and benches ask)."""
        if not hasattr(os, "fork") or threading.active_count() > 1:
            return  # a fork beside running threads can copy a lock one of them holds
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no process to be had (an inherited RLIMIT_NPROC): the work is done here
            os.close(r)
            os.close(w)
            return
        if pid == 0:
            os.close(r)
            _serve(work, w)
        os.close(w)
        self._pid, self._fd = pid, r

    def result(self) -> T:
        """The work's value: from the helper when it answered, else `work()` run here.
        Raises the ReviewError the work raised (in the helper or here)."""
        if self._fd is None:
            return self._work()
        try:
            with os.fdopen(self._fd, "rb") as pipe:
                data = pipe.read()
        except BaseException:  # interrupted (ctrl-c): the helper goes too
            self._stop()
            raise
        self._stop()
        answer: object = _UNREAD
        try:
            if data[:1] in (_DONE, _REFUSED):
                answer = pickle.loads(data[1:])
        except Exception:  # cut short: the helper died while it wrote
            pass
        if data[:1] == _REFUSED and isinstance(answer, ReviewError):
            raise answer
        if data[:1] == _DONE and answer is not _UNREAD:
            self.helped = True
            return answer  # type: ignore[return-value]
        return self._work()

    def _stop(self) -> None:
        """Reap the helper (killed first when it has not finished: nobody waits for its answer)."""
        pid, self._pid = self._pid, None
        if pid is None:
            return
        try:
            if os.waitpid(pid, os.WNOHANG) == (0, 0):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def _serve(work: Callable[[], object], fd: int) -> NoReturn:
    """In the helper: do the work, write its pickle (or its ReviewError's) to `fd`, and exit
    without running anything of the parent's (no atexit handlers, no flushing of its buffers)."""
    code = 0
    try:
        try:
            out = _DONE + pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
        except ReviewError as e:
            out = _REFUSED + pickle.dumps(e, protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(out)
    except BaseException:  # no answer: the parent does the work itself and shows what goes wrong
        code = 1
    finally:
        os._exit(code)
