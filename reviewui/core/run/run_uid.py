"""As root, nobody inside: every process of a run has an unprivileged kernel uid (RUN_UID).

A user namespace maps the run's uid (65534 inside) to the uid of whoever made the namespace.
Made by root, that is kernel uid 0: permission checks on root-owned files a run can see pass by
owner, and a peer-credential check on a host socket sees root. So as root the trusted step in
front of bwrap (`mountns.mounted`) drops to RUN_UID (util-linux `setpriv --reuid --regid
--clear-groups`) before bwrap makes the run's namespaces, exactly as an ordinary user's run
starts: the run is 65534 inside and RUN_UID on the host.

bwrap then resolves its bind sources as RUN_UID. Those that uid cannot reach (a pyenv under
`/root`, a dir of reviewui's that is 0700) are first bound, by root, in the step's own mount
namespace at a neutral staging point (`stage`); nothing changes on the host. The dirs a run
writes (its io dir, a warm server's) are handed to RUN_UID (`hand_over`); reviewui's own dirs a
run only reads are opened to it (`open_to_run`). As an ordinary user all of this is a no-op:
the user's runs already have the user's uid.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Sequence

RUN_UID = 2_100_000_000
"""The kernel uid (and gid) of every process of a run when reviewui runs as root: a dedicated uid no
account or file on a host has (below 2**31, which every file system and tar format keeps)."""

ROOT_LINE = ('m="$1" p="$2" u="$3" n="$4"; shift 4; '
             'while [ "$n" -gt 0 ]; do "$m" --rbind "$1" "$2" || exit 125; shift 2; n=$((n-1)); done; '
             'exec "$p" --reuid="$u" --regid="$u" --clear-groups -- "$@"')
"""The last shell of root's step (in its own mount namespace, after mountns.MOUNT's where the run is
capped): bind each of the $4 unreachable sources at its staging point, then exec setpriv ($2) to
uid $3 and the rest (bwrap)."""

_BINDS = {"--bind", "--ro-bind", "--bind-try", "--ro-bind-try", "--dev-bind", "--dev-bind-try"}


def as_root() -> bool:
    """True when this process runs as root (its runs drop to RUN_UID)."""
    return os.geteuid() == 0


def _own(path: str | Path) -> None:
    try:
        os.lchown(path, RUN_UID, RUN_UID)
    except OSError:
        pass


def hand_over(path: str | Path) -> None:
    """Give `path` and everything under it to RUN_UID (a dir a run writes), as root; else nothing."""
    if not as_root():
        return
    _own(path)
    for top, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            _own(os.path.join(top, name))


def open_to_run(path: str | Path, mode: int = 0o755) -> None:
    """Let RUN_UID read `path` (a dir of reviewui's a run only reads), as root; else nothing."""
    if as_root():
        try:
            os.chmod(path, mode)
        except OSError:
            pass


def reachable(path: str) -> bool:
    """True when RUN_UID can resolve `path`: every dir above it searchable by that uid."""
    here = Path(path)
    for parent in reversed(here.parents):
        try:
            st = os.stat(parent)
        except OSError:
            return False
        mode = stat.S_IMODE(st.st_mode)
        if not (mode & 0o001 or (st.st_uid == RUN_UID and mode & 0o100) or (st.st_gid == RUN_UID and mode & 0o010)):
            return False
    return True


def point_for(source: str, points: Path) -> Path:
    """The staging point of `source` under `points`: a dir or an empty file, as `source` is, named by
    a hash of its path (made once)."""
    point = points / hashlib.sha256(source.encode()).hexdigest()[:20]
    if not os.path.lexists(point):
        if os.path.isdir(source):
            point.mkdir(exist_ok=True)
        else:
            point.touch()
    return point


def reachable_base(default: str) -> str:
    """Where root keeps the dirs a run's bwrap (RUN_UID) resolves itself (the capped tmpfs mount
    points, the staging points): `default` (the temp dir) when that uid can search it, else the
    first of /tmp, /var/tmp, /dev/shm it can (a TMPDIR private to root is no place for them)."""
    for base in (default, "/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(base) and reachable(os.path.join(base, "x")):
            return base
    return default


def stage(bwrap_args: Sequence[str], points: Path) -> tuple[list[str], list[str]]:
    """(`bwrap_args` with each bind source RUN_UID cannot reach replaced by a staging point under
    `points`, the flat (source, point) pairs root's step binds first). A point is a dir or an
    empty file, as its source is, named by a hash of the source's path."""
    out = list(bwrap_args)
    pairs: list[str] = []
    n = 0
    while n < len(out) and out[n] != "--":
        if out[n] in _BINDS and n + 2 < len(out):
            source = out[n + 1]
            if os.path.exists(source) and not reachable(source):
                point = point_for(source, points)
                out[n + 1] = str(point)
                pairs += [source, str(point)]
            n += 3
        else:
            n += 1
    return out, pairs
