"""What a test can assert of a witness: how two answers compare, and the assertion that tells them apart.

Copied by reviewui into a run's own directory as `reviewui_witness_assert`
beside the plugins and imported only by the witness search
(witness_search.py), in a search run. Standard library only, and no effect on
import (reviewui imports it to test it).

An `Outcome` is what one call did (returned or raised, and its arguments
afterwards). Given the head's and the reverted code's outcomes of the same
call, `assertion` finds what a test can assert that holds for the head and
not for the revert (the exception it raises, the value it returns, what it
leaves in an argument or in one of its attributes); `readable` writes the
call's arguments as a person would, and `said`/`left` each side's answer.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

try:
    import reviewui_witness_values as values  # type: ignore[import-not-found]  # copied beside the plugin in a run
except ImportError:  # imported by reviewui itself, for its names
    from reviewui.core.inside import witness_values as values


@dataclass
class Outcome:
    """What one call did."""

    kind: str
    """`return` or `raise`."""
    value: Any
    """The returned value, or the exception's type."""
    args: list[Any]
    """The arguments as the call left them."""


def same_outcome(a: Outcome, b: Outcome) -> bool:
    """The same answer: kind, value (or exception type) and arguments afterwards."""
    if a.kind != b.kind:
        return False
    if a.kind == "raise" and a.value is not b.value:
        return False
    if a.kind == "return" and not values.same(a.value, b.value):
        return False
    return all(values.same(x, y) for x, y in zip(a.args, b.args, strict=True))


def assertion(names: Any, params: list[list[str]], h: Outcome, r: Outcome) -> dict[str, Any] | None:
    """What the test asserts: it holds for the head's answer and not for the reverted one."""
    if h.kind == "raise":
        if r.kind == "raise" and issubclass(r.value, h.value):
            return None
        try:
            return {"kind": "raises", "type": names.name_for(h.value)}
        except values.Unrenderable:
            return None
    if r.kind == "raise" or not values.same(h.value, r.value):
        expect = values.expectation(names, h.value, None if r.kind == "raise" else (r.value,))
        if expect is not None:
            return {"kind": "returns", **expect}
        if r.kind == "raise":
            return {"kind": "returns-any"}
    for i, (x, y) in enumerate(zip(h.args, r.args, strict=True)):
        if values.same(x, y):
            continue
        expect = values.expectation(names, x, (y,))
        if expect is not None:
            return {"kind": "argument", "param": params[i][0], **expect}
        # An object without an `==` of its own: the first attribute the two leave different.
        mine, theirs = getattr(x, "__dict__", None), getattr(y, "__dict__", None)
        if isinstance(mine, dict) and isinstance(theirs, dict):
            for attr in sorted(k for k in mine if isinstance(k, str) and k.isidentifier()
                               and not k.startswith("__")):
                if attr in theirs and values.same(mine[attr], theirs[attr]):
                    continue
                expect = values.expectation(names, mine[attr], (theirs[attr],) if attr in theirs else None)
                if expect is not None:
                    return {"kind": "argument", "param": params[i][0], "attr": attr, **expect}
    return None


def readable(args: list[list[str]], params: list[list[str]], fn: Any, code: types.CodeType,
             drop_first: bool) -> list[list[str]]:
    """The call's arguments as a person writes them: one left at its default dropped, those after it
    by keyword (never a positional-only one). `fn` is the function (its defaults), `code` its head's
    code; `drop_first`: its first parameter is `cls`, never passed."""
    if drop_first and args:
        args = args[1:]
    names = [p[0] for p in params]
    defaults: dict[str, str | None] = {}
    positional = names[:code.co_argcount]
    for name, value in zip(positional[len(positional) - len(fn.__defaults__ or ()):],
                           fn.__defaults__ or (), strict=True):
        defaults[name] = source_or_none(value)
    for name, value in (fn.__kwdefaults__ or {}).items():
        defaults[name] = source_or_none(value)
    posonly = set(names[:code.co_posonlyargcount])
    out: list[list[str]] = []
    skipped = False
    for name, kind, src in args:
        if (name in defaults and defaults[name] == src and name not in posonly) or \
                (kind == "var" and src == "()") or (kind == "varkw" and src == "{}"):
            skipped = skipped or kind not in ("var", "varkw")
            continue
        out.append([name, "kw" if kind == "pos" and skipped and name not in posonly else kind, src])
    return out


def source_or_none(value: Any) -> str | None:
    """A default value as source, to tell an argument left at it (None: it cannot be written)."""
    try:
        return str(values.render(value, values.Names()))
    except Exception:
        return None


def said(o: Outcome) -> str:
    """The outcome for a person: the value returned, or `raises T`."""
    if o.kind == "raise":
        return f"raises {getattr(o.value, '__qualname__', '?')}"
    return str(values.show(o.value))


def left(h: Outcome, r: Outcome, params: list[list[str]], check: dict[str, Any]) -> tuple[str, str]:
    """What the call left in the argument the assertion looks at, on each side: `out = ['x']`, `self.help = 'x'`."""
    at = next(i for i, p in enumerate(params) if p[0] == check["param"])
    where = check["param"] + (f".{check['attr']}" if check.get("attr") else "")

    def value(o: Outcome) -> Any:
        found = o.args[at]
        return getattr(found, check["attr"], "<no such attribute>") if check.get("attr") else found

    head, reverted = values.show_pair(value(h), value(r), 100)
    return f"{where} = {head}", f"{where} = {reverted}"
