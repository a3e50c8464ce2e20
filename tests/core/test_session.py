"""The session computes each piece of evidence once, however many workers ask at the same time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from reviewui.core.session import ReviewSession
from tests.gitrepo import make_repo


def test_concurrent_requests_compute_once(tmp_path: Path) -> None:
    make_repo(tmp_path, {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    session = ReviewSession.open(tmp_path, "agent/work")
    calls: list[int] = []

    def slow() -> object:
        calls.append(1)
        time.sleep(0.2)
        return object()

    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(session._cached("k", slow))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len(results) == 4 and all(r is results[0] for r in results)
