"""The review screen's toothless part: `{`/`}` jump between toothless guards, `w` shows a witness.

A toothless guard is a revert inside the agent's lines that no test noticed
(the bites part grades them); a witness is a call on which the guard and its
revert differ, found by the sweep. This part moves the cursor to them and
opens the witness, whose test can be kept as a probe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding

from reviewui.core.errors import ReviewError
from reviewui.core.safe_text import visible
from reviewui.ui.screens.review_part import ReviewPart
from reviewui.ui.widgets import guard_marks

if TYPE_CHECKING:
    from reviewui.core.witness.model import Witness


class ToothlessPart(ReviewPart):
    """Keys to the toothless guards and their witnesses."""

    BINDINGS = [
        Binding("right_curly_bracket", "toothless_guard(1)", "Next toothless guard", key_display="}",
                id="review.next_toothless_guard", tooltip="Jump to the next guard revert no test noticed"),
        Binding("left_curly_bracket", "toothless_guard(-1)", "Prev toothless guard", key_display="{",
                id="review.prev_toothless_guard", tooltip="Jump to the previous guard revert no test noticed"),
        Binding("w", "witness", "Witness", id="review.witness",
                tooltip="The toothless guard on this line (or this toothless hunk): a call on which it matters"),
    ]

    def check_action(self, action: str) -> bool | None:
        if action == "witness":
            return self._any_witness()  # no sweep looked for one yet: the key means nothing
        return True

    def toothless_guard(self, direction: int) -> None:
        """Move the cursor to the next/previous line with a toothless guard, across files."""
        screen = self.host
        order = list(screen.file_list.paths)
        positions = guard_marks.toothless_positions(self.ledger.bites.values(), order)
        view = screen.diff_view
        here = (view.file.path if view.file else "", view.current_line or 0)
        target = guard_marks.step(positions, here, direction, order)
        if target is None:
            self.screen.notify("No more toothless guards" if positions
                               else "No toothless guards (b checks a hunk's guards)", timeout=2)
            return
        screen.navigation.jump_to(*target)
        row = view.row_for_line(target[1])
        if row is not None:
            view.cursor = row

    def _any_witness(self) -> bool:
        if not self.session.evidence_read:
            # The footer asks before the first paint, when nothing is read yet: reading the
            # ledger then (its imports, the saved state) would only delay the first screen, and
            # a ledger just read holds no bites (they come with a sweep or the store).
            return False
        return any(r.witness is not None or any(g.witness is not None for g in r.guards)
                   for r in self.ledger.bites.values())

    def witness_here(self) -> tuple[str, Witness] | None:
        """(where, witness) of a toothless guard on the cursor's line, else of the toothless hunk under it."""
        view = self.host.diff_view
        path, line, h = (view.file.path if view.file else ""), view.current_line, view.current_hunk
        for r in self.ledger.bites.values():
            for g in r.guards:
                if g.file == path and g.line == line and g.witness is not None:
                    return f"{g.file}:{g.line}: {g.description}", g.witness
        hunk = self.ledger.bites.get(h.key) if h is not None else None
        if hunk is not None and hunk.witness is not None:
            return f"{hunk.file} {hunk.header}", hunk.witness
        return None

    def witness(self) -> None:
        """Show the witness of the toothless guard on this line (or of this toothless hunk)."""
        from reviewui.ui.screens.witness import KEEP, WitnessModal  # not before the first paint

        found = self.witness_here()
        if found is None:
            self.screen.notify("No toothless guard with a witness search on this line ({ and } jump to one)",
                               timeout=3)
            return
        where, w = found

        def back(choice: str | None) -> None:
            if choice == KEEP:
                self.keep_witness(w)

        self.screen.app.push_screen(WitnessModal(where, w), back)

    def keep_witness(self, w: Witness) -> None:
        """Keep the witness's test as a probe (the probe keeping path): it passed at the head, failed reverted."""
        from reviewui.core.probe.source import probe_name

        name = probe_name(w.test)
        self.ledger.state.keep_probe(name, w.test, {"branch": "passed", "reverted": "failed"})
        try:
            self.ledger.state.save()
        except ReviewError as e:
            self.screen.notify(visible(f"not kept: {e}"), severity="error", markup=False)
            return
        self.host.evidence_changed(None)  # kept probes change what a verdict would record
        self.screen.notify(visible(f"kept probe {name}: it passes on the branch and fails with the guard "
                                   "reverted, so it bites"), markup=False)
