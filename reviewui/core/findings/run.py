"""Run every finding rule over a branch and return the findings in order.

Each rule runs on its own: one that crashes on an input nobody foresaw is
logged and yields no finding instead of taking the whole gate down (tests
call the rules directly, so this never hides a bug there). A ReviewError is
a problem the user can fix and is passed on. Per-kind severity overrides
from the settings are applied last.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from reviewui.core.errors import ReviewError
from reviewui.core.findings.claim_rules import claim_without_run
from reviewui.core.findings.bidi import bidi_control
from reviewui.core.findings.bite_rules import bite_findings
from reviewui.core.findings.guard_rules import guard_findings
from reviewui.core.findings.calls import test_mentions_only, uncalled_function
from reviewui.core.findings.change_shape import no_change, test_only_change
from reviewui.core.findings.config_rules import config_changed
from reviewui.core.findings.duplicates import duplicate_function
from reviewui.core.findings.model import KINDS, SEVERITIES, Finding, sort_key
from reviewui.core.findings.not_analysed import not_analysed
from reviewui.core.findings.refs import RefIndex
from reviewui.core.findings.report_tampering import report_tampering
from reviewui.core.findings.source import TreeSource
from reviewui.core.findings.source_readers import source_read_as_data
from reviewui.core.findings.symlinks import symlink_outside_tree
from reviewui.core.findings.task_ids import claimed_done_without_change, load_task_text, task_identifier_missing
from reviewui.core.findings.test_notices_name import test_only_notices_name
from reviewui.core.findings.test_passes_on_base import test_passes_on_base
from reviewui.core.findings.test_red_at_head import test_red_at_head
from reviewui.core.findings.tests_additive import tests_not_additive
from reviewui.core.findings.transcript_rules import undeclared_write
from reviewui.core.roles import DEFAULT_TEST_GLOBS

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport
    from reviewui.core.bite.truth_table import TruthTable
    from reviewui.core.config import Settings
    from reviewui.core.diff import Diff
    from reviewui.core.fixtures import FixtureReport
    from reviewui.core.fixtures.model import ChangedSymbol
    from reviewui.core.target import Target
    from reviewui.core.transcript import Transcript

log = logging.getLogger(__name__)


def compute_findings(
    target: Target,
    diff: Diff,
    settings: Settings,
    *,
    transcript: Transcript | None = None,
    task: str | None = None,
    bite: BiteReport | None = None,
    fixtures: FixtureReport | None = None,
    tests_table: TruthTable | None = None,
) -> list[Finding]:
    """Return every finding for the branch, sorted by severity, then file and line.

    `diff` is the Diff of target.base..target.head. `task` is the task text (else the transcript's
    first user turn is used); `transcript`, `bite` (a BiteReport) and
    `fixtures` (a FixtureReport, computed here when None) and `tests_table`
    (the per-test truth table) are optional.
    Raises ReviewError when git fails in a way the user must fix.
    """
    globs = tuple(settings.test_globs or DEFAULT_TEST_GLOBS)
    skipped = diff.budget_skipped()  # changed files past max-analysis-total-bytes: never parsed
    head = TreeSource(str(target.repo_dir), target.head, settings.exclude or (), skipped)
    lazy_symbols: list[list[ChangedSymbol]] = []
    lazy_fixtures: list[FixtureReport] = [fixtures] if fixtures is not None else []

    def symbols() -> list[ChangedSymbol]:
        if not lazy_symbols:
            from reviewui.core.fixtures import changed_symbols

            paths = [f.path for f in diff.files if f.status != "deleted" and f.path.endswith(".py")
                     and f.path not in skipped]
            lazy_symbols.append(changed_symbols(target.repo_dir, target.base, target.head, paths) if paths else [])
        return lazy_symbols[0]

    def fixture_report() -> FixtureReport:
        if not lazy_fixtures:
            from reviewui.core.fixtures import analyze

            paths = [f.path for f in diff.files if f.status != "deleted"]
            lazy_fixtures.append(analyze(target.repo_dir, target.base, target.head, paths, globs,
                                         settings.test_layout))
        return lazy_fixtures[0]

    task_text = load_task_text(task, None, transcript)
    index = RefIndex(head)
    rules: list[tuple[str, Callable[[], list[Finding]]]] = [
        ("no-change", lambda: no_change(target, diff)),
        ("config-changed", lambda: config_changed(target, settings)),
        ("bidi-control", lambda: bidi_control(diff)),
        ("not-analysed", lambda: not_analysed(str(target.repo_dir), diff, head)),
        ("symlink-outside-tree", lambda: symlink_outside_tree(str(target.repo_dir), diff)),
        ("report-tampering", lambda: report_tampering(target, diff)),
        ("test-only-change", lambda: test_only_change(diff)),
        ("tests-not-additive", lambda: tests_not_additive(target, diff, settings)),
        ("task-identifier-missing", lambda: task_identifier_missing(target, diff, task_text, head)),
        ("uncalled-function", lambda: uncalled_function(symbols(), index, globs)),
        ("test-mentions-only", lambda: test_mentions_only(fixture_report()) if _has_python(diff) else []),
        ("duplicate-function", lambda: duplicate_function(symbols(), head, globs)),
        ("undeclared-write", lambda: undeclared_write(target, diff, transcript)),
        ("claim-without-run", lambda: claim_without_run(transcript)),
        ("bite", lambda: bite_findings(bite)),
        ("toothless-guard", lambda: guard_findings(bite)),
        ("test-red-at-head", lambda: test_red_at_head(bite, tests_table)),
        ("test-reads-changed-source", lambda: source_read_as_data(bite)),
        ("test-passes-on-base", lambda: test_passes_on_base(tests_table)),
        ("test-only-notices-name", lambda: test_only_notices_name(tests_table)),
    ]
    found: list[Finding] = []
    for name, rule in rules:
        found += run_rule(name, rule)
    found += run_rule("claimed-done-without-change", lambda: claimed_done_without_change(transcript, found))
    return sorted(apply_severity(found, settings.severity or {}), key=sort_key)


def _has_python(diff: Diff) -> bool:
    return any(f.path.endswith(".py") and f.status != "deleted" for f in diff.files)


def run_rule(name: str, rule: Callable[[], list[Finding]]) -> list[Finding]:
    """Run one rule; a crash becomes a log record and no findings. ReviewError propagates."""
    try:
        return list(rule())
    except ReviewError:
        raise
    except Exception as e:  # noqa: BLE001 - one rule's bug must not take the gate down
        # One line on stderr for the user; the traceback only when debugging.
        log.warning("finding rule %s failed (%s: %s); it reports nothing for this branch", name, type(e).__name__, e)
        log.debug("traceback of the failed rule %s", name, exc_info=True)
        return []


def apply_severity(findings: list[Finding], overrides: dict[str, str]) -> list[Finding]:
    """Apply per-kind severity overrides to findings raised at their kind's default severity.

    A finding a rule deliberately raised below its default (the `info`
    notes of `uncalled-function` and `undeclared-write`) keeps its severity,
    so raising a kind to `error` never turns a note into a gate failure.
    """
    out: list[Finding] = []
    for f in findings:
        wanted = overrides.get(f.kind)
        new = next((s for s in SEVERITIES if s == wanted), None)  # the one Severity it names, if any
        default = KINDS[f.kind].severity if f.kind in KINDS else None
        if new is not None and f.severity == default:
            f = replace(f, severity=new)
        out.append(f)
    return out
