"""ReviewHeader: what is under review, at a glance.

Repo, branch, base and head short SHAs, commit count, files and +/−
totals, review progress and the latest verdict, what changed since your
verdict; all drawn as literal text.
UNSANDBOXED in the error colour when agent code runs without bubblewrap;
how many tests red at the head the last bite-check quarantined, and in the
error colour how many of the branch's own tests are red there (red is red).
"""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from reviewui.core.session import ReviewSession
from reviewui.core.safe_text import visible


class ReviewHeader(Static):
    """One line of facts about the review."""

    DEFAULT_CSS = """
    ReviewHeader { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    progress: reactive[tuple[int, int]] = reactive((0, 0))
    verdict: reactive[str] = reactive("")
    status: reactive[str] = reactive("")
    unsandboxed: reactive[bool] = reactive(False)
    """Agent code runs without bubblewrap (the reviewer opted in); learned after the first paint."""
    quarantined: reactive[int] = reactive(0)
    since: reactive[str] = reactive("")
    """`since your approve of <date>: 2 hunks changed, 1 new, 14 unchanged` (the since-verdict view), or ""."""
    """Tests red at the head that the last bite-check left out (its baseline's `quarantined`)."""
    red_own: reactive[int] = reactive(0)
    """The branch's own new or changed tests red at the head (its baseline's `own_red`)."""

    def __init__(self, session: ReviewSession, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session

    def render(self) -> Content:
        t = self.session.target
        d = self.session.diff
        # What a reviewer needs most comes first, so a narrow terminal cuts the least useful facts:
        # what is reviewed, progress and verdict, then the range and the size of the change.
        parts: list[str | tuple[str, str]] = [(visible(t.repo_dir.name), "bold"), "  ", (visible(t.branch), "bold $accent")]
        done, total = self.progress
        if total:
            parts.append((f"  reviewed {done}/{total} hunks", "$text-muted"))
        if self.verdict:
            parts.append("  ")
            tone = "$success" if self.verdict.startswith("approve") else "$error"
            parts.append((self.verdict, f"bold {tone}"))
        if self.since:
            parts.append(("  " + self.since, "$accent"))
        if self.status:
            parts.append(("  " + self.status, "$warning"))
        if self.unsandboxed:
            parts.append(("  UNSANDBOXED", "bold $error"))
        if self.red_own:
            parts.append((f"  {self.red_own} own test{'s' if self.red_own != 1 else ''} red at head", "bold $error"))
        if self.quarantined:
            parts.append((f"  {self.quarantined} red at head, quarantined", "$warning"))
        parts += [
            f"  {len(d.files)} files ",
            (f"+{d.added}", "$success"),
            ("/", "$text-muted"),
            (f"−{d.removed}", "$error"),
            f"  {t.commits} commit{'s' if t.commits != 1 else ''}",
            f"  {visible(t.base_ref)}@{t.base[:7]}..{t.head[:7]}",
        ]
        return Content.assemble(*parts)
