"""Hostile input files: /dev/zero, a FIFO and a gzip bomb as transcript, probe or task file.

Each must end in exit 2 with one line on stderr: never a hang (the FIFO has
no writer; a timeout guards the test), never a MemoryError traceback.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

import pytest

from reviewui.core.bounded import read_input_text
from reviewui.core.errors import ReviewError
from tests.clirun import run_cli
from tests.gitrepo import make_repo

BOMB_BYTES = 64 << 20  # inflates to 64 MiB of zeros (no newline): past the caps set below


def _bomb(path: Path) -> Path:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    chunk = bytes(1 << 20)
    with open(path, "wb") as f:
        for _ in range(BOMB_BYTES >> 20):
            f.write(c.compress(chunk))
        f.write(c.flush())
    assert path.stat().st_size < 200_000
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    make_repo(tmp_path / "r", {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    # The reviewer's own caps (user config): 8 MiB transcripts, 1 MiB other inputs.
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "reviewui"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "config.toml").write_text(f"max-transcript-bytes = {8 << 20}\nmax-input-bytes = {1 << 20}\n")
    return tmp_path / "r"


def _inputs(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return {"dev-zero": Path("/dev/zero"), "fifo": fifo, "gzip-bomb": _bomb(tmp_path / "bomb.jsonl.gz")}


COMMANDS = {
    "transcript": lambda f: ("transcript", str(f)),
    "check --transcript": lambda f: ("check", "agent/work", "--transcript", str(f)),
    "probe --file": lambda f: ("probe", "agent/work", "--file", str(f)),
    "check --task-file": lambda f: ("check", "agent/work", "--task-file", str(f)),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_hostile_inputs_exit_2_in_one_line(repo: Path, tmp_path: Path, command: str) -> None:
    for name, path in _inputs(_fresh(tmp_path, command)).items():
        proc = run_cli(*COMMANDS[command](path), cwd=repo, timeout=60)
        assert proc.returncode == 2, (name, proc.stderr[-500:])
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("reviewui: "), (name, proc.stderr[-500:])
        assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
        expected = {"dev-zero": "is a device", "fifo": "is a FIFO", "gzip-bomb": "decompresses to more than"}[name]
        assert expected in lines[0], (name, lines[0])


def _fresh(tmp_path: Path, command: str) -> Path:
    d = tmp_path / command.replace(" ", "_").replace("-", "")
    d.mkdir()
    return d


def test_oversized_plain_file_is_refused_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "task.md"
    with open(big, "wb") as f:
        f.truncate(5 << 20)  # sparse: costs no disk
    with pytest.raises(ReviewError, match=r"task file .* is larger than 4 MiB"):
        read_input_text(big, "task file")
    assert read_input_text(big, "task file", cap=6 << 20) == "\0" * (5 << 20)


def test_small_gzip_and_plain_inputs_still_read(tmp_path: Path) -> None:
    (tmp_path / "t.md").write_bytes("fix `parse_row` \xff".encode("latin-1"))
    assert read_input_text(tmp_path / "t.md", "task file") == "fix `parse_row` \ufffd"
    (tmp_path / "t.md.gz").write_bytes(gzip.compress(b"fix it"))
    assert read_input_text(tmp_path / "t.md.gz", "task file") == "fix it"
    for broken in (gzip.compress(b"fix it" * 100)[:-12], b"\x1f\x8b\x08\x00garbage-after-the-magic"):
        (tmp_path / "bad.gz").write_bytes(broken)
        with pytest.raises(ReviewError, match="cannot read task file"):
            read_input_text(tmp_path / "bad.gz", "task file")


def test_transcripts_within_the_cap_still_load(repo: Path) -> None:
    fixtures = Path(__file__).parent / "fixtures" / "transcripts"
    for name in ("claude_code_red_green.jsonl.gz", "claude_code_red_green.jsonl", "openhands_v1_conversation"):
        proc = run_cli("transcript", str(fixtures / name), "--format", "json", cwd=repo, timeout=60)
        assert proc.returncode == 0, (name, proc.stderr)


def test_an_oversized_note_is_refused_in_one_line(repo: Path) -> None:
    import subprocess

    assert run_cli("verdict", "agent/work", "approve", cwd=repo).returncode == 0
    head = subprocess.run(["git", "rev-parse", "agent/work"], cwd=repo, capture_output=True, text=True).stdout.strip()
    big = "[[review]]\n" + "# padding\n" * 150_000  # 1.5 MiB: past the 1 MiB cap set by the fixture
    subprocess.run(["git", "notes", "--ref", "refs/notes/reviewui", "add", "-f", "-F", "-", head],
                   cwd=repo, input=big, text=True, check=True, capture_output=True)
    proc = run_cli("log", "agent/work", cwd=repo, timeout=60)
    assert proc.returncode == 2 and "larger than" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_zip_member_over_the_cap_is_refused(tmp_path: Path) -> None:
    import zipfile

    from reviewui.core.bounded import read_zip_member

    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("samples/1.json", b"0" * (2 << 20))  # 2 MiB of one byte: a few KiB compressed
        z.writestr("samples/2.json", b'{"ok": 1}')
    assert path.stat().st_size < 50_000
    with zipfile.ZipFile(path) as z:
        with pytest.raises(ReviewError, match="larger than 1 MiB"):
            read_zip_member(z, "samples/1.json", "transcript", path, cap=1 << 20)
        assert read_zip_member(z, "samples/2.json", "transcript", path, cap=1 << 20) == b'{"ok": 1}'


def test_inspect_zip_bomb_and_openhands_fifo_event(repo: Path, tmp_path: Path) -> None:
    import shutil
    import zipfile

    bomb = tmp_path / "log.eval"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", b"{}")
        z.writestr("samples/1_epoch_1.json", b" " * (16 << 20))  # 16 MiB of blanks, past the 8 MiB cap
    proc = run_cli("transcript", str(bomb), "--transcript-format", "inspect-ai", cwd=repo, timeout=60)
    assert proc.returncode == 2 and ("decompresses to more than" in proc.stderr or "larger than" in proc.stderr), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    # A FIFO among an OpenHands conversation's event files is skipped, not waited on.
    folder = tmp_path / "conv"
    shutil.copytree(Path(__file__).parent / "fixtures" / "transcripts" / "openhands_v1_conversation", folder)
    events = folder / "events" if (folder / "events").is_dir() else folder
    os.mkfifo(events / "event-99999-fifo.json")
    proc = run_cli("transcript", str(folder), "--format", "json", cwd=repo, timeout=60)
    assert proc.returncode == 0, proc.stderr
