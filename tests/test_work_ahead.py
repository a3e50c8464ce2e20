"""`reviewui open` opens its session in a forked helper (reviewui/work_ahead.py): the helper changes
when the work is done, never what it finds.

The helper forks only where no other thread runs, and a pytest-xdist worker has execnet's: each case
runs in a fresh interpreter (this suite's own), which prints what it saw as JSON.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from reviewui.core.errors import ReviewError
from reviewui.work_ahead import WorkAhead
from tests.clirun import ROOT, run_cli
from tests.gitrepo import RepoBuilder


def _run(script: str, cwd: Path | None = None) -> Any:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_work_runs_in_another_process_and_its_value_comes_back() -> None:
    seen = _run("""
        import json, os
        from reviewui.work_ahead import WorkAhead
        ahead = WorkAhead(lambda: {"pid": os.getpid(), "bytes": bytes(range(256)) * 300})
        got = ahead.result()
        print(json.dumps({"parent": os.getpid(), "pid": got["pid"], "helped": ahead.helped,
                          "intact": got["bytes"] == bytes(range(256)) * 300}))
    """)
    assert seen["helped"] is True
    assert seen["pid"] != seen["parent"]  # done by the helper, not here
    assert seen["intact"]  # more than a pipe's buffer, whole


def test_a_review_error_in_the_helper_is_raised_here_with_its_words_and_exit_code() -> None:
    seen = _run("""
        import json, os
        from reviewui.core.errors import SandboxError
        from reviewui.work_ahead import WorkAhead
        parent = os.getpid()
        ran_here = []
        def work():
            if os.getpid() == parent:
                ran_here.append(1)
            raise SandboxError("no clean room: \\x1b[31mred")
        try:
            WorkAhead(work).result()
        except SandboxError as e:
            print(json.dumps({"words": str(e), "code": e.exit_code, "ran_here": len(ran_here)}))
    """)
    assert seen == {"words": "no clean room: \x1b[31mred", "code": 3, "ran_here": 0}


def test_anything_else_going_wrong_in_the_helper_does_the_work_here() -> None:
    seen = _run("""
        import json, os, signal, threading
        from reviewui.work_ahead import WorkAhead
        parent = os.getpid()
        def killed():
            if os.getpid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)  # the helper dies before it answers
            return "here"
        def unpicklable():
            return threading.Lock() if os.getpid() != parent else "here"
        def a_bug():
            if os.getpid() != parent:
                raise KeyError("a bug")
            return "here"
        out = {}
        for name, work in (("killed", killed), ("unpicklable", unpicklable), ("bug", a_bug)):
            ahead = WorkAhead(work)
            out[name] = [ahead.result(), ahead.helped]
        print(json.dumps(out))
    """)
    assert seen == {"killed": ["here", False], "unpicklable": ["here", False], "bug": ["here", False]}


def test_no_helper_beside_running_threads_or_without_a_process_to_be_had() -> None:
    seen = _run("""
        import json, os, threading
        from reviewui.work_ahead import WorkAhead
        stop = threading.Event()
        t = threading.Thread(target=stop.wait)
        t.start()
        beside = WorkAhead(os.getpid)
        beside_pid, beside_helped = beside.result(), beside.helped
        stop.set(); t.join()
        def no_fork():
            raise BlockingIOError(11, "Resource temporarily unavailable")
        os.fork = no_fork
        refused = WorkAhead(os.getpid)
        print(json.dumps({"parent": os.getpid(), "beside": [beside_pid, beside_helped],
                          "refused": [refused.result(), refused.helped]}))
    """)
    assert seen["beside"] == [seen["parent"], False]
    assert seen["refused"] == [seen["parent"], False]


# --- what the parent makes of the helper's answer, read from a pipe here (no fork) ----------------

def _reading(answer: bytes) -> tuple[WorkAhead[object], list[int]]:
    """A WorkAhead whose helper wrote `answer` and exited; the list counts the work done here."""
    done_here: list[int] = []
    ahead: WorkAhead[object] = WorkAhead.__new__(WorkAhead)
    r, w = os.pipe()
    os.write(w, answer)
    os.close(w)
    ahead._work, ahead._pid, ahead._fd, ahead.helped = lambda: done_here.append(1) or "here", None, r, False
    return ahead, done_here


def test_an_answer_is_taken_and_a_refusal_raised_without_doing_the_work_here() -> None:
    ahead, done_here = _reading(b"D" + pickle.dumps({"files": ("a.py",)}))
    assert ahead.result() == {"files": ("a.py",)} and ahead.helped and not done_here
    refused, done_here = _reading(b"R" + pickle.dumps(ReviewError("unknown branch: \x1b]52;c;x\x07")))
    with pytest.raises(ReviewError, match="unknown branch"):
        refused.result()
    assert not done_here and not refused.helped


def test_none_is_an_answer_too() -> None:
    ahead, done_here = _reading(b"D" + pickle.dumps(None))
    assert ahead.result() is None and ahead.helped and not done_here


def test_an_answer_that_is_an_error_is_a_value_not_a_refusal() -> None:
    ahead, done_here = _reading(b"D" + pickle.dumps(ReviewError("kept as the work's value")))
    got = ahead.result()
    assert isinstance(got, ReviewError) and str(got) == "kept as the work's value" and not done_here


def test_beside_a_running_thread_the_work_is_done_here_without_a_fork() -> None:
    stop = threading.Event()
    beside = threading.Thread(target=stop.wait)
    beside.start()
    try:
        ahead = WorkAhead(os.getpid)
        assert ahead.result() == os.getpid() and not ahead.helped
    finally:
        stop.set()
        beside.join()


@pytest.mark.parametrize("answer", [
    b"",  # the helper died before it wrote
    b"D" + pickle.dumps({"files": ("a.py",) * 100})[:-40],  # cut short
    b"R" + pickle.dumps("not an error"),  # a refusal that is no ReviewError
    b"X" + pickle.dumps("?"),
])
def test_any_other_answer_does_the_work_here(answer: bytes) -> None:
    ahead, done_here = _reading(answer)
    assert ahead.result() == "here" and done_here == [1] and not ahead.helped


def test_a_helper_still_running_when_nobody_waits_is_killed_and_reaped() -> None:
    helper = subprocess.Popen(["sleep", "3600"])
    ahead, _ = _reading(b"")
    ahead._pid = helper.pid
    stopping = threading.Thread(target=ahead._stop, daemon=True)
    stopping.start()
    stopping.join(60)  # a bound on a hang (waiting out the hour), not a timing
    assert not stopping.is_alive()
    assert ahead._pid is None
    with pytest.raises(ChildProcessError):  # reaped: no such child any more
        os.waitpid(helper.pid, os.WNOHANG)
    helper.returncode = -9  # reaped by _stop, not by Popen


def _branch(tmp_path: Path) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit({"pkg/calc.py": "def add(a, b):\n    return a + b\n", "tests/test_calc.py": "from pkg.calc import add\n",
                 "data/blob.bin": b"\x00\x01" * 10})
    repo.branch("agent/x")
    repo.commit({"pkg/calc.py": "def add(a, b):\n    return a + b + 0\n", "pkg/new.py": "X = 1\n",
                 "tests/test_calc.py": "from pkg.calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
                 "data/blob.bin": b"\x00\xff" * 10, "caf\u00e9/\u00fc.py": "y = 2\n"})
    return repo


def test_the_session_from_the_helper_is_the_one_opened_here(tmp_path: Path) -> None:
    repo = _branch(tmp_path)
    seen = _run("""
        import json, os
        from reviewui.cli import _opened_for_first_screen
        from reviewui.cli_parser import build_parser
        from reviewui.work_ahead import WorkAhead
        args = build_parser(only="open").parse_args(["open", "agent/x"])
        ahead = WorkAhead(lambda: _opened_for_first_screen(args))
        there = ahead.result()
        here = _opened_for_first_screen(args)
        def facts(s):
            first = s.diff.first_listed()
            return {"target": [s.target.base, s.target.head, str(s.target.repo_dir)],
                    "globs": list(s.settings.test_globs), "test_command": s.test_command,
                    "files": [[f.path, f.role, f.status, f.added, f.removed, f.binary, f.new_blob] for f in s.diff.files],
                    "not_shown": s.diff.not_shown(), "first": first.path,
                    "first_hunks": [[ln.kind, ln.text] for h in first.hunks for ln in h.lines]}
        # the helper's session still works here: its locks are this process's, its patches load
        later = [len(f.hunks) for f in there.diff.files]
        print(json.dumps({"helped": ahead.helped, "same": facts(there) == facts(here), "facts": facts(there),
                          "later": later, "cached": there._cached("k", lambda: 7)}))
    """, cwd=repo.root)
    assert seen["helped"] is True
    assert seen["same"] is True
    assert [f[0] for f in seen["facts"]["files"]] == ["caf\u00e9/\u00fc.py", "data/blob.bin", "pkg/calc.py", "pkg/new.py",
                                                     "tests/test_calc.py"]
    assert seen["facts"]["first_hunks"]  # the first file's patch came across, read
    assert seen["later"][2] == 1 and seen["cached"] == 7


def test_open_says_a_bad_branch_in_one_line_through_the_helper(tmp_path: Path) -> None:
    repo = _branch(tmp_path)
    proc = run_cli("no/such/branch", cwd=repo.root)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("reviewui: ")
    assert "Traceback" not in proc.stderr
    file_proc = run_cli("agent/x", "--file", "README.md", cwd=repo.root)
    assert (file_proc.returncode, file_proc.stderr) == (2, "reviewui: not a changed file: README.md\n")


def test_open_draws_the_branch_in_a_terminal_and_quits(tmp_path: Path) -> None:
    """The whole `open` path, the helper's session in the app: the first hunk drawn, `q` quits, exit 0."""
    import fcntl
    import pty
    import select
    import struct
    import termios
    import time

    repo = _branch(tmp_path)
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 140, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color"}
    # stderr too: Textual draws on it, as a terminal's shell would give it
    proc = subprocess.Popen([sys.executable, "-m", "reviewui", "agent/x"], cwd=repo.root, stdin=child, stdout=child,
                            stderr=child, env=env)
    os.close(child)
    drawn, quit_sent = b"", False
    deadline = time.monotonic() + 90
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if select.select([main], [], [], 0.2)[0]:
                try:
                    drawn += os.read(main, 65536)
                except OSError:
                    break
            if not quit_sent and b"@@ -" in drawn:
                os.write(main, b"q")
                quit_sent = True
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    assert quit_sent, drawn[-800:]
    assert code == 0
    assert b"calc.py" in drawn  # the file list, from the helper's session
