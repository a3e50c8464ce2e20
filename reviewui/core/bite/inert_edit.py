"""A Python file's bytes changed on every line, its code not at all: what a revert-shaped control writes.

A test can pin a changed file's text without opening it where reviewui sees the open: a traceback
summary it builds itself (`traceback.FrameSummary(path, n, "").line`) reads any line through the
standard library's traceback code, and lines the code under test logged are in `linecache` already.
Such a pin fails on every revert of the file's hunks, and every hunk would "bite". The revert-shaped
controls (control.py) therefore write the file with a comment mark at the end of every line that can
take one (`commented`) instead of its own bytes: a test that passes on the head and fails there tells
the file's bytes, not its code, and refuses the sweep as any control's failure does; a test the
origin plugin saw reading the file is a reader, its failures no bites anywhere (source_readers.py).

The mark is ` #`: a comment of its own at the end of a code line, or more text of the line's comment.
The shebang and the first two lines' comments (a coding declaration) keep theirs. Lines inside a
string, and those ending in a backslash, cannot take one and keep theirs. The result is used only
when it compiles, on reviewui's Python, to the very same code objects as the file (`marshal` of
both, line and column tables included); else the control writes the file's own bytes, as before.
"""

from __future__ import annotations

import functools
import io
import marshal
import tokenize
import types

from reviewui.core.run.scratch import Scratch

MARK = " #"
"""What ends every line that can take it."""
MARKED = True
"""Whether revert-shaped controls write the marked file (`null_bytes`). Off only in tests that try
the layers below it alone (a probe they must catch on their own)."""
MAX_BYTES = 4 * 1024 * 1024
"""Files bigger than this keep their own bytes (the tokenizer and two compiles are linear, but unbounded)."""


@functools.lru_cache(maxsize=8)  # each control of a sweep marks the same head file: ~90 ms for 3 000 lines
def commented(source: bytes) -> bytes | None:
    """`source` with MARK at the end of every line that can take it, or None: not Python this
    interpreter compiles, too big, nothing to mark, or the marked text compiles to other code."""
    if not source or len(source) > MAX_BYTES or b"\0" in source:
        return None
    try:
        tokens = list(tokenize.tokenize(io.BytesIO(source).readline))
        encoding = tokenize.detect_encoding(io.BytesIO(source).readline)[0]  # "utf-8-sig" with a BOM
        lines = _lines(source.decode(encoding))
    except (SyntaxError, ValueError, LookupError, tokenize.TokenError):  # ValueError: UnicodeDecodeError too
        return None
    ends: dict[int, int] = {}
    for tok in tokens:
        row, col = tok.start
        if tok.type in (tokenize.NEWLINE, tokenize.NL) and 0 < row <= len(lines) and _may_mark(lines, row, tok):
            ends[row] = col
    if not ends:
        return None
    text = "".join(line[:ends[n]] + MARK + line[ends[n]:] if n in ends else line for n, line in enumerate(lines, 1))
    try:
        marked = text.encode(encoding)
        same = marshal.dumps(_code(source)) == marshal.dumps(_code(marked))
    except (SyntaxError, ValueError, UnicodeError, OverflowError, RecursionError, MemoryError):
        return None
    return marked if same else None


def null_bytes(scratch: Scratch, rel: str, before: bytes) -> bytes:
    """What a revert-shaped control writes at `rel` (`before`: the file as checked out): a Python
    file's code with every line marked (`commented`), padded as a revert is; any other file, or
    one that cannot be marked, its own bytes."""
    if not MARKED or not rel.endswith(".py"):
        return before
    marked = commented(scratch.unpadded(rel, before))
    return before if marked is None else scratch.padded(rel, marked)


def _may_mark(lines: list[str], row: int, tok: tokenize.TokenInfo) -> bool:
    """Whether line `row` (1-based) may end in the mark, before its end token `tok`."""
    line = lines[row - 1]
    if tok.start[1] > len(line.rstrip("\r\n")):
        return False  # the token is past the line's own text (the tokenizer's end of file)
    # A comment on one of the first two lines is a shebang (its words are the interpreter's command
    # line) or a coding declaration: its own.
    return not (row <= 2 and line.lstrip().startswith("#"))


def _lines(text: str) -> list[str]:
    """`text`'s lines as the tokenizer numbers them: ended by a newline alone (a form feed or a lone
    carriage return, which `str.splitlines` also splits at, ends none)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]  # what follows the last newline: "" when the text ends in one, harmless
    return lines


def _code(source: bytes) -> types.CodeType:
    return compile(source, "<control>", "exec", dont_inherit=True)
