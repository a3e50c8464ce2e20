"""App-wide messages: workers report with these, screens handle them.

Workers never touch widgets; they post one of these and a handler on the
UI thread updates what is shown.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message


class DiffLoaded(Message):
    """Every file's hunks are parsed (after the first paint)."""


class WorkFailed(Message):
    """A background job failed; `what` names it, `error` says why in one line."""

    def __init__(self, what: str, error: str) -> None:
        super().__init__()
        self.what = what
        self.error = error


class FindingsReady(Message):
    """The static findings were computed."""

    def __init__(self, findings: list[Any]) -> None:
        super().__init__()
        self.findings = findings


class FixturesReady(Message):
    """The test anatomy / exercise map was computed."""

    def __init__(self, report: Any) -> None:
        super().__init__()
        self.report = report


class TranscriptReady(Message):
    """The transcript was loaded and linked to the hunks."""

    def __init__(self, transcript: Any, links: Any) -> None:
        super().__init__()
        self.transcript = transcript
        self.links = links


class BiteResult(Message):
    """One hunk's bite verdict arrived."""

    def __init__(self, result: Any) -> None:
        super().__init__()
        self.result = result


class BiteProgress(Message):
    """A sweep's progress; only the newest matters."""

    def __init__(self, done: int, total: int, note: str = "") -> None:
        super().__init__()
        self.done = done
        self.total = total
        self.note = note

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, BiteProgress)


class BiteFinished(Message):
    """A bite run finished (report None when it was cancelled or failed)."""

    def __init__(self, report: Any, error: str | None = None) -> None:
        super().__init__()
        self.report = report
        self.error = error
