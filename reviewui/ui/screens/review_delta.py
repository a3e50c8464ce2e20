"""The review screen's since-verdict part: what changed since your latest verdict on the branch.

At start-up a worker asks the session for the delta (core/delta): each hunk
now `new`, `changed` or `unchanged` since the head you judged. The header
says how many; changed and new hunks carry a badge; `d` shows only them
(the file list keeps the files that have one, the diff hides the unchanged
hunks) and back; `i` opens the interdiff of the hunk under the cursor beside
the diff. Both keys are disabled when there is no verdict of yours. Your
reviewed marks follow a file renamed since (the rest of their keeping is
the state's: a mark holds while its hunk's text is unchanged).

It is a part like the others (keys, check_action, a worker) but sees the
screen through `DeltaHost`, what it needs of it, so this module stays below
the screen rather than in the screen's import circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol

from textual.binding import Binding
from textual.screen import Screen

from reviewui.core.errors import ReviewError
from reviewui.core.session import ReviewSession
from reviewui.ui.messages import DeltaRead, WorkFailed
from reviewui.ui.widgets.review_header import ReviewHeader

if TYPE_CHECKING:
    from reviewui.core.delta.model import Delta
    from reviewui.core.delta.since import Since
    from reviewui.ui.widgets.diff_paint import Badge
    from reviewui.ui.widgets.diff_view import DiffView
    from reviewui.ui.widgets.file_list import FileList
    from reviewui.ui.widgets.interdiff_pane import InterdiffPane

ACTIONS = ("delta_only", "interdiff")
_BADGES = {"changed": ("changed since", "warn"), "new": ("new since", "info")}


class Navigation(Protocol):
    """The review screen's navigation, as far as this part moves it."""

    def show(self, path: str, hunk: int | None = None) -> None: ...

    def fit_sidebar(self) -> None: ...


class DeltaHost(Protocol):
    """What this part needs of the review screen besides its Textual side."""

    @property
    def session(self) -> ReviewSession: ...

    @property
    def navigation(self) -> Navigation: ...

    @property
    def file_list(self) -> FileList: ...

    @property
    def diff_view(self) -> DiffView: ...

    def evidence_changed(self, path: str | None) -> None: ...

    def transcript_in_front(self) -> bool: ...

    def set_status(self, text: str, source: str = "work") -> None: ...


class DeltaPart:
    """The since-verdict view: its header words, badges, the `d` filter and the `i` interdiff pane."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("d", "delta_only", "Changed since", id="review.delta_only",
                tooltip="Only the hunks changed or new since your verdict (d again: every hunk)"),
        Binding("i", "interdiff", "Interdiff", id="review.interdiff",
                tooltip="Beside the diff: what changed in the hunk under the cursor since your verdict"),
    ]

    def __init__(self, screen: Screen[None], host: DeltaHost) -> None:
        self.screen = screen
        """The review screen, as Textual sees it (queries, messages, workers, notices)."""
        self.host = host
        """The same screen, as this part uses it (DeltaHost)."""
        self.session = host.session
        self.since: Since | None = None
        """Where the delta starts (your verdict), None while unknown or when there is none."""
        self.delta: Delta | None = None
        """What changed since, None while unknown or without a verdict of yours."""
        self.only = False
        """True while only the changed and new hunks are shown (`d`)."""

    def start(self) -> None:
        """Compute the delta in a worker (git work); DeltaRead or WorkFailed comes back."""
        self.screen.run_worker(self._read, name="what changed since your verdict", group="delta", thread=True,
                               exclusive=True, exit_on_error=False)

    def close(self) -> None:
        """Nothing to release (its worker is the screen's)."""

    def _read(self) -> None:
        try:
            found = self.session.delta()
        except ReviewError as e:
            self.screen.post_message(WorkFailed("delta", str(e)))
            return
        self.screen.post_message(DeltaRead(found))

    def on_ready(self, message: DeltaRead) -> None:
        """The delta is known: header words, marks of renamed files, badges redrawn."""
        if message.found is None:
            return
        self.since, self.delta = message.found
        self.screen.query_one(ReviewHeader).since = f"{self.since.words()}: {self.delta.words()}"
        state = self.session.evidence.state
        if self.delta.renamed:
            state.follow_renames(self.delta.renamed)
        # A mark holds while the hunk's text is unchanged; the delta tells bytes apart too (an undecodable
        # byte that changed reads the same decoded): a hunk changed since is not the hunk marked.
        stale = {(h.file, h.digest) for h in self.delta.hunks if h.state in ("changed", "new") and h.digest}
        for m in state.marks():
            if (m.file, m.digest) in stale:
                state.unmark(m.file, m.header)
        for path in dict.fromkeys(h.file for h in self.delta.hunks if h.state != "gone"):
            self.host.evidence_changed(path)

    def check_action(self, action: str) -> bool | None:
        """Whether `action` may run now: its keys are disabled without a verdict of yours, hidden behind the
        transcript; True for every action it does not own."""
        if action in ACTIONS:
            if self.host.transcript_in_front():
                return False
            return None if self.delta is None else True  # no verdict of yours: shown, disabled
        return True

    def badges(self, path: str, index: int) -> list[Badge]:
        """The badge of hunk `index` of `path` when it changed or is new since your verdict."""
        from reviewui.ui.widgets.diff_paint import Badge

        state = self.delta.state_of(path, index) if self.delta is not None else None
        return [Badge(*_BADGES[state])] if state in _BADGES else []

    def toggle_only(self) -> None:
        """Show only the changed and new hunks (and the files holding them), or every hunk again."""
        if self.delta is None:
            return
        self.only = not self.only
        files, view = self.host.file_list, self.host.diff_view
        if self.only:
            keep = self.delta.files_with(("changed", "new"))
            if not keep:
                self.only = False
                self.screen.notify("nothing changed since your verdict", timeout=3)
                return
            hidden: dict[str, frozenset[int]] = {}
            for h in self.delta.hunks:
                if h.state == "unchanged" and h.index is not None:
                    hidden[h.file] = hidden.get(h.file, frozenset()) | {h.index}
            files.shown = frozenset(keep)
            view.set_hidden(hidden)
        else:
            files.shown = None
            view.set_hidden({})
        files.rebuild()
        path = files.highlighted_path
        if path is not None and (view.file is None or view.file.path != path):
            self.host.navigation.show(path)
        self.host.navigation.fit_sidebar()
        self.host.set_status("only what changed since your verdict (d: every hunk)" if self.only else "")

    def toggle_interdiff(self) -> None:
        """Open (or close) the interdiff pane beside the diff."""
        pane = self._pane()
        pane.set_class(not pane.has_class("-hidden"), "-hidden")
        self.follow()

    def follow(self) -> None:
        """The cursor moved: the open interdiff pane shows the hunk under it."""
        panes = self.screen.query("#interdiff")
        if not panes or self.delta is None:
            return
        from reviewui.ui.widgets.interdiff_pane import InterdiffPane

        pane = panes.first(InterdiffPane)
        if pane.has_class("-hidden"):
            return
        h = self.host.diff_view.current_hunk
        pane.show(self.delta.entry(h.file, h.index) if h is not None else None)

    def _pane(self) -> InterdiffPane:
        from reviewui.ui.widgets.interdiff_pane import InterdiffPane  # not at the top: not on the first screen

        found = self.screen.query("#interdiff")
        if found:
            return found.first(InterdiffPane)
        pane = InterdiffPane(id="interdiff", classes="-hidden")
        self.screen.query_one("#body").mount(pane)
        return pane
