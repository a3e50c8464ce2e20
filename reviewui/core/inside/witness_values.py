"""Values as Python source and back, for the witness plugin and search (copied as `reviewui_witness_values`).

Standard library only, and no effect on import: reviewui imports it for its
names too. `render` writes a value as source over the names it needs
(`Names`: module, attribute and a unique alias each) and knows None, bools,
numbers, strings, bytes, lists, tuples, sets, dicts, enum members,
module-level classes and functions, dataclasses and named tuples (by their
fields), a few standard-library value types (by their repr, checked by
evaluating it back) and plain objects (`_obj(Class, attr=...)`: made
without calling `__init__`). Anything else is `Unrenderable`: such a call
cannot be written as a test. `same` is how two results compare: `==`, else
their reprs with memory addresses set aside.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import re
import sys
import types
from typing import Any

MODULE = "reviewui_witness_values"
SEEDS_VAR = "REVIEWUI_WITNESS_SEEDS"
"""Names the capture request of a baseline run (witness_plugin.py)."""
SEARCH_VAR = "REVIEWUI_WITNESS"
"""Names the search request of a search run (witness_search.py)."""
SEARCH_MODULE = "reviewui_witness_search"
"""The search half's module name in a run (witness_search.py, placed beside the plugin)."""

SHORT_TEXT = 64
"""Characters kept of a long string (bytes) in a shortened seed."""
SHORT_ITEMS = 8
"""Items kept of a long container in a shortened seed."""
MAX_DEPTH = 8
MAX_NODES = 400
"""How deep and how many values one rendering may hold."""
_STDLIB_REPR = frozenset({"datetime", "decimal", "fractions", "pathlib", "uuid", "ipaddress"})
"""Modules whose value types are rendered by their repr (each checked by evaluating it back)."""
RESERVED = frozenset({"result", "pytest", "_obj", "float", "complex", "frozenset", "set", "range", "repr", "_",
                      "True", "False", "None"})
"""Names a witness test uses itself: never an alias (reviewui's witness/literal.py TEST_NAMES, and the constants)."""


_OBJECT_NEW: Any = object.__new__


class Unrenderable(Exception):
    """This value cannot be written as Python source a test could run."""


def _obj(cls: Any, **attrs: Any) -> Any:
    """An instance of `cls` with these attributes, made without calling its __init__."""
    obj = object.__new__(cls)
    obj.__dict__.update(attrs)
    return obj


class Names:
    """The names a rendered source refers to: (module, attribute) -> alias, the first comer plain."""

    def __init__(self) -> None:
        self.aliases: dict[tuple[str, str], str] = {}
        self.used: set[str] = set(RESERVED)

    @classmethod
    def of(cls, imports: list[list[str]]) -> Names:
        """Names already holding `imports` ([[module, attribute, alias]])."""
        names = cls()
        for module, attr, alias in imports:
            names.aliases[(module, attr)] = alias
            names.used.add(alias)
        return names

    def alias(self, module: str, attr: str) -> str:
        """The alias `attr` of `module` is known by in the source (made unique)."""
        key = (module, attr)
        if key not in self.aliases:
            name, n = attr, 2
            while name in self.used:
                name, n = f"{attr}_{n}", n + 1
            self.used.add(name)
            self.aliases[key] = name
        return self.aliases[key]

    def name_for(self, obj: Any) -> str:
        """How the source names a module-level class or function (raises Unrenderable)."""
        module, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if not isinstance(module, str) or not isinstance(qual, str) or "<" in qual:
            raise Unrenderable(f"{qual or obj!r:.40} is not reachable by name")
        parts = qual.split(".")
        found: Any = sys.modules.get(module)
        for p in parts:
            found = getattr(found, p, None)
        if found is not obj:
            raise Unrenderable(f"{module}.{qual} is not where its name says")
        return ".".join([self.alias(module, parts[0]), *parts[1:]])

    def imports(self) -> list[list[str]]:
        """[[module, attribute, alias]] of every name used."""
        return [[m, a, alias] for (m, a), alias in self.aliases.items()]


