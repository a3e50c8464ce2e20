"""Box: what one sandboxed process may touch (the record `sandbox.wrap` turns into bwrap's options).

A plain record below the sandbox, so the layers that build a run's mounts
(mountns.py) read it without importing the sandbox that uses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from reviewui.core.run.command_types import HostProgram
from reviewui.core.run.limits import Limits, limits


@dataclass(frozen=True)
class Box:
    """What one sandboxed process may touch."""

    writable: tuple[Path, ...]
    """Directories bound read-write (the scratch, the run's work dir)."""
    chdir: Path
    """Working directory inside the sandbox."""
    network: bool = False
    """Keep the host network (trusted config `network = true`)."""
    limits: Limits = field(default_factory=limits)
    """Memory and disk limits."""
    python: HostProgram | None = None
    """The interpreter the command runs, so its prefix can be put back when it lives in a hidden dir."""
    placed: tuple[tuple[Path, str, bool], ...] = ()
    """(host dir, path inside, writable): reviewui's own dirs put at a neutral path, so the run
    never learns where they live on the host (a cache under the reviewer's home)."""
    scratch_size: int = 0
    """When > 0: the run's slot (room.SLOT) is a tmpfs of this many bytes (storage.py)."""
    scratch_dirs: tuple[str, ...] = ()
    """Directories made in that tmpfs before the command starts (the tree, HOME)."""
    unpack_into: str | None = None
    """When set: the command starts by unpacking the tar stream on its stdin into this directory."""
    scratch_files: int = 0
    """When > 0 (with scratch_size): the slot's inodes beyond its root and the dirs bwrap makes
    there, the kernel's bound on the files a run creates (mountns.mounted; watched where it cannot)."""
