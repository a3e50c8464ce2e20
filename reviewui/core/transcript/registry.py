"""The transcript formats reviewui reads: one registration per format, in one place.

Each module under `formats/` declares one `Format` (see `format_spec`): its
name, the aliases a user may type, a detector that claims a `Sniff` of the
file, a loader that turns the file into drafts, and the real sample file its
tests load. `detect`, `canonical` and `names` are all the rest of reviewui
needs. Detection asks every format: a file is read only when exactly one is
sure of it; two sure claims, or only weak ones, are refused in one line
naming the candidates and the fields each lacks (`--transcript-format`
picks one).
"""

from __future__ import annotations

from reviewui.core.errors import ReviewError
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions
from reviewui.core.transcript.formats import FORMAT_LIST
from reviewui.core.transcript.names import FORMATS

__all__ = ["Claim", "Format", "LoadOptions", "canonical", "claims", "detect", "get", "names"]


def names() -> tuple[str, ...]:
    """Every registered format name, in the order of `names.FORMATS` (unlisted ones last)."""
    order = {n: i for i, n in enumerate(FORMATS)}
    return tuple(sorted((f.name for f in FORMAT_LIST), key=lambda n: order.get(n, len(order))))


def get(name: str) -> Format:
    """The registered format named `name` (or one of its aliases).

    Raises ReviewError listing the accepted names when there is none.
    """
    key = name.strip().lower()
    for f in FORMAT_LIST:
        if key == f.name or key in f.aliases:
            return f
    raise ReviewError(f"unknown transcript format {name!r} (accepted: {', '.join(names())})")


def canonical(name: str) -> str:
    """The canonical name of format `name` or of an alias; raises ReviewError when unknown."""
    return get(name).name


def claims(s: Sniff, formats: tuple[Format, ...] = FORMAT_LIST) -> list[tuple[Format, Claim]]:
    """Every format's claim on `s` (formats making none left out), in registration order."""
    out: list[tuple[Format, Claim]] = []
    for f in formats:
        c = f.claim(s)
        if c is not None:
            out.append((f, c))
    return out


def detect(s: Sniff, formats: tuple[Format, ...] = FORMAT_LIST) -> Format:
    """The one format sure of `s`.

    Raises ReviewError (one line) when none claims it, when two or more are
    sure of it, or when the only claims are weak, naming the candidates and
    the fields each lacks.
    """
    found = claims(s, formats)
    sure = [f for f, c in found if c.sure]
    if len(sure) == 1:
        return sure[0]
    hint = "pass --transcript-format NAME to read it as one of them"
    if sure:
        raise ReviewError(
            f"transcript {s.path.name} reads as more than one format ({', '.join(f.name for f in sure)}); {hint}"
        )
    if found:
        said = "; ".join(f"{f.name} (lacks {', '.join(c.missing)})" for f, c in found)
        raise ReviewError(f"transcript {s.path.name} is not surely any format: {said}; {hint}")
    if s.is_dir:
        raise ReviewError(f"{s.path} is a folder but not an OpenHands conversation (no events/*.json)")
    raise ReviewError(
        f"cannot tell the format of transcript {s.path.name}; pass --transcript-format "
        f"({', '.join(names())})"
    )
