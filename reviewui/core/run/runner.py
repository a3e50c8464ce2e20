"""Run a test command on untrusted code: in the sandbox, allowlisted env, time limit, capped output.

`run_tests(cwd, command, test_paths, timeout)` is the one entry point. For a
pytest command (the command contains "pytest") it appends
`--junitxml=<tmp> -p no:cacheprovider -o junit_family=xunit1 -q` and the
test paths, and reads per-test outcomes from the JUnit report; any other
command is run as given and only its exit code is read (the test paths are
offered to it in the REVIEWUI_TEST_PATHS environment variable, one per line).

Safety, because agent-written tests may hang, flood, leak, fork or attack:
- the command runs under bubblewrap (`sandbox.py`): read-only filesystem with
  only the tree (at `room.TREE`, a sized tmpfs copy where `storage.level()` is
  "tmpfs"), the run's own dir (`room.RUN`) and a private tmp writable, the reviewer's
  home, repository and caches hidden, own PID/network namespaces, memory and
  file-size limits. Without bwrap, `sandbox.require()` refuses unless the
  reviewer opted in (then `RunResult.sandbox` is "none");
- the environment comes from `sandbox_env.scrubbed_env` (an allowlist, HOME in
  a temp dir that is removed afterwards, PYTHONDONTWRITEBYTECODE=1);
- the sandbox (its own session/process group) is killed whole with SIGKILL
  on timeout or when `cancel` is set, and also after a normal exit; with
  the PID namespace that takes `setsid` and double-forked daemons too;
- output (stdout and stderr merged) is read incrementally and only the first
  and last `OUTPUT_CAP` bytes are kept.

Example (a probe test in a scratch worktree)::

    with WorktreePool(repo, 1) as pool, pool.acquire() as s:
        s.checkout(head)
        s.add_file("tests/test_probe.py", PROBE)
        res = run_tests(s.path, "python -m pytest", ["tests/test_probe.py"], timeout=30)
        [(t.id, t.outcome, t.message) for t in res.tests]
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shlex
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from reviewui.core.errors import ReviewError
from reviewui.core.run.process import POLL_SECONDS, CappedBuffer, Outcome, StopCheck, kill_group
from reviewui.core.run.junit import JUnitError, TestOutcome, parse_junit
from reviewui.core.run.junit import failures as junit_failures
from reviewui.core.run import interp, room, run_uid, sandbox, storage
from reviewui.core.run.cgroup import RunGroup
from reviewui.core.run.command_types import AgentWords, HostProgram, host_program
from reviewui.core.run.sandbox_env import SCRATCH_MARKER, network_isolation_prefix, scrubbed_env
from reviewui.core.run.tempdirs import io_tempdir, private_tempdir
from reviewui.core.run.watch import DiskWatch, measure

from reviewui.core.run.warm_runner import PLUGIN_CACHE_INSIDE, WarmPytest, warm_form

OUTPUT_CAP = 64 * 1024
"""Bytes of output kept from the start and from the end of a run."""

PYTEST_EXTRA = ("-p", "no:cacheprovider", "-o", "junit_family=xunit1", "-o", "junit_logging=no", "-q")
"""Arguments added to every pytest run (plus --junitxml and --rootdir)."""


@dataclass(frozen=True)
class RunResult:
    """What one run of the test command did."""

    command: tuple[str, ...]
    """The argv actually executed (after the network prefix)."""
    returncode: int | None
    """Exit code; None when the run was killed (timeout or cancel)."""
    seconds: float
    """Wall-clock duration."""
    timed_out: bool = False
    """True when the run exceeded its time limit and was killed."""
    cancelled: bool = False
    """True when the cancel flag stopped the run."""
    output: str = ""
    """Head and tail of stdout+stderr, decoded with replacement."""
    output_bytes: int = 0
    """Total bytes the command wrote (most of it may have been dropped)."""
    pytest: bool = False
    """True when the command was treated as pytest (JUnit outcomes available)."""
    tests: tuple[TestOutcome, ...] = ()
    """Per-test outcomes from JUnit (pytest only)."""
    junit_error: str | None = None
    """Why no JUnit outcomes could be read (pytest only), else None."""
    warm: bool = False
    """True when the run was a fork of a warm pytest server (core/run/warm_runner.py)."""
    sandbox: str = "bwrap"
    """How the run was contained: "bwrap", or "none" (the reviewer ran it `--unsandboxed`)."""
    limit: str | None = None
    """"memory limit" / "disk limit" when the run failed on a sandbox limit, else None."""
    extra: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    """Free-form facts for callers (unused by the runner itself)."""

    @property
    def failing(self) -> tuple[TestOutcome, ...]:
        """Tests that failed or errored (collection errors included)."""
        return tuple(t for t in self.tests if t.outcome in ("failed", "error"))

    @property
    def killed(self) -> bool:
        """True when the run did not finish on its own."""
        return self.timed_out or self.cancelled


def is_pytest_command(command: str | Sequence[str]) -> bool:
    """True when the command runs pytest (so JUnit results can be asked for)."""
    text = command if isinstance(command, str) else " ".join(command)
    return "pytest" in text


def split_command(command: str) -> list[str]:
    """Split a command line like a POSIX shell would (no expansion). Raises ReviewError."""
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise ReviewError(f"cannot parse test command {command!r}: {e}") from e
    if not argv:
        raise ReviewError("the test command is empty")
    return argv


@dataclass(frozen=True)
class RunFiles:
    """Files a caller puts in one run's own directory, which the sandboxed or warm run can see."""

    setup: Callable[[Path], Mapping[str, str]]
    """Writes the files into the run directory; returns extra environment for the run."""
    collect: Callable[[Path], None]
    """Reads what the run wrote there, before the directory is removed."""


