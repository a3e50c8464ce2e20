"""Where a sandboxed run sees its directories: fixed neutral paths, the same in every run.

A run may write two host directories: its scratch slot (the tree under
test) and its own io directory (HOME, the JUnit report, the plugins and
requests reviewui writes, the replies it reads). On the host they differ
from slot to slot and run to run (`<tmp>/reviewui-scratch-u<uid>/<hash>/slots/<n>`,
`<tmp>/reviewui-run-<pid>-…`), so a test that could read them would know
which slot it runs in, and so whether it is the baseline. Inside the
sandbox every run, cold or warm, baseline, revert or guard, sees them at

- `SLOT` (`/reviewui/slot`): the slot directory; the tree is `TREE`
  (`/reviewui/slot/tree`), every run's working directory;
- `IO` (`/reviewui/io`): the io directory; the run's own files are under
  `RUN` (`/reviewui/io/run`), its HOME is `RUN/home`.

Every path that crosses into a run (environment values, requests written
into the run directory, coverage's rcfile) is written with `Room.inside`,
and every path that comes back (origins, coverage data, replies, messages)
is read with `Room.outside`. Unsandboxed (`--unsandboxed`) both are the
identity: the run sees the host paths.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from reviewui.core.run import interp

SLOT = "/reviewui/slot"
"""The slot directory inside every sandboxed run."""
TREE = SLOT + "/tree"
"""The scratch tree inside every sandboxed run (its working directory)."""
IO = "/reviewui/io"
"""The run's io directory inside every sandboxed run."""
RUN = IO + "/run"
"""The run's own directory inside every sandboxed run (HOME, JUnit, plugins, requests)."""
RUN_NAME = "run"
"""The run directory's name in its io directory (the same on the host and inside)."""


def _forms(path: Path) -> list[str]:
    """`path` as given and resolved (a symlinked TMPDIR gives two spellings), longest first."""
    out = {str(path)}
    try:
        out.add(str(path.resolve()))
    except OSError:
        pass
    return sorted(out, key=len, reverse=True)


@dataclass(frozen=True)
class Room:
    """The host paths of one run's writable directories and where the run sees them."""

    tree: Path
    """The scratch tree on the host."""
    run: Path
    """The run's own directory on the host (`<io>/run`)."""
    on: bool = True
    """False when the run is not sandboxed (then the run sees the host paths)."""
    python: interp.Layout = interp.Layout()
    """Where the run sees its interpreter's trees (interp.py): their paths in what a run writes
    are written back as the host's too."""

    @property
    def tree_inside(self) -> str:
        """Where the run sees the tree: `TREE` for a scratch (a slot's `tree`), else `SLOT/<name>`."""
        return SLOT + "/" + self.tree.name if self.on else str(self.tree)

    @functools.cached_property
    def _pairs(self) -> list[tuple[str, str]]:
        # Resolved once a room: every path of a run's request goes through `inside` (a sweep's
        # guards, hundreds), and the room's two directories are reviewui's own, made before it.
        pairs = [(h, self.tree_inside) for h in _forms(self.tree)] + [(h, RUN) for h in _forms(self.run)]
        return sorted(pairs, key=lambda p: len(p[0]), reverse=True)

    def inside(self, path: str | Path) -> str:
        """Where the run sees host `path` (a path under the tree or the run directory; any other
        path unchanged)."""
        text = str(path)
        if not self.on:
            return text
        for host, there in self._pairs:
            if text == host or text.startswith(host + "/"):
                return there + text[len(host):]
        return text

    def inside_env(self, value: str) -> str:
        """`value` (an environment value: one path, or a list joined by os.pathsep) with every
        host path under the tree or the run directory written as the run sees it."""
        if not self.on:
            return value
        return os.pathsep.join(self.inside(p) for p in value.split(os.pathsep))

    def outside(self, text: str) -> str:
        """`text` (a path or a message a run wrote) with the run's paths written as host paths."""
        if not self.on:
            return text
        for there, host in ((RUN, str(self.run)), (self.tree_inside, str(self.tree))):
            text = text.replace(there, host)
        return self.python.outside(text)