def render(value: Any, names: Names, short: bool = False) -> str:
    """`value` as Python source over `names` (raises Unrenderable); `short` cuts long strings and
    containers (the source is then a plausible input, no longer this value)."""
    return _Renderer(names, short).render(value, 0)


class _Renderer:
    def __init__(self, names: Names, short: bool) -> None:
        self.names, self.short, self.left = names, short, MAX_NODES

    def render(self, v: Any, depth: int) -> str:  # noqa: C901 - one branch per kind of value
        self.left -= 1
        if self.left < 0 or depth > MAX_DEPTH:
            raise Unrenderable("too large or too deep")
        t = type(v)
        if v is None or t is bool or t is int:
            return repr(v)
        if t is float:
            return repr(v) if math.isfinite(v) else f"float({repr(v)!r})"
        if t is complex:
            return f"complex({self.render(v.real, depth + 1)}, {self.render(v.imag, depth + 1)})"
        if t is str or t is bytes:
            return repr(v[:SHORT_TEXT] if self.short else v)
        if t in (list, tuple, set, frozenset):
            items = [self.render(x, depth + 1) for x in self._items(v)]
            if t in (set, frozenset):
                items.sort()
            if t is list:
                return "[" + ", ".join(items) + "]"
            if t is tuple:
                return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
            inner = "{" + ", ".join(items) + "}" if items else ""
            return (f"frozenset({inner})" if t is frozenset else inner or "set()")
        if t is dict:
            pairs = [f"{self.render(k, depth + 1)}: {self.render(x, depth + 1)}" for k, x in self._items(v.items())]
            return "{" + ", ".join(pairs) + "}"
        if isinstance(v, enum.Enum):
            member = str(getattr(v, "name", ""))
            if not member or getattr(t, member, None) is not v:
                raise Unrenderable("an enum member not found by its name")
            return f"{self.names.name_for(t)}.{member}"
        if isinstance(v, type) or isinstance(v, (types.FunctionType, types.BuiltinFunctionType)):
            return self.names.name_for(v)
        return self._instance(v, t, depth)

    def _items(self, v: Any) -> list[Any]:
        items = list(v)
        return items[:SHORT_ITEMS] if self.short else items

    def _instance(self, v: Any, t: type, depth: int) -> str:
        if isinstance(v, tuple) and hasattr(t, "_fields"):
            return self._call(t, [(f, getattr(v, f)) for f in t._fields], depth)
        if dataclasses.is_dataclass(v) and all(f.init for f in dataclasses.fields(v)):
            return self._call(t, [(f.name, getattr(v, f.name)) for f in dataclasses.fields(v)], depth)
        if t.__module__.split(".")[0] in _STDLIB_REPR:
            text = repr(v)
            head, paren, rest = text.partition("(")
            if not paren or not re.fullmatch(r"[\w.]+", head):
                raise Unrenderable(f"the repr of {t.__name__} is not a call")
            source = f"{self.names.name_for(t)}({rest}"
            if not _evaluates_to(source, self.names, v):
                raise Unrenderable(f"the repr of {t.__name__} does not evaluate back")
            return source
        if isinstance(v, (dict, list, tuple, set, frozenset, str, bytes, int, float)):
            raise Unrenderable(f"a {t.__name__} (a builtin's subclass) cannot be written by its attributes")
        attrs = getattr(v, "__dict__", None)
        plain = getattr(t, "__new__", None) is _OBJECT_NEW  # made as object() makes one
        if (isinstance(attrs, dict) and plain and "__slots__" not in vars(t)
                and all(isinstance(k, str) and k.isidentifier() for k in attrs)):
            parts = [self.names.name_for(t)] + [f"{k}={self.render(x, depth + 1)}" for k, x in attrs.items()]
            return "_obj(" + ", ".join(parts) + ")"
        raise Unrenderable(f"a {t.__name__} cannot be written as source")

    def _call(self, t: type, fields: list[tuple[str, Any]], depth: int) -> str:
        args = ", ".join(f"{k}={self.render(x, depth + 1)}" for k, x in fields)
        return f"{self.names.name_for(t)}({args})"