def run_tests(
    cwd: str | Path,
    command: str | Sequence[str],
    test_paths: Sequence[str] = (),
    timeout: float | None = 300.0,
    *,
    env_allow: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    cancel: threading.Event | None = None,
    network: bool = False,
    output_cap: int = OUTPUT_CAP,
    coverage: bool = False,
    warm: WarmPytest | None = None,
    run_files: RunFiles | None = None,
    agent_args: AgentWords | None = None,
) -> RunResult:
    """Run the test command in `cwd` and return what happened.

    `command` is trusted (the reviewer's or the base's); `agent_args` are words an agent
    wrote (command_types.AgentWords: a transcript's pytest options and tests), put after it and
    before `test_paths`, and only ever seen by the sandboxed run: nothing of them is resolved or
    started on the host.

    `coverage` measures a `<python> -m pytest` command with coverage.py, its
    rcfile named by COVERAGE_RCFILE in the run's environment: a warm run
    starts it in its fork, a cold one runs `<python> -m coverage run -m
    pytest ...`. `network=True` skips the
    no-network namespace. `warm` (a server started with the same Python,
    env_allow and network) runs a `<python> -m pytest` command as a fork of
    it; anything else, or a server that cannot serve, runs cold. A run writes only its tree,
    its own run directory, /tmp and /dev/shm, all at fixed paths and fresh per run (no host
    directory is ever bound at its host path): `run_files` puts files in the run's own directory
    and reads back what the run wrote there.
    Raises ReviewError when the command cannot be parsed or started (e.g. not
    on PATH), or when no sandbox can run and the reviewer did not opt out.
    """
    argv = split_command(command) if isinstance(command, str) else list(command)
    pytest_mode = is_pytest_command(argv)
    # The one program this process may resolve and ask on the host (command_types.py).
    program = host_program(argv[0])
    argv += agent_args.words if agent_args is not None else ()
    level = sandbox.require()
    if coverage and not warm_form(argv):
        raise ReviewError(f"coverage needs a `<python> -m pytest` command, not {' '.join(argv)!r}")
    ran_warm = warm is not None and warm.accepts(argv)
    # The run's own directory is `<io>/run`: inside the sandbox io is at room.IO, the same for a
    # cold run and a fork of a warm server (whose io dir holds it).
    io = None if ran_warm else io_tempdir()
    work = warm.work_dir(cwd) if ran_warm and warm is not None else _fresh(io / room.RUN_NAME)  # type: ignore[operator]
    tree = Path(cwd).resolve()
    where = _Where(level, room.Room(tree, work, on=level == "bwrap",
                                    python=sandbox.python_layout(program) if level == "bwrap" else interp.Layout()),
                   work, tree, cwd, program, sized=level == "bwrap" and storage.level() == "tmpfs")
    try:
        (work / "home").mkdir()
        junit = work / "junit.xml"
        extra = dict(extra_env or {})
        if run_files is not None:
            extra.update(run_files.setup(work))
        if pytest_mode:
            argv = [*argv, f"--junitxml={where.place.inside(junit)}", "--rootdir=.", *PYTEST_EXTRA, *test_paths]
        else:
            extra = {"REVIEWUI_TEST_PATHS": "\n".join(test_paths), **extra}
        env = _run_env(argv, where, extra, env_allow, own_io=io is not None)
        outcome: Outcome | None = None
        full = [*argv]
        if ran_warm and warm is not None:
            outcome = warm.execute(argv[3:], cwd, env, timeout, cancel, output_cap, coverage=coverage)
        ran_warm = outcome is not None
        if outcome is None:
            inner = [argv[0], "-m", "coverage", "run", *argv[1:]] if coverage else argv
            full, outcome = _run_cold(inner, where, env, network=network, timeout=timeout, cancel=cancel,
                                      output_cap=output_cap)
        return _result(outcome, full, where, junit if pytest_mode else None, warm=ran_warm)
    finally:
        if run_files is not None:
            run_files.collect(work)
        _rmtree(io if io is not None else work)
        if io is None and warm is not None:
            warm.release(work)


