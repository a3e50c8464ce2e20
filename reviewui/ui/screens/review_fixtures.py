"""The review screen's fixtures part: `f` shows what the tests near the cursor are made of.

The analysis runs in a worker the first time the pane opens; the pane
follows the hunk under the cursor while it is open, and what the sweep and
the truth table learn (the tests that fail with the hunk reverted) as it lands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.binding import Binding

from reviewui.core.errors import ReviewError
from reviewui.ui.messages import FixturesReady, WorkFailed
from reviewui.ui.screens.review_part import ReviewPart

if TYPE_CHECKING:
    from reviewui.core.hunks import Hunk
    from reviewui.core.fixtures import FixtureReport
    from reviewui.ui.widgets.fixtures_pane import FixturesPane


class FixturesPart(ReviewPart):
    """The fixtures pane and its worker."""

    BINDINGS = [Binding("f", "toggle_fixtures", "Fixtures", id="review.fixtures",
                        tooltip="Show what the tests near the cursor are made of")]

    report: FixtureReport | None = None
    """The analysis, None until it arrives."""

    def toggle(self) -> None:
        """Show or hide the fixtures pane (analysing the tests the first time)."""
        pane = self.pane()
        pane.toggle_class("-hidden")
        self.host.navigation.fit_sidebar()  # on a narrow screen the file list gives the diff room
        if not pane.has_class("-hidden"):
            if self.report is None:
                self.thread(self._compute, group="fixtures", name="fixtures")
            self.follow()

    def width_beside(self, total: int) -> int:
        """Columns the fixtures pane takes beside the diff on a screen `total` wide (0: closed)."""
        found = self.screen.query("#fixtures")
        if not found or found.first().has_class("-hidden"):
            return 0  # (not mounted before the first `f`: its module is not imported before then)
        from reviewui.ui.widgets.fixtures_pane import WIDTH_SHARE

        return int(total * WIDTH_SHARE)

    def pane(self) -> FixturesPane:
        """The fixtures pane beside the diff, mounted (hidden) the first time it is asked for."""
        from reviewui.ui.widgets.fixtures_pane import FixturesPane  # pygments' lexer: not before the first paint

        found = self.screen.query(FixturesPane)
        if found:
            return found.first()
        pane = FixturesPane(id="fixtures", classes="-hidden")
        self.screen.query_one("#body").mount(pane)
        return pane

    def _compute(self) -> None:
        """Analyse the branch's tests off the UI thread."""
        try:
            report = self.session.fixtures()
        except ReviewError as e:
            self.screen.post_message(WorkFailed("fixtures", str(e)))
            return
        self.screen.post_message(FixturesReady(report))

    def on_ready(self, message: FixturesReady) -> None:
        """The analysis arrived."""
        self.report = message.report
        self.follow()

    def follow(self) -> None:
        """Show the tests of the hunk under the cursor, when the pane is open."""
        found = self.screen.query("#fixtures")
        if not found:
            return
        pane = cast("FixturesPane", found.first())
        if pane.has_class("-hidden"):
            return
        view = self.host.diff_view
        pane.show(self.report, view.current_hunk, view.file.role if view.file else "", self._biting(view.current_hunk))

    def _biting(self, hunk: Hunk | None) -> tuple[str, ...]:
        """Tests that fail with `hunk` (or a guard in it) reverted: the sweep's and the truth table's."""
        if hunk is None:
            return ()
        ledger = self.ledger
        bite = ledger.hunk(hunk).bite
        out = list(bite.failing_tests) if bite is not None and bite.verdict == "bites" else []
        out += [t for g in (bite.guards if bite is not None else ()) if g.verdict == "bites" for t in g.failing_tests]
        table = ledger.truth_table
        if table is not None and table.status == "complete":
            out += [r.id for r in table.tests if any(b.file == hunk.file and b.hunk == hunk.index for b in r.bitten_by)]
        return tuple(dict.fromkeys(out))
