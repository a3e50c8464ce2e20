"""A list item that wraps goes on under its own text, not under its bullet (widgets/hanging.py): the
verdict dialog's lists, the findings list, the results panel (the help screen's keys: test_help.py)."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.widgets import Static

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.screens.findings import FindingsScreen
from reviewui.ui.screens.verdict import VerdictModal
from reviewui.ui.widgets.hanging import HangingLines, by_indent, fitted
from tests.ui.findings_list import drawn_findings, findings_open

ITEM = "kept probe test_a_rather_long_probe_name fails on branch, errors on base"


def test_a_wrapped_body_is_indented_by_its_lead() -> None:
    rows = HangingLines([Content("Heading"), (Content("  ✗ "), Content(ITEM))])
    lines = rows.wrapped(30).plain.split("\n")
    assert lines[0] == "Heading"
    assert lines[1].startswith("  ✗ kept probe")
    assert len(lines) > 3 and all(line.startswith("    ") and line[4] != " " for line in lines[2:])
    assert all(len(line) <= 30 for line in lines)
    assert "".join(lines[1:]).replace(" ", "") == "✗" + ITEM.replace(" ", "")  # nothing lost (a long word folds)
    assert rows.get_height({}, 30) == len(lines)  # type: ignore[arg-type]


def test_the_text_is_the_rows_unwrapped_and_a_new_width_wraps_again() -> None:
    rows = HangingLines([(Content("  "), Content(ITEM)), Content("")])
    assert str(rows) == "  " + ITEM + "\n"
    narrow, wide = rows.get_height({}, 20), rows.get_height({}, 200)  # type: ignore[arg-type]
    assert narrow > wide == 2
    assert rows.get_height({}, 0) == 0  # type: ignore[arg-type]  # no room: no lines
    assert rows.wrapped(20) is rows.wrapped(20)  # wrapped once per width: every frame asks again


def test_a_lead_as_wide_as_the_width_wraps_as_plain_text() -> None:
    rows = HangingLines([(Content("  ✗ "), Content("abcdef"))])
    assert rows.wrapped(4).plain.split("\n") == ["  ✗", "abcd", "ef"]


async def test_the_verdict_dialog_keeps_a_wrapped_item_under_its_text(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=(60, 50)) as pilot:
        app.screen.ledger.state.keep_probe(  # type: ignore[attr-defined]
            "test_a_rather_long_probe_name_that_wraps", "def test_x():\n    assert 0\n",
            {"branch": "failed", "base": "error"})
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, VerdictModal)
        box = app.screen.query_one("#evidence-text", Static)
        lines = [box.render_line(y).text.rstrip() for y in range(box.size.height)]
    assert "  enter does not approve this: ctrl+y approves anyway" in lines
    against = lines.index("  ✗ kept probe test_a_rather_long_probe_name_that_wraps")
    assert lines[against + 1] == "    fails on branch, errors on base"
    probe = next(n for n, line in enumerate(lines) if line.startswith("  test_a_rather_long_probe_name_that_wraps:"))
    assert lines[probe + 1].startswith("  ") and lines[probe + 1][2] != " "
    assert "errors on base" in lines[probe + 1]


async def test_a_finding_that_wraps_goes_on_under_its_kind_not_under_the_severity(tmp_path: Path) -> None:
    async with findings_open(tmp_path, "02-add-stopped", "agent/add-stopped", (100, 40)) as app:
        assert isinstance(app.screen, FindingsScreen)
        drawn = drawn_findings(app)
    first = next(n for n, line in enumerate(drawn) if "error   claimed-done-without-change" in line)
    text_at, rest = drawn[first].index("error"), drawn[first + 1]
    assert rest[text_at:text_at + 8] == " " * 8 and rest[text_at + 8] != " ", rest  # under the kind column


def test_an_indented_line_hangs_from_its_indent_and_bullet() -> None:
    rows = by_indent([Content("BROKEN  a.py"), Content("  ✗ tests/t.py::test_a"), Content("  | E   assert 1"),
                      Content("      message"), Content("  ○ line 3: `if x` always true"), Content("  a word"),
                      Content("\noutput (tail)")])
    assert [(row[0].plain, row[1].plain) if isinstance(row, tuple) else row.plain for row in rows] == [
        "BROKEN  a.py", ("  ✗ ", "tests/t.py::test_a"), ("  | ", "E   assert 1"), ("      ", "message"),
        ("  ○ ", "line 3: `if x` always true"), ("  ", "a word"), "\noutput (tail)"]


async def test_the_results_panel_wraps_a_long_reason_under_itself() -> None:
    from textual.app import App, ComposeResult

    from reviewui.core.bite.report import HunkResult
    from reviewui.ui.widgets.results_panel import ResultsPanel

    reason = "tests could not run (collection errors): ModuleNotFoundError: No module named 'ledger.defaults'"

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield ResultsPanel()

    app = One()
    async with app.run_test(size=(60, 12)) as pilot:
        app.query_one(ResultsPanel).show_result(HunkResult(file="ledger/defaults.py", index=0, header="@@ -0,0 +1,3 @@",
                                                           text="", verdict="broken", reason=reason))
        await pilot.pause()
        box = app.query_one("#results-text", Static)
        lines = [box.render_line(y).text.rstrip() for y in range(box.size.height)]
    first = next(n for n, line in enumerate(lines) if line.startswith("  tests could not run"))
    assert lines[first + 1].startswith("  ") and lines[first + 1][2] != " ", lines


def test_a_rule_of_pytest_is_shortened_to_the_width_not_wrapped() -> None:
    # pytest draws its separators 80 columns wide; in a narrower panel each broke into two rules.
    sep = "=" * 36 + " ERRORS " + "=" * 36
    collecting = "_" * 20 + " ERROR collecting t.py " + "_" * 21
    text = HangingLines([(Content("  "), Content(sep)), (Content("  "), Content("-" * 80)),
                         (Content("  "), Content(collecting)), (Content("  "), Content("x" * 50))]).wrapped(40).plain
    lines = text.split("\n")
    assert lines[0] == "  " + "=" * 15 + " ERRORS " + "=" * 15  # one line, the title whole and centred
    assert lines[1] == "  " + "-" * 38
    assert lines[2] == "  " + "_" * 7 + " ERROR collecting t.py " + "_" * 8
    assert lines[3:] == ["  " + "x" * 38, "  " + "x" * 12]  # text that is no rule still wraps
    assert fitted(Content(sep), 12).plain == sep  # no room for the title and some fill: left to wrap
    styled = Content.styled(sep, "bold")
    assert fitted(styled, 40) is styled  # styled text is not a rule pytest drew
