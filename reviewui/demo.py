"""Build the demo repositories that `reviewui demo` opens.

Each sample under `sample_repos/<name>/` is kept as plain text: a
`sample.toml`, the files of the base commit in `base/`, one overlay folder
per branch in `branches/<branch with / replaced by __>/` (plus an optional
`DELETE` list), the agent's transcript and the task. This module turns one
into a real git repository with a fixed identity and fixed dates, so the
same sample gives the same commit SHAs on every machine and every run.

The transcript and task are placed in `.reviewui/` in the built repository,
untracked and excluded, so they never show up in the diff under review.
"""

from __future__ import annotations

import importlib.resources
import json
import os
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from importlib.resources.abc import Traversable
from pathlib import Path

from reviewui.core.config import LOCAL_CONFIG
from reviewui.core.errors import ReviewError
from reviewui.core.git import run_git

SAMPLE_FILE = "sample.toml"
TRANSCRIPT_NAMES: tuple[str, ...] = ("transcript.jsonl", "transcript.json")
TASK_FILE = "task.md"
DELETE_FILE = "DELETE"
REVIEWUI_DIR = ".reviewui"
MARKER_FILE = "reviewui-demo"
"""Written inside a built repo's `.git/`; proves a directory is ours to rebuild."""

# Caches and editor droppings must never reach a commit: they would make the
# SHAs depend on whoever last ran something inside sample_repos/.
_SKIP_NAMES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".DS_Store"})
_SKIP_SUFFIXES = (".pyc", ".pyo", "~")

_EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
_STEP = timedelta(minutes=17)
_DEFAULT_AUTHOR = ("reviewui demo", "demo@reviewui.invalid")


@dataclass(frozen=True)
class BuiltSample:
    """A demo repository on disk, ready to be reviewed."""

    name: str
    """The sample's name, e.g. `01-trim-reasoning`."""
    repo_dir: Path
    """Root of the built repository (checked out on `main`)."""
    branch: str
    """The branch to open first."""
    transcript_path: Path
    """The agent's transcript inside `.reviewui/` (untracked)."""
    task_path: Path
    """The task text inside `.reviewui/` (untracked)."""
    branches: tuple[str, ...]
    """Every branch built on top of `main`, in build order."""
    description: str = ""
    """One paragraph saying what the sample shows."""


@dataclass(frozen=True)
class _Commit:
    """One planned commit of a branch, checked before anything touches the disk."""

    message: str
    """The commit message."""
    writes: tuple[tuple[str, bytes], ...]
    """(path, content) for every file this commit adds or replaces."""
    deletes: tuple[str, ...]
    """Paths this commit removes."""


@dataclass(frozen=True)
class _Branch:
    """One planned branch of a sample."""

    name: str
    """The branch name, e.g. `agent/trim-reasoning`."""
    start: str
    """`main` or an earlier branch of the same sample."""
    author: tuple[str, str]
    """(name, email) used as both author and committer."""
    commits: tuple[_Commit, ...]
    """The branch's commits in order."""


def sample_names() -> list[str]:
    """Return the names of the bundled samples in build order.

    Raises ReviewError when the samples are missing from this install.
    """
    root = _samples_root()
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / SAMPLE_FILE).is_file())


def build_all(dest_dir: str | Path) -> list[BuiltSample]:
    """Build every sample under `dest_dir`, one repository per sample, in build order.

    Raises ReviewError as `build_sample` does.
    """
    return [build_sample(name, dest_dir) for name in sample_names()]


