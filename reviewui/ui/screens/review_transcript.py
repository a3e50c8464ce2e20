"""The review screen's transcript part: `t` shows the agent's turns, `g` links turns and hunks.

The transcript is loaded and linked to the hunks in a worker; until then
the pane says it is loading. The links go into the ledger (the hunks'
"turn N" badges come from there). The claim findings (`claim-*`, checked by
`ReviewSession.claims()` in the sweep's worker, `claim-without-run` with
the static findings) flag the turns that make them.
"""

from __future__ import annotations

import asyncio

from typing import TYPE_CHECKING, Sequence

from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import ContentSwitcher, Static

from reviewui.ui.diff_rows import display_text
from reviewui.core.errors import ReviewError
from reviewui.ui.messages import TranscriptReady, WorkFailed
from reviewui.ui.screens.review_part import ReviewPart
from reviewui.ui.transcript_detail import CLAIM_FLAGS
from reviewui.ui.widgets.transcript_view import TranscriptView
from reviewui.core.safe_text import visible

if TYPE_CHECKING:
    from reviewui.core.findings.model import Finding
    from reviewui.core.transcript import Transcript

SPARK_POINTS = 120


def claim_flags(findings: Sequence[Finding]) -> dict[int, tuple[str, ...]]:
    """{turn index: claim flags, worst first} of the claim findings, each naming its turn as `turn N`."""
    kinds: dict[int, set[str]] = {}
    for f in findings:
        turn = (f.symbol or "").removeprefix("turn ")
        if f.kind in CLAIM_FLAGS and turn.isdigit():
            kinds.setdefault(int(turn), set()).add(f.kind)
    return {turn: tuple(k for k in CLAIM_FLAGS if k in got) for turn, got in sorted(kinds.items())}


