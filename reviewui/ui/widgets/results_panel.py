"""ResultsPanel: the bite-check evidence for the hunk under the cursor.

Verdict and reason, each failing test with its first failure line, and
the tail of the run's output, drawn as literal text.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from reviewui.core.safe_text import visible
from reviewui.ui.evidence_view import TONE_STYLE, bite_style
from reviewui.ui.widgets.guard_marks import NAME_ONLY_REASON, guard_lines, headline, headline_tone, only_a_missing_name
from reviewui.ui.widgets.hanging import HangingLines, by_indent

OUTPUT_TAIL = 40


class ResultsPanel(VerticalScroll):
    """Shows one HunkResult (or a hint when there is none)."""

    DEFAULT_CSS = """
    ResultsPanel { height: 12; max-height: 50%; border-top: solid $panel-lighten-2; padding: 0 1; }
    ResultsPanel.-hidden { display: none; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.result: Any | None = None
        self.baseline: Any | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="results-text")

    def on_mount(self) -> None:
        self._draw()  # what was shown before the panel was composed

    def show_result(self, result: Any | None, baseline: Any | None = None) -> None:
        """Show `result` (a HunkResult) or, without one, the baseline when it is red."""
        self.result, self.baseline = result, baseline
        self._draw()

    def _draw(self) -> None:
        text = self.query("#results-text")
        if not text:
            return  # mounted just now and not composed yet: on_mount draws
        result, baseline = self.result, self.baseline
        lines: list[Content] = []
        if result is None:
            if baseline is not None and baseline.status != "green":
                lines.append(Content.assemble(("baseline ", "bold"), (baseline.status, "bold $error"),
                                              f"  {visible(baseline.reason)}"))
                lines.extend(Content(f"  {visible(t)}") for t in baseline.failing_tests)
                lines.extend(Content.assemble(("  | " + visible(ln), "$text-muted"))
                             for ln in (baseline.output_tail or "").splitlines())
            else:
                lines.append(Content.assemble(("No bite-check for this hunk yet: b checks it, B sweeps every hunk.",
                                               "$text-muted")))
        else:
            where = f"  {visible(result.file)} {result.header}  {result.seconds:.2f}s"
            if only_a_missing_name(result):
                # Not "BROKEN": every test failing on import says nothing about the branch; its guards do.
                tone = TONE_STYLE[headline_tone(result.guards)]
                lines.append(Content.assemble((headline(result.guards), f"bold {tone}"), where))
                lines.append(Content.assemble(("  " + NAME_ONLY_REASON, "bold"),
                                              ("; its guards below are the evidence", "$text-muted")))
                if result.reason:
                    lines.append(Content.assemble(("  (" + visible(result.reason) + ")", "$text-muted")))
            else:
                lines.append(Content.assemble((result.verdict.upper(), f"bold {bite_style(result.verdict)}"), where))
                if result.reason:
                    lines.append(Content("  " + visible(result.reason)))
            w = getattr(result, "witness", None)
            if w is not None:  # a toothless hunk's witness (w shows it whole)
                lines.append(Content.assemble(("  " + visible(w.words()), "" if w.found else "$text-muted")))
            lines.extend(guard_lines(result))
            for test in result.failing_tests:
                lines.append(Content.assemble(("  ✗ ", "$error"), visible(test)))
                message = result.messages.get(test, "")
                if message:
                    lines.append(Content.assemble(("      " + visible(message.splitlines()[0]), "$text-muted")))
            if result.tests_run and result.verdict == "toothless":
                lines.append(Content.assemble(("  still passing with the hunk reverted: ", "$warning"),
                                              visible(", ".join(result.tests_run))))
            tail = result.output.splitlines()[-OUTPUT_TAIL:]
            if tail:
                lines.append(Content.assemble(("\noutput (tail)", "bold $text-muted")))
                lines.extend(Content("  " + visible(ln)) for ln in tail)
        text.first(Static).update(HangingLines(by_indent(lines)))  # an indented line wraps under its text
