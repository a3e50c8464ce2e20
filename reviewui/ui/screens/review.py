"""ReviewScreen: the file list, the diff, and every review action on them.

Attributes flow down (the screen tells the diff view which file and which
badges to show); messages flow up (the diff view reports the hunk under
the cursor). Slow work runs in thread workers that report with the
messages in reviewui/ui/messages.py. The screen's keys live in mixins by
subject: review_bites, review_findings, review_transcript, review_verdicts.
"""

from __future__ import annotations

import time
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Static
from textual.worker import Worker, WorkerState

from reviewui.core.session import ReviewSession
from reviewui.ui.messages import DiffLoaded, FixturesReady, WorkFailed
from reviewui.ui.screens.review_bites import BiteActions
from reviewui.ui.screens.review_findings import FindingsActions
from reviewui.ui.screens.review_transcript import TranscriptActions
from reviewui.ui.screens.review_verdicts import VerdictActions
from reviewui.ui.widgets.diff_view import Badge, DiffView
from reviewui.ui.widgets.file_list import FileList
from reviewui.ui.widgets.fixtures_pane import FixturesPane
from reviewui.ui.widgets.key_footer import KeyFooter
from reviewui.ui.widgets.results_panel import ResultsPanel
from reviewui.ui.widgets.review_header import ReviewHeader

def verdict_count(n: int, verdict: str) -> str:
    """`1 bite`, `2 bites`, `1 toothless`: a count of bite verdicts as a person would say it."""
    return f"{n} bite" if verdict == "bites" and n == 1 else f"{n} {verdict}"


BITE_TONE = {"bites": "good", "toothless": "bad", "uncovered": "warn", "broken": "warn",
             "timeout": "warn", "error": "bad", "skipped": "info"}
BITE_STYLE = {"bites": "$success", "toothless": "$error", "uncovered": "$warning", "broken": "$warning",
              "timeout": "$warning", "error": "$error", "skipped": "$text-muted"}


class NavigationKeys(Screen[None]):
    """The review screen's moving-around keys, first in the footer and the help.

    Bindings are listed base class first, so this deepest base puts the keys
    a reviewer needs most ahead of the evidence and verdict keys.
    """

    BINDINGS = [
        Binding("n", "next_hunk", "Next hunk", tooltip="Next hunk, across files"),
        Binding("p", "prev_hunk", "Prev hunk", tooltip="Previous hunk, across files"),
        Binding("right_square_bracket", "next_file", "Next file", key_display="]"),
        Binding("left_square_bracket", "prev_file", "Prev file", key_display="["),
        Binding("s", "toggle_split", "Side-by-side", tooltip="Toggle unified / side-by-side"),
        Binding("question_mark", "help", "Help", key_display="?"),
    ]


