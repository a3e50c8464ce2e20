"""One changed file of a diff (`FileDiff`), its hunks parsed on first use.

A FileDiff does not read git itself: its patch, whether it is over the caps and
its blobs' sizes come from the diff it belongs to, seen here only as a
`PatchSource` (the `Diff` of `diff.py` is one), so this record stays below the
diff that makes it. A FileDiff of a `Diff.subset` loads through the full diff.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, Protocol

from reviewui.core.hunks import Hunk, parse_hunks
from reviewui.core.roles import Role

Status = Literal["added", "deleted", "modified", "renamed"]


class PatchSource(Protocol):
    """What a FileDiff asks of its diff: its patch, the files never loaded, blob sizes."""

    def patch_bytes(self, f: FileDiff) -> bytes:
        """The raw patch of one file (empty for one over the caps)."""
        ...

    def over_cap_paths(self) -> frozenset[str]:
        """Paths of the changed files whose patch is never loaded."""
        ...

    def blob_size(self, blob: str | None) -> int | None:
        """Size in bytes of a blob, or None for no blob."""
        ...


@dataclass(frozen=True, eq=False)
class FileDiff:
    """One changed file, its hunks parsed on first use."""

    path: str
    """Branch-side path (base-side for deletions)."""
    old_path: str | None
    """Base-side path when renamed or copied, else None."""
    status: Status
    """`added`, `deleted`, `modified` or `renamed`."""
    role: Role
    """`test`, `source` or `other`."""
    binary: bool
    """True when git treats the content as binary."""
    added: int
    """Added line count (0 for binary)."""
    removed: int
    """Removed line count (0 for binary)."""
    old_mode: str | None
    """Base-side file mode (None when added)."""
    new_mode: str | None
    """Branch-side file mode (None when deleted)."""
    old_blob: str | None
    """Base-side blob SHA (None when added)."""
    new_blob: str | None
    """Branch-side blob SHA (None when deleted)."""
    _diff: PatchSource = field(repr=False, compare=False)

    @property
    def mode_changed(self) -> bool:
        """True when the file mode differs between base and branch."""
        return bool(self.old_mode and self.new_mode and self.old_mode != self.new_mode)

    @property
    def symlink(self) -> bool:
        """True when either side is a symlink (its "content" is the link's target, never followed)."""
        return "120000" in (self.old_mode, self.new_mode)

    @property
    def display_status(self) -> str:
        """Status with mode changes folded in (`modified` becomes `mode`)."""
        if self.status == "modified" and self.mode_changed and not (self.added or self.removed):
            return "mode"
        return self.status

    @cached_property
    def raw_patch(self) -> bytes:
        """This file's patch exactly as git printed it."""
        return self._diff.patch_bytes(self)

    @cached_property
    def non_utf8(self) -> bool:
        """True when the patch text is not valid UTF-8 (shown with replacement)."""
        try:
            self.raw_patch.decode("utf-8")
        except UnicodeDecodeError:
            return True
        return False

    @cached_property
    def hunks(self) -> tuple[Hunk, ...]:
        """The file's hunks, parsed on first access."""
        if self.binary or not self.raw_patch:
            return ()
        return parse_hunks(self.path, self.raw_patch.decode("utf-8", "replace"))

    @property
    def over_cap(self) -> bool:
        """True when its patch is never loaded: a side over the analysis cap (git shows it as binary),
        or past the diff's total budget (`Diff.not_shown` says which)."""
        return self.path in self._diff.over_cap_paths()

    def sizes(self) -> tuple[int | None, int | None]:
        """(base size, branch size) in bytes, for showing binary files."""
        return self._diff.blob_size(self.old_blob), self._diff.blob_size(self.new_blob)