@dataclass(frozen=True)
class _Where:
    """Where one run happens: the sandbox's level ("bwrap" or "none"), the tree and the run's
    directory as the host and the run see them, the trusted program that starts it, and whether
    its tree lives in sized storage (storage.py: then HOME is beside the tree in the run's tmpfs)."""

    level: str
    place: room.Room
    work: Path
    tree: Path
    cwd: str | Path
    """The tree as the caller named it (the run's working directory on the host)."""
    program: HostProgram | None
    sized: bool


def _run_env(argv: list[str], where: _Where, extra: dict[str, str], env_allow: Sequence[str], *,
             own_io: bool) -> dict[str, str]:
    """The run's environment: the allowlist, `extra` (every path written as the run sees it), HOME and
    TMPDIR, PATH as the sandbox shows it. Raises ReviewError when `argv[0]` is found nowhere."""
    home = where.work / "home"
    if where.level == "none":
        # Unsandboxed, a crashed reviewui's orphans are found by this variable; in the sandbox they
        # die with its PID namespace, and the variable would only tell the test a host path.
        extra = {SCRATCH_MARKER: str(where.tree), **extra}
        (where.work / "tmp").mkdir()
    else:
        extra = {**extra, sandbox.INSIDE_VAR: "1"}  # a reviewui run inside this one nests its sandbox (sandbox.wrap)
        # As root the run is run_uid.RUN_UID on the host: its io dir (HOME, reports) is its to write.
        run_uid.hand_over(where.work.parent if own_io else where.work)
    # Every path handed in is written as the run sees it (room.py): no host path crosses.
    extra = {k: where.place.inside_env(v) for k, v in extra.items()}
    env = scrubbed_env(storage.home_inside() if where.sized else where.place.inside(home), allow=env_allow,
                       extra=extra, tmpdir=sandbox.run_tmpdir() if where.level == "bwrap" else str(where.work / "tmp"))
    if where.level == "bwrap":
        # As bwrap's --chdir sets it for a cold run, so a warm fork's is the same.
        env["PWD"] = where.place.tree_inside
        found = shutil.which(argv[0], path=env.get("PATH"))
        if "PATH" in env:
            env["PATH"] = sandbox.visible_path(env["PATH"], where.program,
                                               (Path(found).parent,) if found and "/" not in argv[0] else ())
    if shutil.which(argv[0], path=env.get("PATH")) is None and not os.path.isfile(Path(where.cwd) / argv[0]):
        raise ReviewError(f"cannot start test command {argv[0]!r}: not found on PATH")
    # The interpreter's paths as the run sees them (interp.py); after the check, which reads the host.
    return sandbox.run_env(env, where.program)


def _run_cold(inner: list[str], where: _Where, env: dict[str, str], *, network: bool, timeout: float | None,
              cancel: threading.Event | None, output_cap: int) -> tuple[list[str], Outcome]:
    """`inner` run as a process of its own (in bwrap, its own cgroup, the disk watched): the command
    line as started, and what happened."""
    limits = sandbox.limits()
    entries = 0
    if where.level == "bwrap":
        # A warm run that fell back to cold keeps its directory in the server's io dir.
        io_bind = (where.work.parent, room.IO, True)
        if where.sized:
            entries = measure([where.tree])[1]  # the kernel's bound on the slot's files (storage.py)
            box = sandbox.Box(writable=(), chdir=Path(where.place.tree_inside), network=network, limits=limits,
                              python=where.program, placed=(io_bind, _no_plugin_cache()),
                              scratch_size=storage.room_for(where.tree) + limits.disk,
                              scratch_dirs=(where.place.tree_inside, storage.home_inside()),
                              unpack_into=where.place.tree_inside,
                              scratch_files=storage.cold_inodes(entries, limits.files))
        else:
            box = sandbox.Box(writable=(), chdir=Path(where.place.tree_inside), network=network, limits=limits,
                              python=where.program, placed=(*_tree_binds(where.tree), io_bind, _no_plugin_cache()))
        full = sandbox.wrap(inner, box)
    else:
        full = [*([] if network else network_isolation_prefix()), *inner]
    watched = (*(() if where.sized else (where.tree,)), where.work.parent)
    watch = DiskWatch(watched, limits.disk, limits.files, tmpfs=(room.SLOT, entries) if where.sized else None)
    group = RunGroup.create(limits) if where.level == "bwrap" else None
    try:
        outcome = _execute([*(group.prefix() if group else []), *full], where.cwd, env, timeout, cancel,
                           output_cap, limits, watch, where.tree if where.level == "bwrap" and where.sized else None)
        hit = group.hit() if group is not None else None
        if hit is not None and outcome.limit is None:
            outcome = dataclasses.replace(outcome, returncode=None, limit=hit)
    finally:
        if group is not None:
            group.close()
    return full, outcome


