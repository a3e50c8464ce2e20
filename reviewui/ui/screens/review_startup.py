"""The review screen's start-up part: what runs after the first paint, and when it has settled.

After the first paint: the last verdict is read and the transcript loaded
(the findings need it), then the whole diff is parsed and the findings
computed, all in workers. Each job reports here when it is done or failed;
when all have, the screen gets ReviewReady once and `ready` is set (tests
and tools wait on it instead of polling).
"""

from __future__ import annotations

import asyncio
import time

from textual.screen import Screen

from reviewui.core.errors import ReviewError
from reviewui.ui.messages import AuthorshipRead, DiffLoaded, ReviewReady, WorkFailed
from reviewui.ui.screens.review_part import ReviewHost, ReviewPart


STARTUP = frozenset({"diff", "findings", "transcript", "history", "sandbox", "stored", "authorship", "delta"})
"""The start-up jobs ReviewReady waits for (also the names of the worker groups that run them)."""


class StartupPart(ReviewPart):
    """The start-up sequence and its ReviewReady."""

    diff_loaded = False
    """True once every file's hunks are parsed."""

    def __init__(self, screen: Screen[None], host: ReviewHost) -> None:
        super().__init__(screen, host)
        self.ready = asyncio.Event()
        """Set with ReviewReady: the start-up work has settled."""
        self._pending = set(STARTUP)

    async def after_first_paint(self) -> None:
        """Draw the saved evidence, then start the slower work: the last verdict, the transcript, the rest."""
        self.host.first_paint_at = time.perf_counter()
        self.host.verdicts_part.load_state()
        self.host.evidence_changed(None)  # the reviewer's marks and comments on the file shown
        # Whether bubblewrap can run takes a process start: after the first paint, not before it.
        self.thread(self._check_sandbox, group="sandbox", name="check the sandbox")
        self.host.bites_part.load_stored()  # the evidence store's sweep of this head, if any
        self.host.verdicts_part.read_history(show=False)
        self.host.delta_part.start()  # what changed since your verdict
        if self.session.transcript_path is not None:
            # The transcript first: parsing the diff and the findings would only
            # compete with it for the GIL (and the findings need it anyway).
            await self.host.start_transcript()
        else:
            self.settled("transcript")
            self.start_background()

    def _check_sandbox(self) -> None:
        """Learn whether agent code will run without bubblewrap (off the UI thread); the header says so."""
        from reviewui.core.run import sandbox

        unsandboxed = sandbox.level() == "none"
        self.screen.app.call_from_thread(self._sandbox_known, unsandboxed)

    def _sandbox_known(self, unsandboxed: bool) -> None:
        from reviewui.ui.widgets.review_header import ReviewHeader

        self.screen.query_one(ReviewHeader).unsandboxed = unsandboxed
        self.settled("sandbox")

    def start_background(self) -> None:
        """Parse the whole diff, compute the findings and read the authorship notes, in workers."""
        self.thread(self._preload_diff, group="diff", name="parse the diff")
        self.host.findings_part.compute()
        self.thread(self._read_authorship, group="authorship", name="read the authorship notes")

    def _read_authorship(self) -> None:
        """Who wrote each head line, from the branch's git-ai notes (git blame per file: off the UI thread)."""
        try:
            authorship = self.session.authorship()
        except ReviewError as e:  # a bad `authorship-notes-ref`: said, and the review goes on without it
            self.screen.post_message(WorkFailed("authorship", str(e)))
            return
        self.screen.post_message(AuthorshipRead(authorship))

    def on_authorship(self, message: AuthorshipRead) -> None:
        """The notes were read: the diff draws each line's author in the gutter and each hunk's on its header."""
        from reviewui.ui.widgets.author_marks import AuthorMarks

        files = [f.path for f in self.session.diff.files]
        self.host.diff_view.set_authors(AuthorMarks.of(message.authorship, files))
        self.settled("authorship")

    def _preload_diff(self) -> None:
        """Fetch every patch in one git call and parse every file (off the UI thread)."""
        self.session.diff.preload()
        for f in self.session.diff.files:
            f.hunks  # noqa: B018 - parse now, off the UI thread
        self.screen.post_message(DiffLoaded())

    def on_diff_loaded(self) -> None:
        """Every file is parsed: count progress, redraw every file's evidence (stale marks: _keep_marks)."""
        self.diff_loaded = True
        self.host.verdicts_part.refresh_progress()
        for f in self.session.diff.files:
            self.host.evidence_changed(f.path)
        self.settled("diff")

    def settled(self, job: str) -> None:
        """Start-up job `job` is done (or failed); post ReviewReady once all of them are."""
        if not self._pending:
            return
        self._pending.discard(job)
        if job in ("diff", "delta"):
            self._keep_marks()
        if not self._pending:
            self.screen.post_message(ReviewReady())

    def _keep_marks(self) -> None:
        """Forget the marks whose hunk text is gone, once every file is parsed and the marks of files
        renamed since your verdict have moved with them (the delta); recount progress."""
        if not self.diff_loaded or "delta" in self._pending:
            return
        verdicts = self.host.verdicts_part
        self.ledger.state.drop_stale(verdicts.all_hunks())
        verdicts.refresh_progress()
