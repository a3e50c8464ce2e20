"""Prove that the code under test is the scratch's: import roots first, origins recorded.

A revert only means something if the tests import the reverted file. With
the project installed `pip install -e .` (or a PYTHONPATH / `.pth` entry
pointing at the reviewer's checkout), `import pkg` finds the reviewer's copy
and every revert changes nothing: all hunks would come out toothless.

So every run gets:
- the scratch's import roots first on PYTHONPATH (the directories the changed
  modules are importable from: `src/`, the repo root, the parent of the
  topmost package), ahead of the user's own PYTHONPATH entries, which are
  resolved against the scratch (as a shell in the scratch would), and ahead of
  site-packages and `.pth` entries, which Python puts after PYTHONPATH;
- a tiny pytest plugin (`reviewui_origin`, loaded through PYTEST_PLUGINS from
  a directory outside the scratch) that writes, at session end, the file each
  changed module was actually imported from.

`foreign(report, scratch)` then names a changed module that came from
anywhere but the scratch; the engine calls such a run `broken` with the
reason "tests imported <module> from <path>, not the scratch (editable install?)".
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping, Sequence

from reviewui.core import inside
from reviewui.core.errors import ReviewError
from reviewui.core.run import sandbox
from reviewui.core.run.scratch_build import scratch_git
from reviewui.core.run.command_types import HostProgram, host_program, resolve
from reviewui.core.run.sandbox_env import HARNESS_PLUGINS
from reviewui.core.run.process import read_run_text

PLUGIN_MODULE = "reviewui_origin"
OUT_VAR = "REVIEWUI_ORIGIN_OUT"
MODULES_VAR = "REVIEWUI_ORIGIN_MODULES"

DATA_VAR = "REVIEWUI_DATA_FILES"
SOURCE_VAR = "REVIEWUI_SOURCE_FILES"
GIT_VAR = "REVIEWUI_GIT_DIR"
GIT_LINKS_VAR = "REVIEWUI_GIT_LINKS"
GIT_READS = True
"""Whether a run that records source readers also counts a test that opens or lists anything
under the scratch's `.git` as a reader of every changed source file (git's objects hold a copy
of each, and their layout can tell a revert's run from a control's). Off only in tests that
show what a scratch's own layout hides."""

CHILD_VAR = "REVIEWUI_CHILD_READS"
CHILD_READS = True
"""Whether a run that records source readers also counts opens of a changed source file by other
processes a test starts (`sha256sum pkg/m.py`, a child Python reading it; not one importing it),
and their opens or listings of the scratch's `.git` store when GIT_READS is on, through an inotify
watch (inside/child_reads.py; nothing where inotify is missing). Off only in tests that show what
it catches."""

STOP_VAR = "REVIEWUI_QUIET_STOP"
QUIET_STOP: Mapping[str, str] = {STOP_VAR: "1"}
"""Extra environment for runs of reverted code: the first collection error ends the run
before any test (grading needs only that error: any collection error makes the run
`broken`, and its reason is the first one), without the rest of the collection and
without pytest formatting the traceback of its own `Interrupted` (about half of such a
run's time, and never shown). The exit code is then 1, not 2; the error is in the JUnit
report either way."""

"""The plugin each run loads (inside/origin_plugin.py: it runs in the project's Python)."""

_SOURCE_DIRS = ("src", "lib", "python")
"""Directories that are import roots by convention even without packages in them."""


@dataclass(frozen=True)
class ChangedModule:
    """One changed Python file as the tests would import it."""

    path: str
    """Repo-relative path, e.g. `src/pkg/mod.py`."""
    name: str
    """Dotted module name, e.g. `pkg.mod`."""
    root: str
    """Repo-relative import root it is importable from (`` for the repo root)."""


