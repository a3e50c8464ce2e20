"""Files a script wrote: a changed file no edit names is attributed to the turn that ran the script.

An agent that writes `fix.py` and runs `python fix.py` (or writes
`x.patch` and runs `patch -p1 < x.patch`) changes files no tool call names.
Such a file is attributed to the turns that ran a script the run itself
wrote, preferring a script whose text holds the file's new lines (the
content appears nowhere else) over one that opens the file for writing. A
script that merely names the file (a test that reads it) is not enough.

A script the transcript never shows being written (it is in the branch, or
was made by a command whose content is not recorded) is read from the diff:
its added lines are its text when the diff adds or changes it. A script
whose text is nowhere (a tool already in the repository) accounts for a
file only when its run's own output names the file (`reformatted a.py`,
`wrote src/gen.py`). Each rule applies only to files nothing else explains.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from reviewui.core.transcript.pathmatch import norm_path
from reviewui.core.transcript.model import Transcript
from reviewui.core.transcript.shell import python_edits, scripts_run
from reviewui.core.transcript.tools import shell_command


def _same(a: str, b: str) -> bool:
    a, b = norm_path(a), norm_path(b)
    return bool(a and b) and (a == b or a.endswith("/" + b) or b.endswith("/" + a))


def _names(output: str, full: str, name: str) -> bool:
    """True when a command's output names the file: its repo path, or its name as a whole word."""
    if not output:
        return False
    if "/" in full and full in output:
        return True
    return re.search(r"(?<![\w./-])" + re.escape(name) + r"(?![\w-])", output) is not None


class ScriptRuns:
    """The scripts a transcript's turns ran, with the text the run gave each script."""

    def __init__(self, transcript: Transcript, diff_texts: Mapping[str, str] | None = None) -> None:
        self.runs: list[tuple[int, str]] = []  # (turn index, script path), in order
        self.texts: dict[str, str] = {}
        self.outputs: dict[int, str] = {}  # turn index -> the output of the scripts it ran
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
            for cmd in t.commands:
                if cmd.result_turn is not None and scripts_run(cmd.command):
                    out = transcript.turn(cmd.result_turn).text
                    self.outputs[t.index] = self.outputs.get(t.index, "") + "\n" + out
        for _, script in self.runs:
            if script not in self.texts:
                text = "\n".join(text for path, text in written if _same(path, script))
                if not text and diff_texts:
                    text = next((v for f, v in diff_texts.items() if _same(f, script)), "")
                self.texts[script] = text

    def attribute(self, path: str, added: Sequence[str] = ()) -> tuple[int, ...]:
        """The turns that ran a run-written script that wrote `path` (whose diff adds the lines `added`); () when none."""
        full = norm_path(path)
        name = full.rsplit("/", 1)[-1]
        tiers: list[set[int]] = [set(), set(), set()]
        for turn, script in self.runs:
            text = self.texts.get(script, "")
            if not text and not _same(script, path) and _names(self.outputs.get(turn, ""), full, name):
                tiers[2].add(turn)  # a script we cannot read, whose run said it wrote the file
                continue
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
