"""Where a sandboxed run sees its Python: the venv and the interpreter's prefix at fixed neutral paths.

A run's interpreter lives somewhere on the host that names the reviewer:
`~/.pyenv/versions/3.11.7`, a venv inside their checkout, uv's pythons under
`~/.local/share`. Bound where it lives, `sys.executable`, `sys.prefix`, the
mount table and PATH would tell every test those paths. So the run sees

- the command's venv at `VENV` (`/reviewui/python/venv`),
- the interpreter's own prefix at `BASE` (`/reviewui/python/base`) unless it
  is a system directory (`/usr`: bound as the system is),
- any other directory on its `sys.path` (a `.pth` line into another venv) at
  `OTHER<n>` (`/reviewui/python/path<n>`),

and the files of those trees that name their host paths are replaced, for
the run only, by copies written as the run sees them (`Layout.overlays`):
the venv's `pyvenv.cfg` (its `home`, `executable`, `command`), the `bin`
directories (the `python` symlinks, console scripts' `#!` lines, `activate`),
and `.pth` files (a path line into a tree the run cannot see is dropped, as
`site` would skip it). A base interpreter linked to its own `libpython` by
an absolute RUNPATH gets `LD_LIBRARY_PATH` at `BASE/lib`.

What still names a host path inside, said in docs/REFERENCE.md: the contents
of other files of those trees (compiled `.pyc` headers, `direct_url.json`,
setuptools' editable finders), and the paths the reviewer adds
(`sandbox-paths`), which are bound where they are.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from reviewui.core.run import run_uid, sandbox_world
from reviewui.core.run.command_types import HostProgram, host_program, resolve
from reviewui.core.run.tempdirs import private_tempdir

PYTHON = "/reviewui/python"
"""Where every Python tree a run needs is mounted."""
VENV = PYTHON + "/venv"
"""The command's venv inside a run."""
BASE = PYTHON + "/base"
"""The interpreter's prefix inside a run (when it is not a system directory)."""
OTHER = PYTHON + "/path"
"""Prefix of the other directories on the interpreter's sys.path (`path0`, `path1`, ...)."""

COPY_LIMIT = 1024 * 1024
"""A `bin` entry up to this size is copied into the overlay (rewritten when it names a host
path); a larger one (a copied interpreter binary) is bound over a placeholder instead."""

_lock = threading.Lock()


@dataclass(frozen=True)
class Facts:
    """What the host interpreter says of itself (asked once per interpreter)."""

    executable: str
    prefix: str
    base_prefix: str
    path: tuple[str, ...]
    """`sys.path` without its first entry, resolved, existing directories only."""


@dataclass(frozen=True)
class Layout:
    """How one run sees its interpreter: what is bound where, what is replaced, what it needs set."""

    pairs: tuple[tuple[str, str], ...] = ()
    """(host directory, where the run sees it), bound read-only in this order."""
    overlays: tuple[tuple[str, str], ...] = ()
    """(host file or directory reviewui wrote, the inside path it replaces), bound after the pairs."""
    env: tuple[tuple[str, str], ...] = ()
    """Variables the run needs for this layout (LD_LIBRARY_PATH for a shared libpython)."""
    command: str | None = None
    """The interpreter a run starts in place of the command's own when that lies outside every
    bound tree (a pyenv shim: a script under the home that finds the real one)."""

    @functools.cached_property
    def _forms(self) -> list[tuple[str, str]]:
        out = {(form, there) for host, there in self.pairs for form in (host, _resolved(host))}
        return sorted(out, key=lambda p: len(p[0]), reverse=True)

    def inside(self, path: str) -> str:
        """Where the run sees host `path` (a path under a bound tree; any other path unchanged)."""
        for host, there in self._forms:
            if path == host or path.startswith(host + "/"):
                return there + path[len(host):]
        return path

    def maps(self, path: str) -> bool:
        """True when host `path` lies in a tree this layout binds."""
        return any(path == host or path.startswith(host + "/") for host, _ in self._forms)

    def text_inside(self, text: str) -> str:
        """`text` (a file's contents) with every host path of a bound tree written as the run sees it."""
        for host, there in self._forms:
            # the host path itself or followed by a separator, never a longer name (`/venv2`)
            text = re.sub(re.escape(host) + r"(?![\w.+-])", there.replace("\\", "\\\\"), text)
        return text

    def outside(self, text: str) -> str:
        """`text` (a path or a message a run wrote) with the trees' inside paths written as the host's."""
        for host, there in sorted(self.pairs, key=lambda p: len(p[1]), reverse=True):
            text = re.sub(re.escape(there) + r"(?![\w.+-])", host.replace("\\", "\\\\"), text)
        return text

    def bind_args(self) -> list[str]:
        """bwrap arguments that mount the trees and then their overlays."""
        out: list[str] = []
        for host, there in self.pairs:
            out += ["--ro-bind", host, there]
        for host, there in self.overlays:
            out += ["--ro-bind", host, there]
        return out

    def run_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """`env` as the run needs it: PATH and PYTHONPATH entries written as the run sees them,
        VIRTUAL_ENV the inside venv (or gone when the run cannot see it), this layout's variables."""
        out = dict(env)
        for key in ("PATH", "PYTHONPATH"):
            if key in out:
                out[key] = os.pathsep.join(self.inside(p) for p in out[key].split(os.pathsep))
        if "VIRTUAL_ENV" in out:
            venv = self.inside(out["VIRTUAL_ENV"])
            if venv == out["VIRTUAL_ENV"] and not sandbox_world.covered(Path(venv)):
                del out["VIRTUAL_ENV"]
            else:
                out["VIRTUAL_ENV"] = venv
        out.update(self.env)
        return out

    def argv(self, argv: Sequence[str]) -> list[str]:
        """`argv` with each argument that is a path in a bound tree written as the run sees it
        (and the interpreter itself in place of a shim)."""
        out = [self.inside(a) if a.startswith("/") else a for a in argv]
        if out and self.command is not None:
            out[0] = self.command
        return out