def changed_modules(paths: Iterable[str], tree: Iterable[str]) -> list[ChangedModule]:
    """The import name and root of each changed `.py` file, given every file of the head tree.

    A file's root is the parent of its topmost package (directories with an
    `__init__.py`); a top-level module outside packages under `src/`, `lib/`
    or `python/` is rooted there; a package in a top-level directory that holds
    nothing but packages is a namespace portion rooted at the repo root;
    anything else is rooted in its own directory.
    """
    files = set(tree)
    out: list[ChangedModule] = []
    for path in sorted(set(paths)):
        p = PurePosixPath(path)
        if p.suffix != ".py" or p.name in ("conftest.py", "setup.py", "noxfile.py"):
            continue
        parts = list(p.parent.parts)
        pkg: list[str] = []
        while parts and f"{'/'.join(parts)}/__init__.py" in files:
            pkg.insert(0, parts.pop())
        if not pkg and len(parts) >= 2 and parts[-2] in _SOURCE_DIRS:
            # a namespace package under src/ (no __init__.py): src is the root
            pkg.insert(0, parts.pop())
        elif pkg and len(parts) == 1 and parts[0] not in _SOURCE_DIRS and not _has_files(files, parts[0]):
            # a namespace package at the repo root (jaraco/functools/): a directory holding only packages
            pkg.insert(0, parts.pop())
        stem = [] if p.stem == "__init__" else [p.stem]
        dotted = ".".join([*pkg, *stem])
        if not dotted or not all(x.isidentifier() for x in dotted.split(".")):
            continue
        out.append(ChangedModule(path, dotted, "/".join(parts)))
    return out


def _has_files(files: set[str], directory: str) -> bool:
    """Whether `directory` holds a file of its own (not only subdirectories)."""
    prefix = directory + "/"
    return any(f.startswith(prefix) and "/" not in f[len(prefix):] for f in files)


def import_roots(scratch: Path, modules: Sequence[ChangedModule]) -> list[str]:
    """Absolute scratch directories to put first on the import path (most specific first)."""
    roots: list[str] = []
    for m in modules:
        roots.append(str(scratch / m.root) if m.root else str(scratch))
    if (scratch / "src").is_dir():
        roots.append(str(scratch / "src"))
    roots.append(str(scratch))
    return list(dict.fromkeys(roots))


def checkout_roots(python: str, checkout: Path) -> tuple[str, ...]:
    """The test Python's import-path entries inside the reviewer's checkout, relative to it
    (`python`: the trusted test command's program; empty when it is no host program).

    An editable install (a .pth file) points the test Python at the
    reviewer's checkout, which the sandbox does not show; the same
    directories of the scratch stand in for them. Empty when the Python
    cannot be asked. Asked once per Python, checkout and environment in a
    process (each `b` would otherwise start that Python again).
    """
    program = host_program(python)  # never a file of the tree or a scratch (command_types.py)
    if program is None:
        return ()
    return _checkout_roots(program, checkout.resolve(), os.environ.get("PYTHONPATH", ""), os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=16)
def _checkout_roots(python: HostProgram, checkout: Path, pythonpath: str, path: str) -> tuple[str, ...]:
    exe = resolve(python, path)
    if exe is None:
        return ()
    try:
        out = subprocess.run([exe, "-c", "import json, sys; print(json.dumps(sys.path[1:]))"],
                             capture_output=True, text=True, timeout=30, cwd="/", stdin=subprocess.DEVNULL)
        entries = json.loads(out.stdout or "[]")
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return ()
    root = checkout.resolve()
    rel: list[str] = []
    for e in entries:
        if not isinstance(e, str) or not e:
            continue
        try:
            rel.append(Path(e).resolve().relative_to(root).as_posix())
        except ValueError:
            continue
    return tuple(dict.fromkeys(rel))


def resolve_pythonpath(value: str, scratch: Path) -> list[str]:
    """PYTHONPATH entries with relative ones resolved against the scratch (empty entries dropped)."""
    return [e if os.path.isabs(e) else str(scratch / e) for e in value.split(os.pathsep) if e]


