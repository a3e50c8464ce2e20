"""Every git call reviewui makes goes through here.

GitPython's `Repo` opens the repository and its `git` command object runs
plumbing; failures become ReviewError with git's own first line of complaint.
Read-only helpers never touch the reviewer's working tree, index or refs.
"""

from __future__ import annotations

import subprocess
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Iterator, Mapping, NamedTuple, Sequence

from typing import TYPE_CHECKING

from reviewui.core.bounded import analysis_limits
from reviewui.core.errors import ReviewError

if TYPE_CHECKING:  # GitPython costs ~0.1 s to import: only commands that need a Repo pay it
    import git as gitpython


def repo_root(path: str | Path) -> Path:
    """The working tree root of the repository containing `path` (plain git, no GitPython import).

    Raises ReviewError as `open_repo` does: no such directory, not a git
    repository, or a bare repository.
    """
    return repo_dirs(path)[0]


def repo_dirs(path: str | Path) -> tuple[Path, Path]:
    """(working tree root, shared git directory) of the repository containing `path`, from one git
    call where it can (each process before the first screen is time the reviewer waits).

    Raises ReviewError as `repo_root` does.
    """
    p = Path(path)
    if not p.exists():
        raise ReviewError(f"no such directory: {p}")
    out = run_git(p, "rev-parse", "--is-bare-repository", "--show-toplevel", "--path-format=absolute",
                  "--git-common-dir", check=False)
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) == 3:  # git stops at the first question it cannot answer (a bare repository's top level)
        root, common = Path(lines[1]), Path(lines[2])
        _COMMON_DIRS[str(root.resolve())] = common
        return root, common
    # Not a work tree (bare, inside .git, not a repository): asked one question at a time, as before.
    bare = run_git(p, "rev-parse", "--is-bare-repository", check=False).decode().strip()
    if not bare:
        raise ReviewError(f"not a git repository: {p}")
    if bare == "true":
        raise ReviewError(f"bare repository (no working tree): {p}")
    top = run_git(p, "rev-parse", "--show-toplevel", check=False).decode("utf-8", "surrogateescape").strip()
    root = Path(top) if top else Path(open_repo(p).working_tree_dir or ".")  # inside .git, say
    return root, git_common_dir(root)


def open_repo(path: str | Path) -> "gitpython.Repo":
    """Open the git repository containing `path`.

    Raises ReviewError when `path` does not exist, is not inside a git
    repository, or is a bare repository (reviewui needs a working tree).
    """
    import git as gitpython

    p = Path(path)
    if not p.exists():
        raise ReviewError(f"no such directory: {p}")
    try:
        repo = gitpython.Repo(p, search_parent_directories=True)
    except (gitpython.InvalidGitRepositoryError, gitpython.NoSuchPathError) as e:
        raise ReviewError(f"not a git repository: {p}") from e
    if repo.bare:
        raise ReviewError(f"bare repository (no working tree): {p}")
    return repo


def run_git(
    cwd: str | Path,
    *args: str,
    input: bytes | None = None,
    check: bool = True,
    env: Mapping[str, str | None] | None = None,
    config: Sequence[str] = (),
    what: str = "git",
) -> bytes:
    """Run `git args...` in `cwd` and return its raw stdout.

    `env` adds to (or, with None, removes from) git's environment; `config`
    holds `name=value` settings passed as `-c`. Raises ReviewError (with
    git's first stderr line, after `what`) when git exits non-zero and
    `check` is true, or when git is not installed.
    """
    full_env = _git_env()
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    options = [x for c in ("core.quotepath=false", *config) for x in ("-c", c)]
    try:
        proc = subprocess.run(
            ["git", *options, *args], cwd=str(cwd), input=input, capture_output=True, env=full_env
        )
    except FileNotFoundError as e:
        raise ReviewError("git is not installed or not on PATH") from e
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        verb = next((a for a in args if not a.startswith("-")), "")
        first = msg[0] if msg else "failed"
        raise ReviewError(f"{what} {verb}: {first}")
    return proc.stdout


def run_git_async(cwd: str | Path, *args: str, what: str = "git", config: Sequence[str] = ()) -> "Future[bytes]":
    """Start `git args...` in `cwd` on a thread and return a Future of its stdout.

    For git work whose answer is needed a little later (the thread spends its
    time waiting on git, not holding the GIL). `result()` raises as run_git does.
    """
    future: Future[bytes] = Future()

    def run() -> None:
        try:
            future.set_result(run_git(cwd, *args, what=what, config=config))
        except BaseException as e:  # handed to whoever asks for the result
            future.set_exception(e)

    threading.Thread(target=run, name="git " + (args[0] if args else ""), daemon=True).start()
    return future


def config_value(repo_dir: str | Path, name: str) -> str:
    """The value `git config --get NAME` prints in `repo_dir` ("" when unset)."""
    return run_git(repo_dir, "config", "--get", name, check=False).decode("utf-8", "replace").strip()


def git_text(cwd: str | Path, *args: str, check: bool = True) -> str:
    """Run git and return stdout decoded as UTF-8 (with replacement), stripped."""
    return run_git(cwd, *args, check=check).decode("utf-8", "replace").strip()


_COMMON_DIRS: dict[str, Path] = {}
"""Resolved folder -> its repository's shared git directory, as git last said (see git_common_dir)."""


