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
REPORTS_MODULE = "reviewui_reports"
"""The name a run imports reports.py under (reports.MODULE)."""


def source(name: str) -> Path:
    """The file of one inside module, e.g. `warm_server.py`."""
    return HERE / name


PLUGINS: tuple[tuple[str, str], ...] = (
    ("reviewui_origin", "origin_plugin.py"),
    ("reviewui_covctx", "coverage_plugin.py"),
    ("reviewui_guard_batch", "guard_batch_child.py"),
    ("reviewui_revert_batch", "revert_batch_child.py"),
    ("reviewui_witness", "witness_plugin.py"),
)
"""(module, file) of every pytest plugin reviewui gives a run, in the order pytest imports them
(the origin plugin first: the others read what it holds). Every grading run gets all of them,
each inert unless its request is there, so no run can tell its kind by what is loaded."""


HELPERS: tuple[tuple[str, str], ...] = (
    (FORKS_MODULE, "forks.py"),
    (REPORTS_MODULE, "reports.py"),
    ("reviewui_witness_values", "witness_values.py"),
    ("reviewui_witness_search", "witness_search.py"),
    ("reviewui_witness_inputs", "witness_inputs.py"),
    ("reviewui_witness_assert", "witness_assert.py"),
    ("reviewui_read_audit", "read_audit.py"),
    ("reviewui_child_reads", "child_reads.py"),
    ("reviewui_canary_run", "canary_run.py"),
)
"""(module, file) of the modules the plugins import, placed beside them in every run (the fork helper, the
revert batch's failure reports, the witness values; the search, its inputs and its assertions only
imported in a witness search run; the origin plugin's record of reads and its inotify watch; the canary test)."""


OWN_CODE = "reviewui_own_code.py"
"""own_code.py's name beside the modules it compiles in a warm server's plugin directory."""


def place_own(directory: Path) -> None:
    """What a warm server compiles once for its runs (own_code.py): the plugins and helpers under
    the names the runs import them by, and own_code.py itself."""
    place_all(directory)
    shutil.copyfile(HERE / "own_code.py", directory / OWN_CODE)


def place_all(plugin_dir: Path) -> None:
    """Every plugin of PLUGINS and every helper into `plugin_dir` (what is there stays)."""
    plugin_dir.mkdir(parents=True, exist_ok=True)
    for module, name in (*PLUGINS, *HELPERS):
        target = plugin_dir / f"{module}.py"
        if not target.is_file():
            shutil.copyfile(HERE / name, target)
