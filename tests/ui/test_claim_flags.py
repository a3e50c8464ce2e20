"""The transcript pane flags the turn that makes a claim, coloured by what the claim came to (issue 28).

A claim with no test run behind it is known as soon as the review opens; the
others (contradicted, unverifiable, confirmed) once a sweep has rerun the
agent's test commands. Each is a flag on its turn like the turn's own: in the
line, in `!` and `l`, in the summary's counts, and `g` on it jumps as from any turn.
"""

from __future__ import annotations

from pathlib import Path

from rich.style import Style
from textual.widgets import ContentSwitcher, Static

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from tests.ui.claim_sessions import claim_without_run
from reviewui.ui.transcript_detail import CLAIM_FLAGS
from reviewui.ui.widgets.transcript_view import TranscriptView
from tests.ui.ready import review_ready

SIZE = (180, 45)


def _flag_style(view: TranscriptView, y: int, name: str) -> Style | None:
    """The style the flag `name` is drawn with on row `y`, None when the row does not show it."""
    for seg in view.render_line(y - int(view.scroll_offset.y)):
        if seg.text.strip() == name:
            return seg.style
    return None


def _tone(view: TranscriptView, y: int, tone: str) -> Style:
    """The style a flag of `tone` has on row `y` (the cursor row adds the cursor's)."""
    style = view.get_component_rich_style(f"turn--flag-{tone}")
    return style + view.get_component_rich_style("turn--cursor") if y == view.cursor else style


async def test_a_claim_without_a_run_is_flagged_on_its_turn_in_the_warning_colour(tmp_path: Path) -> None:
    session = claim_without_run(tmp_path)
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await review_ready(app, pilot)
        await pilot.press("t")
        await pilot.pause()
        view = app.screen.query_one(TranscriptView)
        assert view.claim_flags == {4: ("claim-without-run",)}
        rows = [view.render_line(y).text for y in range(4)]
        assert "claim-without-run" in rows[3] and not any("claim-" in r for r in rows[:3])
        assert _flag_style(view, 3, "claim-without-run") == _tone(view, 3, "warn")
        summary = str(app.screen.query_one("#transcript-summary", Static).render())
        assert "claim-without-run 1" in summary
        for _ in range(8):  # `l` cycles through the flags present, the claim's among them
            await pilot.press("l")
            await pilot.pause()
            if view.flag_filter == "claim-without-run":
                break
        assert view.flag_filter == "claim-without-run"
        assert [view.transcript.turns[i].index for i in view.shown] == [4]
        # `!` (flagged only) counts a claim as a flag: turn 1 has none of its own
        assert not view.transcript.turns[0].flags
        view.set_claims({1: ("claim-contradicted",), 4: ("claim-without-run",)})
        assert view.flag_filter == "claim-without-run"
        await pilot.press("l")
        await pilot.pause()
        await pilot.press("exclamation_mark")
        await pilot.pause()
        flagged = [view.transcript.turns[i].index for i in view.shown]
        assert 1 in flagged and flagged == [t.index for t in view.transcript.turns if t.flags or t.index in (1, 4)]
        assert _flag_style(view, 0, "claim-contradicted") == _tone(view, 0, "bad")


async def test_after_a_sweep_the_rerun_claims_are_flagged_by_outcome_and_g_jumps_from_them(tmp_path: Path) -> None:
    built = build_sample("03-null-guard", tmp_path)
    session = ReviewSession.open(built.repo_dir, "agent/null-guard")
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await review_ready(app, pilot)
        await pilot.press("B")  # the sweep reruns the agent's test commands at the head
        for _ in range(4):  # the sweep, then its table and claims, then the findings they bring
            await app.workers.wait_for_complete()
            await pilot.pause()
        checks = {c.claim.turn: c.outcome for c in session.claims(rerun=False)}
        assert not checks  # the story's claims all rest on a test run: none is flagged before the sweep
        findings = [f for f in session.evidence.findings if f.kind.startswith("claim-")]
        assert findings, [f.kind for f in session.evidence.findings]
        want: dict[int, tuple[str, ...]] = {}
        for f in findings:
            turn = int((f.symbol or "").removeprefix("turn "))
            want[turn] = tuple(k for k in CLAIM_FLAGS if k == f.kind or k in want.get(turn, ()))
        await pilot.press("t")
        await pilot.pause()
        view = app.screen.query_one(TranscriptView)
        assert view.claim_flags == want
        turn, kinds = next(iter(want.items()))
        assert view.goto_turn(turn)
        row = view.cursor
        await pilot.press("up")  # off the row: the cursor's colours would hide the flag's
        await pilot.pause()
        tone = {"claim-confirmed": "good", "claim-contradicted": "bad", "claim-unverifiable": "info"}[kinds[0]]
        assert _flag_style(view, row, kinds[0]) == _tone(view, row, tone) != _tone(view, row, "info")
        await pilot.press("down")
        await pilot.pause()
        assert view.current_turn is not None and view.current_turn.index == turn
        await pilot.press("g")  # as from any turn: the hunks it wrote, or a word that it wrote none
        await pilot.pause()
        links = session.evidence.links
        switch = app.screen.query_one("#main-switch", ContentSwitcher).current
        assert switch == ("diff-pane" if links is not None and links.hunks_for(turn) else "transcript-pane")
