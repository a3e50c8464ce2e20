"""reviewui's own run-side modules compiled once in the warm server, for every run it forks.

Placed as `reviewui_own_code.py` beside copies of the plugins and helpers (inside.PLUGINS,
inside.HELPERS) in the server's read-only plugin directory, and loaded by the server itself
(`warm_server.own_code`), never by a run. Every run gets its own copies of those modules at
the same path (room.RUN/plugin), and parsing and compiling them cost each run ~20 ms of its
start. The server compiles them once, under the file names the runs import them from, and
wraps the two places a run turns a module's source into code: pytest's assert rewrite (the
plugins, which PYTEST_PLUGINS marks for it) and the standard source loader (the helpers).
Each hands back the stored code only for a file at that path whose bytes are the ones it
compiled, made exactly as the run would have made it; any other file compiles as before. A
module holding an `assert` is left out: its rewrite depends on the run's configuration.

Standard library and pytest only (README.md here).
"""

from __future__ import annotations

import ast
import os
import types
from typing import Any

SELF = "reviewui_own_code.py"
"""This file's name in the plugin directory (not one of the modules it compiles)."""
STORED = "reviewui_own_code.pyc"
"""The compiled modules kept for later servers, beside the modules (`.pyc`: the plugin cache keeps those)."""

Table = dict[str, tuple[bytes, Any, Any]]


def install(directory: str, at: str) -> int:
    """Compile every module in `directory` as the file of that name under `at`, and have this
    process (and its forks) use that code for those files; returns how many were compiled."""
    return install_counted(directory, at)[0]


def install_counted(directory: str, at: str, *, store: bool = False) -> tuple[int, int]:
    """As `install`, each module's code taken from STORED in `directory` when made from its very
    bytes: (how many modules, how many of them were compiled here). With `store`, what was
    compiled here is written to STORED for later servers."""
    table, fresh = compiled_or_stored(directory, at)
    if table:
        _wrap_rewrite(table)
        _wrap_loader(table)
    if store and fresh:
        _store(directory, at, table)
    return len(table), fresh


def compiled(directory: str, at: str) -> Table:
    """File name under `at` -> (source bytes, code as the source loader makes it, code as pytest's
    assert rewrite makes it), for each module of `directory` that compiles and has no assert."""
    return compiled_or_stored(directory, at, {})[0]


def compiled_or_stored(directory: str, at: str, stored: Table | None = None) -> tuple[Table, int]:
    """As `compiled`, each module's code taken from `stored` (default: STORED in `directory`) when
    made from the very same bytes; returns the table and how many modules were compiled here."""
    from _pytest.assertion.rewrite import rewrite_asserts

    if stored is None:
        stored = _stored(directory, at)
    table: Table = {}
    fresh = 0
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".py") or name == SELF:
            continue
        with open(os.path.join(directory, name), "rb") as f:
            source = f.read()
        filename = at.rstrip("/") + "/" + name
        kept = stored.get(filename)
        if kept is not None and kept[0] == source:
            table[filename] = kept
            continue
        try:
            tree = ast.parse(source, filename=filename)
            if any(isinstance(node, ast.Assert) for node in ast.walk(tree)):
                continue
            plain = compile(source, filename, "exec", dont_inherit=True)
            rewrite_asserts(tree, source, filename, None)  # no assert: the configuration changes nothing
            rewritten = compile(tree, filename, "exec", dont_inherit=True)
        except Exception:
            continue  # the run compiles it itself, and meets the error as it would have
        table[filename] = (source, plain, rewritten)
        fresh += 1
    return table, fresh


def _stamp(at: str) -> bytes:
    """What STORED must begin with to be used: code is only valid for the Python (its magic
    number) and the pytest (its rewrite) that made it, and for the file names under `at`."""
    import importlib.util

    import pytest

    return b"".join([importlib.util.MAGIC_NUMBER, str(pytest.__version__).encode(), b"\0", at.encode(), b"\0"])


def _stored(directory: str, at: str) -> Table:
    """The modules STORED in `directory` holds for this Python, pytest and `at` (none when absent,
    made by another, or unreadable)."""
    import marshal

    stamp = _stamp(at)
    try:
        with open(os.path.join(directory, STORED), "rb") as f:
            data = f.read()
        if not data.startswith(stamp):
            return {}
        table = marshal.loads(data[len(stamp):])
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    # Only an entry shaped as compiled_or_stored keeps it is used: its bytes, then two code objects.
    return {k: v for k, v in table.items() if isinstance(v, tuple) and len(v) == 3
            and isinstance(v[1], types.CodeType) and isinstance(v[2], types.CodeType)}


def _store(directory: str, at: str, table: Table) -> None:
    """Write `table` to STORED in `directory`, whole or not at all."""
    import marshal

    path = os.path.join(directory, STORED)
    try:
        with open(path + ".part", "wb") as f:
            f.write(_stamp(at) + marshal.dumps(table))
        os.replace(path + ".part", path)
    except (OSError, ValueError):
        pass  # later servers compile them, as this one did


def _wrap_rewrite(table: dict[str, tuple[bytes, Any, Any]]) -> None:
    """pytest's `_rewrite_test(fn, config)` hands back the stored rewritten code for a stored file."""
    import _pytest.assertion.rewrite as rewrite

    real = rewrite._rewrite_test

    def stored(fn: Any, config: Any) -> Any:
        hit = table.get(str(fn))
        if hit is not None:
            try:
                stat = os.stat(fn)
                with open(fn, "rb") as f:
                    if f.read() == hit[0]:
                        return stat, hit[2]
            except OSError:
                pass
        return real(fn, config)

    rewrite._rewrite_test = stored


def _wrap_loader(table: dict[str, tuple[bytes, Any, Any]]) -> None:
    """The source loader hands back the stored code for a stored file's very bytes."""
    from importlib.machinery import SourceFileLoader

    real = SourceFileLoader.source_to_code

    def source_to_code(self: Any, data: Any, path: Any, *, _optimize: int = -1) -> Any:
        hit = table.get(path) if _optimize == -1 and isinstance(path, str) else None
        if hit is not None and data == hit[0]:
            return hit[1]
        return real(self, data, path, _optimize=_optimize)

    SourceFileLoader.source_to_code = source_to_code  # type: ignore[method-assign]