def _resolved(path: str) -> str:
    try:
        return str(Path(path).resolve())
    except OSError:
        return path


def python_of(command: HostProgram | None, path_env: str | None = None) -> HostProgram | None:
    """The host Python a trusted command runs (absolute, unresolved): itself when it is a `python*`,
    the venv's `python` beside a console script, or the interpreter its `#!` line names; else None
    (and None for any of those in a checkout or a scratch: command_types.host_program)."""
    if not command:
        return None
    found = resolve(command, path_env)
    if found is None:
        return None
    exe = Path(found).absolute()
    if exe.name.startswith("python"):
        return host_program(str(exe))
    beside = exe.parent / "python"
    if (exe.parent.parent / "pyvenv.cfg").is_file() and beside.exists():
        return host_program(str(beside))
    try:
        with open(exe, "rb") as f:
            first = f.readline(512)
    except OSError:
        return None
    if first.startswith(b"#!"):
        named = first[2:].strip().split(b" ")[0].decode("utf-8", "replace")
        if Path(named).name.startswith("python") and os.path.isabs(named) and os.path.exists(named):
            return host_program(named)
    return None


def facts(exe: HostProgram) -> Facts | None:
    """What trusted interpreter `exe` reports of its prefixes and sys.path (None when it does not answer)."""
    return _facts(exe)


@functools.lru_cache(maxsize=8)
def _facts(exe: HostProgram) -> Facts | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    code = ("import sys, json; print(json.dumps({'exe': sys.executable, 'prefix': sys.prefix, "
            "'base': sys.base_prefix, 'path': sys.path[1:]}))")
    try:
        done = subprocess.run([exe, "-c", code], env=env, capture_output=True, text=True, timeout=30, cwd="/")
        data = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    if not isinstance(data, dict):
        return None
    path: list[str] = []
    for e in data.get("path", []):
        if isinstance(e, str) and e:
            p = Path(e).resolve()
            if p.is_dir() and p != Path("/") and str(p) not in path:
                path.append(str(p))
    return Facts(str(data.get("exe", "")), str(data.get("prefix", "")), str(data.get("base", "")), tuple(path))


def _venv_of(exe: str) -> Path | None:
    root = Path(exe).parent.parent
    return root if (root / "pyvenv.cfg").is_file() else None


def _in_venv(path: Path, stops: Sequence[Path]) -> bool:
    """True when `path` lies in a venv (a directory with a pyvenv.cfg) below one of `stops`."""
    for parent in path.parents:
        if parent in stops:
            return False
        if (parent / "pyvenv.cfg").is_file():
            return True
    return False


