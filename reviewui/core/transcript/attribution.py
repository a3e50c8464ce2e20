"""Files a script wrote: a changed file no edit names is attributed to the turn that ran the script.

An agent that writes `fix.py` and runs `python fix.py` (or writes
`x.patch` and runs `patch -p1 < x.patch`) changes files no tool call names.
Such a file is attributed to the turns that ran a script the run itself
wrote, preferring a script whose text holds the file's new lines (the
content appears nowhere else) over one that opens the file for writing. A
script that merely names the file (a test that reads it) is not enough.
"""

from __future__ import annotations

from collections.abc import Sequence

from reviewui.core.transcript.pathmatch import norm_path
from reviewui.core.transcript.model import Transcript
from reviewui.core.transcript.shell import python_edits, scripts_run
from reviewui.core.transcript.tools import shell_command


def _same(a: str, b: str) -> bool:
    a, b = norm_path(a), norm_path(b)
    return bool(a and b) and (a == b or a.endswith("/" + b) or b.endswith("/" + a))


class ScriptRuns:
    """The scripts a transcript's turns ran, with the text the run gave each script."""

    def __init__(self, transcript: Transcript) -> None:
        self.runs: list[tuple[int, str]] = []  # (turn index, script path), in order
        self.texts: dict[str, str] = {}
        written: list[tuple[str, str]] = []  # (path, text) of every edit with known content
        for t in transcript.turns:
            for e in t.edits:
                text = e.new if e.new is not None else e.patch
                if text:
                    written.append((e.path, text))
            for c in t.tool_calls:
                if c.kind == "shell":
                    for script in scripts_run(shell_command(c.arguments) or ""):
                        self.runs.append((t.index, script))
        for _, script in self.runs:
            if script not in self.texts:
                self.texts[script] = "\n".join(text for path, text in written if _same(path, script))

    def attribute(self, path: str, added: Sequence[str] = ()) -> tuple[int, ...]:
        """The turns that ran a run-written script that wrote `path` (whose diff adds the lines `added`); () when none."""
        full = norm_path(path)
        name = full.rsplit("/", 1)[-1]
        tiers: list[set[int]] = [set(), set()]
        for turn, script in self.runs:
            text = self.texts.get(script, "")
            if not text or _same(script, path) or (full not in text and name not in text and not added):
                continue
            if added and any(a in text for a in added):
                tiers[0].add(turn)  # the file's new lines are in the script: it wrote them
            elif any(_same(e.path, path) for e in python_edits(text)) or (
                text.lstrip().startswith(("---", "diff ", "*** Begin Patch")) and name in text
            ):
                tiers[1].add(turn)
        for tier in tiers:
            if tier:
                return tuple(sorted(tier))
        return ()