def run_env(
    scratch: Path, modules: Sequence[ChangedModule], plugin_dir: Path, out_file: Path,
    user_env: Mapping[str, str], data_files: Sequence[str] = (), checkout_dirs: Sequence[str] = (),
    canary: str = "", sources: Sequence[str] = (), child_reads: bool = True,
) -> dict[str, str]:
    """The extra environment of one run: the user's `VAR=value` words, scratch roots first, the plugin.

    `user_env` holds the variables given before the command (`PYTHONPATH=src
    python -m pytest`); a PYTHONPATH there (else the reviewer's own) has its
    relative entries resolved against the scratch. `checkout_dirs` are import
    directories the test Python has inside the reviewer's checkout
    (`checkout_roots`), taken from the scratch instead. `canary`: the name of the run's canary test.
    `data_files` are changed data files whose openers are recorded, `sources` changed source files
    whose readers (an open that is no import, or an open or listing of anything under the
    scratch's `.git`: git's copy of every one of them; by the test's Python or, CHILD_READS, by
    a process it starts) are (`Observed.reads`).
    """
    write_plugin(plugin_dir, canary)
    env = dict(user_env)
    user_pp = user_env.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    path = [str(plugin_dir), *import_roots(scratch, modules), *resolve_pythonpath(user_pp, scratch),
            *(str(scratch / d) for d in checkout_dirs)]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(path))
    plugins = user_env.get("PYTEST_PLUGINS", os.environ.get("PYTEST_PLUGINS", ""))
    # A reviewui run inside a reviewui run (its own suite) must not inherit the outer run's plugins.
    inherited = (p for p in plugins.split(",") if p.strip() and p.strip() not in HARNESS_PLUGINS)
    # Every reviewui plugin in every run, in one order: what is loaded never tells a run's kind.
    env["PYTEST_PLUGINS"] = ",".join(dict.fromkeys([*inherited, *(m for m, _ in inside.PLUGINS)]))
    env[MODULES_VAR] = ",".join(m.name for m in modules)
    env[OUT_VAR] = str(out_file)
    if data_files:
        env[DATA_VAR] = os.pathsep.join(os.path.realpath(scratch / p) for p in data_files)
    if sources:
        env[SOURCE_VAR] = os.pathsep.join(os.path.realpath(scratch / p) for p in sources)
        if GIT_READS:
            env[GIT_VAR] = os.path.realpath(scratch / ".git")
            env[GIT_LINKS_VAR] = os.pathsep.join(git_links(scratch))
        if CHILD_READS and child_reads:
            env[CHILD_VAR] = "1"
    return env


def git_links(scratch: Path) -> list[str]:
    """The scratch's committed symlinks that lead into its `.git` (real paths): a test can open
    git's store through one without naming `.git`, so the origin plugin watches their names too."""
    git = os.path.realpath(scratch / ".git")
    try:
        listing = scratch_git(scratch, str(scratch / ".git"), "ls-files", "-s", "-z")
    except ReviewError:
        return []
    out: list[str] = []
    for row in listing.split("\0"):
        meta, _, rel = row.partition("\t")
        if not meta.startswith("120000 ") or not rel:
            continue
        real = os.path.realpath(scratch / rel)
        if real == git or real.startswith(git + os.sep):
            out.append(os.path.join(os.path.realpath((scratch / rel).parent), os.path.basename(rel)))
    return out


def merge_env(base: Mapping[str, str], more: Mapping[str, str] | None) -> dict[str, str]:
    """`base` updated with `more`, PYTHONPATH and PYTEST_PLUGINS joined rather than replaced."""
    env = dict(base)
    for key, value in (more or {}).items():
        if key == "PYTHONPATH" and env.get(key):
            parts = [*value.split(os.pathsep), *env[key].split(os.pathsep)]
            env[key] = os.pathsep.join(dict.fromkeys(p for p in parts if p))
        elif key == "PYTEST_PLUGINS" and env.get(key):
            parts = [*env[key].split(","), *value.split(",")]
            env[key] = ",".join(dict.fromkeys(p for p in parts if p))
        else:
            env[key] = value
    return env


