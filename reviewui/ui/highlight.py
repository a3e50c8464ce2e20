"""Syntax highlighting of diff lines with pygments, as Rich Text (never markup).

Each hunk side (old: context+removed, new: context+added) is lexed as one
text so multi-line strings and comments colour correctly, then split back
into lines. Results are cached per (file, hunk, side).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text

from reviewui.core.hunks import Hunk
from reviewui.ui.diff_rows import display_text

if TYPE_CHECKING:
    from pygments.lexer import Lexer
    from pygments.token import _TokenType

# pygments itself is imported where a lexer is built: the first screen draws plain
# lines until the lexer is ready, so its import has no business before the first paint.

MAX_HIGHLIGHT_CHARS = 200_000


# Common endings straight to a lexer name: pygments' filename lookup compiles a
# pattern for every lexer it knows on first use (~150 ms), on the first paint.
_BY_SUFFIX = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".ts": "typescript",
    ".tsx": "tsx", ".jsx": "jsx", ".go": "go", ".rs": "rust", ".c": "c", ".h": "c", ".cc": "cpp",
    ".cpp": "cpp", ".hpp": "cpp", ".java": "java", ".kt": "kotlin", ".rb": "ruby", ".php": "php",
    ".sh": "bash", ".bash": "bash", ".toml": "toml", ".json": "json", ".yaml": "yaml", ".yml": "yaml",
    ".md": "markdown", ".html": "html", ".css": "css", ".sql": "sql", ".txt": "text", ".cfg": "ini",
    ".ini": "ini", ".swift": "swift", ".cs": "csharp", ".lua": "lua", ".r": "r",
}


def _lexer_key(path: str) -> str:
    """What a lexer is chosen by: the alias of a known ending, else the file name itself."""
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    alias = _BY_SUFFIX.get(name[dot:].lower()) if dot > 0 else None
    return alias if alias is not None else "file:" + name


# Built lexers by key. Building one is the slow part (pygments compiles every
# pattern of the language: ~20 ms for Python), so it is done once per key, and
# the diff view can ask whether it is done before drawing with it.
_LEXERS: dict[str, Lexer] = {}
_LEXERS_LOCK = threading.Lock()


def lexer_for(path: str) -> Lexer:
    """The pygments lexer for a file name (plain text when unknown); built once per language."""
    key = _lexer_key(path)
    lexer = _LEXERS.get(key)
    if lexer is not None:
        return lexer
    with _LEXERS_LOCK:  # a worker warming it and the UI thread must not build it twice
        lexer = _LEXERS.get(key)
        if lexer is None:
            from pygments.lexers import TextLexer, get_lexer_by_name, get_lexer_for_filename
            from pygments.util import ClassNotFound

            try:
                if not key.startswith("file:"):
                    lexer = get_lexer_by_name(key, stripnl=False, ensurenl=False)
                else:
                    lexer = get_lexer_for_filename(key[5:], stripnl=False, ensurenl=False)
            except ClassNotFound:
                lexer = TextLexer(stripnl=False, ensurenl=False)
            _LEXERS[key] = lexer
    return lexer


def lexer_ready(path: str) -> bool:
    """True when the lexer for `path` is built, so highlighting costs only the lexing."""
    return _lexer_key(path) in _LEXERS


@lru_cache(maxsize=4096)
def _token_style(style_name: str, ttype: _TokenType) -> Style:
    from pygments.styles import get_style_by_name

    style = get_style_by_name(style_name)
    s = style.style_for_token(ttype)
    return Style(
        color=f"#{s['color']}" if s["color"] else None,
        bold=s["bold"] or None,
        italic=s["italic"] or None,
    )


def highlight_lines(path: str, texts: list[str], style_name: str) -> list[Text]:
    """Highlight consecutive lines of one file as Text objects, one per line."""
    joined = "\n".join(texts)
    if len(joined) > MAX_HIGHLIGHT_CHARS:
        return [Text(t) for t in texts]
    from pygments.token import Token

    out: list[Text] = [Text()]
    for ttype, value in lexer_for(path).get_tokens(joined):
        style = _token_style(style_name, ttype) if ttype is not Token.Text else None
        parts = value.split("\n")
        for k, part in enumerate(parts):
            if k:
                out.append(Text())
            if part:
                out[-1].append(part, style)
    while len(out) < len(texts):
        out.append(Text())
    return out[: len(texts)]


BLOCK = 48  # lines lexed together: enough context for most strings, cheap enough per screen


class HunkHighlighter:
    """Highlighted Text for lines of hunks, lexed a block at a time on demand.

    Each hunk side (old: context+removed, new: context+added) is cut into
    blocks of BLOCK lines; a block is lexed the first time one of its lines
    is drawn, so a 10,000-line hunk costs only what is on screen.
    """

    def __init__(self, path: str, style_name: str) -> None:
        self.path = path
        self.style_name = style_name
        self._sides: dict[tuple[int, str], list[int]] = {}
        self._lines: dict[tuple[int, int], Text] = {}

    @property
    def ready(self) -> bool:
        """True when this file's lexer is built (until then, draw the lines plain)."""
        return lexer_ready(self.path)

    def line(self, hunk: Hunk, i: int) -> Text:
        """The highlighted text of line `i` of `hunk` (a fresh copy)."""
        key = (hunk.index, i)
        if key not in self._lines:
            self._lex_block(hunk, i)
        return self._lines[key].copy()

    def _side(self, hunk: Hunk, side: str) -> list[int]:
        k = (hunk.index, side)
        if k not in self._sides:
            kinds = ("context", "removed") if side == "old" else ("context", "added")
            self._sides[k] = [j for j, ln in enumerate(hunk.lines) if ln.kind in kinds]
        return self._sides[k]

    def _lex_block(self, hunk: Hunk, i: int) -> None:
        side = "old" if hunk.lines[i].kind == "removed" else "new"
        idx = self._side(hunk, side)
        pos = idx.index(i)
        start = pos - pos % BLOCK
        block = idx[start : start + BLOCK]
        texts = [display_text(hunk.lines[j].text) for j in block]
        for j, t in zip(block, highlight_lines(self.path, texts, self.style_name), strict=False):
            self._lines.setdefault((hunk.index, j), t)
