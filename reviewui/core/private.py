"""Is a directory or file the user's alone? What reviewui keeps between runs is trusted only then.

The evidence store says which hunks bite; the notes provenance says which
reviews this clone recorded itself; the queue's cache holds patch ids. Another
local user who can write any of them (a state directory they made first,
mode 1777; a database file mode 666) can turn `toothless` into `bites` or a
forgery into the reviewer's own verdict. So each is used only when it is
owned by the effective user and writable by no group and no one else, as
root too (root's state in a directory another user owns is refused). A
symbolic link counts as not private: it can point anywhere.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def not_private(path: Path) -> str | None:
    """Why `path` (which exists) is not the user's alone, in words; None when it is; "" when it is absent."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return ""
    except OSError as e:
        return f"cannot be checked ({e.strerror or e})"
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    me = os.geteuid()
    if st.st_uid != me:
        return f"is owned by uid {st.st_uid}, not by you (uid {me})"
    writable = [who for bit, who in ((stat.S_IWGRP, "its group"), (stat.S_IWOTH, "everyone")) if st.st_mode & bit]
    if writable:
        return f"is writable by {' and '.join(writable)} (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def private_dir(path: Path) -> str | None:
    """Make `path` (mode 0700, parents as needed) if it is absent; None when it is the user's alone, else why not."""
    if not os.path.lexists(path):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.mkdir(mode=0o700)
        except FileExistsError:
            pass  # made by someone else just now: checked below like any other
        except OSError as e:
            return f"cannot be made ({e.strerror or e})"
    why = not_private(path)
    if why == "":
        return "cannot be made"
    if why is None and not path.is_dir():
        return "is not a directory"
    return why


def private_file(path: Path, root: Path) -> str | None:
    """Why the file `path` under the directory `root` is not the user's alone (root, each directory between,
    the file when it exists), in words; None when it is. Directories absent are made, mode 0700."""
    try:
        between = path.parent.relative_to(root).parts
    except ValueError:
        return f"{path} is not under {root}"
    where = root
    for part in ("", *between):
        where = where / part if part else where
        why = private_dir(where)
        if why is not None:
            return f"{where} {why}"
    why = not_private(path)
    return f"{path} {why}" if why else None
