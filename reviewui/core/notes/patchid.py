"""The verbatim patch id of a branch's change, to tell a rebase from a rewrite, whitespace included.

A verdict records the patch id of the diff base..head. When the branch later
points at another commit, an equal id means the very same patch text on a new
base (a rebase, a reworded commit): the old verdict still applies. Any other
id means the code under review changed, and in Python whitespace is code: an
edit that only re-indents a line, or changes a space inside a string, is a
different patch. So the id is *verbatim*: `git patch-id --verbatim` (which,
unlike `--stable`, strips no whitespace) where git has it, else reviewui's own
digest of the same diff text (`text_digest`). Both leave out only what a
rebase changes without changing the patch: hunk line numbers and, for text
files, the blob ids on `index` lines. The two kinds never compare equal (40
hex against `sha256:` + 64 hex), nor with the whitespace-blind `--stable` ids
older reviewui wrote: a verdict recorded under another kind is current only
on the very head it judged.

The diff is made with plumbing (`git diff-tree`), so the reviewer's diff
settings (colour, prefixes, external diff tools, textconv, rename detection)
cannot change the id. `--full-index` writes whole blob ids on the `index`
lines, which the id hashes for binary files (and files past
`core.bigFileThreshold`, which git then treats as binary): two different
binary edits never share an id. Many branches are done in one stream
(`patch_ids`): one `diff-tree --stdin` piped into one `patch-id`, so a queue
of thousands of branches costs two processes, and the diff text never passes
through Python on git's path.
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
import threading
from pathlib import Path
from typing import IO, Iterable

from reviewui.core.errors import ReviewError
from reviewui.core.git import git_env, rev_parse

EMPTY_PATCH_ID = ""
"""The patch id of an empty diff (base and head have the same tree)."""
DIGEST_PREFIX = "sha256:"
"""What starts reviewui's own digest (git's ids are 40 hex digits)."""
BIG_FILE = "1m"
"""Files past this are hashed by their blob ids (git's `core.bigFileThreshold` for the patch ids)."""
_DIFF = ("diff-tree", "-p", "-r", "--full-index", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames")


@functools.lru_cache(maxsize=1)
def git_has_verbatim() -> bool:
    """True when this git's `patch-id` takes `--verbatim` (git 2.39 and later)."""
    try:
        proc = subprocess.run(["git", "patch-id", "--verbatim"], input=b"", capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def patch_id(repo_dir: str | Path, base: str, head: str) -> str:
    """Return the verbatim patch id of the diff `base`..`head` (see the module docstring).

    Returns EMPTY_PATCH_ID ("") when the diff is empty. Raises ReviewError
    when `base` or `head` names no commit.
    """
    base_sha, head_sha = rev_parse(repo_dir, base), rev_parse(repo_dir, head)
    if base_sha is None or head_sha is None:
        raise ReviewError(f"no such commit: {base if base_sha is None else head}")
    return patch_ids(repo_dir, [(base_sha, head_sha)]).get((base_sha, head_sha), EMPTY_PATCH_ID)


def patch_ids(repo_dir: str | Path, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The verbatim patch id of each (base, head) pair of full commit ids, from one stream.

    An empty diff is EMPTY_PATCH_ID. Pairs sharing a head share its id (a head
    is diffed once, against the first base given with it). Raises ReviewError
    when git fails (a pair naming no commit).
    """
    by_head: dict[str, str] = {}
    for base, head in pairs:
        by_head.setdefault(head, base)
    if not by_head:
        return {}
    lines = "".join(f"{head} {base}\n" for head, base in by_head.items()).encode()
    found = _git_stream(repo_dir, lines) if git_has_verbatim() else _digest_stream(repo_dir, lines)
    return {(base, head): found.get(head, EMPTY_PATCH_ID) for head, base in by_head.items()}


def _diff_cmd() -> list[str]:
    # A fixed threshold, not the reviewer's analysis cap: the id must not depend on who computes it.
    # Past it git calls a file binary, and the id hashes its blob ids (exact, and never held here).
    config = ("core.quotepath=false", f"core.bigFileThreshold={BIG_FILE}")
    return ["git", *(x for c in config for x in ("-c", c)), *_DIFF, "--stdin"]


def _git_stream(repo_dir: str | Path, lines: bytes) -> dict[str, str]:
    """`diff-tree --stdin -p` piped straight into `patch-id --verbatim`: head -> id."""
    env = git_env()
    diff = subprocess.Popen(_diff_cmd(), cwd=str(repo_dir), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert diff.stdin is not None and diff.stdout is not None and diff.stderr is not None
    pid = subprocess.Popen(["git", "patch-id", "--verbatim"], cwd=str(repo_dir), stdin=diff.stdout,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    diff.stdout.close()  # patch-id holds the read end now
    feeder = threading.Thread(target=_feed, args=(diff.stdin, lines), daemon=True)
    feeder.start()
    err = _drain_later(diff.stderr)
    out, _ = pid.communicate()
    feeder.join()
    code = diff.wait()
    err.join()
    if code != 0:
        raise ReviewError(f"git diff-tree: {(err.text.splitlines() or ['failed'])[0]}")
    found: dict[str, str] = {}
    for line in out.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 2:
            found[parts[1]] = parts[0]
    return found


def _digest_stream(repo_dir: str | Path, lines: bytes) -> dict[str, str]:
    """reviewui's own digest of each head's diff text, read as `diff-tree --stdin -p` streams it."""
    diff = subprocess.Popen(_diff_cmd(), cwd=str(repo_dir), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=git_env())
    assert diff.stdin is not None and diff.stdout is not None and diff.stderr is not None
    feeder = threading.Thread(target=_feed, args=(diff.stdin, lines), daemon=True)
    feeder.start()
    err = _drain_later(diff.stderr)
    found = digest_diff_stream(diff.stdout)
    feeder.join()
    if diff.wait() != 0:
        err.join()
        raise ReviewError(f"git diff-tree: {(err.text.splitlines() or ['failed'])[0]}")
    err.join()
    return found


def digest_diff_stream(stream: IO[bytes]) -> dict[str, str]:
    """Head -> digest for a `diff-tree --stdin -p --full-index` stream (each diff after its head's id line).

    The digest is SHA-256 over the diff's lines exactly as written, except
    hunk headers (their line numbers move with a rebase) and, in a text
    file's section, its `index` line (blob ids move with the base). A binary
    section keeps its `index` line: the blob ids are its only content.
    """
    found: dict[str, str] = {}
    head = ""
    h = hashlib.sha256()
    section: list[bytes] = []
    binary = False
    hunks = False

    def flush_section() -> None:
        nonlocal section, binary, hunks
        for line in section:
            if line.startswith(b"index ") and not binary:
                continue
            h.update(line)
        section, binary, hunks = [], False, False

    def flush_head() -> None:
        nonlocal h
        flush_section()
        if head:
            digest = h.hexdigest()
            found[head] = DIGEST_PREFIX + digest if digest != _EMPTY_SHA256 else EMPTY_PATCH_ID
        h = hashlib.sha256()

    for raw in stream:
        if _is_head_line(raw):
            flush_head()
            head = raw.strip().decode("ascii")
            continue
        if raw.startswith(b"diff --git "):
            flush_section()
        elif not hunks and raw.startswith((b"Binary files ", b"GIT binary patch")):
            binary = True
        elif raw.startswith(b"@@ "):
            hunks = True
            continue  # a hunk header's line numbers are where the patch sits, not what it is
        section.append(raw)
    flush_head()
    return found


def text_digest(diff_text: bytes) -> str:
    """reviewui's own digest of one diff's text (`diff-tree -p --full-index` output), as `patch_ids` falls
    back to: EMPTY_PATCH_ID for an empty diff."""
    import io

    return digest_diff_stream(io.BytesIO(b"0" * 40 + b"\n" + diff_text)).get("0" * 40, EMPTY_PATCH_ID)


_EMPTY_SHA256 = hashlib.sha256().hexdigest()


def _is_head_line(raw: bytes) -> bool:
    text = raw.rstrip(b"\n")
    return len(text) in (40, 64) and all(c in b"0123456789abcdef" for c in text)


def _feed(pipe: IO[bytes], data: bytes) -> None:
    try:
        pipe.write(data)
    except BrokenPipeError:
        pass
    finally:
        try:
            pipe.close()
        except BrokenPipeError:
            pass


class _drain_later(threading.Thread):
    """Reads a process's stderr on a thread (so a chatty git never blocks on a full pipe)."""

    def __init__(self, pipe: IO[bytes]) -> None:
        super().__init__(daemon=True)
        self.pipe = pipe
        self.text = ""
        self.start()

    def run(self) -> None:
        self.text = self.pipe.read(64 * 1024).decode("utf-8", "replace")
        self.pipe.read()