def build_sample(name: str, dest_dir: str | Path) -> BuiltSample:
    """Build sample `name` as a git repository at `dest_dir/name` and return where it is.

    A repository this function built before is deleted and rebuilt; any other
    non-empty directory in the way is left alone and reported. Raises
    ReviewError for an unknown name (listing the known ones), a malformed
    sample, a directory in the way, or a failing git command.
    """
    names = sample_names()
    if name not in names:
        raise ReviewError(f"unknown demo sample {name!r}; choose one of: {', '.join(names)}")
    src = _samples_root() / name
    spec = _load_spec(src, name)
    branches = _load_branches(src, name, spec)
    branch_names = tuple(b.name for b in branches)
    first = spec.get("open", branch_names[0] if branch_names else "main")
    if first not in branch_names:
        raise ReviewError(f"demo sample {name}: open = {first!r} is not one of its branches")
    transcript_src = _transcript_source(src, name)
    base_author = _parse_author(spec.get("base", {}).get("author"), f"{name}: base.author")
    base_files = _read_tree(src / "base")
    if not base_files:
        raise ReviewError(f"demo sample {name}: base/ has no files")

    repo = Path(dest_dir).expanduser().resolve() / name
    _clear_destination(repo)
    repo.mkdir(parents=True, exist_ok=True)

    git = _Git(repo)
    git.run("init", "-q", "-b", "main")
    git.run("config", "commit.gpgsign", "false")
    git.run("config", "core.autocrlf", "false")
    (repo / ".git" / MARKER_FILE).write_text(name + "\n", encoding="utf-8")

    _write_files(repo, base_files)
    git.commit(spec.get("base", {}).get("message", "base"), base_author)
    for branch in branches:
        _build_branch(git, repo, branch)
    git.run("checkout", "-q", "main")

    dot = repo / REVIEWUI_DIR
    dot.mkdir(exist_ok=True)
    transcript_path = dot / transcript_src.name
    transcript_path.write_bytes(transcript_src.read_bytes())
    task_path = dot / TASK_FILE
    task_path.write_bytes(_normalize((src / TASK_FILE).read_bytes()))
    exclude = repo / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8") as fh:
        fh.write(f"{REVIEWUI_DIR}/\n")
    # The samples' tests run with reviewui's own Python, which has pytest (a runtime
    # dependency): a bare `python` on PATH may not, and then `b` could not bite.
    (repo / ".git" / LOCAL_CONFIG).write_text(  # the reviewer's own settings for this repo
        f"test-command = {json.dumps(shlex.join([sys.executable, '-m', 'pytest']))}\n", encoding="utf-8")

    return BuiltSample(
        name=name,
        repo_dir=repo,
        branch=first,
        transcript_path=transcript_path,
        task_path=task_path,
        branches=branch_names,
        description=" ".join(str(spec.get("description", "")).split()),
    )


# -- locating and reading the sample sources ---------------------------------


def _packaged_root() -> Traversable | None:
    # An installed wheel carries the samples as package data (see pyproject's force-include).
    try:
        root = importlib.resources.files("reviewui") / "_data" / "sample_repos"
    except (ModuleNotFoundError, TypeError):
        return None
    return root if root.is_dir() else None


def _checkout_root() -> Traversable | None:
    root = Path(__file__).resolve().parents[1] / "sample_repos"
    return root if root.is_dir() else None


def _samples_root() -> Traversable:
    root = _packaged_root() or _checkout_root()
    if root is None:
        raise ReviewError("the demo samples are missing from this install (no sample_repos folder)")
    return root


