"""Which sandbox limit a failed run hit (prlimits.limit_reason): by its failed tests' own errors, else its output.

Seen as an ordinary user (memory split per process, a warm fork near its share): a test stopped by the
disk limit failed, then pytest's summary imported hypothesis' plugin code and ran out of memory; the
run was graded "memory limit". A fork bomb whose forked children crashed pytest's summary left no
FAILURES section at all: only the JUnit report's traceback said `os.fork()`. And reviewui's own bite of
this very change graded its revert "process limit": the failing test's source, in its traceback,
mentions `os.fork()` and BlockingIOError.
"""

from __future__ import annotations

import pytest

from reviewui.core.run.prlimits import limit_reason

SUMMARY_OOM = """F                                                  [100%]Traceback (most recent call last):
  File "/venv/site-packages/_hypothesis_pytestplugin.py", line 404, in pytest_terminal_summary
  File "/usr/lib/python3.11/sysconfig.py", line 270, in _subst_vars
MemoryError
"""
FORK_DETAIL = ">           pid = os.fork()\nE           BlockingIOError: [Errno 11] Resource temporarily unavailable"


def test_the_failed_tests_own_error_wins_over_pytests_summary_running_out_of_memory() -> None:
    disk = ("OSError", "OSError: [Errno 27] File too large", "")
    assert limit_reason(SUMMARY_OOM, [disk]) == "disk limit"
    assert limit_reason(SUMMARY_OOM) == "memory limit"  # no failed test reported: the output is all there is
    # and the other way round: a test's own MemoryError beside a disk phrase in the output
    on_disk = "E               OSError: [Errno 27] File too large\n1 failed in 0.2s\n"
    assert limit_reason(on_disk, [("MemoryError", "MemoryError", "")]) == "memory limit"


def test_a_fork_is_known_by_the_traceback_of_a_blockingioerror() -> None:
    crashed = "FF    [100%]Traceback (most recent call last):\nFileNotFoundError: [Errno 2] /tmp/run/tmpx\n"
    message = "BlockingIOError: [Errno 11] Resource temporarily unavailable"
    assert limit_reason(crashed, [("BlockingIOError", message, "")]) is None  # EAGAIN alone: a socket says it too
    assert limit_reason(crashed, [("BlockingIOError", message, FORK_DETAIL)]) == "process limit"
    assert limit_reason(crashed, [("BlockingIOError", message, "  _fork_exec(args)\n")]) == "process limit"
    # a child's BlockingIOError named only by pytest's summary: its traceback is the whole output
    summary = "  pid = os.fork()\nFAILED t.py::test_bomb - BlockingIOError: [Errno 11] Resource temporarily unavailable\n"
    assert limit_reason(summary, [(None, "assert 256 == 0", "")]) == "process limit"
    assert limit_reason(summary.replace("os.fork()", "sock.recv(1)"), [(None, "assert 256 == 0", "")]) is None


@pytest.mark.parametrize(("kind", "message", "limit"), [
    ("MemoryError", "MemoryError", "memory limit"),
    ("OSError", "OSError: [Errno 12] Cannot allocate memory", "memory limit"),
    ("OSError", "OSError: [Errno 27] File too large", "disk limit"),
    ("OSError", "OSError: [Errno 28] No space left on device", "disk limit"),
    ("RuntimeError", "RuntimeError: can't start new thread", "process limit"),
    ("AssertionError", "AssertionError: assert 'No space left on device' == 'MemoryError'", None),
    ("RuntimeError", "RuntimeError: File too large", None),
    (None, "File too large", None),
    ("ValueError", "ValueError: Cannot allocate memory", None),
    ("ValueError", "ValueError: can't start new thread", None),
])
def test_a_failed_test_counts_by_its_own_exceptions_type(kind: str | None, message: str, limit: str | None) -> None:
    assert limit_reason("", [(kind, message, "")]) == limit


def test_a_test_that_mentions_a_limit_in_its_source_hit_none() -> None:
    # its traceback shows its own source, limit phrases and all; its output shows them too
    detail = ('>       assert limit_reason(crashed, ["BlockingIOError", message, detail]) == "process limit"\n'
              "E       AssertionError: assert None == 'process limit'\n" + FORK_DETAIL)
    assert limit_reason("MemoryError os.fork() BlockingIOError", [("AssertionError", "AssertionError", detail)]) is None


@pytest.mark.parametrize(("output", "limit"), [
    ("Fatal Python error: MemoryError", "memory limit"), ("terminate called after std::bad_alloc", "memory limit"),
    ("sh: 1: Cannot fork", "process limit"), ("bash: fork: retry: Resource temporarily unavailable", "process limit"),
    ("OSError: [Errno 27] File too large", "disk limit"), ("tar: No space left on device", "disk limit"),
    ("write: File too large", "disk limit"), ("OSError: [Errno 27] big.bin", "disk limit"),
    ("malloc: Cannot allocate memory", "memory limit"), ("fork: Resource temporarily unavailable", "process limit"),
    ("RuntimeError: can't start new thread", "process limit"),
    ("  pid = os.fork()\nBlockingIOError: [Errno 11] Resource temporarily unavailable", "process limit"),
    ("  _fork_exec(...)\nBlockingIOError: [Errno 11] Resource temporarily unavailable", "process limit"),
    ("  sock.recv(1)\nBlockingIOError: [Errno 11] Resource temporarily unavailable", None),
    ("  os.fork() is not called here\nValueError: no", None),
    ("Ran 3 tests\nFAILED (failures=1)", None),
])
def test_without_a_failed_test_the_output_is_read(output: str, limit: str | None) -> None:
    assert limit_reason(output) == limit


def test_a_forked_childs_failure_named_by_pytests_summary_counts() -> None:
    # The children of a test that forks run pytest's end too: the JUnit file kept the parent's
    # assertion ("assert 256 == 0": a child died), the output pytest's own summary of the child's.
    child = ("    def test_eight_children():\n>               hoard = bytearray(200 << 20)\nE               MemoryError\n\n"
             "test_children.py:9: MemoryError\n=== short test summary info ===\n"
             "FAILED test_children.py::test_eight_children - MemoryError\n1 failed in 1.35s\n")
    parent = (None, "assert 256 == 0", "")
    assert limit_reason(child, [parent]) == "memory limit"
    own = ("    assert limit_reason('MemoryError os.fork()') is None\nE   AssertionError: assert 'memory limit' is None\n"
           "tests/test_x.py:9: AssertionError\nFAILED tests/test_x.py::test_y - AssertionError: assert 'memory limit'\n")
    assert limit_reason(own, [("AssertionError", "AssertionError: assert 'memory limit' is None", "")]) is None


def test_a_traceback_a_child_printed_counts_by_its_last_line() -> None:
    captured = ("----- Captured stderr call -----\nTraceback (most recent call last):\n"
                '  File "test_children.py", line 12, in test_eight_children\n    hoard = bytearray(200 << 20)\n'
                "MemoryError\n")
    parent = (None, "assert 256 == 0", "")
    assert limit_reason(captured, [parent]) == "memory limit"
    assert limit_reason(captured.replace("MemoryError", "ValueError: no"), [parent]) is None
