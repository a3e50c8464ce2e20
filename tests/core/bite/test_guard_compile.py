"""The guard batch compiles each guard's edited source in the session, before its fork
(guard_batch_child.compiled), and the fork swaps that code in (apply): what cannot be compiled
comes back as a Fallback for that guard alone, never as an error of the whole session."""

from __future__ import annotations

import re
import sys
import types
from contextlib import contextmanager
from typing import Any, Iterator

import pytest

from reviewui.core.inside.guard_batch_child import Fallback, apply, compiled

HEAD = "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    return x\n"
EDITED = "def clamp(x, lo, hi):\n    if False:\n        return lo\n    return x\n"


@pytest.fixture
def module() -> Iterator[types.ModuleType]:
    """A module `guardmod` holding HEAD's `clamp`, as the session imported it."""
    mod = types.ModuleType("guardmod")
    exec(compile(HEAD, "guardmod.py", "exec"), mod.__dict__)
    sys.modules["guardmod"] = mod
    yield mod
    del sys.modules["guardmod"]


@contextmanager
def _compile_checks_depth_first() -> Iterator[None]:
    """CPython 3.11's compiler checks its depth against the recursion limit (times three), and under a
    small inherited stack (`ulimit -s 256`) a nesting too deep overflows the C stack before that check
    fires: a crash, not an exception. A limit just above this frame's depth makes the check fire first."""
    depth = 0
    frame: types.FrameType | None = sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 100)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def _guard(source: str) -> dict[str, Any]:
    return {"id": 0, "module": "guardmod", "path": [["clamp", 1, 1]], "source": source,
            "filename": "guardmod.py", "tests": []}


def test_the_code_compiled_before_the_fork_is_what_the_fork_swaps_in(module: types.ModuleType) -> None:
    fn = module.clamp
    assert fn(-1, 0, 5) == 0
    code = compiled(_guard(EDITED))
    assert isinstance(code, types.CodeType)
    apply(_guard(EDITED), code)
    assert fn(-1, 0, 5) == -1  # the same function object, the edited body
    assert fn.__code__.co_filename == "guardmod.py"


def test_the_fork_uses_the_code_it_is_given_and_compiles_nothing(module: types.ModuleType) -> None:
    code = compiled(_guard(EDITED))
    assert isinstance(code, types.CodeType)
    apply(_guard("def clamp(x, lo, hi):\n    if x <\n"), code)  # its source no longer compiles: unused
    assert module.clamp(-1, 0, 5) == -1


@pytest.mark.parametrize(("source", "said"), [
    ("def clamp(x, lo, hi):\n    if x <\n", "edited source does not compile"),
    # A null byte: SyntaxError on Python 3.11.4+ and 3.12, ValueError before; a fallback either way.
    ("def clamp(x):\n    return 1\x00\n", "edited source does not compile|ValueError"),
    # Nesting too deep for the compiler: no SyntaxError, still this guard's alone.
    ("def clamp(x, lo, hi):\n    return " + "+".join(["x"] * 200_000) + "\n", "RecursionError"),
], ids=["syntax", "null-byte", "too-deep"])
def test_a_source_that_cannot_compile_is_a_fallback_for_that_guard(module: types.ModuleType, source: str,
                                                                  said: str) -> None:
    with _compile_checks_depth_first():
        code = compiled(_guard(source))  # returned, not raised: the session goes on to the next guard
    assert isinstance(code, Fallback)
    assert re.search(said, str(code))
    with pytest.raises(Fallback, match=said):
        apply(_guard(source), code)  # the fork raises what the session compiled: no compile of its own
    assert module.clamp(-1, 0, 5) == 0  # nothing swapped