def write_plugin(plugin_dir: Path, canary: str = "") -> None:
    """Write the origin plugin module, and every other plugin a run may need (`inside.PLUGINS`),
    into `plugin_dir` (a directory outside the scratch), and the name of the run's canary test
    beside it (the plugin reads it once and removes it)."""
    inside.place_all(plugin_dir)
    if canary:
        (plugin_dir / "canary").write_text(canary, encoding="utf-8")


@dataclass(frozen=True)
class Observed:
    """What the plugin saw in one run."""

    modules: dict[str, str]
    """Changed module name -> real path it was imported from."""
    opens: dict[str, tuple[str, ...]]
    """Real path of a changed data file -> node ids of the tests that opened it."""
    written: bool
    """False when the plugin wrote nothing (pytest never finished its session)."""
    canary: str = ""
    """The canary test the plugin ran (canary.py), "" when it ran none."""
    reads: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Real path (as the run saw it) of a changed source file -> node ids of the tests that read it
    as data, not by importing it (its bytes, its text, a code object of its functions), or read the
    scratch's git store, which holds it (in every run: the
    baseline's for the sweep, a graded run's for its own grade)."""

    def readers(self, rel: str) -> tuple[str, ...]:
        """The tests that read the changed source file `rel` (repo-relative) as data."""
        return tuple(sorted({t for path, tests in self.reads.items() if path.endswith("/" + rel) for t in tests}))


def read_observed(out_file: Path) -> Observed:
    """What the plugin wrote to `out_file` (empty, `written` False, when nothing)."""
    try:
        data = json.loads(read_run_text(out_file) or "")
    except (OSError, ValueError):
        return Observed({}, {}, False)
    if not isinstance(data, dict):
        return Observed({}, {}, False)
    mods = data.get("modules")
    mods = mods if isinstance(mods, dict) else {}
    opens = data.get("opens")
    opens = opens if isinstance(opens, dict) else {}
    canary = data.get("canary")
    reads = data.get("reads")
    reads = reads if isinstance(reads, dict) else {}
    return Observed({str(k): str(v) for k, v in mods.items()},
                    {str(k): tuple(str(x) for x in v) for k, v in opens.items() if isinstance(v, list)}, True,
                    canary if isinstance(canary, str) else "",
                    {str(k): tuple(str(x) for x in v) for k, v in reads.items() if isinstance(v, list)})


def foreign(origins: Mapping[str, str], scratch: Path, modules: Sequence[ChangedModule],
            python: str | None = None) -> str | None:
    """The reason a run cannot count when a changed module came from outside the scratch, else None
    (a path in `python`'s own trees named where it is on the host, not where the run saw it)."""
    root = os.path.realpath(scratch).rstrip(os.sep) + os.sep
    # A sandboxed run saw the scratch at its fixed path (run/room.py).
    inside = sandbox.room_for_run(os.path.realpath(scratch), "/").tree_inside.rstrip(os.sep) + os.sep
    by_name = {m.name: m for m in modules}
    for name, path in sorted(origins.items()):
        if name not in by_name or path.startswith((root, inside)):
            continue
        where = sandbox.python_layout(host_program(python)).outside(path) if python else path
        return f"tests imported {name} from {where}, not the scratch (editable install?)"
    return None


def split_env_words(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """Leading `VAR=value` words of a command (as a shell takes them) and the rest of the argv."""
    env: dict[str, str] = {}
    rest = list(argv)
    while rest:
        name, eq, value = rest[0].partition("=")
        if not eq or not name.isidentifier():
            break
        env[name] = value
        rest.pop(0)
    return env, rest
