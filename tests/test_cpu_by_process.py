"""bench/cpu_by_process.py: the kernel's accounting records read back right, and the table it prints; the
guard bench's venv."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

from bench import cpu_by_process as cbp


def _record(name: bytes, *, forked_only: bool, uid: int, utime: int, stime: int, version: int = 3) -> bytes:
    # struct acct_v3: flag, version, tty, exitcode, uid, gid, pid, ppid, btime, etime, utime, stime,
    # mem, io, rw, minflt, majflt, swaps, comm[16]
    return cbp.RECORD.pack(cbp.AFORK if forked_only else 0, version, 0, 0, uid, uid, 7, 1, 0, 0.5, utime, stime,
                           0, 0, 0, 0, 0, 0, name)


def test_comp_t_is_mantissa_times_eight_to_the_exponent() -> None:
    assert cbp._comp(0) == 0
    assert cbp._comp(25) == 25  # exponent 0
    assert cbp._comp((1 << 13) | 3) == 3 * 8  # exponent 1
    assert cbp._comp((2 << 13) | 0x1FFF) == 0x1FFF * 64  # exponent 2, the largest mantissa


def test_records_are_read_with_their_name_kind_uid_and_cpu(tmp_path: Path) -> None:
    path = tmp_path / "acct"
    path.write_bytes(
        _record(b"python", forked_only=True, uid=2100000000, utime=4, stime=2)
        + _record(b"git", forked_only=False, uid=0, utime=(1 << 13) | 5, stime=0)  # 40 ticks
        + _record(b"old", forked_only=False, uid=0, utime=9, stime=9, version=2)  # not v3: left out
        + b"\x00" * 10  # a record cut short at the end
    )
    got = cbp.read_records(str(path))
    assert got == [cbp.Exited("python", True, 2100000000, 0.06), cbp.Exited("git", False, 0, 0.4)]


def test_the_table_sums_by_name_kind_and_uid(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[list[str]] = []

    def fake(argv: list[str]) -> tuple[int, list[cbp.Exited]]:
        seen.append(argv)
        return 3, [cbp.Exited("python", True, 9, 0.25), cbp.Exited("python", True, 9, 0.75),
                   cbp.Exited("python", False, 9, 0.5), cbp.Exited("git", False, 0, 0.0)]

    monkeypatch.setattr(cbp, "accounted", fake)
    monkeypatch.setattr(sys, "argv", ["cpu_by_process.py", "--", "true", "x"])
    assert cbp.main() == 3  # the command's exit code
    assert seen == [["true", "x"]]
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "exit 3; 4 processes, 1.50 s CPU (10 ms ticks each)"
    rows = [line.split() for line in out[2:]]
    assert rows[0] == ["1.00", "2", "500.0", "python", "/", "fork", "/", "9"]  # the two forks summed, the largest first
    assert rows[1] == ["0.50", "1", "500.0", "python", "/", "exec", "/", "9"]
    assert rows[2][3] == "git"
    monkeypatch.setattr(sys, "argv", ["cpu_by_process.py", "--version"])  # no `--`: every word is the command's
    cbp.main()
    assert seen[-1] == ["--version"]


def test_no_command_prints_the_usage_and_exits_2(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cbp, "accounted", lambda argv: pytest.fail("nothing to run"))
    for argv in (["cpu_by_process.py"], ["cpu_by_process.py", "--"]):
        monkeypatch.setattr(sys, "argv", argv)
        assert cbp.main() == 2
        assert "Run: sudo python bench/cpu_by_process.py" in capsys.readouterr().out


def test_accounting_runs_the_command_as_root_and_says_why_not_otherwise(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where its accounting file goes, and must go again
    argv = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    if os.geteuid() != 0:
        with pytest.raises(SystemExit, match="acct: .*root and CONFIG_BSD_PROCESS_ACCT needed"):
            cbp.accounted(argv)
        assert not marker.exists()  # nothing run unaccounted
        assert list(scratch.iterdir()) == []
        return
    code, records = cbp.accounted(argv)
    assert code == 0 and marker.exists()
    assert any(r.name.startswith("python") and not r.forked_only for r in records)
    assert list(scratch.iterdir()) == []


def test_the_guard_bench_keeps_pytest_asyncio_in_its_venv(monkeypatch: pytest.MonkeyPatch) -> None:
    # The samples' venv left pytest-asyncio out (tests/project_python.py); the guard bench's figures,
    # every one of them taken with it, stay comparable only if its venv still has it.
    from bench import bench_guards
    from tests import project_python

    asked: list[tuple[str, ...]] = []
    monkeypatch.setattr(project_python, "python", lambda extra=(): asked.append(extra) or "/venv/bin/python")
    assert bench_guards._project_python() == "/venv/bin/python"
    assert asked == [("mutmut", "pytest-asyncio")]
    assert "pytest-asyncio" not in project_python.PLUGINS
