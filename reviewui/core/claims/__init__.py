"""The agent's claims about its test runs, read off its transcript (parsing only; nothing here runs).

`runner_commands` says which shell commands ran tests or a build (and with
which runner); `parse_summary` reads the summary a run printed. Checking a
claim by running the command again is the job of the sandboxed runner.
"""

from __future__ import annotations

from reviewui.core.claims.commands import RunnerCommand, runner_commands
from reviewui.core.claims.summary import TestSummary, parse_summary

__all__ = ["RunnerCommand", "TestSummary", "parse_summary", "runner_commands"]
