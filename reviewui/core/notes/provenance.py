"""Where each review came from, as this clone saw it: recorded here, or pulled from a remote.

The notes ref is shared, so nothing in it can say how a review reached this
clone; that is local knowledge and lives with the reviewer's other local
state (core/state.py's per-repository folder), never in the repository.
`record_review` adds the review it writes; `pull_notes` adds the reviews a
pull brought in with the remote's name. Entries are keyed by a digest of the
review's content, not its id alone: a forgery that reuses the id of a review
recorded here is a different review and gets no entry. A review with no entry came some other
way (a plain `git fetch` of the notes ref, or before reviewui kept this).

Saves are atomic (temp file, rename); two processes racing lose at most an
entry, which only makes a review read as "not recorded here", never as
the reviewer's own. A state directory (or file) that is not the user's alone
(core/private.py) is neither read nor written: every review then reads as
of unknown origin.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from reviewui.core.notes.model import Review

RECORDED = "recorded here"


def _path(repo_dir: str | Path) -> Path | None:
    """The repository's provenance file, or None when the state dir is not the user's alone (then
    nothing is read or written: another user could forge `recorded here`)."""
    from reviewui.core.config import user_state_dir
    from reviewui.core.state import state_path
    from reviewui.core.private import private_file

    # state_path names the repository's own folder in the state dir; the branch part is dropped.
    path = state_path(repo_dir, "-").parent / "notes-provenance.json"
    return None if private_file(path, user_state_dir()) else path


_keys: dict["Review", str] = {}
"""Keys computed (or read back with a kept parse, notes/index.py) in this process: each costs a TOML write."""


def key(review: "Review") -> str:
    """The entry key of `review`: its id and a digest of everything it says."""
    known = _keys.get(review)
    if known is None:
        known = f"{review.id}:{hashlib.sha256(review.to_toml().encode('utf-8', 'surrogateescape')).hexdigest()[:32]}"
        remember_key(review, known)
    return known


def remember_key(review: "Review", value: str) -> None:
    """Keep `value` as `review`'s key in this process (a parse kept on disk carries the key it computed)."""
    if len(_keys) > 100_000:
        _keys.clear()
    _keys[review] = value


def load(repo_dir: str | Path) -> dict[str, str]:
    """Entry key -> `recorded here` or `pulled from <remote>`; empty when nothing is known or readable."""
    path = _path(repo_dir)
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def remember(repo_dir: str | Path, reviews: Iterable["Review"], where: str) -> None:
    """Note that `reviews` came from `where`; a review already known keeps its first origin.

    Never raises: losing this record only makes reviews read as not recorded here.
    """
    keys = [key(r) for r in reviews]
    if not keys:
        return
    try:
        path = _path(repo_dir)
        if path is None:
            return
        known = load(repo_dir)
        for k in keys:
            known.setdefault(k, where)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".notes-provenance-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(known, f)
        os.replace(tmp, path)
    except Exception:  # noqa: BLE001 - local bookkeeping must never fail a verdict or a pull
        return


def pulled_from(remote: str) -> str:
    """The provenance words for a review a pull from `remote` brought in."""
    return f"pulled from {remote}"
