"""Building pristine scratch trees from a repository's objects, with no hooks, filters or fsmonitor.

`pristine(repo_dir, root, sha)` returns `root/pristine/<sha>`: commit `sha`'s
tree written by `checkout-index` into a fresh `git init` (no template, no
system or global config, so no filter drivers, hooks or fsmonitor from
anywhere; the tree's own attributes overridden by `info/attributes`), whose
objects are a pack of exactly that tree from the reviewer's repository and
whose HEAD commit has that tree. No reflog is kept (`no_reflogs`: its lines would say
whether and where the ref moved since the build, and so a run's kind); a pristine an older
reviewui built with one is built again. `commit_scratch` re-commits a changed
scratch the same way (same author, date, message: a reverted tree and an
unreverted one look alike to git). Read-only git in the reviewer's
repository goes through `git_plain` (no hooks, no fsmonitor, no optional locks).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Iterator, Protocol

from reviewui.core.git import run_git
from reviewui.core.run.tempdirs import remove_tree

KEEP_PRISTINES = 6
"""Pristine trees kept per repository (the oldest beyond this are removed when a pool opens)."""

SCRATCH_MESSAGE = "reviewui scratch"
"""The message of every scratch HEAD commit (reverted or not, they look alike)."""

_GIT_SAFE = ("core.hooksPath=/dev/null", "core.fsmonitor=false", "advice.detachedHead=false",
             "core.bigFileThreshold=1m")  # big blobs streamed, never held whole (nor delta-searched)

# The scratch's own repository: no system or global config (no filter drivers, no hooks,
# no fsmonitor from anywhere), a fixed identity and date so every scratch commit looks alike.
_SCRATCH_ENV: dict[str, str | None] = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "reviewui", "GIT_AUTHOR_EMAIL": "reviewui@localhost",
    "GIT_COMMITTER_NAME": "reviewui", "GIT_COMMITTER_EMAIL": "reviewui@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_INDEX_FILE": None, "GIT_OBJECT_DIRECTORY": None, "GIT_ALTERNATE_OBJECT_DIRECTORIES": None,
}
_NO_ATTRIBUTES = "* -text -eol -ident -filter -working-tree-encoding\n"



def scratch_git(cwd: Path, git_dir: str, *args: str, stdin: bytes | None = None, index: Path | None = None) -> str:
    env = {**_SCRATCH_ENV, "GIT_DIR": git_dir, "GIT_WORK_TREE": str(cwd), "GIT_CEILING_DIRECTORIES": str(cwd.parent),
           "GIT_INDEX_FILE": str(index) if index is not None else None}
    return run_git(cwd, *args, env=env, config=_GIT_SAFE, input=stdin, what="scratch git").decode("utf-8", "replace")


class Alike(Protocol):
    """How a sweep's pristine is built so its runs look alike (run/alike.py's AlikeRuns)."""

    @property
    def key(self) -> str: ...

    def pad_tree(self, tree: Path) -> list[str]: ...

    def stock(self, tree: Path) -> None: ...


def pristine(repo_dir: Path, root: Path, sha: str, alike: Alike | None = None) -> Path:
    """The pristine tree of commit `sha` (built on first use, shared by every slot); with `alike`,
    its changed files padded and its store stocked (run/alike.py), kept apart from the plain one."""
    base = root / "pristine"
    done = base / (sha if alike is None else f"{sha}-{alike.key}")
    if is_current(done):
        return done
    base.mkdir(parents=True, exist_ok=True)
    with repo_lock(root / "pristine.lock"):
        if is_current(done):
            return done
        work = Path(tempfile.mkdtemp(prefix=".build-", dir=base))
        tree_dir = work / "tree"
        try:
            if done.exists():  # an older reviewui's build (a reflog in it): moved aside, built again
                os.replace(done, work / "stale")
            _build(repo_dir, tree_dir, sha, alike)
            os.replace(tree_dir, done)
        finally:
            remove_tree(work)
    return done


def is_current(done: Path) -> bool:
    """Whether pristine `done` is built, and by a reviewui that keeps no reflog in a scratch."""
    return (done / ".git" / "HEAD").is_file() and not os.path.lexists(done / ".git" / "logs")


def _build(repo_dir: Path, dest: Path, sha: str, alike: Alike | None = None) -> None:
    """Write commit `sha`'s tree into `dest` with a fresh repository whose HEAD has exactly that tree
    (with `alike`: that tree padded, and the store stocked)."""
    tree = git_plain(repo_dir, "rev-parse", "--verify", f"{sha}^{{tree}}").strip()
    objects = run_git(repo_dir, "rev-list", "--objects", tree, env=plain_env(repo_dir), config=_GIT_SAFE)
    pack = run_git(repo_dir, "pack-objects", "--stdout", "-q", input=objects, env=plain_env(repo_dir),
                   config=_GIT_SAFE)
    dest.mkdir(parents=True)
    gd = str(dest / ".git")
    run_git(dest, "init", "-q", "--template=", "-b", "scratch", str(dest),
            env={**_SCRATCH_ENV, "GIT_DIR": None, "GIT_WORK_TREE": None}, config=_GIT_SAFE)
    no_reflogs(dest)
    info = dest / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text(_NO_ATTRIBUTES)
    scratch_git(dest, gd, "index-pack", "--stdin", stdin=pack)
    scratch_git(dest, gd, "read-tree", tree)
    scratch_git(dest, gd, "checkout-index", "-a", "-f", "-u")
    padded = alike.pad_tree(dest) if alike is not None else []
    if padded:
        scratch_git(dest, gd, "update-index", "--", *padded)
        tree = scratch_git(dest, gd, "write-tree").strip()
    commit = scratch_git(dest, gd, "commit-tree", tree, "-m", SCRATCH_MESSAGE).strip()
    scratch_git(dest, gd, "update-ref", "HEAD", commit)
    pack_head(dest, commit)
    if alike is not None:
        alike.stock(dest)
    # One modification time for every file and directory (kept by the copies, restored after
    # every edit): a test cannot tell the baseline's tree from a reverted one by its mtimes.
    stamp = time.time_ns() // 1_000_000_000 * 1_000_000_000
    for folder, dirs, names in os.walk(dest, topdown=False):
        for name in [*names, *dirs]:
            os.utime(os.path.join(folder, name), ns=(stamp, stamp), follow_symlinks=False)
    os.utime(dest, ns=(stamp, stamp))


def no_reflogs(dest: Path) -> None:
    """Turn reflogs off in scratch `dest`'s own config (git init turned them on) and drop any
    `logs/`: git then writes none, neither reviewui's `update-ref` nor a test's git. A reflog would
    tell a run's kind: a batched revert's fork moves the ref without a line (a null revert's ref
    is the head's, as the pristine's one line says), and run alone a revert's line moves the ref
    to another commit where a control's moves it to itself."""
    scratch_git(dest, str(dest / ".git"), "config", "core.logAllRefUpdates", "false")
    remove_tree(dest / ".git" / "logs")