def namespace(imports: list[list[str]]) -> dict[str, Any]:
    """The names a source over `imports` needs, imported (raises Unrenderable when one is missing)."""
    import importlib

    ns: dict[str, Any] = {"float": float, "complex": complex, "frozenset": frozenset, "set": set, "_obj": _obj}
    for module, attr, alias in imports:
        try:
            ns[alias] = getattr(importlib.import_module(module), attr)
        except Exception as e:
            raise Unrenderable(f"cannot import {attr} from {module}: {type(e).__name__}") from e
    return ns


_CODE: dict[str, Any] = {}


def evaluate(source: str, ns: dict[str, Any]) -> Any:
    """The value `source` stands for, in namespace `ns` (no other builtins)."""
    code = _CODE.get(source)
    if code is None:
        code = _CODE[source] = compile(source, "<witness>", "eval", dont_inherit=True)
    return eval(code, {"__builtins__": {}}, dict(ns))


def _evaluates_to(source: str, names: Names, value: Any) -> bool:
    try:
        return bool(evaluate(source, namespace(names.imports())) == value)
    except Exception:
        return False


def same(a: Any, b: Any) -> bool:
    """The same result: `==` says so; else, where both can be written as source, the same source (an
    object without an `==` of its own compared by its state, not its identity); else their reprs agree
    (memory addresses set aside)."""
    if a is b:
        return True
    try:
        if (a == b) is True:
            return True
    except Exception:
        pass
    try:
        return render(a, Names()) == render(b, Names())
    except Exception:
        pass
    try:
        return _ADDRESS.sub(" at 0x", repr(a)) == _ADDRESS.sub(" at 0x", repr(b))
    except Exception:
        return False


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def show_pair(a: Any, b: Any, limit: int = 120) -> tuple[str, str]:
    """Short reprs of two values that differ, cut where they differ (`…regex_pattern=None, …`), not
    both at the same place where they agree."""
    short_a, short_b = show(a, limit), show(b, limit)
    if short_a != short_b:
        return short_a, short_b
    try:
        full_a, full_b = repr(a)[:20000], repr(b)[:20000]
    except Exception:
        return short_a, short_b
    at = next((n for n, (x, y) in enumerate(zip(full_a, full_b, strict=False)) if x != y),
              min(len(full_a), len(full_b)))
    start = max(0, at - limit // 4)

    def window(text: str) -> str:
        part = text[start:start + limit - 2]
        return ("…" if start else "") + part + ("…" if start + limit - 2 < len(text) else "")
    return window(full_a), window(full_b)


def show(value: Any, limit: int = 120) -> str:
    """A short repr of `value` for a person (`…` where cut)."""
    import reprlib

    r = reprlib.Repr()
    r.maxstring, r.maxother, r.maxlist, r.maxtuple, r.maxdict, r.maxset, r.maxlevel = 40, 60, 4, 4, 4, 4, 3
    try:
        text = r.repr(value)
    except Exception as e:
        text = f"<repr failed: {type(e).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08


def params_of(code: types.CodeType) -> list[tuple[str, str]]:
    """(name, kind) of each parameter: `pos` (positional), `var` (*args), `kw` (keyword-only), `varkw`."""
    names = code.co_varnames
    n, k = code.co_argcount, code.co_kwonlyargcount
    out = [(name, "pos") for name in names[:n]]
    at = n + k
    if code.co_flags & _CO_VARARGS:
        out.append((names[at], "var"))
        at += 1
    out += [(name, "kw") for name in names[n:n + k]]
    if code.co_flags & _CO_VARKEYWORDS:
        out.append((names[at], "varkw"))
    return out


def expectation(names: Names, value: Any, other: tuple[Any, ...] | None) -> dict[str, Any] | None:
    """How a test states `value`: as source (when it evaluates back equal, and not equal to `other`),
    else as its repr (when that says it and not `other`); None when neither can."""
    try:
        source = render(value, names)
        back = evaluate(source, namespace(names.imports()))
        if (back == value) is True and (other is None or (back == other[0]) is not True):
            return {"expect": source}
    except Exception:
        pass
    try:
        text = repr(value)
        if " at 0x" not in text and len(text) <= 4000 and (other is None or repr(other[0]) != text):
            return {"repr": text}
    except Exception:
        pass
    return None
