"""What a transcript format is: its detector's claim, its loader, its registration record.

A leaf below `registry` and every module in `formats/`: each format module
declares its `Format` from here, and the registry imports the formats, so
neither imports the other back.

A detector answers with a `Claim` (or None when nothing in the file is its
own). A claim names the fields the format requires and which of them the
file lacks: a claim with none missing is sure, one with some missing is
weak. `registry.detect` reads a file only when exactly one format is sure of
it; two sure claims, or only weak ones, are refused naming the candidates
and what each lacks, so a file is never read as a format it merely resembles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.source import LineCounter


@dataclass(frozen=True)
class Claim:
    """A format's answer to "is this file mine?": the fields it requires that the file has and lacks."""

    required: tuple[str, ...] = ()
    """The fields (or shapes) the format keys on, in the words the refusal prints."""
    missing: tuple[str, ...] = ()
    """Those of `required` the file lacks; empty for a sure claim."""

    @property
    def sure(self) -> bool:
        """True when the file has every required field."""
        return not self.missing

    def __bool__(self) -> bool:
        return self.sure


def claim(fields: dict[str, bool]) -> Claim | None:
    """The claim of a format requiring `fields` (name → present): None when none is present.

    A format whose key fields are all absent makes no claim; all present is a
    sure claim; some present is a weak one naming the rest.
    """
    if not any(fields.values()):
        return None
    return Claim(tuple(fields), tuple(k for k, v in fields.items() if not v))


def keyed(key: bool, fields: dict[str, bool]) -> Claim | None:
    """The claim of a format whose mark `key` is in the file (None when it is not), requiring `fields` besides.

    For formats whose other fields are common to many formats (a `role`, a
    Markdown body): only the format's own mark makes it a candidate, and the
    rest decide whether it is sure.
    """
    if not key:
        return None
    return Claim(tuple(fields), tuple(k for k, v in fields.items() if not v))


@dataclass(frozen=True)
class LoadOptions:
    """Choices a loader may need beyond the file itself."""

    instance: str | None = None
    """Which run to read from a file holding several (OpenHands resolver output, an Inspect AI log)."""
    branch_files: frozenset[str] = field(default_factory=frozenset)
    """Paths the branch under review changes; picks the run whose patch matches when `instance` is None."""


Detector = Callable[[Sniff], "Claim | None"]
Loader = Callable[[Path, Sniff, LineCounter, LoadOptions], Run]


@dataclass(frozen=True)
class Format:
    """One transcript format: how to recognise it and how to load it."""

    name: str
    """The canonical name (`--transcript-format` value, `Transcript.format`)."""
    detect: Detector
    """A file's claim from its sniffed head: a `Claim` (sure or weak), or None when nothing in it is this format's."""
    load: Loader
    """Read the file into drafts (malformed records counted in the LineCounter)."""
    sample: str
    """A real sample of the format, relative to tests/fixtures/transcripts (or ../shared/transcripts)."""
    aliases: tuple[str, ...] = ()
    """Other spellings accepted for `name`."""

    def claim(self, s: Sniff) -> Claim | None:
        """This format's claim on `s` (None when it makes none)."""
        return self.detect(s)