def pack_head(dest: Path, commit: str) -> None:
    """Pack the HEAD commit beside the tree's objects, none left loose: an edited scratch's new
    commit and a null edit's (the head's own, written loose again: bite/staging.py) are then each
    one loose object more than the head has, alike (a test counting loose objects cannot tell them)."""
    gd = str(dest / ".git")
    scratch_git(dest, gd, "pack-objects", "-q", str(dest / ".git" / "objects" / "pack" / "pack"),
                stdin=f"{commit}\n".encode())
    scratch_git(dest, gd, "prune-packed", "-q")


def tree_mtime(path: Path) -> int | None:
    """The one modification time (ns) every file of scratch tree `path` was given when built."""
    try:
        return (path / ".git" / "info" / "attributes").stat().st_mtime_ns
    except OSError:
        return None


def restamp(path: Path, rels: list[str], stamp: int | None = None) -> None:
    """Give `rels` (and the directories above them) and the scratch's `.git` the tree's one mtime
    again after an edit, so an edited tree looks like an unedited one to a test."""
    stamp = tree_mtime(path) if stamp is None else stamp
    if stamp is None:
        return
    touched: set[Path] = {path}
    for rel in rels:
        p = path / rel
        while p != path and path in p.parents:
            touched.add(p)
            p = p.parent
    for folder, _dirs, names in os.walk(path / ".git"):
        touched.add(Path(folder))
        touched.update(Path(folder) / n for n in names)
    for p in touched:
        with contextlib.suppress(OSError):
            os.utime(p, ns=(stamp, stamp), follow_symlinks=False)


def prune_pristines(root: Path) -> None:
    base = root / "pristine"
    if not base.is_dir():
        return
    with repo_lock(root / "pristine.lock"):
        for stale in base.glob(".build-*"):  # builds run under this lock: any left is a killed one's
            remove_tree(stale)
        entries = sorted((p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")),
                         key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[KEEP_PRISTINES:]:
            remove_tree(old)


@contextlib.contextmanager
def repo_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive flock on `path` (blocking) for the duration."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def plain_env(cwd: Path) -> dict[str, str | None]:
    return {
        # Never let discovery climb out of the repository into some enclosing one.
        "GIT_CEILING_DIRECTORIES": str(Path(cwd).resolve().parent),
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_DIR": None, "GIT_WORK_TREE": None, "GIT_INDEX_FILE": None,
    }


def git_plain(cwd: Path, *args: str) -> str:
    """Read-only git in the reviewer's repository: no hooks, no fsmonitor, no optional locks."""
    return run_git(cwd, *args, env=plain_env(cwd), config=_GIT_SAFE, check=False).decode("utf-8", "replace")



def staged_commit(path: Path, files: dict[str, bytes | None], index: Path) -> str:
    """The commit a scratch would have after `commit_scratch` with `files` written (None: deleted),
    made without touching the scratch's own HEAD and index: its index is written to `index`.

    The tree is left as it was. Used to stage a revert that another process applies later.
    """
    saved: dict[str, bytes | None] = {}
    try:
        for rel, content in files.items():
            target = path / rel
            saved[rel] = target.read_bytes() if target.is_file() else None
            if content is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
        shutil.copyfile(path / ".git" / "index", index)  # HEAD's index, as a checkout left it
        return _commit(path, list(files), index)
    finally:
        for rel, old in saved.items():
            target = path / rel
            if old is None:
                target.unlink(missing_ok=True)
            else:
                target.write_bytes(old)
        restamp(path, list(files))


def commit_scratch(path: Path, *rels: str) -> None:
    """Make the scratch's HEAD the tree as it is now, `rels` re-added (before any test ran in this copy)."""
    scratch_git(path, str(path / ".git"), "update-ref", "HEAD", _commit(path, list(rels)))
    restamp(path, list(rels))


def _commit(path: Path, rels: list[str], index: Path | None = None) -> str:
    """A root scratch commit of the tree with `rels` re-added into `index` (default: the scratch's own)."""
    gd = str(path / ".git")
    scratch_git(path, gd, "add", "-A", "--", *rels, index=index)
    tree = scratch_git(path, gd, "write-tree", index=index).strip()
    return scratch_git(path, gd, "commit-tree", tree, "-m", SCRATCH_MESSAGE).strip()
