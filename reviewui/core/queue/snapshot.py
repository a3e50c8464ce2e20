"""The queue app's last read, kept so the next start paints its rows at once while the real read runs.

Reading 10 000 branches takes about a second even warm; the app's first screen
should not wait for it. So after each read the app keeps its rows (in the user
cache, one JSON row a line, in queue order), and on start draws the first
screenful of them and their count, marked as of when they were read, until
the fresh read replaces them a moment later. Nothing is decided from a kept
row: opening a review or recording a verdict opens the branch afresh. The file
holds verdicts and evidence words, so it is read only while it and its
directories are the user's alone (core/private.py).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from reviewui.core.queue.order import BranchRecord, Evidence, Row

VERSION = 2
FIRST = 300
"""Rows the first screen needs at most (a start reads only these, and the count, of the kept read)."""


def path_for(repo_id: str, base: str) -> Path:
    """Where the rows of the queue of repository `repo_id` against `base` are kept."""
    from reviewui.core.config import user_cache_dir

    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in base)[:60]
    return user_cache_dir() / "queue" / f"{repo_id}.{safe}.rows.json"


def save(path: Path, rows: list[Row], omitted: int) -> None:
    """Keep `rows` (never raises: only the next start's speed is at stake)."""
    from reviewui.core.config import user_cache_dir
    from reviewui.core.private import private_file

    if private_file(path, user_cache_dir()) is not None:
        return
    head = {"version": VERSION, "saved_at": time.time(), "omitted": omitted, "count": len(rows)}
    try:
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(head) + "\n")  # then one row a line, in queue order: a start reads the first few
            f.writelines(json.dumps(_row(r)) + "\n" for r in rows)
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        return


@dataclass(frozen=True)
class Kept:
    """The start of the last read: its first rows in queue order, and how many there were."""

    rows: list[Row]
    count: int
    """Rows the read had (the title says this many)."""
    omitted: int
    saved_at: float


def load(path: Path, first: int = FIRST) -> Kept | None:
    """The first `first` rows of the last read kept at `path`, or None (absent, not private, unreadable)."""
    from reviewui.core.config import user_cache_dir
    from reviewui.core.private import private_file

    if private_file(path, user_cache_dir()) is not None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            head = json.loads(f.readline())
            if head.get("version") != VERSION:
                return None
            rows: list[Row] = []
            for line in f:
                if len(rows) >= first:
                    break
                rows.append(_unrow(json.loads(line)))
        return Kept(rows, int(head["count"]), int(head["omitted"]), float(head["saved_at"]))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


_RECORD = [f.name for f in fields(BranchRecord)]
_EVIDENCE = [f.name for f in fields(Evidence)]


def _row(row: Row) -> dict[str, Any]:
    r = row.record
    record = {name: getattr(r, name) for name in _RECORD}
    record["changed_at"] = r.changed_at.isoformat()
    record["verdict_at"] = r.verdict_at.isoformat() if r.verdict_at else None
    record["evidence"] = asdict(r.evidence)
    return {"record": record, "tier": row.tier, "reason": row.reason, "risk": row.risk, "hidden": row.hidden}


def _unrow(data: dict[str, Any]) -> Row:
    record = {k: v for k, v in data["record"].items() if k in _RECORD}
    record["changed_at"] = datetime.fromisoformat(record["changed_at"])
    record["verdict_at"] = datetime.fromisoformat(record["verdict_at"]) if record.get("verdict_at") else None
    record["evidence"] = Evidence(**{k: v for k, v in record["evidence"].items() if k in _EVIDENCE})
    return Row(BranchRecord(**record), int(data["tier"]), str(data["reason"]), int(data["risk"]), bool(data["hidden"]))
