"""ReviewPart: the base of the review screen's parts, one per concern (bites, verdicts, transcript …).

A part owns its state and its bindings; the screen composes the parts,
wires its keys and messages to them, and asks every part in its one
`check_action`. A part reaches widgets through the screen and the
review's evidence through the session's ledger; it never reaches into
another part's state except through that part's methods.

A part sees the screen twice: as Textual sees it (`screen`: queries,
messages, workers, notices) and as the review uses it (`host`, a
`ReviewHost`: the widgets, the status line, the other parts by the few
methods asked of them). ReviewHost is a Protocol, so this module and the
parts stay below review.py, which imports them and never the reverse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, ClassVar, Protocol, Sequence

from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker

from reviewui.core.session import ReviewSession

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport
    from reviewui.core.hunks import Hunk
    from reviewui.core.evidence import EvidenceLedger
    from reviewui.core.findings.model import Finding
    from reviewui.ui.widgets.diff_view import DiffView
    from reviewui.ui.widgets.file_list import FileList


class Startup(Protocol):
    """The start-up part, as the other parts report to it (review_startup.StartupPart)."""

    @property
    def diff_loaded(self) -> bool:
        """True once the whole diff is parsed."""

    def settled(self, job: str) -> None:
        """Start-up job `job` is done (ReviewReady once all are)."""


class Navigation(Protocol):
    """The navigation part, as the other parts move the cursor (review_navigation.NavigationPart)."""

    def show(self, path: str, hunk: int | None = None) -> None:
        """Show file `path`, at `hunk` when given."""

    def jump_to(self, path: str, line: int | None) -> None:
        """Show file `path` with the cursor on new-side `line`."""

    def fit_sidebar(self) -> None:
        """Size the file list to its paths."""


class Findings(Protocol):
    """The findings part (review_findings.FindingsPart)."""

    def compute(self, bite_report: BiteReport | None = None) -> None:
        """Compute the findings in a worker (with the bite report's, when given)."""


class Verdicts(Protocol):
    """The verdicts part (review_verdicts.VerdictsPart)."""

    def load_state(self) -> None:
        """Read the reviewer's saved marks and comments."""

    def refresh_progress(self) -> None:
        """Redraw the reviewed-hunks progress."""

    def read_history(self, show: bool) -> None:
        """Read the branch's verdict history in a worker (`show`: open it when read)."""

    def all_hunks(self) -> list[Hunk]:
        """Every hunk of the branch (parses every file: after DiffLoaded or in a worker)."""


class Transcript(Protocol):
    """The transcript part (review_transcript.TranscriptPart)."""

    def set_claims(self, findings: Sequence[Finding]) -> None:
        """The findings arrived: flag the turns whose claims they judge."""

    async def show_turn(self, index: int) -> None:
        """Show turn `index` of the transcript."""


class Bites(Protocol):
    """The bites part (review_bites.BitesPart)."""

    def load_stored(self) -> None:
        """Show the stored bite results of this head, if any."""


class Fixtures(Protocol):
    """The fixtures part (review_fixtures.FixturesPart)."""

    def width_beside(self, total: int) -> int:
        """Columns the fixtures pane takes beside the diff on a screen `total` wide."""


class Delta(Protocol):
    """The since-verdict part (review_delta.DeltaPart)."""

    def start(self) -> None:
        """Compute what changed since your verdict, in a worker."""


class ReviewHost(Protocol):
    """What the parts need of the review screen besides its Textual side (review.ReviewScreen)."""

    first_paint_at: float | None
    """perf_counter() when the first screen was drawn (benchmarks read it)."""

    @property
    def session(self) -> ReviewSession:
        """The review's session."""

    @property
    def diff_view(self) -> DiffView:
        """The diff widget."""

    @property
    def file_list(self) -> FileList:
        """The file list widget."""

    @property
    def startup(self) -> Startup:
        """The start-up part."""

    @property
    def navigation(self) -> Navigation:
        """The navigation part."""

    @property
    def findings_part(self) -> Findings:
        """The findings part."""

    @property
    def verdicts_part(self) -> Verdicts:
        """The verdicts part."""

    @property
    def transcript_part(self) -> Transcript:
        """The transcript part."""

    @property
    def bites_part(self) -> Bites:
        """The bites part."""

    @property
    def fixtures_part(self) -> Fixtures:
        """The fixtures part."""

    @property
    def delta_part(self) -> Delta:
        """The since-verdict part."""

    def evidence_changed(self, path: str | None) -> None:
        """Redraw what is known about file `path` (None: the file shown)."""

    def transcript_in_front(self) -> bool:
        """True while the transcript pane, not the diff, is shown."""

    def set_status(self, text: str, source: str = "work") -> None:
        """Set what `source` says on the status bar."""

    async def start_transcript(self) -> None:
        """Mount the transcript pane and load the transcript."""

    def start_background(self) -> None:
        """Parse the whole diff and compute the findings in workers."""


class ReviewPart:
    """One concern of the review screen: its state, its keys, its workers."""

    BINDINGS: ClassVar[list[Binding]] = []
    """The keys of this part (merged into the screen's bindings in the screen's order)."""

    def __init__(self, screen: Screen[None], host: ReviewHost) -> None:
        self.screen = screen
        """The review screen, as Textual sees it (queries, messages, workers, notices)."""
        self.host = host
        """The same screen, as the review uses it (ReviewHost)."""
        self.session: ReviewSession = host.session

    @property
    def ledger(self) -> EvidenceLedger:
        """The review's evidence ledger."""
        return self.session.evidence

    def check_action(self, action: str) -> bool | None:
        """Whether `action` may run now: True yes, False hidden, None shown disabled.

        The screen asks every part; a part answers True for actions it does not own.
        """
        return True

    def close(self) -> None:
        """Release what the part holds (the screen is going away)."""

    def thread(self, work: Callable[[], None], group: str, name: str) -> Worker[None]:
        """Run `work` in an exclusive thread worker of `group` (the screen's worker, so messages reach it)."""
        return self.screen.run_worker(work, name=name, group=group, thread=True, exclusive=True, exit_on_error=False)