class ReviewScreen(BiteActions, FindingsActions, TranscriptActions, VerdictActions, NavigationKeys):
    """The main review screen."""

    CSS_PATH = "review.tcss"

    BINDINGS = [
        Binding("f", "toggle_fixtures", "Fixtures", tooltip="Show what the tests near the cursor are made of"),
        Binding("e", "probe", "Probe", tooltip="Write a probe test for this hunk; run it on branch and base"),
    ]

    def __init__(self, session: ReviewSession, initial_file: str | None = None) -> None:
        super().__init__()
        self.session = session
        self.initial_file = initial_file
        self.findings: list[Any] = []
        self.bites: dict[tuple[str, int], Any] = {}
        self.diff_loaded = False
        self.fixture_report: Any = None
        self.first_paint_at: float | None = None
        """perf_counter() when the first screen was drawn (benchmarks read it)."""

    def compose(self) -> ComposeResult:
        yield ReviewHeader(self.session, id="header")
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield FileList(self.session.diff, id="files")
            # The bite results, the transcript and the fixtures panes are mounted when
            # first needed (see results_panel, start_transcript, fixtures_pane): every
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

    def results_panel(self) -> ResultsPanel:
        """The bite results under the diff, mounted the first time it is asked for."""
        found = self.query(ResultsPanel)
        if found:
            return found.first()
        panel = ResultsPanel(id="results", classes="-hidden")
        self.query_one("#diff-pane").mount(panel)
        return panel

    def fixtures_pane(self) -> FixturesPane:
        """The fixtures pane beside the diff, mounted (hidden) the first time it is asked for."""
        found = self.query(FixturesPane)
        if found:
            return found.first()
        pane = FixturesPane(id="fixtures", classes="-hidden")
        self.query_one("#body").mount(pane)
        return pane

    def on_mount(self) -> None:
        files = self.file_list
        if self.initial_file:
            f = self.session.diff.file(self.initial_file)
            if f is not None:
                files.select_path(f.path)
        path = files.highlighted_path
        self.diff_view.show_file(self.session.diff.file(path) if path else None)
        self.diff_view.focus()
        self.load_state()
        self.init_bites()
        self.evidence_changed(None)
        # Everything slower waits for the first paint: worker threads parsing the
        # whole diff would otherwise hold the GIL while the first screen is drawn.
        self.call_after_refresh(self._after_first_paint)

    async def _after_first_paint(self) -> None:
        self.first_paint_at = time.perf_counter()
        self.show_last_verdict()
        if self.session.transcript_path is not None:
            # The transcript first: parsing the diff and the findings would only
            # compete with it for the GIL (and the findings need it anyway).
            await self.start_transcript()
        else:
            self.start_background()

    def start_background(self) -> None:
        """Parse the whole diff and compute the findings in workers."""
        self._preload_diff()
        self.compute_findings()

    @work(thread=True, exclusive=True, group="preload", exit_on_error=False)
    def _preload_diff(self) -> None:
        """After the first paint: fetch every patch in one git call and parse every file."""
        self.session.diff.preload()
        for f in self.session.diff.files:
            f.hunks  # noqa: B018 - parse now, off the UI thread
        self.post_message(DiffLoaded())

    @on(DiffLoaded)
    def _diff_loaded(self) -> None:
        self.diff_loaded = True
        self.state.drop_stale(self.all_hunks())
        self.refresh_progress()
        for f in self.session.diff.files:
            self.evidence_changed(f.path)

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        """A worker that died of a bug still tells the reviewer, in one line."""
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(f"{event.worker.name or 'background work'} failed: {type(error).__name__}: {error}",
                        severity="error", timeout=10)

    @on(DiffView.HunkChanged)
    def _hunk_changed(self, event: DiffView.HunkChanged) -> None:
        """The cursor moved onto another hunk: panes that follow it catch up."""
        self._show_result()
        self._follow_fixtures()

    def action_probe(self) -> None:
        from reviewui.ui.screens.probe import ProbeScreen

        def back(_: object = None) -> None:
            self.evidence_changed(None)  # kept probes change what a verdict would record

        self.app.push_screen(ProbeScreen(self.session, self.diff_view.current_hunk, self.state), back)

    def action_toggle_fixtures(self) -> None:
        pane = self.fixtures_pane()
        pane.toggle_class("-hidden")
        if not pane.has_class("-hidden"):
            if self.fixture_report is None:
                self.compute_fixtures()
            self._follow_fixtures()

    def _follow_fixtures(self) -> None:
        found = self.query(FixturesPane)
        if not found:
            return
        pane = found.first()
        if pane.has_class("-hidden"):
            return
        view = self.diff_view
        pane.show(self.fixture_report, view.current_hunk, view.file.role if view.file else "")

    @work(thread=True, exclusive=True, group="fixtures", exit_on_error=False)
    def compute_fixtures(self) -> None:
        """Analyse the branch's tests off the UI thread."""
        from reviewui.core.errors import ReviewError

        try:
            report = self.session.fixtures()
        except ReviewError as e:
            self.post_message(WorkFailed("fixtures", str(e)))
            return
        self.post_message(FixturesReady(report))

    @on(FixturesReady)
    def _fixtures_ready(self, message: FixturesReady) -> None:
        self.fixture_report = message.report
        self._follow_fixtures()

    # --- evidence shown on hunks and files -----------------------------------

    def bite_results(self) -> list[Any]:
        """Bite verdicts so far, in diff order."""
        return list(self.bites.values())

    def current_findings(self) -> list[Any]:
        """The findings computed so far."""
        return self.findings

    def hunk_badges(self, path: str) -> dict[int, list[Badge]]:
        """Badges for each hunk of file `path`: bite verdict, reviewed, findings, comments."""
        f = self.session.diff.file(path)
        if f is None:
            return {}
        badges: dict[int, list[Badge]] = {}
        comments = self.state.comments(f.path)
        for h in f.hunks:
            row: list[Badge] = []
            result = self.bites.get((f.path, h.index))
            if result is not None:
                row.append(Badge(result.verdict, BITE_TONE.get(result.verdict, "info")))
            if self.is_reviewed(h):
                row.append(Badge("✓ reviewed", "good"))
            found = [x for x in self.findings if x.file == f.path and x.line and h.new_start <= x.line < h.new_start + max(h.new_len, 1)]
            if found:
                worst = "bad" if any(x.severity == "error" for x in found) else "warn"
                row.append(Badge(f"{len(found)} finding{'s' if len(found) > 1 else ''}", worst))
            linked = self.transcript_badge(f.path, h.index)
            if linked is not None:
                row.append(Badge(*linked))
            mine = [c for c in comments if c.header == h.header]
            if mine:
                # the comment itself, not a count: the reviewer reads it back where they wrote it
                first = " ".join(mine[-1].text.split())
                first = first if len(first) <= 60 else first[:59] + "…"
                more = f" (+{len(mine) - 1})" if len(mine) > 1 else ""
                row.append(Badge(f"💬 {first}{more}", "info"))
            badges[h.index] = row
        return badges

    def evidence_changed(self, path: str | None) -> None:
        """Redraw what is known about file `path` (None: the file shown) on the list and the diff."""
        view = self.diff_view
        path = path or (view.file.path if view.file else None)
        if path is None:
            return
        if view.file is not None and view.file.path == path:
            view.set_badges(self.hunk_badges(path))
        self.file_list.set_summary(path, self.file_summary(path))

    def file_summary(self, path: str) -> Content | None:
        """A short line of evidence for the file list."""
        f = self.session.diff.file(path)
        if f is None:
            return None
        parts: list[str | tuple[str, str]] = []
        verdicts = [r.verdict for (p, _), r in self.bites.items() if p == path]
        for verdict in ("bites", "toothless", "uncovered", "broken", "timeout", "error", "skipped"):
            n = verdicts.count(verdict)
            if n:
                parts.append((f"{verdict_count(n, verdict)} ", BITE_STYLE.get(verdict, "$text-muted")))
        found = [x for x in self.findings if x.file == path]
        if found:
            tone = "$error" if any(x.severity == "error" for x in found) else "$warning"
            parts.append((f"⚑{len(found)} ", tone))
        if self.diff_loaded and f.hunks:
            done = sum(1 for h in f.hunks if self.is_reviewed(h))
            if done:
                parts.append((f"✓{done}/{len(f.hunks)}", "$success"))
        return Content.assemble(*parts) if parts else None

    # --- file selection ------------------------------------------------------

    @on(FileList.FileHighlighted)
    def _file_highlighted(self, event: FileList.FileHighlighted) -> None:
        path = event.path
        view = self.diff_view
        if path and (view.file is None or view.file.path != path):
            view.show_file(self.session.diff.file(path))
            view.set_badges(self.hunk_badges(path))

    def show(self, path: str, hunk: int | None = None) -> None:
        """Show file `path` with the cursor on hunk `hunk` (the list follows)."""
        view = self.diff_view
        if view.file is None or view.file.path != path:
            f = self.session.diff.file(path)
            if f is None:
                return
            view.show_file(f, hunk)
            view.set_badges(self.hunk_badges(f.path))
            self.file_list.select_path(f.path)
        elif hunk is not None:
            view.goto_hunk(hunk)

    def jump_to(self, path: str, line: int | None) -> None:
        """Show `path` with the cursor on the hunk holding branch-side `line` (or the first)."""
        f = self.session.diff.file(path)
        if f is None:
            self.notify(f"{path} is not changed on this branch", severity="warning")
            return
        index = 0
        if line:
            for h in f.hunks:
                if h.new_start <= line < h.new_start + max(h.new_len, 1):
                    index = h.index
                    break
        self.show(path, index)

    # --- actions -----------------------------------------------------------

    def action_next_hunk(self) -> None:
        """Next hunk; past the last hunk of a file, the first hunk of the next file with hunks."""
        if self.diff_view.step_hunk(1):
            return
        self._jump_file(1, first=True)

    def action_prev_hunk(self) -> None:
        """Previous hunk; before the first, the last hunk of the previous file with hunks."""
        if self.diff_view.step_hunk(-1):
            return
        self._jump_file(-1, first=False)

    def _jump_file(self, direction: int, first: bool) -> None:
        paths = self.file_list.paths
        current = self.diff_view.file.path if self.diff_view.file else None
        i = paths.index(current) if current in paths else -1
        i += direction
        while 0 <= i < len(paths):
            f = self.session.diff.file(paths[i])
            if f is not None and f.hunks:
                self.show(f.path, 0 if first else len(f.hunks) - 1)
                return
            i += direction
        self.notify("No more hunks", timeout=2)

    def action_next_file(self) -> None:
        path = self.file_list.step(1)
        if path:
            self.show(path)
        else:
            self.notify("last file: ] has nowhere to go ([ goes back)", timeout=3)

    def action_prev_file(self) -> None:
        path = self.file_list.step(-1)
        if path:
            self.show(path)
        else:
            self.notify("first file: [ has nowhere to go (] goes on)", timeout=3)

    def action_toggle_split(self) -> None:
        self.diff_view.split = not self.diff_view.split

    def action_help(self) -> None:
        from reviewui.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self))

    def set_status(self, text: str) -> None:
        """Show a line in the status bar (progress of long work, results)."""
        self.query_one("#status", Static).update(Content(text))