class TranscriptPart(ReviewPart):
    """Transcript loading, the `t` switch and `g` jumps."""

    BINDINGS = [
        Binding("t", "toggle_transcript", "Transcript", id="review.transcript",
                tooltip="Switch between the diff and the agent's transcript"),
        Binding("g", "goto_turn", "Go to turn", id="review.goto_turn",
                tooltip="Show the transcript turn that wrote the hunk under the cursor"),
    ]

    _mounted: asyncio.Event | None = None
    _transcript: Transcript | None = None
    _claims: dict[int, tuple[str, ...]] = {}

    @property
    def switcher(self) -> ContentSwitcher:
        """The diff / transcript switcher."""
        return self.screen.query_one("#main-switch", ContentSwitcher)

    async def pane_ready(self) -> None:
        """Mount the transcript pane the first time it is needed; return once it is mounted.

        Not composed with the screen: widgets nobody looks at yet would only
        delay the first paint. `t` pressed while it is being mounted waits for it.
        """
        if self._mounted is not None:
            await self._mounted.wait()
            return
        from textual.widgets import Sparkline  # not at the top: nothing on the first screen needs it

        self._mounted = asyncio.Event()
        pane = Vertical(
            Static(Content("loading the transcript…"), id="transcript-summary"),
            Sparkline([0.0], id="transcript-spark"),
            Static("", id="transcript-filter"),
            TranscriptView(id="transcript"),
            id="transcript-pane",
        )
        await self.switcher.add_content(pane)
        self._mounted.set()

    async def start(self) -> None:
        """Mount the transcript pane and load the transcript in a worker, when the session has one."""
        if self.session.transcript_path is None:
            return
        await self.pane_ready()
        self.thread(self._load, group="transcript", name="transcript")

    def _load(self) -> None:
        """Load and link off the UI thread; the rest of the review starts once the turns are read."""
        post = self.screen.post_message
        try:
            transcript = self.session.transcript()
        except ReviewError as e:
            post(WorkFailed("transcript", str(e)))
            self.screen.app.call_from_thread(self.host.start_background)
            return
        except Exception:
            self.screen.app.call_from_thread(self.host.start_background)  # the rest of the review must still run
            raise
        if transcript is None:  # nothing to show: the rest of the start-up goes on without it
            self.screen.app.call_from_thread(self._without_transcript)
            return
        # Show the turns first; linking them to hunks needs every file parsed.
        post(TranscriptReady(transcript, None))
        try:
            links = self.session.link_transcript()
        except ReviewError as e:
            post(WorkFailed("transcript", str(e)))
            return
        if links is not None:
            post(TranscriptReady(transcript, links))
        else:
            self.screen.app.call_from_thread(self.host.startup.settled, "transcript")

    def _without_transcript(self) -> None:
        self.host.startup.settled("transcript")
        self.host.start_background()

    def on_ready(self, message: TranscriptReady) -> None:
        """The turns (links None), then the links, arrived."""
        if message.links is not None:
            self.ledger.set_links(message.links)
            self.screen.query_one(TranscriptView).set_links(message.links)
            for f in self.session.diff.files:
                self.host.evidence_changed(f.path)
            note = message.links.note()
            if note:  # changed files the transcript does not explain are evidence in themselves
                self.screen.notify(display_text(note), severity="warning", markup=False)
            return
        t = message.transcript
        self.host.start_background()
        self._transcript = t
        view = self.screen.query_one(TranscriptView)
        view.set_transcript(t)
        view.set_claims(self._claims)  # claim findings that arrived before the turns
        self._show_summary()
        from textual.widgets import Sparkline

        cumulative = t.cumulative_input()
        step = max(1, len(cumulative) // SPARK_POINTS)
        self.screen.query_one("#transcript-spark", Sparkline).data = [float(x) for x in cumulative[::step]] or [0.0]

    def set_claims(self, findings: Sequence[Finding]) -> None:
        """The findings arrived: flag the turns whose claims they judge."""
        self._claims = claim_flags(findings)
        if self._mounted is None or not self._mounted.is_set():
            return  # no pane (no transcript), or not mounted yet: the turns take them when they arrive
        self.screen.query_one(TranscriptView).set_claims(self._claims)
        if self._transcript is not None:
            self._show_summary()

    def _show_summary(self) -> None:
        """The pane's first line: format, turns, tokens, and how many turns carry each flag."""
        t = self._transcript
        assert t is not None
        counts: dict[str, int] = {}
        for turn in t.turns:
            for flag in (*turn.flags, *self._claims.get(turn.index, ())):
                counts[flag] = counts.get(flag, 0) + 1
        cumulative = t.cumulative_input()
        self.screen.query_one("#transcript-summary", Static).update(Content.assemble(
            (visible(f"{t.format}"), "bold $accent"), f"  {len(t.turns)} turns",
            (f"  {t.skipped_lines} malformed lines skipped" if t.skipped_lines else "", "$warning"),
            f"  cumulative input {cumulative[-1] if cumulative else 0:,} tokens  ",
            ("  ".join(f"{k} {v}" for k, v in counts.items()), "$warning"),
            # what the loader has to say about the file itself (where it broke off, what it lacks)
            *(("\n" + visible(note), "$text-muted") for note in t.notes),
        ))

    async def toggle(self) -> None:
        """Switch between the diff and the transcript."""
        if self.switcher.current == "transcript-pane":
            self.switcher.current = "diff-pane"
            self.host.diff_view.focus()
            return
        if self.session.transcript_path is None:
            self.screen.notify("No transcript: pass --transcript FILE, or put one at .reviewui/transcript.jsonl",
                               severity="warning")
            return
        await self.pane_ready()
        self.switcher.current = "transcript-pane"
        self.screen.query_one(TranscriptView).focus()

    async def show_turn(self, index: int) -> None:
        """Show turn `index` of the transcript (a claim finding's turn, say)."""
        if self.session.transcript_path is None:
            return
        await self.pane_ready()
        self.switcher.current = "transcript-pane"
        view = self.screen.query_one(TranscriptView)
        view.focus()
        view.goto_turn(index)

    def goto_turn(self) -> None:
        """Show the turn that wrote the hunk under the cursor."""
        h = self.host.diff_view.current_hunk
        links = self.ledger.links
        if h is None or links is None:
            self.screen.notify("No transcript loaded" if links is None else "No hunk under the cursor",
                               severity="warning")
            return
        turns = links.turns_for(h.file, h.index)
        if not turns:
            self.screen.notify("No turn of the transcript wrote this hunk", severity="warning")
            return
        # Links exist only once the transcript is loaded, so its pane is mounted.
        self.switcher.current = "transcript-pane"
        view = self.screen.query_one(TranscriptView)
        view.focus()
        view.goto_turn(turns[0])

    def goto_hunks(self, message: TranscriptView.GotoHunks) -> None:
        """Show the first hunk a turn wrote."""
        links = self.ledger.links
        keys = links.hunks_for(message.index) if links is not None else []
        if not keys:
            self.screen.notify(f"Turn {message.index} wrote no hunk of this diff", severity="warning")
            return
        self.switcher.current = "diff-pane"
        self.host.diff_view.focus()
        path, index = keys[0]
        self.host.navigation.show(path, index)
        if len(keys) > 1:
            self.screen.notify(f"Turn {message.index} wrote {len(keys)} hunks; showing the first", timeout=3)

    def search(self) -> None:
        """Ask for the text the turns shown must contain."""
        view = self.screen.query_one(TranscriptView)

        def done(text: str | None) -> None:
            view.set_search(text or "")

        from reviewui.ui.screens.text_prompt import TextPromptModal

        self.screen.app.push_screen(TextPromptModal("Show turns containing (empty: all)", view.search), done)

    def filter_changed(self, message: TranscriptView.FilterChanged) -> None:
        """Say which turns are shown."""
        self.screen.query_one("#transcript-filter", Static).update(
            Content.assemble(("showing ", "$text-muted"), visible(message.label)))
