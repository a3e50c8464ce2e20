"""Filling in a queued branch's evidence: what `check --bite` makes, kept in the evidence store.

One branch at a time: the guard-graded sweep (reused from the store when a
current one is there), its per-test truth table, its findings and the agent's
claims rerun at the head, all saved under the branch's store key, where the
queue's evidence column (`evidence.py`) reads them. Used by `reviewui queue
--sweep` and by the queue app's background sweep; it runs tests only through
the session (the one sandboxed runner).
"""

from __future__ import annotations

import threading
from pathlib import Path

from reviewui.core.errors import ReviewError, SandboxError


def sweep_branch(repo: str | Path, branch: str, base: str, *, jobs: int | None = None, fresh: bool = False,
                 cancel: threading.Event | None = None) -> str | None:
    """Make and store the evidence of `branch` against `base`; None when stored, else one line why not.

    Raises SandboxError (the same for every branch: the caller stops); any other ReviewError is
    the branch's own (a red baseline is evidence too, and is stored).
    """
    from reviewui.core.session import ReviewSession, RunOptions

    try:
        session = ReviewSession.open(repo, branch, base, run=RunOptions(jobs=jobs, fresh=fresh))
        if session.target.is_empty:
            return "no change against the base"
        stored = session.stored()
        report = None
        if not fresh and stored.bite is not None and stored.bite.current and stored.bite.value.guards_checked:
            report = stored.bite.value
        if report is None:
            report = session.bite(guards=True, cancel=cancel)
        if report.baseline.reason == "cancelled":
            return "cancelled"
        try:
            table = session.tests_table(report, cancel=cancel)
        except ReviewError:
            table = None  # not pytest, or the head's tests did not run: the sweep stands without it
        session.claims(cancel=cancel)  # the findings below include the reruns
        session.save_evidence(report, table, session.findings(report, table))
        return None
    except SandboxError:
        raise
    except ReviewError as e:
        return str(e)
