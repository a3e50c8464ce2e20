"""The review screen's bite part: `b` checks the hunk under the cursor, `B` sweeps them all.

The run happens in a thread worker that calls the session and reports with
messages; results stream into the ledger and onto the hunks as they come.
`escape` cancels (running test process groups are killed).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from textual.binding import Binding

from reviewui.core.errors import ReviewError
from reviewui.ui.messages import BiteFinished, BiteProgress, BiteResult
from reviewui.ui.evidence_view import verdict_count
from reviewui.ui.screens.review_part import ReviewPart
from reviewui.ui.widgets import guard_marks
from reviewui.ui.widgets.review_header import ReviewHeader
from reviewui.core.safe_text import visible

if TYPE_CHECKING:
    from reviewui.core.evidence import HunkKey
    from reviewui.ui.widgets.results_panel import ResultsPanel
    from reviewui.core.bite.engine import BiteCache
    from reviewui.core.bite.report import HunkResult
    from reviewui.ui.screens.review import ReviewScreen


DIFF_ONLY_ACTIONS = frozenset({
    "next_hunk", "prev_hunk", "next_file", "prev_file", "toggle_split", "toggle_reviewed", "comment",
    "bite", "sweep", "probe", "toggle_fixtures", "toggle_results", "goto_turn", "verdict",
})
"""Screen actions that act on the diff: off while the transcript is in front."""


class BitesPart(ReviewPart):
    """Bite-check keys, the worker, and the results panel."""

    BINDINGS = [
        Binding("b", "bite", "Bite", id="review.bite",
                tooltip="Bite-check the hunk under the cursor: revert it, rerun the tests"),
        Binding("B", "sweep", "Sweep", id="review.sweep", tooltip="Bite-check every source hunk (in parallel)"),
        Binding("escape", "cancel_bite", "Cancel", id="review.cancel_bite", tooltip="Cancel the running bite-check"),
        Binding("m", "matrix", "Matrix", id="review.matrix", tooltip="Which test bit which hunk"),
        Binding("r", "toggle_results", "Results", id="review.results", tooltip="Show or hide the results panel"),
        Binding("right_curly_bracket", "toothless_guard(1)", "Next toothless guard", key_display="}",
                id="review.next_toothless_guard", tooltip="Jump to the next guard revert no test noticed"),
        Binding("left_curly_bracket", "toothless_guard(-1)", "Prev toothless guard", key_display="{",
                id="review.prev_toothless_guard", tooltip="Jump to the previous guard revert no test noticed"),
    ]

    def __init__(self, screen: ReviewScreen) -> None:
        super().__init__(screen)
        self._cache: BiteCache | None = None
        self.cancel_event = threading.Event()
        self._biting = False

    @property
    def biting(self) -> bool:
        """True while a bite-check runs (bite and sweep are disabled, cancel enabled)."""
        return self._biting

    @biting.setter
    def biting(self, value: bool) -> None:
        self._biting = value
        self.screen.refresh_bindings()

    def close(self) -> None:
        self.cancel_event.set()
        if self._cache is not None:
            self._cache.close()  # the session's warm pytest server goes with the screen

    @property
    def cache(self) -> BiteCache:
        """Prepared baselines and the warm pytest servers, kept for the screen's life (made on first use:
        the bite engine is a heavy import the first paint does without)."""
        if self._cache is None:
            from reviewui.core.bite.engine import BiteCache

            self._cache = BiteCache()
        return self._cache

    def check_action(self, action: str) -> bool | None:
        if action in DIFF_ONLY_ACTIONS and self.screen.transcript_in_front():
            return False  # keys of the hidden diff: neither offered in the footer nor run
        if action in ("bite", "sweep"):
            return not self.biting
        if action == "cancel_bite":
            return self.biting
        return True

    def bite(self) -> None:
        """Bite-check the hunk under the cursor (a source hunk)."""
        h = self.screen.diff_view.current_hunk
        if h is None:
            self.screen.notify("No hunk under the cursor", severity="warning")
            return
        from reviewui.core.bite.selection import checkable_hunks

        checkable = {h2.key for _, h2 in checkable_hunks(self.session.analysed_diff())}
        if h.key not in checkable:
            self.screen.notify("Test hunks are the evidence and are never reverted; pick a source hunk",
                               severity="warning")
            return
        self._start([h.key])

    def sweep(self) -> None:
        """Bite-check every source hunk."""
        # The sweep checks code only (config/docs hunks are `not-code`); `b` on one checks it anyway.
        from reviewui.core.bite.selection import checkable_hunks

        hunks = [h.key for _, h in checkable_hunks(self.session.analysed_diff(), include_config=False)]
        if not hunks:
            self.screen.notify("No source hunks to bite-check", severity="warning")
            return
        self._start(hunks)

    def _start(self, hunks: list[HunkKey]) -> None:
        self.biting = True
        self.cancel_event = cancel = threading.Event()
        self.screen.set_status("bite-check: baseline run of the selected tests… (escape cancels)")
        self.thread(lambda: self._run(hunks, cancel), group="bite", name="bite-check")

    def _run(self, hunks: list[HunkKey], cancel: threading.Event) -> None:
        """Run the bite-check off the UI thread; report with messages only."""
        post = self.screen.post_message

        def result(res: HunkResult) -> None:
            post(BiteResult(res))

        def progress(done: int, total: int) -> None:
            post(BiteProgress(done, total))

        try:
            # `b`/`B` grade the guard reverts inside the agent's lines too.
            report = self.session.bite(hunks, on_result=result, on_progress=progress, cancel=cancel, cache=self.cache,
                                       guards=True)
        except ReviewError as e:
            post(BiteFinished(None, str(e)))
            return
        except Exception as e:  # a bug, but the reviewer must hear of it and the UI must live
            post(BiteFinished(None, f"bite-check failed: {type(e).__name__}: {e}"))
            raise
        post(BiteFinished(report))

    def cancel(self) -> None:
        """Cancel the running bite-check."""
        self.cancel_event.set()
        self.screen.set_status("bite-check: cancelling…")

    def on_result(self, message: BiteResult) -> None:
        """One hunk's result arrived: into the ledger and onto the hunk."""
        res = message.result
        self.ledger.add_bite(res)
        self.screen.evidence_changed(res.file)
        self.show_result()

    def on_progress(self, message: BiteProgress) -> None:
        """A sweep progressed."""
        self.screen.set_status(f"bite-check: {message.done}/{message.total} hunks done (escape cancels)")

    def on_finished(self, message: BiteFinished) -> None:
        """The run ended: record the report, recompute the findings with it, say how it went."""
        self.biting = False
        if message.report is None:
            self.screen.set_status(f"bite-check stopped: {message.error}")
            self.screen.notify(visible(message.error or "bite-check failed"), severity="error", markup=False)
            return
        report = message.report
        self.ledger.add_report(report)
        if report.baseline.reason != "cancelled":
            self.screen.query_one(ReviewHeader).quarantined = len(report.baseline.quarantined)
        for path in dict.fromkeys(r.file for r in report.results):
            self.screen.evidence_changed(path)
        self.screen.findings_part.compute(report)  # toothless-hunk / baseline-red join the findings
        counts = ", ".join(verdict_count(n, v) for v, n in report.summary().items() if n)
        if self.cancel_event.is_set():
            self.screen.set_status(f"bite-check cancelled: {counts or 'nothing checked'}")
        elif report.baseline.status != "green":
            self.screen.set_status(f"bite-check: baseline {report.baseline.status} — nothing can be learned: {counts}")
        else:
            selection = report.selection
            self.screen.set_status(f"bite-check done: {counts or 'no hunks'}{' — ' + selection if selection else ''}")
        self.show_result()

    def panel(self) -> ResultsPanel:
        """The bite results under the diff, mounted the first time it is asked for."""
        from reviewui.ui.widgets.results_panel import ResultsPanel  # not at the top: not on the first screen

        found = self.screen.query(ResultsPanel)
        if found:
            return found.first()
        panel = ResultsPanel(id="results", classes="-hidden")
        self.screen.query_one("#diff-pane").mount(panel)
        return panel

    def show_result(self) -> None:
        """Show the result of the hunk under the cursor in the results panel (opened when there is one)."""
        h = self.screen.diff_view.current_hunk
        result = self.ledger.bites.get(h.key) if h is not None else None
        baseline = self.ledger.baseline
        if result is None and baseline is None and not self.screen.query("#results"):
            return  # nothing to show, and no panel yet to update
        panel = self.panel()
        panel.show_result(result, baseline)
        if result is not None or baseline is not None:
            panel.remove_class("-hidden")

    def toggle_results(self) -> None:
        """Show or hide the results panel."""
        panel = self.panel()
        if panel.result is None and panel.baseline is None:
            self.show_result()  # a panel mounted just now says how to get a result
        panel.toggle_class("-hidden")

    def matrix(self) -> None:
        """Open the test x hunk matrix: a column per bite-checked hunk (and guard), labelled file:line."""
        from reviewui.ui.screens.matrix import MatrixHunk, MatrixScreen, hunk_label  # DataTable: not before the first paint

        columns: list[MatrixHunk] = []
        bit: set[tuple[str, str]] = set()
        for r in self.ledger.bite_results():
            f = self.session.diff.file(r.file)
            key = f"{r.file}:{r.index}"
            label = hunk_label(f.hunks[r.index]) if f and r.index < len(f.hunks) else f"{r.file}:#{r.index + 1}"
            columns.append(MatrixHunk(key, label, r.verdict))
            if r.verdict == "bites":
                bit |= {(key, t) for t in r.failing_tests}
            for n, g in enumerate(r.guards):  # a column per guard revert, after its hunk
                gkey = f"{key}#{n}"
                columns.append(MatrixHunk(gkey, f"↳{g.file}:{g.line}", f"{g.kind} {g.verdict}"))
                if g.verdict == "bites":
                    bit |= {(gkey, t) for t in g.failing_tests}
        self.screen.app.push_screen(MatrixScreen(columns, list(self.ledger.baseline_tests), bit))

    def toothless_guard(self, direction: int) -> None:
        """Move the cursor to the next/previous line with a toothless guard, across files."""
        screen = self.screen
        order = list(screen.file_list.paths)
        positions = guard_marks.toothless_positions(self.ledger.bites.values(), order)
        view = screen.diff_view
        here = (view.file.path if view.file else "", view.current_line or 0)
        target = guard_marks.step(positions, here, direction, order)
        if target is None:
            screen.notify("No more toothless guards" if positions else "No toothless guards (b checks a hunk's guards)",
                          timeout=2)
            return
        screen.navigation.jump_to(*target)
        row = view.row_for_line(target[1])
        if row is not None:
            view.cursor = row
