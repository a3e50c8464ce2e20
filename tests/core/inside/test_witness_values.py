"""Values as source and back (inside/witness_values.py), in this process: what a seed and a witness are made of."""

from __future__ import annotations

import enum
import sys
from collections import namedtuple
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import PurePosixPath
from types import ModuleType

import pytest

from reviewui.core.inside import witness_values as values
from reviewui.core.witness import literal


@dataclass(frozen=True)
class Policy:
    base_delay: float = 0.5
    max_delay: float = 30.0


@dataclass
class Message:
    role: str
    reasoning: str = ""
    calls: list[Policy] = field(default_factory=list)


class Colour(enum.Enum):
    RED = 1


Pair = namedtuple("Pair", "a b")


class Plain:
    def __init__(self, n: int) -> None:
        self.n = n
        self.tags = {"x", "a"}


class Slotted:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 1


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """This module's classes found by name, as a project's would be (its module in sys.modules)."""
    here = sys.modules[__name__]
    monkeypatch.setitem(sys.modules, __name__, here)


def round_trip(value: object) -> tuple[str, object]:
    names = values.Names()
    source = values.render(value, names)
    back = values.evaluate(source, values.namespace(names.imports()))
    # and the host's grammar takes it: what a run renders, reviewui accepts
    literal.check(source, literal.Imports.of(names.imports(), frozenset({__name__.split(".")[0]})))
    return source, back


@pytest.mark.parametrize("value", [
    None, True, -3, 2.5, float("inf"), "it's", b"\x00\xff", [1, (2,), {3}], {"k": frozenset({1})},
    complex(1, -2), Policy(0.5, 2.0), [Message("user", "x", [Policy()])], Colour.RED, Pair(1, [2]),
    Decimal("1.50"), PurePosixPath("/etc/x"), str, Policy,
])
def test_a_value_comes_back_equal_from_its_source(value: object) -> None:
    source, back = round_trip(value)
    assert back == value and type(back) is type(value), source


def test_nan_and_plain_objects_come_back_by_their_state() -> None:
    source, back = round_trip(float("nan"))
    assert source == "float('nan')" and back != back
    source, back = round_trip(Plain(4))
    assert source.startswith("_obj(Plain, n=4, tags={'a', 'x'})")  # a set sorted: one source per value
    assert isinstance(back, Plain) and back.n == 4 and back.tags == {"a", "x"}


def test_names_are_aliased_apart_and_never_take_a_test_s_own_name() -> None:
    other = ModuleType("elsewhere")
    exec("class Policy:\n    pass\n", other.__dict__)
    other.Policy.__module__ = "elsewhere"
    sys.modules["elsewhere"] = other
    try:
        names = values.Names()
        source = values.render([Policy(), other.Policy], names)
    finally:
        del sys.modules["elsewhere"]
    assert source == "[Policy(base_delay=0.5, max_delay=30.0), Policy_2]"
    assert sorted(names.imports()) == [["elsewhere", "Policy", "Policy_2"], [__name__, "Policy", "Policy"]]
    assert values.Names().alias("m", "result") == "result_2"  # the test's own variable is never shadowed


@pytest.mark.parametrize("value", [lambda: 0, Slotted(), "x".upper, iter([1]), type("Local", (), {})(),
                                   __import__("collections").OrderedDict(a=1)])  # its items are no attributes
def test_what_no_test_could_build_is_unrenderable(value: object) -> None:
    with pytest.raises(values.Unrenderable):
        values.render(value, values.Names())


def test_a_deep_or_huge_value_is_unrenderable_and_a_short_one_is_cut() -> None:
    deep: list[object] = []
    for _ in range(20):
        deep = [deep]
    with pytest.raises(values.Unrenderable):
        values.render(deep, values.Names())
    with pytest.raises(values.Unrenderable):
        values.render(list(range(1000)), values.Names())
    assert values.render(["x" * 500] + list(range(20)), values.Names(), short=True) == \
        "[" + repr("x" * values.SHORT_TEXT) + ", 0, 1, 2, 3, 4, 5, 6]"


def test_results_compare_by_equality_else_by_repr_without_addresses() -> None:
    assert values.same(1, 1.0) and values.same([1], [1]) and not values.same([1], [2])
    assert values.same(float("nan"), float("nan"))  # == says no, the reprs agree
    assert values.same(object(), object())  # no __eq__: `<object object at 0x…>` twice
    assert not values.same(Plain(1), 2)


def test_parameters_by_kind() -> None:
    def f(a, /, b, *rest, c, d=1, **more):  # noqa: ANN001, ANN002, ANN003
        return a

    assert values.params_of(f.__code__) == [("a", "pos"), ("b", "pos"), ("rest", "var"), ("c", "kw"), ("d", "kw"),
                                             ("more", "varkw")]


def test_show_is_short() -> None:
    assert values.show(list(range(10_000))) == "[0, 1, 2, 3, ...]" and len(values.show("x" * 300)) < 60
    assert len(values.show([Plain(n) for n in range(4)], limit=50)) == 50


def test_two_answers_that_differ_are_shown_where_they_differ() -> None:
    a = Message("user", "x" * 200 + "mid-a" + "y" * 200)
    b = Message("user", "x" * 200 + "mid-b" + "y" * 200)
    assert values.show(a) == values.show(b)  # cut alike: a short repr keeps a string's ends
    head, reverted = values.show_pair(a, b, 60)
    assert head != reverted and "mid-a" in head and "mid-b" in reverted and head.startswith("…")
    assert values.show_pair(1, 2) == ("1", "2")

