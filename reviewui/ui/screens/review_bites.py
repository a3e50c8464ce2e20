"""The review screen's bite side: `b` checks the hunk under the cursor, `B` sweeps them all.

A mixin of ReviewScreen. The run happens in a thread worker that calls the
core and reports with messages; results stream onto the hunks as they come.
`escape` cancels (running test process groups are killed).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen

from reviewui.core.errors import ReviewError
from reviewui.ui.messages import BiteFinished, BiteProgress, BiteResult
from reviewui.ui.screens.matrix import MatrixHunk, MatrixScreen, hunk_label
from reviewui.ui.widgets.results_panel import ResultsPanel

if TYPE_CHECKING:
    from reviewui.core.session import ReviewSession
    from reviewui.ui.widgets.diff_view import DiffView


DIFF_ONLY_ACTIONS = frozenset({
    "next_hunk", "prev_hunk", "next_file", "prev_file", "toggle_split", "toggle_reviewed", "comment",
    "bite", "sweep", "probe", "toggle_fixtures", "toggle_results", "goto_turn", "verdict",
})
"""Screen actions that act on the diff: off while the transcript is in front."""


class BiteActions(Screen[None]):
    """Bite-check keys, the worker, and the results panel."""

    BINDINGS = [
        Binding("b", "bite", "Bite", tooltip="Bite-check the hunk under the cursor: revert it, rerun the tests"),
        Binding("B", "sweep", "Sweep", tooltip="Bite-check every source hunk (in parallel)"),
        Binding("escape", "cancel_bite", "Cancel", tooltip="Cancel the running bite-check"),
        Binding("m", "matrix", "Matrix", tooltip="Which test bit which hunk"),
        Binding("r", "toggle_results", "Results", tooltip="Show or hide the results panel"),
    ]

    biting: reactive[bool] = reactive(False, bindings=True)

    session: "ReviewSession"
    diff_view: "DiffView"
    bites: dict[tuple[str, int], Any]

    def init_bites(self) -> None:
        """Set up the per-session bite state (call from on_mount)."""
        self._bite_cache_obj: Any = None  # made on first use: the engine is a heavy import for the first paint
        self._cancel = threading.Event()
        self.baseline: Any = None
        self.baseline_tests: list[str] = []

    def on_unmount(self) -> None:
        self._cancel.set()
        if self._bite_cache_obj is not None:
            self._bite_cache_obj.close()  # the session's warm pytest server goes with the screen

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in DIFF_ONLY_ACTIONS and self._transcript_in_front():
            return False  # keys of the hidden diff: neither offered in the footer nor run
        if action in ("bite", "sweep"):
            return not self.biting
        if action == "cancel_bite":
            return self.biting
        return True

    def _transcript_in_front(self) -> bool:
        from textual.widgets import ContentSwitcher

        found = self.query("#main-switch")
        return bool(found) and isinstance(found.first(), ContentSwitcher) and found.first().current == "transcript-pane"

    @property
    def _bite_cache(self) -> Any:
        """The session's BiteCache (baselines, warm pytest servers), made on first use."""
        if self._bite_cache_obj is None:
            from reviewui.core.bite.engine import BiteCache

            self._bite_cache_obj = BiteCache()
        return self._bite_cache_obj

    def action_bite(self) -> None:
        h = self.diff_view.current_hunk
        if h is None:
            self.notify("No hunk under the cursor", severity="warning")
            return
        from reviewui.core.bite.engine import checkable_hunks

        checkable = {(h2.file, h2.index) for _, h2 in checkable_hunks(self.session.analysed_diff())}
        if (h.file, h.index) not in checkable:
            self.notify("Test hunks are the evidence and are never reverted; pick a source hunk",
                        severity="warning")
            return
        self._start([(h.file, h.index)])

    def action_sweep(self) -> None:
        from reviewui.core.bite.engine import checkable_hunks

        hunks = [(h.file, h.index) for _, h in checkable_hunks(self.session.analysed_diff())]
        if not hunks:
            self.notify("No source hunks to bite-check", severity="warning")
            return
        self._start(hunks)

    def _start(self, hunks: list[tuple[str, int]]) -> None:
        self.biting = True
        self._cancel = threading.Event()
        self.set_status("bite-check: baseline run of the selected tests… (escape cancels)")
        self._bite_worker(hunks, self._cancel)

    @work(thread=True, exclusive=True, group="bite", exit_on_error=False)
    def _bite_worker(self, hunks: list[tuple[str, int]], cancel: threading.Event) -> None:
        """Run the bite-check off the UI thread; report with messages only."""
        r = self.session.run
        try:
            from reviewui.core.bite.engine import run_bite

            report = run_bite(
                self.session.target, self.session.analysed_diff(), self.session.settings,
                hunks=hunks, all_tests=r.all_tests, jobs=r.jobs, timeout=r.timeout, test_cmd=r.test_cmd,
                on_result=lambda res: self.post_message(BiteResult(res)),
                on_progress=lambda done, total: self.post_message(BiteProgress(done, total)),
                cancel=cancel, cache=self._bite_cache,
            )
        except ReviewError as e:
            self.post_message(BiteFinished(None, str(e)))
            return
        except Exception as e:  # a bug, but the reviewer must hear of it and the UI must live
            self.post_message(BiteFinished(None, f"bite-check failed: {type(e).__name__}: {e}"))
            raise
        self.post_message(BiteFinished(report))

    def action_cancel_bite(self) -> None:
        self._cancel.set()
        self.set_status("bite-check: cancelling…")

    def _take_result(self, res: Any) -> None:
        """Record a hunk's result; a cancelled run never replaces an earlier real result of that hunk."""
        key = (res.file, res.index)
        if res.verdict == "skipped" and res.reason == "cancelled" and key in self.bites:
            return
        self.bites[key] = res
        self.evidence_changed(res.file)

    @on(BiteResult)
    def _bite_result(self, message: BiteResult) -> None:
        self._take_result(message.result)
        self._show_result()

    @on(BiteProgress)
    def _bite_progress(self, message: BiteProgress) -> None:
        self.set_status(f"bite-check: {message.done}/{message.total} hunks done (escape cancels)")

    @on(BiteFinished)
    def _bite_finished(self, message: BiteFinished) -> None:
        self.biting = False
        if message.report is None:
            self.set_status(f"bite-check stopped: {message.error}")
            self.notify(message.error or "bite-check failed", severity="error")
            return
        report = message.report
        if not (report.baseline.reason == "cancelled" and self.baseline is not None):
            self.baseline = report.baseline  # a cancelled baseline says nothing: the earlier one stands
        for t in report.baseline.tests:
            if t not in self.baseline_tests:
                self.baseline_tests.append(t)
        for res in report.results:
            self._take_result(res)
        self.compute_findings(report)  # toothless-hunk / baseline-red join the findings
        from reviewui.ui.screens.review import verdict_count

        counts = ", ".join(verdict_count(n, v) for v, n in report.summary().items() if n)
        if self._cancel.is_set():
            self.set_status(f"bite-check cancelled: {counts or 'nothing checked'}")
        elif report.baseline.status != "green":
            self.set_status(f"bite-check: baseline {report.baseline.status} — nothing can be learned: {counts}")
        else:
            self.set_status(f"bite-check done: {counts or 'no hunks'}")
        self._show_result()

    def _show_result(self) -> None:
        h = self.diff_view.current_hunk
        result = self.bites.get((h.file, h.index)) if h is not None else None
        if result is None and self.baseline is None and not self.query(ResultsPanel):
            return  # nothing to show, and no panel yet to update
        panel = self.results_panel()
        panel.show_result(result, self.baseline)
        if result is not None or self.baseline is not None:
            panel.remove_class("-hidden")

    def action_toggle_results(self) -> None:
        panel = self.results_panel()
        if panel.result is None and panel.baseline is None:
            self._show_result()  # a panel mounted just now says how to get a result
        panel.toggle_class("-hidden")

    def action_matrix(self) -> None:
        keys = sorted(self.bites, key=lambda k: (k[0], k[1]))
        files = {p: self.session.diff.file(p) for p, _ in keys}
        hunks = [MatrixHunk(f"{p}:{i}", hunk_label(files[p].hunks[i]) if files[p] and i < len(files[p].hunks)
                            else f"{p}:#{i + 1}", self.bites[(p, i)].verdict) for p, i in keys]
        bit = {(f"{p}:{i}", t) for (p, i) in keys for t in self.bites[(p, i)].failing_tests
               if self.bites[(p, i)].verdict == "bites"}
        tests = list(self.baseline_tests)
        self.app.push_screen(MatrixScreen(hunks, tests, bit))

    if TYPE_CHECKING:  # provided by the other halves of ReviewScreen
        def results_panel(self) -> ResultsPanel: ...
        def set_status(self, text: str) -> None: ...
        def evidence_changed(self, path: str | None) -> None: ...
        def compute_findings(self, bite_report: Any = None) -> Any: ...
