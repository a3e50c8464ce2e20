"""Where `reviewui demo` keeps its stories: built once into a per-user data dir, then reused.

A reviewer who records a verdict in story 1 and then opens story 2 must find
the verdict still there, so opening never rebuilds a story that is already
built. `--rebuild` starts over, but a story the user has added to (verdict
notes, their own branches or commits, changed or new files) is only deleted
after the user says yes.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from reviewui import demo
from reviewui.core.config import user_data_dir
from reviewui.core.errors import ReviewError
from reviewui.core.git import run_git

REFS_FILE = "reviewui-demo-refs"
"""Inside a built story's `.git/`: its refs as built, one `REF SHA` a line."""

Confirm = Callable[[str], bool]
"""Asked before a story with the user's own work in it is deleted; True means go ahead."""


def default_demo_dir() -> Path:
    """Return the per-user demo directory (XDG data dir), stable across runs."""
    return user_data_dir() / "demo"


@dataclass(frozen=True)
class Story:
    """One demo story as the user sees it in the list."""

    sample: demo.BuiltSample
    """Where it is built and what to open."""
    reused: bool
    """True when an earlier build was reused as it was."""


def resolve_name(name: str) -> str:
    """Return the sample named `name`, or the only one it is a prefix of (`2`, `02`, `02-add`).

    Raises ReviewError listing the stories when no single one matches.
    """
    names = demo.sample_names()
    if name in names:
        return name
    stripped = name.lstrip("0")
    hits = [n for n in names if n.startswith(name) or (stripped and n.split("-", 1)[0].lstrip("0") == stripped)]
    if len(hits) == 1:
        return hits[0]
    raise ReviewError(f"unknown demo story: {name} (choose from {', '.join(names)})")


def ensure_stories(dest: str | Path, rebuild: bool = False, confirm: Confirm | None = None) -> list[Story]:
    """Build every story under `dest` that is not built yet and return them all, in order.

    With `rebuild`, each story is built afresh; one holding the user's own
    work is deleted only when `confirm` says yes (no `confirm` means no),
    otherwise it is kept and reused. A directory in the way that is not a
    demo build is refused, as `demo.build_sample` does.
    """
    out: list[Story] = []
    root = Path(dest).expanduser().resolve()
    for name in demo.sample_names():
        repo = root / name
        built = (repo / ".git" / demo.MARKER_FILE).is_file()
        if built and rebuild:
            added = user_additions(repo)
            question = f"{name} holds your own work ({'; '.join(added)}). Delete it and build afresh?"
            if added and not (confirm is not None and confirm(question)):
                out.append(Story(describe(name, repo), reused=True))
                continue
        if built and not rebuild:
            out.append(Story(describe(name, repo), reused=True))
        else:
            sample = demo.build_sample(name, root)
            record_built_refs(sample.repo_dir)
            out.append(Story(sample, reused=False))
    return out


def describe(name: str, repo: Path) -> demo.BuiltSample:
    """The BuiltSample for story `name` already built at `repo`, without touching it."""
    src = demo._samples_root() / name
    try:
        spec = tomllib.loads((src / demo.SAMPLE_FILE).read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ReviewError(f"demo sample {name}: {demo.SAMPLE_FILE} is malformed: {e}") from e
    branches = tuple(str(b.get("name")) for b in spec.get("branches", []))
    transcript = next(
        (repo / demo.REVIEWUI_DIR / n for n in demo.TRANSCRIPT_NAMES if (src / n).is_file()),
        repo / demo.REVIEWUI_DIR / demo.TRANSCRIPT_NAMES[0],
    )
    return demo.BuiltSample(
        name=name,
        repo_dir=repo,
        branch=str(spec.get("open", branches[0] if branches else "main")),
        transcript_path=transcript,
        task_path=repo / demo.REVIEWUI_DIR / demo.TASK_FILE,
        branches=branches,
        description=" ".join(str(spec.get("description", "")).split()),
    )


def user_additions(repo: Path) -> list[str]:
    """What the user added to a built story, in words (empty: nothing of theirs to lose)."""
    found: list[str] = []
    status = _git(repo, "status", "--porcelain", "--untracked-files=all")
    if status:
        found.append(f"{len(status.splitlines())} changed or new file(s)")
    refs = _git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
    if any(r.startswith("refs/notes/") for r in refs):
        found.append("verdict notes")
    built = _built_refs(repo)
    now = dict(ln.split(" ", 1) for ln in refs if ln.startswith(("refs/heads/", "refs/tags/")))
    if built is not None:
        changed = sorted(r.split("/", 2)[2] for r in now.keys() | built.keys() if now.get(r) != built.get(r))
        if changed:
            found.append("your branches or commits: " + ", ".join(changed))
    return found


def record_built_refs(repo: Path) -> None:
    """Remember the branch tips a fresh build made, so later additions can be told apart."""
    (repo / ".git" / REFS_FILE).write_text(_git(repo, "for-each-ref", "--format=%(refname) %(objectname)") + "\n")


def _built_refs(repo: Path) -> dict[str, str] | None:
    try:
        text = (repo / ".git" / REFS_FILE).read_text(encoding="utf-8")
    except OSError:
        return None
    return dict(ln.split(" ", 1) for ln in text.splitlines() if " " in ln)


def _git(repo: Path, *args: str) -> str:
    return run_git(repo, *args, what="demo: git").decode("utf-8", "replace").strip()
