"""Loading a transcript: detect its format, read it into drafts, freeze the drafts into turns."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any, Iterable

from reviewui.core.bounded import check_input
from reviewui.core.errors import ReviewError
from reviewui.core.roles import DEFAULT_TEST_GLOBS
import reviewui.core.transcript.registry as registry
from reviewui.core.transcript.detect import Sniff, sniff
from reviewui.core.transcript.flags import BaseFile, finalize
from reviewui.core.transcript.model import Transcript
from reviewui.core.transcript.format_spec import LoadOptions
from reviewui.core.transcript.source import LineCounter


def load_transcript(
    path: str | Path,
    format: str | None = None,
    *,
    test_globs: Iterable[str] = DEFAULT_TEST_GLOBS,
    instance: str | None = None,
    branch_files: Iterable[str] = (),
    base_file: BaseFile | None = None,
) -> Transcript:
    """Load the transcript at `path` (a file, a `.gz` file, a `.eval` zip, or an OpenHands conversation folder).

    `format` forces a format (a registered name, or an alias such as `claude`);
    otherwise it is detected. `test_globs` decide which paths are tests for
    the test flags. `instance` picks one run of a file holding several
    (OpenHands resolver output, an Inspect AI log, an Aider history's
    sessions); `branch_files` (the paths the branch changes) pick the
    resolver run whose patch matches when `instance` is None. `base_file`
    reads a repo-relative path at the base commit (None when absent): with
    it, `edits-existing-test` counts only lines that exist at the base. Malformed
    lines are skipped and counted in `skipped_lines`; a damaged JSON
    document is read up to where it breaks (said in `notes`). An empty
    transcript (`[]`, `{}`, no messages) loads as zero turns. Raises
    ReviewError when the file cannot be read, the format is unknown or
    cannot be detected, or it has content and none of it parses.
    """
    p = Path(path)
    if not p.exists():
        raise ReviewError(f"no such transcript: {p}")
    check_input(p, "transcript", allow_dir=True)  # no FIFO, device or oversized file (core/bounded.py)
    counter = LineCounter()
    s = sniff(p)
    fmt = registry.get(format) if format else registry.detect(s)
    opts = LoadOptions(instance, frozenset(branch_files))
    # Loading creates hundreds of thousands of long-lived objects and no reference
    # cycles; the cyclic collector would re-scan them again and again (a third of the
    # load time on a 100 MB session) for nothing, so it is paused meanwhile.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        run = fmt.load(p, s, counter, opts)
        if not run.drafts:
            _check_empty(p, s, fmt.name, counter)
        return finalize(run, fmt.name, str(p), counter.skipped, test_globs, base_file)
    finally:
        if gc_was_enabled:
            gc.enable()


def _check_empty(p: Path, s: Sniff, fmt: str, counter: LineCounter) -> None:
    """Zero turns is an answer only for an empty document; otherwise nothing parsed and that is an error."""
    doc = s.document
    if doc is not None and doc.note is not None:
        raise ReviewError(f"transcript {p.name} is not valid JSON: {doc.note}; nothing readable before it")
    if s.is_zip or (doc is not None and not counter.skipped and _no_records(doc.value)):
        return
    raise ReviewError(f"nothing parseable in transcript {p.name} as {fmt}")


def _no_records(doc: Any) -> bool:
    # `[]`, `{}`, `{"messages": []}`, `{"history": [], "info": {…}}`: a run with no turns yet.
    if isinstance(doc, list):
        return not doc
    return isinstance(doc, dict) and all(not v for v in doc.values() if isinstance(v, list))


def format_names() -> tuple[str, ...]:
    """The accepted `--transcript-format` names, in detection order."""
    return registry.names()


def canonical_format(name: str) -> str:
    """The canonical name of format `name` (or an alias); raises ReviewError listing the accepted ones."""
    return registry.canonical(name)


def detect_format(path: str | Path) -> str:
    """The detected format of the transcript at `path`; raises ReviewError when none fits."""
    return registry.detect(sniff(Path(path))).name