def _load_spec(src: Traversable, name: str) -> dict:
    try:
        return tomllib.loads((src / SAMPLE_FILE).read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ReviewError(f"demo sample {name}: {SAMPLE_FILE} is malformed: {e}") from e


def _load_branches(src: Traversable, name: str, spec: dict) -> list[_Branch]:
    out: list[_Branch] = []
    for i, raw in enumerate(spec.get("branches", [])):
        where = f"demo sample {name}, branches[{i}]"
        bname = raw.get("name")
        if not isinstance(bname, str) or not bname:
            raise ReviewError(f"{where} has no name")
        folder = raw.get("dir", bname.replace("/", "__"))
        overlay = src / "branches" / folder
        if not overlay.is_dir():
            raise ReviewError(f"{where}: missing folder branches/{folder}")
        start = str(raw.get("start", "main"))
        if start != "main" and start not in {b.name for b in out}:
            raise ReviewError(f"{where}: start = {start!r} must be main or a branch listed before it")
        out.append(
            _Branch(
                name=bname,
                start=start,
                author=_parse_author(raw.get("author"), f"{where}.author"),
                commits=_plan_commits(overlay, raw.get("commits", []), f"{where} ({bname})"),
            )
        )
    return out


def _plan_commits(overlay: Traversable, raw_commits: list[dict], where: str) -> tuple[_Commit, ...]:
    """Split a branch's overlay and DELETE list into its commits; every path lands in exactly one."""
    files = {k: v for k, v in _read_tree(overlay).items() if k != DELETE_FILE}
    deletes: set[str] = set()
    if (overlay / DELETE_FILE).is_file():
        text = (overlay / DELETE_FILE).read_text(encoding="utf-8")
        deletes = {ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")}
    both = deletes & files.keys()
    if both:
        raise ReviewError(f"{where}: {sorted(both)[0]} is both overlaid and deleted")
    if not raw_commits:
        raise ReviewError(f"{where} lists no commits")
    pending = set(files) | deletes
    commits = []
    for n, raw in enumerate(raw_commits):
        listed = raw.get("files")
        if listed is None and n != len(raw_commits) - 1:
            raise ReviewError(f"{where}: only the last commit may omit `files`")
        paths = sorted(pending) if listed is None else [str(p) for p in listed]
        for path in paths:
            if path not in pending:
                raise ReviewError(f"{where}: {path} is not in its overlay or DELETE list, or is listed twice")
            pending.discard(path)
        commits.append(
            _Commit(
                message=str(raw.get("message", "change")),
                writes=tuple((p, files[p]) for p in paths if p in files),
                deletes=tuple(p for p in paths if p in deletes),
            )
        )
    if pending:
        raise ReviewError(f"{where}: {sorted(pending)[0]} is in its overlay but in no commit")
    return tuple(commits)


def _transcript_source(src: Traversable, name: str) -> Traversable:
    found = [src / n for n in TRANSCRIPT_NAMES if (src / n).is_file()]
    if len(found) != 1:
        raise ReviewError(f"demo sample {name}: needs exactly one of {', '.join(TRANSCRIPT_NAMES)}")
    if not (src / TASK_FILE).is_file():
        raise ReviewError(f"demo sample {name}: missing {TASK_FILE}")
    return found[0]


def _read_tree(root: Traversable, prefix: str = "") -> dict[str, bytes]:
    """Every file below `root` as {posix relative path: bytes}, caches skipped."""
    files: dict[str, bytes] = {}
    for entry in root.iterdir():
        if entry.name in _SKIP_NAMES or entry.name.endswith(_SKIP_SUFFIXES):
            continue
        rel = f"{prefix}{entry.name}"
        if entry.is_dir():
            files.update(_read_tree(entry, rel + "/"))
        else:
            files[rel] = _normalize(entry.read_bytes())
    return files


def _normalize(data: bytes) -> bytes:
    # A Windows checkout with autocrlf would otherwise change every SHA.
    return data.replace(b"\r\n", b"\n")


def _parse_author(raw: object, where: str) -> tuple[str, str]:
    if raw is None:
        return _DEFAULT_AUTHOR
    text = str(raw).strip()
    if not (text.endswith(">") and "<" in text):
        raise ReviewError(f"demo sample {where} must look like 'Name <email>', got {text!r}")
    person, _, email = text[:-1].partition("<")
    return person.strip(), email.strip()


# -- writing the repository --------------------------------------------------


def _clear_destination(repo: Path) -> None:
    if not repo.exists():
        return
    if not repo.is_dir():
        raise ReviewError(f"cannot build the demo at {repo}: a file is in the way")
    if (repo / ".git" / MARKER_FILE).is_file():
        shutil.rmtree(repo)
        return
    if any(repo.iterdir()):
        raise ReviewError(f"cannot build the demo at {repo}: the directory is not empty; pick another --dir")


def _build_branch(git: _Git, repo: Path, branch: _Branch) -> None:
    git.run("checkout", "-q", "-b", branch.name, branch.start)
    for commit in branch.commits:
        _write_files(repo, dict(commit.writes))
        for path in commit.deletes:
            git.run("rm", "-q", "--", path)
        git.commit(commit.message, branch.author)


def _write_files(repo: Path, files: dict[str, bytes]) -> None:
    for rel, data in sorted(files.items()):
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


class _Git:
    """git in one repository with a sealed environment, so SHAs depend only on the sample.

    The user's global and system config are ignored: hooks, signing, templates
    or attributes there could otherwise change or block the commits.
    """

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.commits = 0

    def run(self, *args: str, env: dict[str, str] | None = None) -> str:
        sealed: dict[str, str | None] = {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_DIR": None, "GIT_WORK_TREE": None, "GIT_INDEX_FILE": None, "GIT_TEMPLATE_DIR": None,
            **(env or {}),
        }
        out = run_git(self.repo, *args, env=sealed, what="building the demo: git")
        return out.decode("utf-8", "replace").strip()

    def commit(self, message: str, author: tuple[str, str]) -> None:
        """Stage everything and commit at the next fixed timestamp."""
        when = (_EPOCH + self.commits * _STEP).strftime("%Y-%m-%dT%H:%M:%S+0000")
        self.commits += 1
        person, email = author
        self.run("add", "-A")
        self.run(
            "commit", "-q", "--no-verify", "--allow-empty", "-m", message,
            env={
                "GIT_AUTHOR_NAME": person,
                "GIT_AUTHOR_EMAIL": email,
                "GIT_AUTHOR_DATE": when,
                "GIT_COMMITTER_NAME": person,
                "GIT_COMMITTER_EMAIL": email,
                "GIT_COMMITTER_DATE": when,
            },
        )
