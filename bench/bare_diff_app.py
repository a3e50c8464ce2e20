"""The floor for "open a diff": a bare Textual app that runs `git diff` and shows its first screen."""

from __future__ import annotations

import subprocess
import sys
import time

from textual.app import App, ComposeResult
from textual.widgets import Static


class BareDiff(App[None]):
    def __init__(self, repo: str, rev_range: str) -> None:
        super().__init__()
        self.repo = repo
        self.rev_range = rev_range
        self.first_paint_at: float | None = None

    def compose(self) -> ComposeResult:
        out = subprocess.run(
            ["git", "diff", self.rev_range], cwd=self.repo, capture_output=True, check=True
        ).stdout.decode("utf-8", "replace")
        # Only the first screenful is ever drawn; a bare viewer needs no more.
        yield Static("\n".join(out.splitlines()[:60]), markup=False)

    def on_mount(self) -> None:
        # Timed exactly as reviewui's review screen times its own first paint.
        self.call_after_refresh(lambda: setattr(self, "first_paint_at", time.perf_counter()))


if __name__ == "__main__":
    BareDiff(sys.argv[1], sys.argv[2]).run()
