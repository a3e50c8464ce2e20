"""Package attributes imported on first use (PEP 562), for packages whose parts are costly to load."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def lazy_attributes(package: str, home: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: attribute `name` comes from submodule `home[name]`, imported then."""

    def __getattr__(name: str) -> Any:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{home[name]}"), name)

    return __getattr__
