"""The agent's claims about its tests, checked: what it said it ran and saw, rerun at the branch head.

`commands.runner_commands` says which shell commands ran tests or a build (and
with which runner) and `find_test_command` the test run reviewui reruns;
`summary.parse_summary` reads the summary a run printed; `extract.extract_claims`
finds the claims in a transcript, `verify.rerun` reruns each distinct test
command once in the sandbox, `verify.judge` sets the two side by side, and
`findings.claim_findings` turns the checks into findings.
"""

from __future__ import annotations

from reviewui.core.claims.commands import RunCommand, RunnerCommand, find_test_command, runner_commands
from reviewui.core.claims.summary import TestSummary, parse_summary

__all__ = ["RunCommand", "RunnerCommand", "TestSummary", "find_test_command", "parse_summary", "runner_commands"]
