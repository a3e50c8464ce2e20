"""Typed reads of one key of a parsed JSON object, the wrong type read as a default.

Transcripts are agent output: any key may hold any JSON type, so a reader
takes a value only when it has the type it expects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")


def dict_at(d: Mapping[str, Any], key: str) -> dict[str, Any]:
    """`d[key]` when it is a JSON object, else an empty dict."""
    value = d.get(key)
    return value if isinstance(value, dict) else {}


def str_at(d: Mapping[str, Any], key: str, default: T) -> str | T:
    """`d[key]` when it is a string, else `default`."""
    value = d.get(key)
    return value if isinstance(value, str) else default
