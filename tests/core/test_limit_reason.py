"""Which sandbox limit a failed run hit, read from its output and its tests' own reports (prlimits.limit_reason).

Seen as an ordinary user (memory split per process, a warm fork near its share): a test stopped by the
disk limit failed, then pytest's summary imported hypothesis' plugin code and ran out of memory; the
run was graded "memory limit". And a fork bomb whose forked children crashed pytest's summary left no
FAILURES section at all: only the JUnit report's traceback said `os.fork()`.
"""

from __future__ import annotations

from reviewui.core.run.prlimits import limit_reason

SUMMARY_OOM = """F                                                  [100%]Traceback (most recent call last):
  File "/venv/site-packages/_hypothesis_pytestplugin.py", line 404, in pytest_terminal_summary
  File "/usr/lib/python3.11/sysconfig.py", line 270, in _subst_vars
MemoryError
"""
FAILED_ON_DISK = """=================================== FAILURES ===================================
__________________________________ test_fill ___________________________________
>               f.write(b"x" * (1 << 20))
E               OSError: [Errno 27] File too large
=========================== short test summary info ============================
FAILED test_limit.py::test_fill - OSError: [Errno 27] File too large
"""


def test_the_tests_own_failure_wins_over_pytests_summary_running_out_of_memory() -> None:
    assert limit_reason(SUMMARY_OOM + FAILED_ON_DISK) == "disk limit"
    assert limit_reason(SUMMARY_OOM) == "memory limit"  # with nothing else, the summary's error counts


def test_the_junit_traceback_names_a_fork_when_the_output_has_no_report() -> None:
    crashed = "FF    [100%]Traceback (most recent call last):\nFileNotFoundError: [Errno 2] /tmp/run/tmpx\n"
    message = "BlockingIOError: [Errno 11] Resource temporarily unavailable"
    detail = ">           pid = os.fork()\nE           BlockingIOError: [Errno 11] Resource temporarily unavailable"
    assert limit_reason(crashed, ["BlockingIOError", message]) is None  # EAGAIN alone: a socket says it too
    assert limit_reason(crashed, ["BlockingIOError", message, detail]) == "process limit"


def test_a_test_raising_memoryerror_is_the_memory_limit_whatever_the_output() -> None:
    assert limit_reason(FAILED_ON_DISK, ["MemoryError"]) == "memory limit"
    assert limit_reason("1 failed", ["AssertionError", "assert 1 == 2"]) is None
