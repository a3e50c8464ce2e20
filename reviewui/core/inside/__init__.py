"""Code that runs inside the reviewed project's Python, in the sandbox (rules: README.md here).

reviewui never runs these modules itself: it reads them as files and places
them into a run (`place`), where the project's own Python imports them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

HERE = Path(__file__).parent
FORKS_MODULE = "reviewui_forks"
"""The name a run imports forks.py under (forks.MODULE)."""


def source(name: str) -> Path:
    """The file of one inside module, e.g. `warm_server.py`."""
    return HERE / name


def place(plugin_dir: Path, child: str, module: str) -> None:
    """Copy the child plugin `child` into `plugin_dir` as `module`.py, with the fork helper beside it."""
    shutil.copyfile(HERE / child, plugin_dir / f"{module}.py")
    shutil.copyfile(HERE / "forks.py", plugin_dir / f"{FORKS_MODULE}.py")
