"""App-wide messages: workers report with these, screens handle them.

Workers never touch widgets; they post one of these and a handler on the
UI thread updates what is shown. Every payload is typed with the core's
own records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from reviewui.core.bite.progress import TestsProgress
    from reviewui.core.bite.report import BiteReport, HunkResult
    from reviewui.core.bite.truth_table import TruthTable
    from reviewui.core.delta.model import Delta
    from reviewui.core.delta.since import Since
    from reviewui.core.store.key import StoredEvidence
    from reviewui.core.findings.model import Finding
    from reviewui.core.fixtures import FixtureReport
    from reviewui.core.evidence import HistoryView
    from reviewui.core.notes.authorship import Authorship
    from reviewui.core.notes.model import Review
    from reviewui.core.notes.preflight import SetupProblem
    from reviewui.core.transcript import Transcript
    from reviewui.core.transcript.linking import HunkLinks


class DiffLoaded(Message):
    """Every file's hunks are parsed (after the first paint)."""


class ReviewReady(Message):
    """The review's start-up work has settled: the diff parsed, findings computed,
    the transcript loaded and linked (or failed, or absent), the last verdict read."""


class WorkFailed(Message):
    """A background job failed; `what` names it, `error` says why in one line."""

    def __init__(self, what: str, error: str) -> None:
        super().__init__()
        self.what = what
        self.error = error


class AuthorshipRead(Message):
    """The branch's git-ai authorship notes were read (who wrote each head line; empty without notes)."""

    def __init__(self, authorship: Authorship) -> None:
        super().__init__()
        self.authorship = authorship


class FindingsReady(Message):
    """The static findings were computed."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__()
        self.findings = findings


class FixturesReady(Message):
    """The test anatomy / exercise map was computed."""

    def __init__(self, report: FixtureReport) -> None:
        super().__init__()
        self.report = report


class TranscriptReady(Message):
    """The transcript was loaded (links None) or loaded and linked to the hunks."""

    def __init__(self, transcript: Transcript, links: HunkLinks | None) -> None:
        super().__init__()
        self.transcript = transcript
        self.links = links


class BiteResult(Message):
    """One hunk's bite verdict arrived."""

    def __init__(self, result: HunkResult) -> None:
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


class TestsProgressed(Message):
    """A long run's progress (the baseline, the truth table's base run): tests done of collected,
    elapsed; only the newest matters."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, progress: TestsProgress) -> None:
        super().__init__()
        self.progress = progress

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TestsProgressed)


class BiteFinished(Message):
    """A bite run finished (report None when it failed before it had one)."""

    def __init__(self, report: BiteReport | None, error: str | None = None) -> None:
        super().__init__()
        self.report = report
        self.error = error


class HistoryRead(Message):
    """The branch's verdicts were read from git notes and weighed by the verdict relation."""

    def __init__(self, view: HistoryView, show: bool) -> None:
        super().__init__()
        self.view = view
        self.show = show
        """True when the reviewer asked for the history screen (not just the header)."""


class VerdictRecorded(Message):
    """A verdict was written to git notes (review None and error set when it was not)."""

    def __init__(self, review: Review | None, error: str | None = None, verdict: str = "") -> None:
        super().__init__()
        self.review = review
        self.error = error
        self.verdict = verdict
        """The verdict that was to be recorded (`approve`/`reject`; "" when not said)."""


class VerdictSetupChecked(Message):
    """Whether git can record a verdict here now: the problems found (empty: it can)."""

    def __init__(self, problems: list[SetupProblem]) -> None:
        super().__init__()
        self.problems = problems


class StoredLoaded(Message):
    """What the evidence store held for this review (read after the first paint)."""

    def __init__(self, stored: StoredEvidence) -> None:
        super().__init__()
        self.stored = stored


class TruthTableReady(Message):
    """The per-test truth table of a finished sweep (None with `error` when it could not be made)."""

    def __init__(self, table: TruthTable | None, error: str | None = None) -> None:
        super().__init__()
        self.table = table
        self.error = error


class DeltaRead(Message):
    """What changed since the reviewer's latest verdict was computed (None: no verdict of theirs)."""

    def __init__(self, found: tuple[Since, Delta] | None) -> None:
        super().__init__()
        self.found = found
