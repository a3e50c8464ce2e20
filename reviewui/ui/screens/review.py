"""ReviewScreen: the file list, the diff, and every review action on them.

The screen is composed of parts, one per concern (navigation, verdicts,
transcript, findings, bites, toothless guards, fixtures: `review_*.py`), each owning its
state; the review's evidence is the session's ledger. The screen wires
keys and messages to the parts, asks them all in its one `check_action`,
and redraws what the ledger says about a file when a part reports that
it changed. Attributes flow down (the screen tells the diff view which
file and which badges to show); messages flow up. When the start-up work
has settled (diff parsed, findings, transcript, last verdict) the
start-up part posts ReviewReady once and sets `startup.ready`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Static
from textual.worker import Worker, WorkerState

from reviewui.core.safe_text import visible
from reviewui.core.session import ReviewSession
from reviewui.ui import evidence_view
from reviewui.ui.messages import (AuthorshipRead, BiteFinished, BiteProgress, BiteResult, DeltaRead, DiffLoaded,
                                  FindingsReady, FixturesReady, HistoryRead, ReviewReady, StoredLoaded,
                                  TestsProgressed, TranscriptReady, TruthTableReady, VerdictRecorded,
                                  VerdictSetupChecked, WorkFailed)
from reviewui.ui.screens.review_bites import BitesPart
from reviewui.ui.screens.review_delta import DeltaPart
from reviewui.ui.screens.review_findings import FindingsPart
from reviewui.ui.screens.review_fixtures import FixturesPart
from reviewui.ui.screens.review_navigation import NavigationPart
from reviewui.ui.screens.review_part import ReviewPart
from reviewui.ui.screens.review_search import SearchPart
from reviewui.ui.screens.review_startup import StartupPart
from reviewui.ui.screens.review_transcript import TranscriptPart
from reviewui.ui.screens.review_toothless import ToothlessPart
from reviewui.ui.screens.review_verdicts import VerdictsPart
from reviewui.ui.widgets.diff_view import DiffView
from reviewui.ui.widgets.file_list import FileList
from reviewui.ui.widgets.guard_marks import line_marks, only_a_missing_name
from reviewui.ui.widgets.key_footer import KeyFooter
from reviewui.ui.widgets.review_header import ReviewHeader
from reviewui.ui.widgets.transcript_view import TranscriptView

if TYPE_CHECKING:
    from reviewui.core.evidence import EvidenceLedger


class ReviewScreen(Screen[None]):
    """The main review screen."""

    AUTO_FOCUS = "#diff"
    """The diff has the keys from the start (focused as the screen starts, not moved there after a first focus)."""

    # Its stylesheet (review.tcss) is the app's CSS_PATH: as the app's default screen,
    # Textual never reads a screen-level CSS_PATH for it.

    # Footer and help list keys in this order: moving around first, the probe last.
    # Search before bites: with both going, escape clears the search first, then cancels the bite-check.
    BINDINGS = [*NavigationPart.BINDINGS, *SearchPart.BINDINGS, *VerdictsPart.BINDINGS, *DeltaPart.BINDINGS,
                *TranscriptPart.BINDINGS, *FindingsPart.BINDINGS, *BitesPart.BINDINGS, *ToothlessPart.BINDINGS,
                *FixturesPart.BINDINGS]
    BINDINGS.append(Binding("e", "probe", "Probe", id="review.probe",
                            tooltip="Write a probe test for this hunk; run it on branch and base"))

    def __init__(self, session: ReviewSession, initial_file: str | None = None) -> None:
        super().__init__()
        self.session = session
        self.initial_file = initial_file
        self._status: dict[str, str] = {}
        """What each source of the status line says now (see set_status)."""
        self.first_paint_at: float | None = None
        """perf_counter() when the first screen was drawn (benchmarks read it)."""
        self.startup = StartupPart(self, self)
        self.navigation = NavigationPart(self, self)
        self.verdicts_part = VerdictsPart(self, self)
        self.transcript_part = TranscriptPart(self, self)
        self.findings_part = FindingsPart(self, self)
        self.bites_part = BitesPart(self, self)
        self.toothless = ToothlessPart(self, self)
        self.fixtures_part = FixturesPart(self, self)
        self.search = SearchPart(self, self)
        self.delta_part = DeltaPart(self, self)
        self.parts: tuple[ReviewPart | DeltaPart, ...] = (self.startup, self.navigation, self.search, self.verdicts_part,
                                              self.delta_part, self.transcript_part, self.findings_part,
                                              self.bites_part, self.toothless, self.fixtures_part)

    @property
    def ledger(self) -> EvidenceLedger:
        """The review's evidence ledger."""
        return self.session.evidence

    def compose(self) -> ComposeResult:
        yield ReviewHeader(self.session, id="header")
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield FileList(self.session.diff, id="files")
            # The bite results, the transcript and the fixtures panes are mounted when
            # first needed (by BitesPart, TranscriptPart, FixturesPart): every
            # widget on the first screen adds to the time it takes to appear.
            with ContentSwitcher(id="main-switch", initial="diff-pane"):
                with Vertical(id="diff-pane"):
                    yield DiffView(id="diff")
        yield Static("", id="status")
        yield KeyFooter()

    @property
    def diff_view(self) -> DiffView:
        """The diff widget."""
        return self.query_one("#diff", DiffView)

    @property
    def file_list(self) -> FileList:
        """The file list widget."""
        return self.query_one("#files", FileList)

    # --- start-up ----------------------------------------------------------

    def on_mount(self) -> None:
        files = self.file_list
        if self.initial_file:
            f = self.session.diff.file(self.initial_file)
            if f is not None:
                files.select_path(f.path)
        path = files.highlighted_path
        self.diff_view.show_file(self.session.diff.file(path) if path else None)
        self.navigation.fit_sidebar()
        # Everything else waits for the first paint, the reviewer's saved marks and
        # comments included (loading the evidence ledger and the state is ~15 ms of
        # imports alone): they are drawn one refresh later. Worker threads parsing the
        # whole diff would hold the GIL while the first screen is drawn.
        self.call_after_refresh(self.startup.after_first_paint)

    def on_unmount(self) -> None:
        for part in self.parts:
            part.close()

    async def start_transcript(self) -> None:
        """Mount the transcript pane and load the transcript (the rest of the start-up follows it)."""
        await self.transcript_part.start()

    def start_background(self) -> None:
        """Parse the whole diff and compute the findings in workers."""
        self.startup.start_background()

    @on(ReviewReady)
    def _ready(self) -> None:
        self.startup.ready.set()

    @on(DiffLoaded)
    def _diff_loaded(self) -> None:
        self.startup.on_diff_loaded()

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        """A worker that died of a bug still tells the reviewer, in one line (and does not hold up ReviewReady).

        The status line follows what runs: a bite worker gone is a bite-check no longer running.
        """
        if event.worker.group == "bite" and event.state in (WorkerState.SUCCESS, WorkerState.ERROR,
                                                            WorkerState.CANCELLED):
            self.bites_part.worker_ended()
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(visible(f"{event.worker.name or 'background work'} failed: {type(error).__name__}: {error}"),
                        severity="error", timeout=10, markup=False)
            self.startup.settled(event.worker.group)

    @on(AuthorshipRead)
    def _authorship_read(self, message: AuthorshipRead) -> None:
        self.startup.on_authorship(message)

    @on(WorkFailed)
    def _work_failed(self, message: WorkFailed) -> None:
        self.notify(visible(f"{message.what}: {message.error}"), severity="error", markup=False)
        self.startup.settled(message.what)

    # --- messages, wired to the parts --------------------------------------

    @on(DiffView.HunkChanged)
    def _hunk_changed(self) -> None:
        """The cursor moved onto another hunk: panes that follow it catch up."""
        self.bites_part.show_result()
        self.fixtures_part.follow()
        self.delta_part.follow()

    @on(FileList.FileHighlighted)
    def _file_highlighted(self, event: FileList.FileHighlighted) -> None:
        self.navigation.file_highlighted(event.path)

    @on(FindingsReady)
    def _findings_ready(self, message: FindingsReady) -> None:
        self.findings_part.on_ready(message)
        self.startup.settled("findings")

    @on(FixturesReady)
    def _fixtures_ready(self, message: FixturesReady) -> None:
        self.fixtures_part.on_ready(message)

    @on(TranscriptReady)
    def _transcript_ready(self, message: TranscriptReady) -> None:
        self.transcript_part.on_ready(message)
        if message.links is not None:
            self.startup.settled("transcript")

    @on(HistoryRead)
    def _history_read(self, message: HistoryRead) -> None:
        self.verdicts_part.on_history(message)
        self.startup.settled("history")

    @on(DeltaRead)
    def _delta_read(self, message: DeltaRead) -> None:
        self.delta_part.on_ready(message)
        self.startup.settled("delta")

    @on(VerdictRecorded)
    def _verdict_recorded(self, message: VerdictRecorded) -> None:
        self.verdicts_part.on_recorded(message)

    @on(VerdictSetupChecked)
    def _verdict_setup_checked(self, message: VerdictSetupChecked) -> None:
        self.verdicts_part.on_setup_checked(message)

    @on(BiteResult)
    def _bite_result(self, message: BiteResult) -> None:
        self.bites_part.on_result(message)

    @on(BiteProgress)
    def _bite_progress(self, message: BiteProgress) -> None:
        self.bites_part.on_progress(message)

    @on(TestsProgressed)
    def _tests_progressed(self, message: TestsProgressed) -> None:
        self.bites_part.on_tests_progress(message)

    @on(BiteFinished)
    def _bite_finished(self, message: BiteFinished) -> None:
        self.bites_part.on_finished(message)

    @on(StoredLoaded)
    def _stored_loaded(self, message: StoredLoaded) -> None:
        self.bites_part.on_stored(message)

    @on(TruthTableReady)
    def _truth_table_ready(self, message: TruthTableReady) -> None:
        self.bites_part.on_table(message)

    @on(TranscriptView.GotoHunks)
    def _goto_hunks(self, message: TranscriptView.GotoHunks) -> None:
        self.transcript_part.goto_hunks(message)

    @on(TranscriptView.SearchRequested)
    def _search(self) -> None:
        self.transcript_part.search()

    @on(TranscriptView.FilterChanged)
    def _filter_changed(self, message: TranscriptView.FilterChanged) -> None:
        self.transcript_part.filter_changed(message)

    # --- keys, wired to the parts ------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Every part has its say: the first that does not answer True decides."""
        for part in self.parts:
            allowed = part.check_action(action)
            if allowed is not True:
                return allowed
        return True

    def action_next_hunk(self) -> None:
        self.navigation.step_hunk(1)

    def action_prev_hunk(self) -> None:
        self.navigation.step_hunk(-1)

    def action_next_file(self) -> None:
        self.navigation.step_file(1)

    def action_prev_file(self) -> None:
        self.navigation.step_file(-1)

    def action_file_list(self) -> None:
        self.navigation.cycle_file_list()

    def on_resize(self) -> None:
        self.navigation.fit_sidebar()

    def action_search_diff(self) -> None:
        self.search.search()

    def action_next_match(self) -> None:
        self.search.step(1)

    def action_prev_match(self) -> None:
        self.search.step(-1)

    def action_clear_search(self) -> None:
        self.search.clear()

    def action_toggle_split(self) -> None:
        self.navigation.toggle_split()

    def action_help(self) -> None:
        from reviewui.ui.screens.help import open_help

        open_help(self.app)

    def action_toggle_reviewed(self) -> None:
        self.verdicts_part.toggle_reviewed()

    def action_comment(self) -> None:
        self.verdicts_part.comment()

    def action_verdict(self, verdict: str) -> None:
        self.verdicts_part.verdict(verdict)

    def action_history(self) -> None:
        self.verdicts_part.read_history(show=True)

    def action_delta_only(self) -> None:
        self.delta_part.toggle_only()

    def action_interdiff(self) -> None:
        self.delta_part.toggle_interdiff()

    async def action_toggle_transcript(self) -> None:
        await self.transcript_part.toggle()

    def action_goto_turn(self) -> None:
        self.transcript_part.goto_turn()

    def action_findings(self) -> None:
        self.findings_part.show()

    def action_bite(self) -> None:
        self.bites_part.bite()

    def action_sweep(self) -> None:
        self.bites_part.sweep()

    def action_cancel_bite(self) -> None:
        self.bites_part.cancel()

    def action_matrix(self) -> None:
        self.bites_part.matrix()

    def action_tests_table(self) -> None:
        self.bites_part.tests_table()

    def action_toggle_results(self) -> None:
        self.bites_part.toggle_results()

    def action_toothless_guard(self, direction: int) -> None:
        self.toothless.toothless_guard(direction)

    def action_witness(self) -> None:
        self.toothless.witness()

    def action_toggle_fixtures(self) -> None:
        self.fixtures_part.toggle()

    def action_probe(self) -> None:
        from reviewui.ui.screens.probe import ProbeScreen

        def back(_: object = None) -> None:
            self.evidence_changed(None)  # kept probes change what a verdict would record

        self.app.push_screen(ProbeScreen(self.session, self.diff_view.current_hunk, self.ledger.state), back)

    # --- what the ledger says, drawn ---------------------------------------

    def evidence_changed(self, path: str | None) -> None:
        """Redraw what is known about file `path` (None: the file shown) on the list and the diff."""
        view = self.diff_view
        path = path or (view.file.path if view.file else None)
        if path is None:
            return
        view.set_line_marks(path, line_marks(self.ledger.bites.values(), path))  # guard reverts in the gutter
        view.set_comments(path, tuple(self.ledger.state.comments(path)))  # drawn under their hunks
        f = self.session.diff.file(path)
        if f is None:
            return
        if view.file is not None and view.file.path == path:
            view.set_badges({h.index: evidence_view.hunk_badges(self.ledger.hunk(h)) + self.delta_part.badges(path, h.index)
                             for h in f.hunks})
        self.fixtures_part.follow()  # a test seen biting this hunk calls its code: the pane says so
        hunks = f.hunks if self.startup.diff_loaded else None
        name_only = [r for r in self.ledger.bites.values() if r.file == path and only_a_missing_name(r)]
        self.file_list.set_summary(path, evidence_view.file_summary(self.ledger.file(path, hunks), name_only))
        self.navigation.fit_sidebar()  # a longer summary may want a wider list

    def transcript_in_front(self) -> bool:
        """True while the transcript pane, not the diff, is shown."""
        return self.query_one("#main-switch", ContentSwitcher).current == "transcript-pane"

    STATUS_SOURCES = ("search", "work")
    """Who may speak on the status line, first first: an active search's position over the work's news."""

    def set_status(self, text: str, source: str = "work") -> None:
        """Set what `source` says on the status bar ("" when it has nothing to say); the first source
        with something to say is shown, so clearing a search brings back how the last run went."""
        self._status[source] = text
        shown = next((self._status[s] for s in self.STATUS_SOURCES if self._status.get(s)), "")
        self.query_one("#status", Static).update(Content(visible(shown)))
