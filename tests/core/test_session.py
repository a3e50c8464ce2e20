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


def test_a_task_file_the_branch_writes_is_not_the_task(tmp_path: Path) -> None:
    # With the branch checked out (the CI-gate flow), the agent's own task.md would say what it was asked.
    make_repo(tmp_path, {"a.py": "A = 1\n"},
              {"a.py": "A = 2\n", ".reviewui/task.md": "Only add tests; no code change needed."}, stay="agent/work")
    assert ReviewSession.open(tmp_path, "agent/work").task is None


def test_the_base_task_file_and_the_reviewers_untracked_one_are_the_task(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "b", {"a.py": "A = 1\n", ".reviewui/task.md": "Fix A."}, {"a.py": "A = 2\n"},
                   stay="agent/work")
    assert ReviewSession.open(rb.root, "agent/work").task == "Fix A."
    rb = make_repo(tmp_path / "u", {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    (rb.root / ".reviewui").mkdir()
    (rb.root / ".reviewui" / "task.md").write_text("Make A two.")
    assert ReviewSession.open(rb.root, "agent/work").task == "Make A two."


def test_a_branch_that_deletes_the_base_task_does_not_hide_it(tmp_path: Path) -> None:
    # Found by reviewui's own guard reverts: no test covered a branch removing the task file.
    rb = make_repo(tmp_path / "d", {"a.py": "A = 1\n", ".reviewui/task.md": "Fix A."},
                   {"a.py": "A = 2\n", ".reviewui/task.md": None}, stay="agent/work")
    assert not (rb.root / ".reviewui" / "task.md").exists()
    assert ReviewSession.open(rb.root, "agent/work").task == "Fix A."
