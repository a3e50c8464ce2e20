"""The review screen's bite part: `b` checks the hunk under the cursor, `B` sweeps them all.

The run happens in a thread worker that calls the session and reports with
messages; results stream into the ledger and onto the hunks as they come.
`escape` cancels (running test process groups are killed). The results
panel, the matrix and the truth table show what a run found; the evidence
store's sweep of this head is read at start-up. Jumping to toothless guards
and their witnesses is review_toothless.py.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable, Sequence

from textual.binding import Binding
from textual.screen import Screen

from reviewui.core.errors import ReviewError
from reviewui.ui.messages import (BiteFinished, BiteProgress, BiteResult, StoredLoaded, TestsProgressed,
                                  TruthTableReady)
from reviewui.ui.evidence_view import verdict_count
from reviewui.ui.screens.review_part import ReviewHost, ReviewPart
from reviewui.ui.widgets import guard_marks
from reviewui.ui.widgets.review_header import ReviewHeader
from reviewui.core.safe_text import visible

if TYPE_CHECKING:
    from reviewui.core.evidence import HunkKey
    from reviewui.ui.widgets.results_panel import ResultsPanel
    from reviewui.core.bite.engine import BiteCache
    from reviewui.core.bite.progress import TestsProgress
    from reviewui.core.bite.report import BiteReport, HunkResult


DIFF_ONLY_ACTIONS = frozenset({
    "next_hunk", "prev_hunk", "next_file", "prev_file", "toggle_split", "toggle_reviewed", "comment",
    "bite", "sweep", "probe", "toggle_fixtures", "toggle_results", "goto_turn", "verdict",
    "search_diff", "next_match", "prev_match", "clear_search", "witness",
})
"""Screen actions that act on the diff: off while the transcript is in front."""


SHORT_SCREEN = 24
"""Rows below which the results panel does not open by itself: it would squeeze the diff to a line or two."""


class BitesPart(ReviewPart):
    """Bite-check keys, the worker, and the results panel."""

    BINDINGS = [
        Binding("b", "bite", "Bite", id="review.bite",
                tooltip="Bite-check the hunk under the cursor: revert it, rerun the tests"),
        Binding("B", "sweep", "Sweep", id="review.sweep", tooltip="Bite-check every source hunk (in parallel)"),
        Binding("escape", "cancel_bite", "Cancel", id="review.cancel_bite", tooltip="Cancel the running bite-check"),
        Binding("m", "matrix", "Matrix", id="review.matrix", tooltip="Which test bit which hunk"),
        Binding("u", "tests_table", "Tests table", id="review.tests_table",
                tooltip="Per-test truth table: each branch test at the head and on the base, and what makes it fail"),
        Binding("r", "toggle_results", "Results", id="review.results", tooltip="Show or hide the results panel"),
    ]

    def __init__(self, screen: Screen[None], host: ReviewHost) -> None:
        super().__init__(screen, host)
        self._cache: BiteCache | None = None
        self.cancel_event = threading.Event()
        self._biting = False
        self._whole: list[HunkKey] = []
        self._said_short = False
        """Told once that a short screen keeps the results panel closed."""
        self.tabling = False
        """True while the truth table's base run is made (its progress goes to the status line)."""
        self._said = ""
        """How the last run ended, as the status line said it: said again once the truth table is in."""

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
        if action in DIFF_ONLY_ACTIONS and self.host.transcript_in_front():
            return False  # keys of the hidden diff: neither offered in the footer nor run
        if action in ("bite", "sweep"):
            return not self.biting
        if action == "cancel_bite":
            return self.biting
        return True

    def bite(self) -> None:
        """Bite-check the hunk under the cursor (a source hunk)."""
        h = self.host.diff_view.current_hunk
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
        hunks = self._sweep_hunks()
        if not hunks:
            self.screen.notify("No source hunks to bite-check", severity="warning")
            return
        self._start(hunks)

    def _sweep_hunks(self) -> list[HunkKey]:
        from reviewui.core.bite.selection import checkable_hunks

        return [h.key for _, h in checkable_hunks(self.session.analysed_diff(), include_config=False)]

    def _start(self, hunks: list[HunkKey]) -> None:
        self._whole = hunks if hunks == self._sweep_hunks() else []
        self.biting = True
        self.cancel_event = cancel = threading.Event()
        self.host.set_status("bite-check: baseline run of the selected tests… (escape cancels)")
        self.thread(lambda: self._run(hunks, cancel), group="bite", name="bite-check")

    def _run(self, hunks: list[HunkKey], cancel: threading.Event) -> None:
        """Run the bite-check off the UI thread; report with messages only."""
        post = self.screen.post_message

        def result(res: HunkResult) -> None:
            post(BiteResult(res))

        def progress(done: int, total: int) -> None:
            post(BiteProgress(done, total))

        try:
            # `b`/`B` grade the guard reverts inside the agent's lines too, and look for witnesses of the toothless.
            report = self.session.bite(hunks, on_result=result, on_progress=progress, cancel=cancel, cache=self.cache,
                                       guards=True, witness=True, on_tests=self._tests_sink())
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
        self.host.set_status("bite-check: cancelling…")

    def on_result(self, message: BiteResult) -> None:
        """One hunk's result arrived: into the ledger and onto the hunk."""
        res = message.result
        self.ledger.add_bite(res)
        self.host.evidence_changed(res.file)
        self.show_result()

    def _tests_sink(self) -> Callable[[TestsProgress], None]:
        """Where a worker's long run says how far it is: a coalescing message to the screen."""
        post = self.screen.post_message

        def say(progress: TestsProgress) -> None:
            post(TestsProgressed(progress))

        return say

    def on_tests_progress(self, message: TestsProgressed) -> None:
        """A long run progressed: tests done of pytest's count and the time taken, on the status line."""
        if self.biting:
            self.host.set_status(f"bite-check: {message.progress.words()} (escape cancels)")
        elif self.tabling:  # after a sweep: its words come back when the table is in (on_table)
            self.host.set_status(f"truth table: {message.progress.words()}")

    def on_progress(self, message: BiteProgress) -> None:
        """A sweep progressed (a report arriving after the run ended is not news: the status stays final)."""
        if not self.biting:
            return
        self.host.set_status(f"bite-check: {message.done}/{message.total} hunks done (escape cancels)")

    def worker_ended(self) -> None:
        """The bite worker is gone: if it never said how the run ended, the screen must not say it still runs.

        Its BiteFinished is handled before the worker's end is (it was posted first),
        so a run still marked as going here ended without a report (killed, cancelled).
        """
        if not self.biting:
            return
        self.biting = False
        self.host.set_status("bite-check stopped without a report (b checks again)")

    def on_finished(self, message: BiteFinished) -> None:
        """The run ended: record the report, recompute the findings with it, say how it went."""
        self.biting = False
        if message.report is None:
            self.host.set_status(f"bite-check stopped: {message.error}")
            self.screen.notify(visible(message.error or "bite-check failed"), severity="error", markup=False)
            return
        report = message.report
        self.ledger.add_report(report)
        if report.baseline.reason != "cancelled":
            self.show_left_out(report)
        for path in dict.fromkeys(r.file for r in report.results):
            self.host.evidence_changed(path)
        self.host.findings_part.compute(report)  # toothless-hunk / baseline-red join the findings
        self.screen.query_one(ReviewHeader).status = ""  # stored results, if any were shown, are replaced
        if self._whole and not self.cancel_event.is_set():
            self._make_table(report)  # a whole-branch sweep: its truth table, then both into the store
        counts = run_words(report.results, report.summary())
        if self.cancel_event.is_set():
            self._said = f"bite-check cancelled: {counts or 'nothing checked'}"
        elif report.baseline.status != "green":
            self._said = f"bite-check: baseline {report.baseline.status} — nothing can be learned: {counts}"
        else:
            selection = report.selection
            self._said = f"bite-check done: {counts or 'no hunks'}{' — ' + selection if selection else ''}"
        self.host.set_status(self._said)
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
        if not self.session.evidence_read:
            return  # before the first paint: nothing is read yet (bites come with a sweep or the store)
        h = self.host.diff_view.current_hunk
        result = self.ledger.bites.get(h.key) if h is not None else None
        baseline = self.ledger.baseline
        if result is None and baseline is None and not self.screen.query("#results"):
            return  # nothing to show, and no panel yet to update
        panel = self.panel()
        panel.show_result(result, baseline)
        if (result is not None or baseline is not None) and panel.has_class("-hidden"):
            if self.screen.size.height >= SHORT_SCREEN:
                panel.remove_class("-hidden")
            elif not self._said_short:
                # A short terminal: the diff keeps the room; `r` brings the panel (it then takes half).
                self._said_short = True
                self.screen.notify("results are ready: r shows them (the diff keeps the room on a short screen)",
                                   timeout=4)

    def toggle_results(self) -> None:
        """Show or hide the results panel."""
        panel = self.panel()
        if panel.result is None and panel.baseline is None:
            self.show_result()  # a panel mounted just now says how to get a result
        panel.toggle_class("-hidden")

    def matrix(self) -> None:
        """Open the test x hunk matrix: a column per bite-checked hunk (and guard), labelled file:line."""
        from reviewui.ui.screens.matrix import (  # DataTable: not before the first paint
            COULD_NOT_RUN, MatrixHunk, MatrixScreen, hunk_label)

        columns: list[MatrixHunk] = []
        bit: set[tuple[str, str]] = set()
        for r in self.ledger.bite_results():
            f = self.session.diff.file(r.file)
            key = f"{r.file}:{r.index}"
            label = hunk_label(f.hunks[r.index]) if f and r.index < len(f.hunks) else f"{r.file}:#{r.index + 1}"
            columns.append(MatrixHunk(key, label, r.verdict, ran=r.verdict not in COULD_NOT_RUN))
            if r.verdict == "bites":
                bit |= {(key, t) for t in r.failing_tests}
            for n, g in enumerate(r.guards):  # a column per guard revert, after its hunk
                gkey = f"{key}#{n}"
                columns.append(MatrixHunk(gkey, f"↳{g.file}:{g.line}", f"{g.kind} {g.verdict}",
                                          ran=g.verdict not in COULD_NOT_RUN))
                if g.verdict == "bites":
                    bit |= {(gkey, t) for t in g.failing_tests}
        self.screen.app.push_screen(MatrixScreen(columns, list(self.ledger.baseline_tests), bit))

    # --- the evidence store and the truth table ------------------------------

    def show_left_out(self, report: BiteReport) -> None:
        """Say in the header which red tests the sweep left out: old ones quarantined, the branch's own red."""
        header = self.screen.query_one(ReviewHeader)
        header.quarantined = len(report.baseline.quarantined)
        header.red_own = len(report.baseline.own_red)

    def load_stored(self) -> None:
        """Read what the evidence store holds for this review, off the UI thread (a start-up job)."""

        def work() -> None:
            self.screen.post_message(StoredLoaded(self.session.stored()))

        self.thread(work, group="stored", name="read the evidence store")

    def on_stored(self, message: StoredLoaded) -> None:
        """Stored evidence arrived: a current sweep becomes the ledger's, a stale one is only named."""
        stored = message.stored
        if self.biting or self.ledger.report is not None:
            self.host.startup.settled("stored")  # a sweep of this review already ran: it is newer
            return
        self.ledger.add_stored(stored)
        if stored.notice:
            self.screen.notify(visible(stored.notice), severity="warning", markup=False)
        words = self.ledger.stored_words()
        if words:
            self.screen.query_one(ReviewHeader).status = visible(f"{words} (B reruns)")
        if stored.bite is not None and stored.bite.current:
            for path in dict.fromkeys(r.file for r in stored.bite.value.results):
                self.host.evidence_changed(path)
            self.host.findings_part.compute(stored.bite.value)
            self.show_left_out(stored.bite.value)
            self.show_result()
        self.host.startup.settled("stored")

    def _make_table(self, report: BiteReport) -> None:
        """Make the sweep's truth table in a worker, then keep sweep, table and findings in the store."""
        cancel = self.cancel_event
        post = self.screen.post_message
        self.tabling = True

        def work() -> None:
            try:
                table = self.session.tests_table(report, cancel=cancel, cache=self.cache, on_tests=self._tests_sink())
            except ReviewError as e:
                post(TruthTableReady(None, str(e)))
                self.session.save_evidence(report)
                return
            try:
                self.session.claims(cancel=cancel)  # the agent's test commands, rerun: findings join
            except ReviewError:
                pass  # the sweep ran, so the sandbox is there: a claim that cannot rerun says so itself
            self.session.save_evidence(report, table, self.session.findings(report, table))
            post(TruthTableReady(table))

        self.thread(work, group="tests-table", name="truth table")

    def on_table(self, message: TruthTableReady) -> None:
        """The truth table arrived: into the ledger, and its findings join the rest; the status line
        says again how the sweep ended (the table's progress had taken its place)."""
        self.tabling = False
        if not self.biting and self._said:
            self.host.set_status(self._said)
        if message.table is None:
            self.screen.notify(visible(f"truth table: {message.error}"), severity="warning", markup=False)
            return
        self.ledger.add_truth_table(message.table)
        self.host.findings_part.compute(self.ledger.report)

    def tests_table(self) -> None:
        """Open the per-test truth table."""
        from reviewui.ui.screens.tests_table import TestsTableScreen  # DataTable: not before the first paint

        self.screen.app.push_screen(TestsTableScreen(self.ledger.truth_table, self.ledger.stored_words()))

def run_words(results: Sequence[HunkResult], summary: dict[str, int]) -> str:
    """`1 bite, 1 toothless`: a run's verdicts in words; a revert that only removes a name counts by its guards."""
    name_only = [r for r in results if guard_marks.only_a_missing_name(r)]
    counts = dict(summary)
    if name_only:
        counts["broken"] = counts.get("broken", 0) - len(name_only)
    words = [verdict_count(n, v) for v, n in counts.items() if n > 0]
    if name_only:
        guards = [g for r in name_only for g in r.guards]
        words.append(f"{guard_marks.headline(guards)} ({guard_marks.NAME_ONLY_REASON})")
    return ", ".join(words)
