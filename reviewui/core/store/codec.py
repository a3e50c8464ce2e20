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
from typing import Any, Callable, TypeVar, Union

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
    dec: Decoder = _decoder(typing.cast(Any, cls))
    return typing.cast(T, dec(data))


Decoder = Callable[[Any], Any]


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


@lru_cache(maxsize=None)
def _decoder(tp: Any) -> Decoder:  # noqa: C901 - one branch per kind of type, read top to bottom
    """The function decoding data as `tp`, built once per type (the store decodes thousands of rows a read)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return lambda data: data
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass_decoder(tp)
    if origin in (Union, types.UnionType):
        options = [_decoder(a) for a in args]

        def union(data: Any) -> Any:
            for option in options:
                try:
                    return option(data)
                except CodecError:
                    continue
            raise CodecError(f"{data!r:.40} fits none of {tp}")
        return union
    if origin is typing.Literal:
        def literal(data: Any) -> Any:
            if data in args:
                return data
            raise CodecError(f"{data!r:.40} is not one of {args}")
        return literal
    if origin is tuple:
        return _tuple_decoder(args)
    if origin is list:
        item = _decoder(args[0])

        def as_list(data: Any) -> Any:
            if not isinstance(data, list):
                raise CodecError("expected a list")
            return [item(v) for v in data]
        return as_list
    if origin is dict:
        k_dec, v_dec = _decoder(args[0]), _decoder(args[1])

        def as_dict(data: Any) -> Any:
            if not isinstance(data, dict):
                raise CodecError("expected an object")
            return {k_dec(k): v_dec(v) for k, v in data.items()}
        return as_dict
    if tp is type(None):
        def none(data: Any) -> Any:
            if data is None:
                return None
            raise CodecError("expected null")
        return none
    if tp is float:
        def number(data: Any) -> Any:
            if isinstance(data, (int, float)) and not isinstance(data, bool):
                return float(data)
            raise CodecError("expected a number")
        return number
    if tp in (bool, int, str):
        def scalar(data: Any) -> Any:
            if type(data) is tp:
                return data
            raise CodecError(f"expected {tp.__name__}")
        return scalar
    raise CodecError(f"cannot decode type {tp}")


def _dataclass_decoder(tp: type) -> Decoder:
    hints = _hints(tp)
    fields = [(f.name, f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
              for f in dataclasses.fields(tp)]
    decoders: dict[str, Decoder] = {}

    def dataclass_(data: Any) -> Any:
        if not isinstance(data, dict):
            raise CodecError(f"{tp.__name__}: expected an object")
        kwargs = {}
        for name, required in fields:
            if name in data:
                dec = decoders.get(name)
                if dec is None:  # built on first use: a record may hold its own type
                    dec = decoders[name] = _decoder(hints[name])
                kwargs[name] = dec(data[name])
            elif required:
                raise CodecError(f"{tp.__name__}: {name} is missing")
        try:
            return tp(**kwargs)
        except (TypeError, ValueError) as e:
            raise CodecError(f"{tp.__name__}: {e}") from e
    return dataclass_


def _tuple_decoder(args: tuple[Any, ...]) -> Decoder:
    if len(args) == 2 and args[1] is Ellipsis:
        item = _decoder(args[0])

        def homogeneous(data: Any) -> Any:
            if not isinstance(data, list):
                raise CodecError("expected a list")
            return tuple(item(v) for v in data)
        return homogeneous
    items = [_decoder(a) for a in args]

    def fixed(data: Any) -> Any:
        if not isinstance(data, list):
            raise CodecError("expected a list")
        if len(items) != len(data):
            raise CodecError(f"expected {len(items)} items, got {len(data)}")
        return tuple(dec(v) for dec, v in zip(items, data, strict=True))
    return fixed
