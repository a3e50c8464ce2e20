"""The inputs a witness search tries: variations of the tests' own calls (copied as `reviewui_witness_inputs`).

Standard library only, and no effect on import (reviewui imports it to test
it). A seed is a call as source, one source per parameter; `variations`
changes one place of it at a time: its constants (the guard's own constants
and one either side, the same field's values in other calls, boundaries,
sign, empty, a length one shorter or longer), its lists, tuples, sets and
dicts (empty, one item fewer, one more), a parameter as a whole (None). The
places under the guard's own names come first, and the first variant of
every place before the second of any. Edits are made on the source's text,
so every input is source a test can hold.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

EMPTY = frozenset({"None", "()", "[]", "{}", "''", '""', "b''", "False", "0", "set()"})
"""Sources of a parameter left at nothing: a call that gives the guard's parameter one of these
likely does not reach it."""
MAX_VARIANTS = 8
"""Variants tried per place in a seed."""


def _literal(node: ast.expr) -> tuple[bool, Any]:
    if isinstance(node, ast.Constant):
        return True, node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
        return True, -node.operand.value
    return False, None


def _labelled(tree: ast.AST) -> Iterator[tuple[ast.expr, str]]:
    """Every expression with the keyword it is nearest under ("" when none)."""
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, label = stack.pop()
        if isinstance(node, ast.expr):
            yield node, label
        if isinstance(node, ast.UnaryOp):
            continue  # a negative number is one constant
        for child in ast.iter_child_nodes(node):
            stack.append((child, child.arg or label if isinstance(child, ast.keyword) else label))


def constants_by_label(sources: list[str]) -> dict[str, list[Any]]:
    """Keyword name -> the constants the seeds give it (the values a field takes elsewhere)."""
    out: dict[str, list[Any]] = {}
    for source in sources:
        try:
            tree = ast.parse(source, mode="eval")
        except SyntaxError:
            continue
        for node, label in _labelled(tree):
            ok, v = _literal(node)
            if ok and label and v not in out.setdefault(label, []) and len(out[label]) < MAX_VARIANTS:
                out[label].append(v)
    return out


def constant_variants(v: Any, hints: list[Any], siblings: list[Any]) -> list[Any]:
    """Other values for a constant: the guard's own constants (and one either side), the same field's
    values elsewhere, boundaries, sign, empty, a length one shorter or longer."""
    def kin(h: Any) -> bool:
        return type(h) is type(v) or (type(v) in (int, float) and type(h) in (int, float))

    out: list[Any] = []
    if v is None:
        out = [*hints, 0, 1, "", "x", True, False]
    elif type(v) is bool:
        out = [not v]
    elif type(v) in (int, float):
        near = [x for h in hints if kin(h) and type(h) is not bool for x in (h, h - 1, h + 1)]
        out = [*(type(v)(x) for x in near), *(type(v)(x) for x in siblings if kin(x) and type(x) is not bool),
               0 * v, v - 1, v + 1, -v, 1 + 0 * v, -1 + 0 * v]
        if type(v) is float:
            out += [v / 2, v * 2]
    elif type(v) in (str, bytes):
        empty, one = (("", "x") if type(v) is str else (b"", b"x"))
        out = [*(h for h in hints if kin(h)), *(s for s in siblings if kin(s)), empty if v else one,
               v[:-1], v + one]
    seen: list[Any] = []
    for x in out:
        if type(x) is float and x != x:
            continue
        if not (type(x) is type(v) and x == v) and not any(type(x) is type(y) and x == y for y in seen):
            seen.append(x)
    return seen[:MAX_VARIANTS]


@dataclass
class _Site:
    start: int
    end: int
    variants: list[str]
    priority: int


def sites(source: str, hints: dict[str, Any], siblings: dict[str, list[Any]]) -> list[_Site]:
    """The places of one parameter's source to vary, most promising first."""
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        return []
    raw = source.encode("utf-8")
    names = set(hints.get("names", ()))
    constants = list(hints.get("constants", ()))
    found: list[_Site] = []

    def seg(n: ast.expr) -> str:
        return raw[n.col_offset:n.end_col_offset].decode("utf-8")

    for node, label in _labelled(tree.body):
        ok, v = _literal(node)
        near = 0 if label in names else 1
        if ok and type(v) in (type(None), bool, int, float, str, bytes):
            # A field's values elsewhere (`role='user'` beside `role='assistant'`); an unnamed
            # constant's would be every other string of the tests, noise before the plain variants.
            texts = [repr(x) for x in constant_variants(v, constants, siblings.get(label, []) if label else [])]
            found.append(_Site(node.col_offset, node.end_col_offset or 0, texts, near))
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)) and node.elts:
            parts = [seg(e) for e in node.elts]
            shape = {ast.List: "[]", ast.Tuple: "()", ast.Set: "{}"}[type(node)]
            texts = [_joined(shape, []), *(_joined(shape, parts[:i] + parts[i + 1:]) for i in range(min(len(parts), 4))),
                     _joined(shape, parts + parts[-1:])]
            found.append(_Site(node.col_offset, node.end_col_offset or 0, texts, near + 2))
        elif isinstance(node, ast.Dict) and node.keys and all(k is not None for k in node.keys):
            pairs = [f"{seg(k)}: {seg(x)}" for k, x in zip(node.keys, node.values, strict=True)]  # type: ignore[arg-type]
            texts = ["{}", *("{" + ", ".join(pairs[:i] + pairs[i + 1:]) + "}" for i in range(min(len(pairs), 4)))]
            found.append(_Site(node.col_offset, node.end_col_offset or 0, texts, near + 2))
    if source != "None":
        found.append(_Site(0, len(raw), ["None"], 4))
    found.sort(key=lambda s: s.priority)
    return found