def git_common_dir(cwd: str | Path) -> Path:
    """The repository's shared git directory (the main `.git`, also from a linked worktree).

    Asked of git once per folder and process while that directory is there: the review's
    state, its local settings and its target each need it before the first screen.
    """
    key = str(Path(cwd).resolve())
    known = _COMMON_DIRS.get(key)
    if known is not None and known.is_dir():
        return known
    found = Path(git_text(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    _COMMON_DIRS[key] = found
    return found


def rev_parse(cwd: str | Path, ref: str) -> str | None:
    """Return the commit SHA `ref` names, or None when it names no commit."""
    out = run_git(cwd, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    sha = out.decode().strip()
    return sha or None


def show_file(cwd: str | Path, rev: str, path: str, cap: int | None = None) -> bytes | None:
    """Return the bytes of `path` at commit `rev`, or None when it is absent there (or not a file).

    At most `cap` + 1 bytes are read (default: the analysis cap,
    `max-analysis-bytes`): a result longer than `cap` means the file is
    larger and was cut there; callers that analyse it check `len > cap`.
    """
    return show_files(cwd, [(rev, path)], cap)[0]


def show_files(cwd: str | Path, wanted: Sequence[tuple[str, str]], cap: int | None = None) -> list[bytes | None]:
    """`show_file` of each (rev, path) in `wanted`, in order, from one `git cat-file --batch`."""
    specs = [f"{rev}:{path}" for rev, path in wanted if "\n" not in path and "\r" not in path]
    found = dict(read_blobs(cwd, specs, cap))  # a path with a newline is in no tree
    return [b.data if (b := found.get(f"{rev}:{path}")) is not None else None for rev, path in wanted]


class Blob(NamedTuple):
    """One blob read by `read_blobs`: its full size and its bytes, cut to the cap."""

    size: int
    """The blob's size in git, whatever was read of it."""
    data: bytes
    """Its bytes: all of them, or the first cap + 1 when `size` is over the cap."""

    @property
    def cut(self) -> bool:
        """True when `data` is only the start of the blob (it was over the cap)."""
        return len(self.data) < self.size


def read_blobs(cwd: str | Path, specs: Sequence[str], cap: int | None = None) -> Iterator[tuple[str, Blob | None]]:
    """Yield (spec, Blob or None) for each object spec (`rev:path`, a SHA), from one `git cat-file --batch`.

    None is an absent object or one that is not a blob. Each blob is read to
    at most `cap` + 1 bytes (default: the analysis cap); the rest of a larger
    one is skipped on the pipe, never held, so memory stays bounded by the cap.
    """
    cap = analysis_limits().bytes if cap is None else cap
    wanted = [s for s in specs if "\n" not in s and "\r" not in s]
    if not wanted:
        return
    try:
        proc = subprocess.Popen(["git", "cat-file", "--batch", "--buffer"], cwd=str(cwd), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_git_env())
    except FileNotFoundError as e:
        raise ReviewError("git is not installed or not on PATH") from e
    assert proc.stdin is not None and proc.stdout is not None
    request = "".join(s + "\n" for s in wanted).encode("utf-8", "surrogateescape")
    feeder = threading.Thread(target=_feed, args=(proc.stdin, request), daemon=True)
    feeder.start()  # on a thread: git stops reading requests while its answers fill the pipe
    out = proc.stdout
    try:
        for spec in wanted:
            parts = out.readline(len(spec.encode("utf-8", "surrogateescape")) + 128).split()  # `<spec> missing` at most
            if len(parts) != 3 or not parts[2].isdigit():  # `<spec> missing`, `ambiguous`, a dead git
                yield spec, None
                continue
            size = int(parts[2])
            data = out.read(min(size, cap + 1))
            _skip(out, size - len(data))
            out.read(1)  # the newline after every body
            yield spec, Blob(size, data) if parts[1] == b"blob" else None
    finally:
        proc.kill()
        proc.wait()
        out.close()
        feeder.join()


def blob_sizes(cwd: str | Path, shas: Sequence[str]) -> dict[str, int]:
    """Size in bytes of each blob named in `shas` (SHAs or `rev:path`; absent ones and non-blobs left
    out), keyed as asked, from one `git cat-file --batch-check`."""
    wanted = [s for s in dict.fromkeys(shas) if s and "\n" not in s and "\r" not in s]
    if not wanted:
        return {}
    # --buffer: without it git flushes each answer, and reading them woke this thread (and asked for the
    # GIL) once per blob, ~800 times for a 400-file branch while the UI imports beside it.
    out = run_git(cwd, "cat-file", "--batch-check", "--buffer", input="".join(s + "\n" for s in wanted).encode(),
                  check=False)
    sizes: dict[str, int] = {}
    for asked, line in zip(wanted, out.decode("ascii", "replace").splitlines(), strict=False):  # in order asked
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob" and parts[2].isdigit():
            sizes[asked] = int(parts[2])  # keyed as asked: `--raw` gives abbreviated SHAs
    return sizes


def _feed(pipe: IO[bytes], data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.close()
    except (BrokenPipeError, OSError, ValueError):  # git was stopped before it read every request
        pass


def _skip(stream: IO[bytes], n: int) -> None:
    while n > 0:
        chunk = stream.read(min(n, 1 << 16))
        if not chunk:
            return
        n -= len(chunk)


def list_files(cwd: str | Path, rev: str) -> list[str]:
    """Return every file path in the tree of commit `rev`."""
    out = run_git(cwd, "ls-tree", "-r", "-z", "--name-only", rev)
    return [p.decode("utf-8", "replace") for p in out.split(b"\0") if p]


def git_env() -> dict[str, str]:
    """The environment every git process reviewui starts gets (no editor, no pager, the C locale)."""
    return _git_env()


def _git_env() -> dict[str, str]:
    # Never let git open an editor or pager, whatever the user's config says.
    import os

    env = dict(os.environ)
    env.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat", GIT_EDITOR="true", LC_ALL="C")
    return env
