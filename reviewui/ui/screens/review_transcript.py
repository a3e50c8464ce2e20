"""The review screen's transcript side: `t` shows the agent's turns, `g` links turns and hunks.

A mixin of ReviewScreen. The transcript is loaded and linked to the hunks
in a worker; until then the pane says it is loading.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Sparkline, Static

from reviewui.ui.diff_rows import display_text
from reviewui.ui.messages import TranscriptReady, WorkFailed
from reviewui.ui.screens.text_prompt import TextPromptModal
from reviewui.ui.widgets.transcript_view import TranscriptView
from reviewui.core.safe_text import visible

if TYPE_CHECKING:
    from reviewui.core.session import ReviewSession
    from reviewui.ui.widgets.diff_view import DiffView

SPARK_POINTS = 120


class TranscriptActions(Screen[None]):
    """Transcript loading, the `t` switch and `g` jumps."""

    BINDINGS = [
        Binding("t", "toggle_transcript", "Transcript", tooltip="Switch between the diff and the agent's transcript"),
        Binding("g", "goto_turn", "Go to turn", tooltip="Show the transcript turn that wrote the hunk under the cursor"),
    ]

    session: "ReviewSession"
    diff_view: "DiffView"
    transcript: Any = None
    links: Any = None

    _transcript_mounted: asyncio.Event | None = None

    async def transcript_pane_ready(self) -> None:
        """Mount the transcript pane the first time it is needed; return once it is mounted.

        Not composed with the screen: widgets nobody looks at yet would only
        delay the first paint. `t` pressed while it is being mounted waits for it.
        """
        if self._transcript_mounted is not None:
            await self._transcript_mounted.wait()
            return
        self._transcript_mounted = asyncio.Event()
        pane = Vertical(
            Static(Content("loading the transcript…"), id="transcript-summary"),
            Sparkline([0.0], id="transcript-spark"),
            Static("", id="transcript-filter"),
            TranscriptView(id="transcript"),
            id="transcript-pane",
        )
        await self.query_one("#main-switch", ContentSwitcher).add_content(pane)
        self._transcript_mounted.set()

    async def start_transcript(self) -> None:
        """Mount the transcript pane and load the transcript in a worker, when the session has one."""
        if self.session.transcript_path is None:
            return
        await self.transcript_pane_ready()
        self._load_transcript()

    @work(thread=True, exclusive=True, group="transcript", exit_on_error=False)
    def _load_transcript(self) -> None:
        """Load and link off the UI thread."""
        from reviewui.core.errors import ReviewError
        from reviewui.core.transcript import link_hunks

        try:
            transcript = self.session.transcript()
        except ReviewError as e:
            self.post_message(WorkFailed("transcript", str(e)))
            self.app.call_from_thread(self.start_background)
            return
        except Exception:
            self.app.call_from_thread(self.start_background)  # the rest of the review must still run
            raise
        if transcript is None:
            return
        # Show the turns first; linking them to hunks needs every file parsed.
        self.post_message(TranscriptReady(transcript, None))
        try:
            self.session.diff.preload()
            hunks = [h for f in self.session.diff.files for h in f.hunks]
            links = link_hunks(transcript, hunks, [f.path for f in self.session.diff.files])
        except ReviewError as e:
            self.post_message(WorkFailed("transcript", str(e)))
            return
        self.post_message(TranscriptReady(transcript, links))

    @on(TranscriptReady)
    def _transcript_ready(self, message: TranscriptReady) -> None:
        if message.links is not None:
            self.links = message.links
            self.query_one(TranscriptView).set_links(message.links)
            for f in self.session.diff.files:
                self.evidence_changed(f.path)
            note = message.links.note()
            if note:  # changed files the transcript does not explain are evidence in themselves
                self.notify(display_text(note), severity="warning", markup=False)
            return
        self.transcript = t = message.transcript
        self.start_background()
        view = self.query_one(TranscriptView)
        view.set_transcript(t)
        counts: dict[str, int] = {}
        for turn in t.turns:
            for flag in turn.flags:
                counts[flag] = counts.get(flag, 0) + 1
        cumulative = t.cumulative_input()
        self.query_one("#transcript-summary", Static).update(Content.assemble(
            (visible(f"{t.format}"), "bold $accent"), f"  {len(t.turns)} turns",
            (f"  {t.skipped_lines} malformed lines skipped" if t.skipped_lines else "", "$warning"),
            f"  cumulative input {cumulative[-1] if cumulative else 0:,} tokens  ",
            ("  ".join(f"{k} {v}" for k, v in counts.items()), "$warning"),
        ))
        step = max(1, len(cumulative) // SPARK_POINTS)
        self.query_one("#transcript-spark", Sparkline).data = [float(x) for x in cumulative[::step]] or [0.0]

    def transcript_badge(self, path: str, index: int) -> tuple[str, str] | None:
        """("turn 12", tone) for a hunk, ("not in transcript", "warn"), or None without a transcript."""
        if self.links is None:
            return None
        turns = self.links.turns_for(path, index)
        if not turns:
            return ("not in transcript", "warn")
        return ("turn " + ",".join(str(n) for n in turns[:3]) + ("…" if len(turns) > 3 else ""), "info")

    async def action_toggle_transcript(self) -> None:
        switcher = self.query_one("#main-switch", ContentSwitcher)
        if switcher.current == "transcript-pane":
            switcher.current = "diff-pane"
            self.diff_view.focus()
            return
        if self.session.transcript_path is None:
            self.notify("No transcript: pass --transcript FILE, or put one at .reviewui/transcript.jsonl",
                        severity="warning")
            return
        await self.transcript_pane_ready()
        switcher.current = "transcript-pane"
        self.query_one(TranscriptView).focus()

    def action_goto_turn(self) -> None:
        h = self.diff_view.current_hunk
        if h is None or self.links is None:
            self.notify("No transcript loaded" if self.links is None else "No hunk under the cursor",
                        severity="warning")
            return
        turns = self.links.turns_for(h.file, h.index)
        if not turns:
            self.notify("No turn of the transcript wrote this hunk", severity="warning")
            return
        # Links exist only once the transcript is loaded, so its pane is mounted.
        self.query_one("#main-switch", ContentSwitcher).current = "transcript-pane"
        view = self.query_one(TranscriptView)
        view.focus()
        view.goto_turn(turns[0])

    @on(TranscriptView.GotoHunks)
    def _goto_hunks(self, message: TranscriptView.GotoHunks) -> None:
        keys = self.links.hunks_for(message.index) if self.links is not None else []
        if not keys:
            self.notify(f"Turn {message.index} wrote no hunk of this diff", severity="warning")
            return
        self.query_one("#main-switch", ContentSwitcher).current = "diff-pane"
        self.diff_view.focus()
        path, index = keys[0]
        self.show(path, index)
        if len(keys) > 1:
            self.notify(f"Turn {message.index} wrote {len(keys)} hunks; showing the first", timeout=3)

    @on(TranscriptView.SearchRequested)
    def _search(self) -> None:
        view = self.query_one(TranscriptView)

        def done(text: str | None) -> None:
            view.set_search(text or "")

        self.app.push_screen(TextPromptModal("Show turns containing (empty: all)", view.search), done)

    @on(TranscriptView.FilterChanged)
    def _filter_changed(self, message: TranscriptView.FilterChanged) -> None:
        self.query_one("#transcript-filter", Static).update(Content.assemble(("showing ", "$text-muted"), visible(message.label)))

    if TYPE_CHECKING:  # provided by the other halves of ReviewScreen
        def start_background(self) -> None: ...
        def evidence_changed(self, path: str | None) -> None: ...
        def show(self, path: str, hunk: int | None = None) -> None: ...
