"""Lexer choice and line highlighting: the right language, and text kept exactly."""

from __future__ import annotations

import threading

from reviewui.core.session import ReviewSession
from reviewui.ui import highlight
from reviewui.ui.app import make_app
from reviewui.ui.highlight import highlight_lines, lexer_for, lexer_ready
from reviewui.ui.widgets import diff_view
from reviewui.ui.widgets.diff_view import DiffView


def test_lexer_by_ending_and_by_name() -> None:
    assert type(lexer_for("pkg/a.py")).__name__ == "PythonLexer"
    assert type(lexer_for("web/App.TSX")).__name__ == "TsxLexer"
    assert type(lexer_for("Makefile")).__name__ == "MakefileLexer"  # no ending: pygments' own lookup
    assert type(lexer_for("blob.unknown-ending")).__name__ == "TextLexer"


def test_highlighting_keeps_every_line_and_its_text() -> None:
    lines = ['s = """start', "middle [bold]x[/bold]", 'end"""', "", "x = 1  # c"]
    out = highlight_lines("a.py", lines, "monokai")
    assert [t.plain for t in out] == lines
    # the middle of a multi-line string is coloured as a string, not as code
    assert out[1].spans and out[1].spans[0].style == out[0].spans[-1].style


def test_lexer_is_built_once_per_language_and_reported_ready(monkeypatch) -> None:
    monkeypatch.setattr(highlight, "_LEXERS", {})
    assert not lexer_ready("pkg/a.py")
    first = lexer_for("pkg/a.py")
    assert lexer_ready("pkg/a.py") and lexer_ready("other/b.py")  # same language, same lexer
    assert lexer_for("other/b.py") is first
    assert not lexer_ready("Makefile")


def _code_styles(view: DiffView, needle: str) -> list:
    """The styles of the code segments on the first drawn row containing `needle`."""
    for y in range(view.size.height):
        strip = view.render_line(y)
        if needle in strip.text:
            return [seg.style for seg in list(strip)[1:] if seg.text.strip()]
    raise AssertionError(f"{needle!r} not drawn")


async def test_first_paint_is_plain_until_the_lexer_is_built_then_highlighted(
    monkeypatch, awkward_session: ReviewSession
) -> None:
    monkeypatch.setattr(highlight, "_LEXERS", {})
    release = threading.Event()
    real = diff_view.lexer_for

    def slow_lexer_for(path: str):
        release.wait(10)
        return real(path)

    monkeypatch.setattr(diff_view, "lexer_for", slow_lexer_for)
    app = make_app(awkward_session, initial_file="pkg/markup.py")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        view = app.screen.query_one(DiffView)
        try:
            plain = _code_styles(view, "print(")
        finally:
            release.set()
        assert len({s.color for s in plain}) == 1  # one colour: nothing lexed yet
        await app.workers.wait_for_complete()
        await pilot.pause()
        coloured = _code_styles(view, "print(")
        assert len({s.color for s in coloured}) > 1
