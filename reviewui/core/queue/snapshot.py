"""The queue app's last read, kept so the next start paints its rows at once while the real read runs.

Reading 10 000 branches takes about a second even warm; the app's first screen
should not wait for it. So after each read the app keeps its rows (in the user
cache, JSON), and on start draws them, marked as of when they were read, until
the fresh read replaces them a moment later. Nothing is decided from a kept
row: opening a review or recording a verdict opens the branch afresh. The file
holds verdicts and evidence words, so it is read only while it and its
directories are the user's alone (core/private.py).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from reviewui.core.queue.order import BranchRecord, Evidence, Row

VERSION = 1


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
    data = {"version": VERSION, "saved_at": time.time(), "omitted": omitted, "rows": [_row(r) for r in rows]}
    try:
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        return


def load(path: Path) -> tuple[list[Row], int, float] | None:
    """(rows, omitted, when saved) of the last read kept at `path`, or None (absent, not private, unreadable)."""
    from reviewui.core.config import user_cache_dir
    from reviewui.core.private import private_file

    if private_file(path, user_cache_dir()) is not None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != VERSION:
            return None
        return [_unrow(r) for r in data["rows"]], int(data["omitted"]), float(data["saved_at"])
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
