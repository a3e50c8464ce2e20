"""What a run leaves for reviewui to read (replies, module lists, logs) is read with a cap:
never past it, never through a FIFO that would block, never through a symlink."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from reviewui.core.run.process import read_run_file, read_run_text


def test_a_reply_within_the_cap_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / "reply.json").write_bytes(b'{"ok": true}')
    assert read_run_text(tmp_path / "reply.json") == '{"ok": true}'


def test_a_reply_past_the_cap_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "reply.json"
    with open(big, "wb") as f:
        f.truncate(64 * 1024 * 1024)  # sparse: costs the test nothing, would cost reviewui 64 MiB
    assert read_run_file(big, cap=16 * 1024 * 1024) is None
    assert read_run_file(big, cap=64 * 1024 * 1024) is not None


def test_a_fifo_in_place_of_a_reply_neither_blocks_nor_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "reply.json"
    os.mkfifo(fifo)
    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(read_run_file(fifo)), daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive() and got == [None]


def test_a_symlink_in_place_of_a_reply_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("the reviewer's")
    (tmp_path / "reply.json").symlink_to(secret)
    assert read_run_file(tmp_path / "reply.json") is None


def test_a_reply_line_past_its_cap_ends_the_channel() -> None:
    """The warm server's reply channel: whole lines come through; a line without end stops at the cap."""
    from reviewui.core.run.process import capped_lines

    r, w = os.pipe()
    os.write(w, b'{"ready": true}\n' + b"x" * 5000)
    os.close(w)
    assert list(capped_lines(r, 1000)) == [b'{"ready": true}', None]
    os.close(r)
