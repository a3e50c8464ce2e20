"""The floor for "open the queue": a bare Textual app that lists the agent branches and shows the first screen."""

from __future__ import annotations

import subprocess
import sys

from textual.app import App, ComposeResult
from textual.widgets import Static


class BareQueue(App[None]):
    BINDINGS = [("q", "quit", "Quit")]  # as the queue quits: the bench sends `q`

    def __init__(self, repo: str) -> None:
        super().__init__()
        self.repo = repo

    def compose(self) -> ComposeResult:
        out = subprocess.run(["git", "for-each-ref", "--format=%(refname:short)", "refs/heads/agent/"],
                             cwd=self.repo, capture_output=True, check=True).stdout.decode().splitlines()
        # The same title the queue shows, then the first screenful of names.
        yield Static("\n".join([f"review queue: {len(out)} branches", *out[:48]]), markup=False)


if __name__ == "__main__":
    BareQueue(sys.argv[1]).run()
