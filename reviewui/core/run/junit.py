"""Read pytest's JUnit XML (xunit1 family) into per-test outcomes with pytest node ids.

pytest writes `classname` as the node id's path turned into a dotted module
plus any classes, and (in xunit1) the test file as `file`; from the two the
node id (`tests/test_x.py::TestC::test_y[1]`) is rebuilt exactly. Collection
failures appear as a testcase with outcome `error` and `collection=True`.
"""

from __future__ import annotations

import os
import re
import stat
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal

Outcome = Literal["passed", "failed", "error", "skipped"]

MAX_JUNIT_BYTES = 32 * 1024 * 1024
"""A report larger than this is not parsed (a hostile test can bloat messages)."""

MAX_MESSAGE = 500
"""Failure messages are cut to their first line and at most this many characters."""


@dataclass(frozen=True)
class TestOutcome:
    """How one test ended."""

    __test__ = False  # not a pytest test class, whatever its name

    id: str
    """pytest node id, e.g. `tests/test_x.py::TestC::test_y`."""
    outcome: Outcome
    """`passed`, `failed`, `error` (setup/teardown/collection) or `skipped`."""
    message: str = ""
    """First line of the failure or error message ("" when passed)."""
    detail: str = ""
    """More of the failure text (the traceback's last lines), capped."""
    collection: bool = False
    """True for a collection failure (the file could not even be imported)."""

    @property
    def exception(self) -> str | None:
        """The exception class named at the start of the message (`NameError`…), if any."""
        m = re.match(r"^(?:E\s+)?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))\b", self.message)
        return m.group(1).rsplit(".", 1)[-1] if m else None


def failures(tests: Iterable[TestOutcome]) -> list[tuple[str | None, str, str]]:
    """(exception type, message, traceback tail) of each failed or errored test: what a limit is graded by
    (prlimits.limit_reason)."""
    return [(t.exception, t.message, t.detail) for t in tests if t.outcome in ("failed", "error")]


class JUnitError(Exception):
    """The report is missing, too large or not XML."""


def parse_junit(path: str | Path) -> list[TestOutcome]:
    """Return one TestOutcome per testcase in the JUnit report at `path`.

    Raises JUnitError when the file is missing, oversized or malformed.
    """
    p = Path(path)
    try:
        st = p.lstat()
    except OSError as e:
        raise JUnitError("no JUnit report was written") from e
    # The run could write where the report goes: a symlink (to a file of the reviewer's)
    # or a FIFO (a read that never ends) in its place is not a report.
    if not stat.S_ISREG(st.st_mode):
        raise JUnitError("the JUnit report is not a regular file")
    size = st.st_size
    if size == 0:
        raise JUnitError("the JUnit report is empty")
    if size > MAX_JUNIT_BYTES:
        raise JUnitError(f"the JUnit report is too large ({size} bytes)")
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        raise JUnitError(f"the JUnit report cannot be read: {e.strerror}") from e
    try:
        with os.fdopen(fd, "rb") as f:
            root = ET.parse(f).getroot()
    except ET.ParseError as e:
        raise JUnitError(f"the JUnit report is not valid XML: {e}") from e
    return [_outcome(tc) for tc in root.iter("testcase")]


def _outcome(tc: ET.Element) -> TestOutcome:
    node_id = node_id_from(tc.get("classname", ""), tc.get("name", ""), tc.get("file"))
    tags: tuple[tuple[str, Outcome], ...] = (("failure", "failed"), ("error", "error"), ("skipped", "skipped"))
    for tag, outcome in tags:
        el = tc.find(tag)
        if el is None:
            continue
        raw_msg = el.get("message", "") or ""
        text = el.text or ""
        collection = tag == "error" and raw_msg == "collection failure"
        if collection:
            msg = _collection_message(text)
        else:
            msg = _unwrap_setup(raw_msg) or _last_error_line(text)
        return TestOutcome(
            id=node_id,
            outcome=outcome,
            message=_first_line(msg),
            detail=_tail(text),
            collection=collection,
        )
    return TestOutcome(id=node_id, outcome="passed")


def node_id_from(classname: str, name: str, file: str | None) -> str:
    """Rebuild a pytest node id from JUnit `classname`, `name` and xunit1 `file`."""
    if not classname:  # collection errors: name is the dotted module path
        return (file or name.replace(".", "/") + ".py") if name else (file or "")
    if file and file.endswith(".py"):
        dotted = file[:-3].replace("/", ".").replace("\\", ".")
        if classname == dotted:
            return f"{file}::{name}"
        if classname.startswith(dotted + "."):
            classes = classname[len(dotted) + 1 :].split(".")
            return "::".join([file, *classes, name])
    # No usable file attribute: assume classes are CamelCase and the rest is the module path.
    parts = classname.split(".")
    i = len(parts)
    while i > 1 and parts[i - 1][:1].isupper():
        i -= 1
    return "::".join(["/".join(parts[:i]) + ".py", *parts[i:], name])


def _unwrap_setup(msg: str) -> str:
    m = re.match(r'^failed on (?:setup|teardown) with "(.*)"$', msg, re.S)
    return m.group(1) if m else msg


def _collection_message(text: str) -> str:
    """The most telling line of a collection failure (the `E   ...Error: ...` line)."""
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("E ") and re.search(r"\w(Error|Exception)\b", s):
            return s[1:].strip()
    return _last_error_line(text) or "collection failure"


def _last_error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for s in reversed(lines):
        if s.startswith("E "):
            return s[1:].strip()
    return lines[-1] if lines else ""


def _first_line(msg: str) -> str:
    line = msg.strip().splitlines()[0] if msg.strip() else ""
    return line[:MAX_MESSAGE]


def _tail(text: str, limit: int = 2000) -> str:
    return text[-limit:]
