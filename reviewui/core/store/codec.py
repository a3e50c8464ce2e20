"""Frozen dataclasses to JSON-ready data and back, exactly, guided by their type hints.

The evidence store keeps BiteReports, truth tables and findings as JSON. A
plain `asdict` loses what the records are made of (tuples come back as lists,
nested records as dicts), so decoding here rebuilds every field by its
declared type and refuses anything that does not fit: a row that fails to
decode is treated as absent, never half-trusted.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import lru_cache
from typing import Any, TypeVar, Union

T = TypeVar("T")


class CodecError(ValueError):
    """Stored data does not fit the type it is decoded as."""


def encode(value: Any) -> Any:
    """`value` (dataclasses, tuples, dicts, scalars) as JSON-ready lists, dicts and scalars."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise CodecError(f"cannot store a {type(value).__name__}")


def decode(cls: type[T], data: Any) -> T:
    """Rebuild a `cls` from what `encode` made of one. Raises CodecError when `data` does not fit."""
    return typing.cast(T, _decode(cls, data))


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(tp: Any, data: Any) -> Any:  # noqa: C901 - one branch per kind of type, read top to bottom
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return data
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(data, dict):
            raise CodecError(f"{tp.__name__}: expected an object")
        hints = _hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name in data:
                kwargs[f.name] = _decode(hints[f.name], data[f.name])
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise CodecError(f"{tp.__name__}: {f.name} is missing")
        try:
            return tp(**kwargs)
        except (TypeError, ValueError) as e:
            raise CodecError(f"{tp.__name__}: {e}") from e
    if origin in (Union, types.UnionType):
        for option in args:
            try:
                return _decode(option, data)
            except CodecError:
                continue
        raise CodecError(f"{data!r:.40} fits none of {tp}")
    if origin is typing.Literal:
        if data in args:
            return data
        raise CodecError(f"{data!r:.40} is not one of {args}")
    if origin is tuple:
        if not isinstance(data, list):
            raise CodecError("expected a list")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v) for v in data)
        if len(args) != len(data):
            raise CodecError(f"expected {len(args)} items, got {len(data)}")
        return tuple(_decode(a, v) for a, v in zip(args, data, strict=True))
    if origin is list:
        if not isinstance(data, list):
            raise CodecError("expected a list")
        return [_decode(args[0], v) for v in data]
    if origin is dict:
        if not isinstance(data, dict):
            raise CodecError("expected an object")
        return {_decode(args[0], k): _decode(args[1], v) for k, v in data.items()}
    if tp is type(None):
        if data is None:
            return None
        raise CodecError("expected null")
    if tp is float:
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return float(data)
        raise CodecError("expected a number")
    if tp in (bool, int, str):
        if type(data) is tp:
            return data
        raise CodecError(f"expected {tp.__name__}")
    raise CodecError(f"cannot decode type {tp}")
