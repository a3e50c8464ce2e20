"""Authorship notes in the diff: each line's author in the gutter, each hunk's on its header (issue 42).

On a repository carrying git-ai notes (tests/core/notes/test_authorship.py
writes them as git-ai does): after ReviewReady the lines an agent session
wrote carry its letter, a human's line `h`, the base's lines none; the hunk
header names the session, and hostile note text reaches the screen only as
visible characters. Without notes, nothing is drawn.
"""

from __future__ import annotations

from pathlib import Path

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from tests.core.notes.test_authorship import CLAUDE, CURSOR, _note, _repo
from tests.ui.ready import review_ready

SIZE = (160, 40)
WIDTH = 150


def _row_text(view, y: int) -> str:
    return "".join(seg.text for seg in view._render_row(view.rows[y], WIDTH, 0))


def _gutter(view, line: int) -> str:
    """The author cell of branch-side `line` (between its number and the +/- sign)."""
    y = view.row_for_line(line)
    assert y is not None
    return _row_text(view, y)[11]


async def test_gutter_letters_and_hunk_header_authors_after_review_ready(tmp_path: Path) -> None:
    r, base, head = _repo(tmp_path)
    session = ReviewSession.open(r.root, "agent/fix", base=base)
    truth = session.authorship().lines["calc.py"]
    app = make_app(session, initial_file="calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        view = screen.diff_view
        letters = view.authors.letters
        claude = next(a for a in letters if a.tool == "claude")
        cursor = next(a for a in letters if a.tool == "cursor")
        assert (letters[claude], letters[cursor]) == ("A", "B")  # in the order the file first shows them
        added = [ln.new_no for h in view.file.hunks for ln in h.lines if ln.kind == "added"]
        for n in added:
            want = {"claude": "A", "cursor": "B", "human": "h"}[truth[n].tool] if n in truth else " "
            assert _gutter(view, n) == want, n
        assert _gutter(view, 2) == " "  # `def add`: the base's line, no note says anything of it
        headers = [_row_text(view, y) for y, row in enumerate(view.rows) if row.kind == "hunk"]
        assert any(f"claude · {CLAUDE['id'][:8]} ×" in h for h in headers)
        assert any(f"cursor · {CURSOR['id'][:8]} ×2" in h for h in headers)
        view.split = True
        await pilot.pause()
        y = next(y for y, row in enumerate(view.rows) if row.right is not None and row.right.no == 11)
        right = _row_text(view, y).split("│", 1)[1]
        assert right[:6] == "B  11+"  # side by side: the letter in the blank before the number


async def test_hostile_note_text_is_drawn_visible_and_without_notes_nothing_is_drawn(tmp_path: Path) -> None:
    r, base, head = _repo(tmp_path)
    evil = dict(CLAUDE, tool="cl\x1b]52;c;cHduZWQ=\x07aude\u202e", id="\x1b[2J" + "x" * 5000)
    first = r.git("rev-list", "--reverse", f"{base}..{head}").split()[0]
    r.git("notes", "--ref=ai", "add", "-f", "-m", _note({"calc.py": [("s_e::t_1", "1-6")]},
                                                        sessions={"s_e": {"agent_id": evil}}), first)
    app = make_app(ReviewSession.open(r.root, "agent/fix", base=base), initial_file="calc.py")
    async with app.run_test(size=SIZE) as pilot:
        view = (await review_ready(app, pilot)).diff_view
        drawn = "\n".join(_row_text(view, y) for y in range(len(view.rows)))
        assert "\x1b" not in drawn and "\x07" not in drawn and "\u202e" not in drawn
        header = next(_row_text(view, y) for y, row in enumerate(view.rows) if row.kind == "hunk")
        assert "✎" in header and len(header) <= WIDTH
    r.git("update-ref", "-d", "refs/notes/ai")
    app = make_app(ReviewSession.open(r.root, "agent/fix", base=base), initial_file="calc.py")
    async with app.run_test(size=SIZE) as pilot:
        view = (await review_ready(app, pilot)).diff_view
        assert view.authors.letters == {} and _gutter(view, 3) == " "
        assert not any("✎" in _row_text(view, y) for y, row in enumerate(view.rows) if row.kind == "hunk")


def test_author_labels_are_made_visible_and_cut_even_when_the_core_did_not() -> None:
    from rich.style import Style

    from reviewui.core.notes.authorship import Author
    from reviewui.ui.widgets.author_marks import AuthorMarks
    from tests.core.transcript.helpers import FakeHunk, Line

    raw = Author("cl\x1b]52;c;cHduZWQ=\x07aude\u202e", "\x1b[2J" + "y" * 500)  # as if read without the core's care
    marks = AuthorMarks({"a.py": {1: raw}}, {raw: "A"})
    header = marks.header(FakeHunk("a.py", 0, (Line("added", "x = 1", 1),)), Style(), Style()).plain
    assert "\x1b" not in header and "\x07" not in header and "\u202e" not in header
    assert header.startswith("  ✎  A  ") and header.endswith(" ×1") and len(header) < 60
