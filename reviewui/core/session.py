"""ReviewSession: the one object the UI and the headless commands are handed.

It pins the target and settings, lists the diff, and computes the slower
evidence (fixtures, transcript, findings) on first request and caches it,
so the UI can ask for each from a worker thread and the CLI in sequence.
It is the whole facade: bite-checks, probes, verdicts, history, findings
and the transcript are asked of it, never of the core modules behind it,
so the run options and `--hunk` are read in one place, and a verdict's
evidence always comes from the session's one EvidenceLedger.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar, cast

from reviewui.core.config import (BranchConfigChange, Settings, branch_config_change, resolve_settings,
                                   with_command)
from reviewui.core.bounded import read_input_text
from reviewui.core.errors import ReviewError
from reviewui.core.review_inputs import default_task, find_transcript
from reviewui.core.run_options import RunOptions
from reviewui.core.session_store import SessionStore
from reviewui.core.session_verdicts import SessionVerdicts
from reviewui.core.target import Target, resolve_target

if TYPE_CHECKING:
    # Types only: a session that only reads a transcript (`transcript FILE`) must start fast.
    from reviewui.core.claims.verify import ClaimCheck
    from reviewui.core.delta.model import Delta
    from reviewui.core.delta.since import Since
    from reviewui.core.diff import Diff
    from reviewui.core.evidence import EvidenceLedger, HunkKey
    from reviewui.core.bite.engine import BiteCache
    from reviewui.core.bite.progress import ProgressSink
    from reviewui.core.bite.report import BiteReport, HunkResult
    from reviewui.core.bite.truth_table import TruthTable
    from reviewui.core.store import EvidenceStore
    from reviewui.core.findings.model import Finding
    from reviewui.core.fixtures import FixtureReport
    from reviewui.core.notes.authorship import Authorship
    from reviewui.core.probe.run import ProbeReport
    from reviewui.core.transcript import Transcript
    from reviewui.core.transcript.linking import HunkLinks

__all__ = ["ReviewSession", "RunOptions"]  # RunOptions lives in run_options.py, below the session's parts

T = TypeVar("T")


@dataclass
class ReviewSession(SessionStore, SessionVerdicts):
    """A branch under review and everything learned about it so far."""

    target: Target
    settings: Settings
    diff: Diff
    transcript_path: Path | None = None
    transcript_format: str | None = None
    transcript_instance: str | None = None
    task: str | None = None
    run: RunOptions = field(default_factory=RunOptions)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _key_locks: dict[str, threading.Lock] = field(default_factory=dict, repr=False)
    _ledger: EvidenceLedger | None = field(default=None, repr=False)
    _store: EvidenceStore | None = field(default=None, repr=False)
    _claim_checks: "list[ClaimCheck]" = field(default_factory=list, repr=False)
    """The last claims() checks with reruns, which findings(report) then includes."""

    @classmethod
    def open(
        cls,
        repo: str | Path | None = None,
        branch: str | None = None,
        base: str | None = None,
        *,
        transcript: str | Path | None = None,
        transcript_format: str | None = None,
        transcript_instance: str | None = None,
        task: str | None = None,
        task_file: str | Path | None = None,
        run: RunOptions | None = None,
        trust_branch_config: bool = False,
    ) -> "ReviewSession":
        """Resolve the target, read the repo's settings and list the diff.

        Raises ReviewError for anything the user can fix (bad repo, branch,
        base, config, or an unreadable task file). Settings come from the
        user's and the base commit's config; the branch's own config changes
        only with `trust_branch_config`.
        """
        target = resolve_target(repo, branch, base)
        settings = resolve_settings(target.repo_dir, target.base, target.head, trust_branch=trust_branch_config)
        if run is not None and run.test_cmd:  # the files a --test-cmd names are tests, as a configured one's
            settings = with_command(settings, run.test_cmd)
        from reviewui.core.diff import load_diff

        diff = load_diff(str(target.repo_dir), target.base, target.head, settings.test_globs)
        tpath = Path(transcript) if transcript else find_transcript(target.repo_dir, settings)
        if tpath is not None and not tpath.exists():
            raise ReviewError(f"no such transcript: {tpath}")
        if task_file is not None:
            try:
                task = read_input_text(task_file, "task file")  # no FIFO, device or bomb
            except OSError as e:
                raise ReviewError(f"cannot read task file: {task_file}") from e
        elif task is None:
            task = default_task(target)
        return cls(
            target=target,
            settings=settings,
            diff=diff,
            transcript_path=tpath,
            transcript_format=transcript_format,
            transcript_instance=transcript_instance,
            task=task,
            run=run or RunOptions(),
        )

    def __getstate__(self) -> dict[str, Any]:
        """What crosses a process boundary (`reviewui open` opens the session in a helper,
        `work_ahead.py`): everything but the locks, which belong to one process's threads."""
        state = self.__dict__.copy()
        del state["_lock"]
        state["_key_locks"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def test_command(self) -> str:
        """The test command in force (flag, then config, then default)."""
        return self.run.test_cmd or self.settings.test_command

    def branch_config(self) -> BranchConfigChange:
        """How the branch changes reviewui's own config (keys, files), computed once."""
        t = self.target
        return self._cached("branch_config", lambda: branch_config_change(t.repo_dir, t.base, t.head))

    def accept_branch_config(self) -> None:
        """Apply the branch's own config changes for the rest of this review (findings recomputed).

        Changed test globs re-classify the diff's files (test or source) in place.
        Raises ReviewError when the branch's config is not valid.
        """
        t = self.target
        self.settings = resolve_settings(t.repo_dir, t.base, t.head, trust_branch=True)
        if self.run.test_cmd:
            self.settings = with_command(self.settings, self.run.test_cmd)
        self.diff.reclassify(self.settings.test_globs)
        with self._lock:
            for key in ("findings", "analysed_diff", "fixtures"):
                self._cache.pop(key, None)

    def _cached(self, key: str, make: Callable[[], T]) -> T:
        # One lock per key: a second worker asking for the transcript while the
        # first is loading it waits for that load instead of doing it again.
        with self._lock:
            if key in self._cache:
                return cast(T, self._cache[key])
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._cache:
                    return cast(T, self._cache[key])
            value = make()
            with self._lock:
                self._cache[key] = value
            return value

    def analysed_diff(self) -> Diff:
        """The diff less the files the settings exclude from analysis (findings, bite-checks)."""
        if not self.settings.exclude:
            return self.diff
        from reviewui.core.roles import matches_any

        def make() -> Diff:
            keep = [f for f in self.diff.files if not matches_any(f.path, self.settings.exclude)]
            return self.diff.subset(keep)

        return self._cached("analysed_diff", make)

    def transcript(self) -> "Transcript | None":
        """The agent's transcript, loaded once; None when there is none.

        Raises ReviewError when the file cannot be read as any known format.
        """
        if self.transcript_path is None:
            return None
        from reviewui.core.transcript import load_transcript
        from reviewui.core.transcript.linking import git_base_reader

        path = self.transcript_path
        return self._cached(
            "transcript",
            lambda: load_transcript(
                path, self.transcript_format, test_globs=self.settings.test_globs,
                instance=self.transcript_instance, branch_files=[f.path for f in self.diff.files],
                base_file=git_base_reader(self.target.repo_dir, self.target.base),
            ),
        )

    def fixtures(self) -> "FixtureReport":
        """The anatomy of the branch's tests and the symbol exercise map."""
        from reviewui.core.fixtures import analyze

        paths = [f.path for f in self.analysed_diff().files if f.status != "deleted"]
        t = self.target
        return self._cached(
            "fixtures", lambda: analyze(t.repo_dir, t.base, t.head, paths, self.settings.test_globs,
                                        self.settings.test_layout)
        )

    def task_text(self) -> str | None:
        """The task: given explicitly, else the transcript's first user turn."""
        if self.task:
            return self.task
        tr = self.transcript()
        return tr.task_text() if tr is not None else None

    def findings(self, bite: "BiteReport | None" = None, tests_table: "TruthTable | None" = None) -> "list[Finding]":
        """The static findings (and bite-based ones when a BiteReport or a truth table is given; with
        them, the rerun claims' findings once `claims()` ran)."""
        from reviewui.core.findings import compute_findings

        def make() -> "list[Finding]":
            return compute_findings(
                self.target,
                self.analysed_diff(),
                self.settings,
                transcript=self.transcript(),
                task=self.task_text(),
                bite=bite,
                fixtures=self.fixtures(),
                tests_table=tests_table,
            )

        if bite is not None or tests_table is not None:
            found = make()
            if self._claim_checks:
                from reviewui.core.claims.findings import claim_findings
                from reviewui.core.findings.model import sort_key

                reran = [c for c in self._claim_checks if c.outcome != "without-run"]  # that one is static
                found = sorted([*found, *claim_findings(reran)], key=sort_key)
            return found
        return self._cached("findings", make)

    # --- the evidence ledger ---------------------------------------------

    @property
    def evidence(self) -> EvidenceLedger:
        """The review's evidence ledger (the reviewer's local state read on first use)."""
        if self._ledger is None:
            from reviewui.core.state import ReviewState

            from reviewui.core.evidence import EvidenceLedger

            self._ledger = EvidenceLedger(ReviewState.load(self.target.repo_dir, self.target.branch))
        return self._ledger

    @property
    def evidence_read(self) -> bool:
        """True once the evidence ledger has been read (the first use of `evidence`)."""
        return self._ledger is not None

    def collect_findings(self) -> "list[Finding]":
        """Compute the findings (with bite findings from the ledger's last bite run) into the ledger."""
        found = self.findings(self.evidence.report, self.evidence.truth_table)
        self.evidence.set_findings(found)
        return found

    # --- bite-checks and probes ------------------------------------------

    def hunks(self, spec: str) -> list[HunkKey]:
        """The hunks `--hunk FILE[:INDEX]` names for a bite-check (every hunk of FILE without INDEX).

        Raises ReviewError for a file the branch does not change (or the settings exclude) or a bad index.
        """
        from reviewui.core.bite.engine import parse_hunk_spec

        self.diff.preload()
        keys = parse_hunk_spec(spec, self.analysed_diff())
        for path, index in keys:
            f = self.diff.file(path)
            if f is not None and not 0 <= index < len(f.hunks):
                raise ReviewError(f"--hunk: {f.path} has no hunk {index} (it has {len(f.hunks)})")
        return keys

    def one_hunk(self, spec: str) -> HunkKey:
        """The one hunk `--hunk FILE:N` names (N counted from 1, as the text shows). Raises ReviewError otherwise."""
        from reviewui.core.bite.selection import hunk_number_to_index

        path, sep, number = spec.rpartition(":")
        if not sep or not number.isdigit():
            raise ReviewError(f"--hunk takes FILE:N (N the hunk's number, from 1), got {spec!r}")
        f = self.diff.file(path)
        if f is None:
            raise ReviewError(f"{path} is not changed on this branch")
        return (f.path, hunk_number_to_index(path, int(number), len(f.hunks)))

    def bite(
        self,
        hunks: list[HunkKey] | None = None,
        *,
        on_result: "Callable[[HunkResult], None] | None" = None,
        on_progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
        cache: "BiteCache | None" = None,
        guards: bool = False,
        include_config: bool = False,
        witness: bool = False,
        on_tests: "ProgressSink | None" = None,
    ) -> "BiteReport":
        """Bite-check `hunks` (None: every source hunk) of the analysed diff with the session's run options.

        `guards` also grades the guard reverts inside each hunk (core/bite/guards.py);
        `include_config` bite-checks hunks of files that are not code too; `witness` looks
        for a witness of each toothless guard and hunk (core/witness/, within `witness-budget`);
        `on_tests` hears the baseline's progress (tests done of collected, elapsed).

        Does not touch the ledger (the UI runs this in a worker): callers add
        the report with `evidence.add_report`. Raises ReviewError as run_bite does.
        """
        from reviewui.core.bite.engine import run_bite
        from reviewui.core.bite.engines import engine_for

        r = self.run
        engine = engine_for(self.settings, r.engine, r.ray_address, r.jobs)
        self.diff.preload()
        return run_bite(
            self.target, self.analysed_diff(), self.settings, hunks=hunks,
            all_tests=r.all_tests, jobs=r.jobs, timeout=r.timeout, test_cmd=r.test_cmd,
            on_result=on_result, on_progress=on_progress, cancel=cancel, cache=cache, guards=guards,
            include_config=include_config, engine=engine, own_tests=self.own_tests(), on_tests=on_tests,
            grades=self.grade_book(), witness=self.settings.witness_budget if witness else None,
        )

    def own_tests(self) -> tuple[str, ...]:
        """The branch's new and changed tests (function ids, `file::Class::test`), from the fixtures analysis."""
        return tuple(t.id for t in self.fixtures().tests if t.status in ("added", "changed"))

    def claims(self, *, rerun: bool = True, cancel: threading.Event | None = None) -> "list[ClaimCheck]":
        """The transcript's claims about its tests, each test command rerun once at the head in the
        sandbox (`rerun=False`: only what needs no run, a final claim with no test run at all).

        Empty without a transcript. Raises ReviewError as bite does (no sandbox, no scratch).
        """
        from reviewui.core.claims.extract import extract_claims
        from reviewui.core.claims.verify import judge, rerun as rerun_commands

        transcript = self.transcript()
        if transcript is None:
            return []
        claims = extract_claims(transcript)
        if not rerun:
            return [c for c in judge(claims, {}) if c.outcome == "without-run"]
        commands = [c.command for c in claims if c.kind == "run" and c.command is not None]
        reruns = rerun_commands(self.target.repo_dir, self.target.head, commands, test_command=self.test_command,
                                timeout=self.run.timeout or self.settings.timeout or 300.0,
                                env_allow=self.settings.env_allow, network=self.settings.network, cancel=cancel)
        checks = judge(claims, reruns)
        self._claim_checks = checks  # a later findings(report) includes them
        return checks

    def tests_table(self, report: "BiteReport", cancel: threading.Event | None = None,
                    cache: "BiteCache | None" = None, on_tests: "ProgressSink | None" = None) -> "TruthTable":
        """The per-test truth table of the branch's tests: head outcomes and bites from `report` (a finished
        sweep), base outcomes from one run of the same tests on the base commit's source.

        Does not touch the ledger (callers add it with `evidence.add_truth_table`). Raises ReviewError
        when the command cannot start or a scratch cannot be made.
        """
        from reviewui.core.bite.truth_base import truth_table
        from reviewui.core.bite.truth_table import ChangedTest

        changed = [ChangedTest(t.id, "added" if t.status == "added" else "changed", t.file, t.line)
                   for t in self.fixtures().tests if t.status in ("added", "changed")]
        r = self.run
        warm = None
        if cache is not None:
            from reviewui.core.run.runner import split_command

            warm = cache.warm_server(split_command(self.test_command)[0], self.settings)
        return truth_table(self.target, self.analysed_diff(), self.settings, changed, report,
                           test_cmd=r.test_cmd, timeout=r.timeout, cancel=cancel, warm=warm, on_tests=on_tests)


    def delta(self, since: str | None = None) -> "tuple[Since, Delta] | None":
        """What changed on the branch since the reviewer's own latest verdict on it (or since commit `since`):
        each hunk now new, changed or unchanged, and the judged ones gone. None with neither.

        Raises ReviewError for an unknown `since`, or a verdict whose commits this clone lacks.
        """
        from reviewui.core.delta.compute import compute_delta
        from reviewui.core.delta.since import resolve_since

        t = self.target
        start = resolve_since(t.repo_dir, t.branch, t.head, t.base_ref, self.settings.notes_ref, since)
        return None if start is None else (start, compute_delta(t.repo_dir, start.base, start.head, t.base, t.head))

    def probe(
        self, code: str, name: str = "probe_test.py", hunk: HunkKey | None = None,
        cancel: threading.Event | None = None,
    ) -> "ProbeReport":
        """Run a probe on the branch head and the base (and with `hunk` reverted). Raises ReviewError."""
        from reviewui.core.probe.run import run_probe

        return run_probe(self, code, name=name, hunk=hunk, cancel=cancel)

    def link_transcript(self) -> "HunkLinks | None":
        """Link the transcript's turns to the diff's hunks (parses every file); None without a transcript."""
        from reviewui.core.transcript import link_hunks

        transcript = self.transcript()
        if transcript is None:
            return None
        self.diff.preload()
        from reviewui.core.transcript.session_ids import session_ids

        authored = self.authorship()
        own = session_ids(self.transcript_path) if self.transcript_path is not None else frozenset()
        # Every changed file, hunkless ones too: a file no turn (nor authorship note) accounts for is evidence.
        return link_hunks(transcript, [h for f in self.diff.files for h in f.hunks], [f.path for f in self.diff.files],
                          authored.lines, own)

    def authorship(self) -> "Authorship":
        """The git-ai authorship notes of the branch (under the base's `authorship-notes-ref`), read once."""
        from reviewui.core.notes.authorship import read_authorship

        t = self.target
        files = [f.path for f in self.diff.files if f.hunks]
        return self._cached("authorship", lambda: read_authorship(
            t.repo_dir, t.base, t.head, files, self.settings.authorship_ref))
