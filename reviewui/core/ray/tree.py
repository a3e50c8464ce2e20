"""The tree a Ray sweep ships to its nodes: the head's tracked files plus declared extras, never `.git`.

`build_tree` writes a tar of the head's tree read straight from the
repository's objects (`ls-tree` and `cat-file`, not `git archive`, whose
`export-ignore`/`export-subst` attributes would let the branch under review
decide what a node sees), then the extras the reviewer declared
(`ray-extras`: paths relative to the repository, files from the reviewer's
checkout that are not tracked). Its size is checked against the limit before
anything is read whole. `unpack_repo` is the node's half: the tar unpacked
once into a node-local directory, and a repository of its own made of it
(one commit, attributes overridden), which a WorktreePool can lend scratches
of. With no extras, that commit's tree is the head's tree, object for object.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterator, Sequence

from reviewui.core.errors import ReviewError
from reviewui.core.git import run_git
from reviewui.core.run.scratch_build import git_plain, plain_env, scratch_git

DEFAULT_SHIP_LIMIT = 512 * 1024 * 1024
"""Bytes a shipped tree may hold at most (`ray-ship-limit`, in MiB, changes it)."""

_NO_ATTRIBUTES = "* -text -eol -ident -filter -working-tree-encoding\n"  # as scratch_build's pristines
_MODES = {"100644": 0o644, "100755": 0o755}


@dataclass(frozen=True)
class Shipped:
    """A tree ready to ship: its tar and a digest naming it."""

    data: bytes
    key: str
    """sha256 of the tar (a node unpacks each key once)."""


def build_tree(repo_dir: Path, head: str, extras: Sequence[str], limit: int = DEFAULT_SHIP_LIMIT) -> Shipped:
    """The tar of `head`'s tracked files plus `extras`; ReviewError (one line) when over `limit` bytes
    or for an extra that is not a path inside the repository."""
    entries = _tracked(repo_dir, head)
    extra_files = list(_extras(repo_dir, extras))
    extra_paths = {rel for rel, _ in extra_files}
    entries = [e for e in entries if e[3] not in extra_paths]
    total = sum(e[2] for e in entries) + sum(p.lstat().st_size for _, p in extra_files)
    if total > limit:
        raise ReviewError(f"the tree to ship to the Ray nodes is {_mib(total)}, over the limit of {_mib(limit)} "
                          "(ray-ship-limit in MiB)")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        blobs = _blobs(repo_dir, [sha for _, sha, _, _ in entries])
        for (mode, _sha, _size, rel), content in zip(entries, blobs, strict=True):
            _add(tar, rel, mode, content)
        for rel, path in extra_files:
            if path.is_symlink():
                _add(tar, rel, "120000", os.readlink(path).encode("utf-8", "surrogateescape"))
            else:
                _add(tar, rel, "100755" if os.access(path, os.X_OK) else "100644", path.read_bytes())
    data = out.getvalue()
    return Shipped(data, hashlib.sha256(data).hexdigest())


def _tracked(repo_dir: Path, head: str) -> list[tuple[str, str, int, str]]:
    """(mode, blob sha, size, path) of every file of `head` (submodules, which have no blob, left out)."""
    raw = run_git(repo_dir, "ls-tree", "-r", "-z", "-l", "--full-tree", head, env=plain_env(repo_dir),
                  what="git ls-tree")
    out = []
    for record in raw.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, sha, size = meta.decode().split()
        if kind != "blob":
            continue
        out.append((mode, sha, int(size), path.decode("utf-8", "surrogateescape")))
    return out


def _blobs(repo_dir: Path, shas: list[str]) -> Iterator[bytes]:
    """The contents of `shas`, in order (one `cat-file --batch`)."""
    if not shas:
        return
    raw = run_git(repo_dir, "cat-file", "--batch", "--buffer", input="".join(f"{s}\n" for s in shas).encode(),
                  env=plain_env(repo_dir), what="git cat-file")
    at = 0
    for _ in shas:
        nl = raw.index(b"\n", at)
        size = int(raw[at:nl].split()[2])
        yield raw[nl + 1:nl + 1 + size]
        at = nl + 1 + size + 1


def _extras(repo_dir: Path, extras: Sequence[str]) -> Iterator[tuple[str, Path]]:
    """(repo-relative path, host path) of every file under the declared extras (symlinks not followed)."""
    root = repo_dir.resolve()
    for given in extras:
        rel = PurePosixPath(given)
        if rel.is_absolute() or ".." in rel.parts or ".git" in rel.parts or not rel.parts:
            raise ReviewError(f"ray-extras: {given!r} must be a path inside the repository, never .git")
        path = root / rel
        if not path.exists() and not path.is_symlink():
            raise ReviewError(f"ray-extras: {given!r} does not exist in {root}")
        if path.is_symlink() or path.is_file():
            yield str(rel), path
            continue
        for folder, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d != ".git")
            for name in sorted(names):
                p = Path(folder) / name
                if p.is_symlink() or p.is_file():
                    yield p.relative_to(root).as_posix(), p


def _add(tar: tarfile.TarFile, rel: str, mode: str, content: bytes) -> None:
    info = tarfile.TarInfo(rel)
    if mode == "120000":
        info.type, info.linkname = tarfile.SYMTYPE, content.decode("utf-8", "surrogateescape")
        tar.addfile(info)
        return
    info.size, info.mode = len(content), _MODES.get(mode, 0o644)
    tar.addfile(info, io.BytesIO(content))


def unpack_repo(data: bytes, dest: Path) -> str:
    """Unpack a shipped tree into `dest/tree` and make it a repository of one commit; return its sha."""
    tree = dest / "tree"
    tree.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        if hasattr(tarfile, "tar_filter"):
            tar.extractall(tree, filter="tar")  # nothing written outside `tree`, never through a link
        else:
            _extract_checked(tar, tree)  # Python before 3.11.4 (Debian 12's 3.11.2): no extraction filters
    gd = str(tree / ".git")
    scratch_git(tree, gd, "init", "-q", "--template=", "-b", "head")
    (tree / ".git" / "info").mkdir(exist_ok=True)
    (tree / ".git" / "info" / "attributes").write_text(_NO_ATTRIBUTES)
    scratch_git(tree, gd, "add", "-A", "-f", ".")  # -f: a tracked file the tree's .gitignore names stays
    tree_sha = scratch_git(tree, gd, "write-tree").strip()
    commit = scratch_git(tree, gd, "commit-tree", tree_sha, "-m", "reviewui ray node").strip()
    scratch_git(tree, gd, "update-ref", "refs/heads/head", commit)
    return commit


def _extract_checked(tar: tarfile.TarFile, tree: Path) -> None:
    """Extract `tar` into `tree` as the `tar` extraction filter does, where Python has none.

    Only files, directories and symlinks (all a shipped tree holds); each member's
    path, resolved through what is already on disk, inside `tree`; a symlink's
    target relative and inside `tree`; modes without setuid, setgid, sticky and
    group or other write. Raises ReviewError on anything else.
    """
    root = tree.resolve()
    for member in tar.getmembers():
        target = (root / member.name).resolve()
        if member.name.startswith("/") or (target != root and root not in target.parents):
            raise ReviewError(f"a shipped tree's member leaves the tree: {member.name!r}")
        if member.issym():
            link = (target.parent / member.linkname).resolve()
            if member.linkname.startswith("/") or (link != root and root not in link.parents):
                raise ReviewError(f"a shipped tree's link points out of the tree: {member.name!r}")
        elif not (member.isfile() or member.isdir()):
            raise ReviewError(f"a shipped tree holds something that is not a file or a link: {member.name!r}")
        member.mode &= 0o755
        tar.extract(member, root, set_attrs=not member.issym())


def tree_of(repo_dir: Path, rev: str) -> str:
    """The tree sha of `rev` (a node's commit has the head's tree when no extras were shipped)."""
    return git_plain(repo_dir, "rev-parse", "--verify", f"{rev}^{{tree}}").strip()


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB"
