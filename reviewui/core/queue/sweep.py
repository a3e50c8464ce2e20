"""Filling in a queued branch's evidence: what `check --bite` makes, kept in the evidence store.

One branch at a time: the guard-graded sweep (reused from the store when a
current one is there), its per-test truth table, its findings and the agent's
claims rerun at the head, all saved under the branch's store key, where the
queue's evidence column (`evidence.py`) reads them. Used by `reviewui queue
--sweep` and by the queue app's background sweep; it runs tests only through
the session (the one sandboxed runner), on the configured engine (`engine`,
or the `engine` given). `sweep_branches` sweeps several branches at once when
the engine is Ray (the cluster's nodes take them; one machine's slots do not
gain from it, so the local engine takes one branch at a time).
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from pathlib import Path
from typing import Callable, Iterable

from reviewui.core.errors import ReviewError, SandboxError


RAY_BRANCHES_AT_ONCE = 4
"""Branches swept at once on the ray engine (each one's baseline runs here, its reverts on the nodes)."""


def sweep_branch(repo: str | Path, branch: str, base: str, *, jobs: int | None = None, fresh: bool = False,
                 cancel: threading.Event | None = None, engine: str | None = None,
                 ray_address: str | None = None) -> str | None:
    """Make and store the evidence of `branch` against `base`; None when stored, else one line why not.

    Raises SandboxError (the same for every branch: the caller stops); any other ReviewError is
    the branch's own (a red baseline is evidence too, and is stored).
    """
    from reviewui.core.session import ReviewSession, RunOptions

    try:
        session = ReviewSession.open(repo, branch, base, run=RunOptions(jobs=jobs, fresh=fresh, engine=engine,
                                                                        ray_address=ray_address))
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


def sweep_branches(repo: str | Path, branches: Iterable[str], base: str, *, engine: str,
                   on_done: Callable[[str, str | None], None], on_start: Callable[[str], None] | None = None,
                   jobs: int | None = None, ray_address: str | None = None,
                   cancel: threading.Event | None = None) -> None:
    """Sweep `branches` (sweep_branch each) on `engine`, several at once on Ray; `on_done(branch, why)`
    as each ends. A SandboxError stops the rest and is raised (it would be the same for every branch)."""
    at_once = RAY_BRANCHES_AT_ONCE if engine == "ray" else 1
    stop = threading.Event()

    def one(branch: str) -> tuple[str, str | None]:
        if stop.is_set() or (cancel is not None and cancel.is_set()):
            return branch, "cancelled"
        if on_start is not None:
            on_start(branch)
        return branch, sweep_branch(repo, branch, base, jobs=jobs, cancel=cancel, engine=engine,
                                    ray_address=ray_address)

    with cf.ThreadPoolExecutor(max_workers=at_once, thread_name_prefix="queue-sweep") as pool:
        futures = [pool.submit(one, b) for b in branches]
        try:
            for fut in cf.as_completed(futures):
                on_done(*fut.result())
        except BaseException:
            stop.set()
            raise