def _under(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def layout(python: HostProgram | None, path_env: str | None = None, hidden: Sequence[Path] = (),
           checkouts: Sequence[Path] = ()) -> Layout:
    """How a run of trusted `python` (a command name or path) sees it. A sys.path entry that is a `hidden`
    directory or holds one (a `.pth` line `/tmp`) is left out, and so is one inside a reviewer's
    checkout (an editable install: the scratch stands in for it) unless it is in a venv there.
    A command that is not a Python (`sh -c ...`, `make`) gets the `python` its PATH finds."""
    exe = python_of(python, path_env) or python_of(host_program("python", path_env), path_env) \
        or python_of(host_program("python3", path_env), path_env)
    info = facts(exe) if exe else None
    if exe is None or info is None:
        return Layout()
    named = resolve(python, path_env) if python else None
    shim = bool(named) and Path(named or "").name.startswith("python")
    pairs, base, command = _pairs(exe, info, tuple(hidden), tuple(checkouts), shim)
    overlays, env = _overlays(Layout(pairs=pairs), info.path, base)
    return Layout(pairs=pairs, overlays=overlays, env=env, command=command)


@functools.lru_cache(maxsize=16)
def _pairs(exe: str, info: Facts, hidden: tuple[Path, ...], checkouts: tuple[Path, ...], shim: bool,
           ) -> tuple[tuple[tuple[str, str], ...], Path | None, str | None]:
    """The trees a run of `exe` needs and where it sees them; the base prefix when it is one of
    them; the interpreter to start in place of `exe` when `exe` lies outside them (a shim)."""
    roots: list[tuple[Path, str]] = []
    venv = _venv_of(exe) or (Path(info.prefix) if info.prefix and info.prefix != info.base_prefix else None)
    if venv is not None:
        roots.append((venv.resolve(), VENV))
    base = Path(info.base_prefix).resolve() if info.base_prefix else None
    if base is not None and base.is_dir() and base != Path("/") and not sandbox_world.covered(base) \
            and not any(base == r for r, _ in roots):
        roots.append((base, BASE))
    n = 0
    for entry in info.path:
        p = Path(entry)
        if sandbox_world.covered(p) or _under(p, [r for r, _ in roots]) or any(_under(h, [p]) for h in hidden):
            continue
        if _under(p, checkouts) and not _in_venv(p, checkouts):
            continue
        roots.append((p, f"{OTHER}{n}"))
        n += 1
    pairs = tuple((str(h), t) for h, t in roots)
    lay = Layout(pairs=pairs)
    command = None
    if shim and not lay.maps(exe) and info.executable and lay.maps(info.executable):
        command = lay.inside(info.executable)
    return pairs, (base if base is not None and (base, BASE) in roots else None), command


def _overlays(lay: Layout, path: tuple[str, ...], base: Path | None,
              ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """The overlay files of `lay` and the variables it needs, written once per layout (again when a
    tree's bin dir or pyvenv.cfg changed: a package installed meanwhile)."""
    stamps = tuple(_stamp(Path(h)) for h, _ in lay.pairs)
    with _lock:
        return _written(lay, path, base, stamps)


def _stamp(root: Path) -> tuple[int, int]:
    out = []
    for p in (root / "bin", root / "pyvenv.cfg"):
        try:
            out.append(p.stat().st_mtime_ns)
        except OSError:
            out.append(0)
    return out[0], out[1]


@functools.lru_cache(maxsize=8)
def _written(lay: Layout, path: tuple[str, ...], base: Path | None, stamps: tuple[tuple[int, int], ...],
             ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    out = private_tempdir("python")
    run_uid.open_to_run(out)  # as root, a run's bwrap binds the overlays as RUN_UID
    overlays: list[tuple[str, str]] = []
    for n, (host, there) in enumerate(lay.pairs):
        root = Path(host)
        cfg = root / "pyvenv.cfg"
        if cfg.is_file():
            dest = out / f"{n}.pyvenv.cfg"
            dest.write_text(lay.text_inside(cfg.read_text(encoding="utf-8", errors="replace")), encoding="utf-8")
            overlays.append((str(dest), there + "/pyvenv.cfg"))
        if (root / "bin").is_dir() and not (root / "bin").is_symlink():
            overlays += _bin_overlay(root / "bin", out / f"{n}.bin", there + "/bin", lay)
    for n, site in enumerate(d for d in path if lay.maps(d)):
        overlays += _pth_overlays(Path(site), out / f"pth{n}", lay)
    env: list[tuple[str, str]] = []
    if base is not None and any((base / "lib").glob("libpython*.so*")):
        env.append(("LD_LIBRARY_PATH", BASE + "/lib"))
    return tuple(overlays), tuple(env)


def _bin_overlay(src: Path, dest: Path, there: str, lay: Layout) -> list[tuple[str, str]]:
    """A copy of `src` (a bin dir) as the run sees it, bound over `there`; big files bound one by one."""
    dest.mkdir()
    big: list[tuple[str, str]] = []
    for entry in sorted(src.iterdir()):
        target = dest / entry.name
        if entry.is_symlink():
            link = os.readlink(entry)
            os.symlink(lay.inside(link) if os.path.isabs(link) else link, target)
        elif entry.is_file():
            size = entry.stat().st_size
            if size > COPY_LIMIT:
                target.touch()
                big.append((str(entry), there + "/" + entry.name))
                continue
            data = entry.read_bytes()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                target.write_bytes(data)
            else:
                target.write_text(lay.text_inside(text), encoding="utf-8")
            shutil.copymode(entry, target)
    return [(str(dest), there), *big]


def _pth_overlays(site: Path, dest: Path, lay: Layout) -> list[tuple[str, str]]:
    """Rewritten copies of the `.pth` files in `site` that name a host path, each bound over its own."""
    out: list[tuple[str, str]] = []
    try:
        files = sorted(site.glob("*.pth"))
    except OSError:
        return out
    for pth in files:
        try:
            text = pth.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        lines = []
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("/") and not stripped.startswith(("import ", "import\t")):
                if lay.maps(stripped):
                    lines.append(lay.inside(stripped))
                elif sandbox_world.covered(Path(stripped)):
                    lines.append(stripped)
                # else: a tree the run cannot see; `site` would skip it, and it would name a host path
                continue
            lines.append(lay.text_inside(line))
        new = "\n".join(lines) + ("\n" if text.endswith("\n") else "")
        if new != text:
            dest.mkdir(exist_ok=True)
            copy = dest / pth.name
            copy.write_text(new, encoding="utf-8")
            out.append((str(copy), lay.inside(str(pth))))
    return out