def _result(outcome: Outcome, full: list[str], where: _Where, junit: Path | None, *, warm: bool) -> RunResult:
    """The RunResult of a run that ended with `outcome` (`junit`: its pytest report, None for any
    other command); every path in what it says is written as the host sees it."""
    rc, timed_out, cancelled = outcome.returncode, outcome.timed_out, outcome.cancelled
    out = where.place.outside(outcome.output)
    tests: tuple[TestOutcome, ...] = ()
    junit_error = None
    if junit is not None and not (timed_out or cancelled or outcome.limit):
        try:
            tests = tuple(dataclasses.replace(t, message=where.place.outside(t.message),
                                              detail=where.place.outside(t.detail)) for t in parse_junit(junit))
        except JUnitError as e:
            junit_error = str(e)
    hit = outcome.limit
    if hit is None and rc != 0 and not cancelled:
        hit = sandbox.limit_reason(out, junit_failures(tests))
    return RunResult(command=tuple(full), returncode=rc, seconds=outcome.seconds, timed_out=timed_out,
                     cancelled=cancelled, output=out, output_bytes=outcome.total, pytest=junit is not None,
                     tests=tests, junit_error=junit_error, warm=warm, sandbox=where.level, limit=hit)


@functools.lru_cache(maxsize=1)
def _no_plugin_cache() -> tuple[Path, str, bool]:
    """An empty directory where a warm server's runs see the plugin cache: a cold run's mount table
    has the same shape as a warm one's."""
    empty = private_tempdir("plugins")
    run_uid.open_to_run(empty)
    return empty, PLUGIN_CACHE_INSIDE, False


def _fresh(path: Path) -> Path:
    path.mkdir()
    return path


def _tree_binds(tree: Path) -> tuple[tuple[Path, str, bool], ...]:
    """How a cold run gets its tree: a scratch's slot dir at room.SLOT (as a warm server binds
    it), any other directory by itself at `room.SLOT/<name>` (its parent stays out of sight)."""
    if tree.name == "tree":
        return ((tree.parent, room.SLOT, True),)
    return ((tree, room.SLOT + "/" + tree.name, True),)


def _execute(
    argv: list[str],
    cwd: str | Path,
    env: dict[str, str],
    timeout: float | None,
    cancel: threading.Event | None,
    cap: int,
    limits: sandbox.Limits | None = None,
    watch: DiskWatch | None = None,
    unpack: Path | None = None,
) -> Outcome:
    """Run `argv`; with `unpack`, its stdin is that tree as a tar stream (storage.py)."""
    start = time.monotonic()
    packer = storage.pack(unpack) if unpack is not None else None
    preexec = None
    if limits is not None and sandbox.needs_preexec():
        preexec = functools.partial(sandbox.preexec_limits, limits)
    try:
        proc = subprocess.Popen(
            argv,
            cwd=str(cwd),
            env=env,
            stdin=packer.stdout if packer is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=preexec,
        )
    except OSError as e:
        if packer is not None:
            packer.kill()
            packer.wait()
        raise ReviewError(f"cannot start test command {argv[0]!r}: {e.strerror or e}") from e
    if packer is not None and packer.stdout is not None:
        packer.stdout.close()  # the run holds it now
    if watch is not None:
        watch.follow(proc.pid)
    buf = CappedBuffer(cap)
    reader = threading.Thread(target=buf.drain, args=(proc.stdout,), daemon=True)
    reader.start()
    stop = StopCheck(cancel, None if timeout is None else start + timeout, buf,
                     limits.output if limits is not None else None, watch)
    reason: str | None = None
    while True:
        try:
            proc.wait(timeout=POLL_SECONDS)
            break
        except subprocess.TimeoutExpired:
            pass
        reason = stop.check()
        if reason is not None:
            kill_group(proc.pid)
            proc.wait()
            break
    seconds = time.monotonic() - start
    # The leader is gone; anything it forked into its group goes with it.
    kill_group(proc.pid)
    if packer is not None:
        packer.kill()
        packer.wait()
    reader.join(timeout=2.0)
    # A process that escaped the group (setsid) may still hold the pipe; then
    # the reader stays blocked and the fd is left open rather than closed
    # under it (a reused fd number would be read by the wrong owner).
    if proc.stdout is not None and not reader.is_alive():
        try:
            proc.stdout.close()
        except OSError:
            pass
    return stop.outcome(reason, proc.returncode, seconds)


def _rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
