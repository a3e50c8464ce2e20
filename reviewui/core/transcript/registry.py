"""The transcript formats reviewui reads: one registration per format, in one place.

Each module under `formats/` declares one `Format`: its name, the aliases a
user may type, a detector that looks at a `Sniff` of the file, a loader that
turns the file into drafts, and the real sample file its tests load.
`FORMAT_LIST` is the detection order (the more specific shapes first);
`detect`, `canonical` and `names` are all the rest of reviewui needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from reviewui.core.errors import ReviewError
from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.names import FORMATS
from reviewui.core.transcript.source import LineCounter


@dataclass(frozen=True)
class LoadOptions:
    """Choices a loader may need beyond the file itself."""

    instance: str | None = None
    """Which run to read from a file holding several (OpenHands resolver output, an Inspect AI log)."""
    branch_files: frozenset[str] = field(default_factory=frozenset)
    """Paths the branch under review changes; picks the run whose patch matches when `instance` is None."""


Detector = Callable[[Sniff], bool]
Loader = Callable[[Path, Sniff, LineCounter, LoadOptions], Run]


@dataclass(frozen=True)
class Format:
    """One transcript format: how to recognise it and how to load it."""

    name: str
    """The canonical name (`--transcript-format` value, `Transcript.format`)."""
    detect: Detector
    """True when a file's sniffed head is in this format."""
    load: Loader
    """Read the file into drafts (malformed records counted in the LineCounter)."""
    sample: str
    """A real sample of the format, relative to tests/fixtures/transcripts (or ../shared/transcripts)."""
    aliases: tuple[str, ...] = ()
    """Other spellings accepted for `name`."""


def _formats() -> tuple[Format, ...]:
    from reviewui.core.transcript.formats import FORMAT_LIST

    return FORMAT_LIST


def names() -> tuple[str, ...]:
    """Every registered format name, in the order of `names.FORMATS` (unlisted ones last)."""
    order = {n: i for i, n in enumerate(FORMATS)}
    return tuple(sorted((f.name for f in _formats()), key=lambda n: order.get(n, len(order))))


def get(name: str) -> Format:
    """The registered format named `name` (or one of its aliases).

    Raises ReviewError listing the accepted names when there is none.
    """
    key = name.strip().lower()
    for f in _formats():
        if key == f.name or key in f.aliases:
            return f
    raise ReviewError(f"unknown transcript format {name!r} (accepted: {', '.join(names())})")


def canonical(name: str) -> str:
    """The canonical name of format `name` or of an alias; raises ReviewError when unknown."""
    return get(name).name


def detect(s: Sniff) -> Format:
    """The first registered format whose detector accepts `s`.

    Raises ReviewError naming the accepted formats when none does.
    """
    for f in _formats():
        if f.detect(s):
            return f
    if s.is_dir:
        raise ReviewError(f"{s.path} is a folder but not an OpenHands conversation (no events/*.json)")
    raise ReviewError(
        f"cannot tell the format of transcript {s.path.name}; pass --transcript-format "
        f"({', '.join(names())})"
    )
