"""`task-identifier-missing` and `claimed-done-without-change`.

A task that names `result.stopped` cannot be done while no changed file
contains it: nothing can be "already correct" about a name that is not
there. Only words that are unmistakably code count (dotted or underscored
words, or anything in backticks), so prose such as "fix app.py for Windows"
never fires; file names and paths are paths, not identifiers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from reviewui.core.bounded import read_input_text
from reviewui.core.errors import ReviewError
from reviewui.core.findings.model import Finding, finding
from reviewui.core.findings.source import TreeSource

if TYPE_CHECKING:
    from reviewui.core.diff import Diff
    from reviewui.core.target import Target
    from reviewui.core.transcript import Transcript

MAX_TASK_CHARS = 200_000
MAX_IDENTIFIERS = 50

_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+|\S+@\S+\.\w+", re.IGNORECASE)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_STRIP = "\"'()[]{}<>,;:!?*“”‘’«»"
FILE_SUFFIXES = frozenset(
    "py pyi pyx js jsx mjs cjs ts tsx go rs c h cc cpp hpp java kt rb php swift cs sh bash zsh sql vue svelte "
    "md rst txt toml cfg ini yaml yml json jsonl lock html htm css scss csv tsv xml ipynb env log png jpg gif svg "
    "pdf zip gz tar whl exe dll so dylib bat ps1 in mk dockerfile".split()
)
"""Extensions that make `name.ext` a file name rather than an attribute access."""
DOMAIN_SUFFIXES = frozenset("com org net edu gov uk de fr eu".split())
"""Last parts that make `name.tld` a host name in prose, not an attribute."""


@dataclass(frozen=True)
class TaskIdentifier:
    """One code name a task mentions."""

    name: str
    """The identifier as written (`result.stopped`, `max_batch_size`)."""
    line: str
    """The task line it was found on (for evidence)."""


def load_task_text(task: str | None = None, task_file: str | Path | None = None, transcript: Transcript | None = None) -> str | None:
    """Return the task text: `task`, else the content of `task_file`, else the transcript's first user turn.

    Raises ReviewError when `task_file` cannot be read.
    """
    if task is not None:
        return task
    if task_file is not None:
        try:
            return read_input_text(task_file, "task file")[:MAX_TASK_CHARS]  # no FIFO, device or bomb
        except OSError as e:
            raise ReviewError(f"cannot read task file {task_file}: {e.strerror or e}") from e
    if transcript is not None:
        return transcript.task_text()
    return None


def task_identifiers(text: str) -> list[TaskIdentifier]:
    """Return the identifiers a task names, in order of first mention, without duplicates."""
    found: dict[str, TaskIdentifier] = {}
    for raw_line in text[:MAX_TASK_CHARS].splitlines():
        line = _URL.sub(lambda m: " " * len(m.group()), raw_line)
        hits: list[tuple[int, str]] = []
        for m in _BACKTICK.finditer(line):
            name = _clean_backticked(m.group(1))
            if name and not _is_path_like(name):
                hits.append((m.start(), name))
        prose = _BACKTICK.sub(lambda m: " " * len(m.group()), line)
        for m in re.finditer(r"\S+", prose):
            word = _prose_identifier(m.group())
            if word:
                hits.append((m.start(), word))
        for _, name in sorted(hits):
            found.setdefault(name, TaskIdentifier(name, raw_line.strip()))
        if len(found) >= MAX_IDENTIFIERS:
            break
    return list(found.values())[:MAX_IDENTIFIERS]


def _prose_identifier(chunk: str) -> str | None:
    """The identifier a whitespace-separated word of prose is, or None (plain words never are)."""
    if any(c in chunk for c in "/\\=@#$%^&|~+"):
        return None  # paths, options, expressions, mentions: not a bare name
    word = chunk.strip(_STRIP + ".")
    if word.endswith("()"):
        word = word[:-2]
    if not _IDENT.fullmatch(word) or not ("." in word or "_" in word.strip("_")):
        return None
    if _is_path_like(word) or _all_short(word):
        return None
    if "." in word and "_" not in word and word.rsplit(".", 1)[1].lower() in DOMAIN_SUFFIXES:
        return None  # example.com
    return word


def task_paths(text: str) -> list[str]:
    """Return the things in a task that look like file paths (`scripts/bench.py`, `app.py`)."""
    out: list[str] = []
    for chunk in _URL.sub(" ", text[:MAX_TASK_CHARS]).replace("`", " ").split():
        word = chunk.strip(_STRIP).rstrip(".")
        if "/" in word or _is_path_like(word):
            out.append(word.removeprefix("./"))
    return list(dict.fromkeys(out))


def _clean_backticked(text: str) -> str | None:
    name = text.strip()
    name = re.sub(r"\(.*\)$", "", name)  # `run()` / `run(x)` names `run`
    name = name.removeprefix("self.")
    return name if _IDENT.fullmatch(name) else None


def _is_path_like(word: str) -> bool:
    if "/" in word or "\\" in word:
        return True
    last = word.rsplit(".", 1)
    return len(last) == 2 and last[1].lower() in FILE_SUFFIXES


def _all_short(word: str) -> bool:
    """`e.g`, `i.e`-like dotted abbreviations: every part one letter."""
    parts = word.split(".")
    return len(parts) > 1 and all(len(p) <= 1 for p in parts)


def task_identifier_missing(target: Target, diff: Diff, task: str | None, source: TreeSource | None = None) -> list[Finding]:
    """Return a finding for each task identifier absent from the branch's changed files.

    The branch's version of every changed (not deleted, not binary) file is
    searched; when the branch changed nothing, the files the task names are
    searched instead (and with none, the identifier is missing everywhere).
    """
    if not task or not task.strip():
        return []
    idents = task_identifiers(task)
    if not idents:
        return []
    src = source or TreeSource(str(target.repo_dir), target.head)
    files = [f.path for f in diff.files if f.status != "deleted" and not f.binary]
    where = "the changed files"
    if not files:
        named = _resolve_named_paths(task_paths(task), src.paths)
        files = named
        where = "the files the task names" if named else "any changed file (the branch changed nothing)"
    src.load(files)
    texts = {p: src.text(p) or "" for p in files}
    out: list[Finding] = []
    for ident in idents:
        candidates = [ident.name] + ([ident.name.rsplit(".", 1)[1]] if "." in ident.name else [])
        if any(_contains(t, c) for t in texts.values() for c in candidates):
            continue
        also = f" (nor {candidates[1]})" if len(candidates) > 1 else ""
        shown = ", ".join(files[:5]) + (f" (+{len(files) - 5} more)" if len(files) > 5 else "")
        out.append(
            finding(
                "task-identifier-missing",
                f"the task names {ident.name}, which appears nowhere in {where}{also}" + (f": {shown}" if files else ""),
                file=files[0] if len(files) == 1 else None,
                symbol=ident.name,
                evidence=f"task: {ident.line[:300]}",
            )
        )
    return out


def _resolve_named_paths(named: list[str], repo_paths: list[str]) -> list[str]:
    """Map task-named paths to files at head (exact path, else a unique file-name match)."""
    existing = set(repo_paths)
    out: list[str] = []
    for n in named:
        if n in existing:
            out.append(n)
            continue
        hits = [p for p in repo_paths if p.endswith("/" + n) or PurePosixPath(p).name == n]
        if len(hits) == 1:
            out.append(hits[0])
    return list(dict.fromkeys(out))


def _contains(text: str, name: str) -> bool:
    """True when `name` occurs in `text` as a whole word (dots inside `name` literal)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None


def claimed_done_without_change(transcript: Transcript | None, earlier: list[Finding]) -> list[Finding]:
    """Return a finding when the transcript's last claim says done while the work is provably not done.

    `earlier` are the findings already computed; `no-change` or
    `task-identifier-missing` among them is the proof.
    """
    if transcript is None:
        return []
    claim = transcript.last_claim()
    if claim is None:
        return []
    proof = [f for f in earlier if f.kind in ("no-change", "task-identifier-missing")]
    if not proof:
        return []
    said = " ".join(claim.text.split())
    quote = said if len(said) <= 120 else said[:119] + "…"
    reason = proof[0].message
    return [
        finding(
            "claimed-done-without-change",
            f'the agent claimed it was done ("{quote}") but {reason}',
            file=proof[0].file,
            symbol=proof[0].symbol,
            evidence="claim: " + said[:500] + "\n" + "\n".join(f"{p.kind}: {p.message}" for p in proof[:5]),
        )
    ]