def _joined(shape: str, items: list[str]) -> str:
    """A list, tuple or set (`shape`: its brackets) of these item sources."""
    if not items:
        return "set()" if shape == "{}" else shape
    return shape[0] + ", ".join(items) + ("," if shape == "()" and len(items) == 1 else "") + shape[1]


def variations(seed: list[str], params: list[list[str]], hints: dict[str, Any],
               siblings: dict[str, list[Any]]) -> Iterator[list[str]]:
    """The seed with one place changed at a time: the guard's names first, the first variant of every
    place before the second of any."""
    named = set(hints.get("names", ()))
    order = sorted(range(len(seed)), key=lambda i: params[i][0] not in named)
    places = [(i, s) for i in order for s in sites(seed[i], hints, siblings)]
    for rank in sorted({s.priority for _, s in places}):  # a whole class of places before the next
        group = [(i, s) for i, s in places if s.priority == rank]
        for k in range(MAX_VARIANTS):
            for i, s in group:
                if k < len(s.variants):
                    raw = seed[i].encode("utf-8")
                    changed = list(seed)
                    changed[i] = (raw[:s.start] + s.variants[k].encode("utf-8") + raw[s.end:]).decode("utf-8")
                    yield changed


def interleaved(streams: Sequence[Iterator[Any]]) -> Iterator[Any]:
    """One from each stream in turn until all are spent."""
    live = list(streams)
    while live:
        for s in list(live):
            item = next(s, None)
            if item is None:
                live.remove(s)
            else:
                yield item


def _values() -> Any:
    """The values helper, as a run has it (beside this file) or as reviewui does."""
    try:
        import reviewui_witness_values as found  # type: ignore[import-not-found]
    except ImportError:
        from reviewui.core.inside import witness_values as found
    return found


def strategies(fn: Any, params: list[list[str]], seeds: list[dict[str, Any]], bound: bool) -> Any:
    """Hypothesis's strategy for every parameter of `fn` from its type hints (`self`/`cls` of a method drawn
    from the seeds), or None when one has none or Hypothesis is not there."""
    try:
        import typing

        hints = typing.get_type_hints(fn)
    except Exception:
        return None
    if not all(name in hints or kind in ("var", "varkw") or (n == 0 and seeds and bound)
               for n, (name, kind) in enumerate(params)):
        return None  # Hypothesis is imported only for a function it can draw every argument of
    try:
        from hypothesis import strategies as st
    except Exception:
        return None
    parts: dict[str, Any] = {}
    for n, (name, kind) in enumerate(params):
        if kind == "var":
            parts[name] = st.just(())
        elif kind == "varkw":
            parts[name] = st.just({})
        elif name in hints:
            parts[name] = st.from_type(hints[name])
        elif n == 0 and seeds and bound:  # `self` (or `cls`): as the tests had it
            ns = [(s["values"][0], s.get("imports", [])) for s in seeds]
            parts[name] = st.sampled_from(ns).map(lambda p: _values().evaluate(p[0], _values().namespace(p[1])))
        else:
            return None
    return st.fixed_dictionaries(parts)
