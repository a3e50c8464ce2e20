"""What a revert-shaped control writes: every line that can take it marked, the code the very same
(core/bite/inert_edit.py), on real modules and on awkward ones."""

from __future__ import annotations

import inspect
import json
import marshal
import textwrap
import tokenize

import pytest

from reviewui.core.bite import inert_edit, plan
from reviewui.core.bite.control import judge
from reviewui.core.bite.inert_edit import MARK, commented, null_bytes
from reviewui.core.bite.origin import Observed
from reviewui.core.bite.runctx import Observation
from reviewui.core.run.junit import TestOutcome
from reviewui.core.run.runner import RunResult

REAL = [json.decoder, textwrap, tokenize, inspect, plan, inert_edit]
"""Real modules: the standard library's (strings, f-strings, backslashes, decorators) and reviewui's."""


def _code(source: bytes) -> bytes:
    return marshal.dumps(compile(source, "<control>", "exec", dont_inherit=True))


@pytest.mark.parametrize("module", REAL, ids=lambda m: m.__name__)
def test_a_real_module_is_marked_on_every_code_line_and_compiles_to_the_same_code(module) -> None:
    source = open(module.__file__, "rb").read()
    marked = commented(source)
    assert marked is not None
    assert _code(marked) == _code(source)
    before, after = source.decode().split("\n"), marked.decode().split("\n")
    assert len(before) == len(after)
    changed = [(b, a) for b, a in zip(before, after, strict=True) if a != b]
    # each changed line is the line with the mark at its end, nothing else
    assert all(a == b + MARK for b, a in changed)
    # every line that ends a statement took it (the last line of a multi-line string ends one)
    statements = {t.end[0] for t in tokenize.tokenize(iter(source.splitlines(keepends=True)).__next__)
                  if t.type == tokenize.NEWLINE}
    statements = {n for n in statements if n <= len(before)}  # the tokenizer's end of file aside
    assert statements and {n for n in statements if after[n - 1] == before[n - 1] + MARK} == statements
    assert len(changed) > len(before) // 2


@pytest.mark.parametrize(("source", "want"), [
    (b"def mul(a, b):\r\n    return a * b\r\n", b"def mul(a, b): #\r\n    return a * b #\r\n"),  # CRLF kept
    (b"x = 1", b"x = 1 #"),  # no newline at the end
    (b"\xef\xbb\xbfx = 1\n", b"\xef\xbb\xbfx = 1 #\n"),  # a BOM kept
    (b"#!/usr/bin/env python\n# -*- coding: latin-1 -*-\ns = '\xe9'\n",
     b"#!/usr/bin/env python\n# -*- coding: latin-1 -*-\ns = '\xe9' #\n"),  # shebang, coding line, latin-1 bytes
    (b"s = '''a\nb\n'''\n", b"s = '''a\nb\n''' #\n"),  # inside a string: untouched
    (b"x = 1 + \\\n    2\n", b"x = 1 + \\\n    2 #\n"),  # a backslash ends no line
    (b"x = (1 +\n     2)  # two\n", b"x = (1 + #\n     2)  # two #\n"),  # in brackets; after a comment
    (b"x = 1\n\x0cy = 2\n", b"x = 1 #\n\x0cy = 2 #\n"),  # a form feed starts no line
    (b"if x:\n\ty = 1\n\n\tz = 2\n", b"if x: #\n\ty = 1 #\n #\n\tz = 2 #\n"),  # tabs; a blank line
])
def test_awkward_files_are_marked_where_a_comment_can_go(source: bytes, want: bytes) -> None:
    assert commented(source) == want
    assert _code(want) == _code(source)


@pytest.mark.parametrize("source", [
    b"",  # empty
    b"\x00\x01\x02binary",  # binary
    b"def f(:\n",  # not Python
    b"s = '\xff'\n",  # not UTF-8, no declaration
    b"# only a comment on line 1\n",  # nothing that may take the mark
    b"x = 1\n" * (inert_edit.MAX_BYTES // 6 + 1),  # too big to tokenize here
])
def test_what_cannot_be_marked_keeps_its_own_bytes(source: bytes) -> None:
    assert commented(source) is None


def test_a_mark_that_changes_the_code_is_never_written(monkeypatch) -> None:
    # The compiled code is the last word: a mark that is code (here an assignment) changes it.
    commented.cache_clear()  # what the real mark gave is not asked again
    monkeypatch.setattr(inert_edit, "MARK", "; _ = 0")
    assert commented(b"x = 1\n") is None
    commented.cache_clear()


class _Scratch:
    """A scratch whose files are padded to 40 bytes with one comment line, as a sweep's are (run/alike.py)."""

    def unpadded(self, rel: str, content: bytes) -> bytes:
        return content.split(b"#pad")[0]

    def padded(self, rel: str, content: bytes) -> bytes:
        return content + b"#pad" + b"-" * (35 - len(content)) + b"\n" if len(content) < 35 else content


@pytest.mark.parametrize(("rel", "head", "want"), [
    ("pkg/m.py", b"x = 1\n", b"x = 1 #\n"),  # Python: marked, then padded as a revert is
    ("setup.cfg", b"x = 1\n", b"x = 1\n"),  # reads as Python, but its readers are not Python's: its own bytes
    ("pkg/m.py", b"def f(:\n", b"def f(:\n"),  # cannot be marked: its own bytes
])
def test_a_control_writes_a_python_files_code_marked_and_any_other_file_as_it_is(rel, head, want) -> None:
    scratch = _Scratch()
    checked_out = scratch.padded(rel, head)
    assert null_bytes(scratch, rel, checked_out) == scratch.padded(rel, want)  # type: ignore[arg-type]
    assert len(null_bytes(scratch, rel, checked_out)) == len(checked_out)  # the size of every run's file


def _control_run(readers: dict[str, tuple[str, ...]]) -> Observation:
    """A null revert's run in which `tests/t.py::pin` failed (pytest's exit 1), with these readers."""
    run = RunResult(command=(), returncode=1, seconds=0.1, pytest=True,
                    tests=(TestOutcome("tests/t.py::pin", "failed"), TestOutcome("tests/t.py::ok", "passed")))
    return Observation(run, Observed({}, {}, True, reads=readers), None)


def test_a_control_excuses_a_reader_of_its_own_file_only() -> None:
    # A reader's failures are no bites of the file it read, so failing that file's marked control is
    # none either; a test that read another file is no reader of this one: its failure here refuses.
    own = _control_run({"/reviewui/slot/tree/pkg/m.py": ("tests/t.py::pin",)})
    other = _control_run({"/reviewui/slot/tree/pkg/other.py": ("tests/t.py::pin",)})
    assert judge(own, "revert", ("tests/t.py::pin",), "pkg/m.py").failing == ()
    assert judge(other, "revert", ("tests/t.py::pin",), "pkg/m.py").failing == ("tests/t.py::pin",)
    assert judge(own, "revert", ("tests/t.py::pin",)).failing == ("tests/t.py::pin",)  # no file named
