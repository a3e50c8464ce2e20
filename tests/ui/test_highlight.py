"""Lexer choice and line highlighting: the right language, and text kept exactly."""

from __future__ import annotations

from reviewui.ui.highlight import highlight_lines, lexer_for


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
