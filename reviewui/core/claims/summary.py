"""What a test run's output says it did: passed, failed and errored counts, read from its summary line.

Each runner prints its verdict last, in its own words: pytest's
`=== 41 passed, 2 failed in 1.20s ===`, unittest's `Ran 41 tests` then `OK` or
`FAILED (failures=2)`, jest's `Tests: 1 failed, 40 passed, 41 total`, vitest's
`Tests  40 passed | 1 failed (41)`, `go test`'s `ok`/`FAIL` package lines,
`cargo test`'s `test result: ok. 41 passed; 0 failed`, tox's `congratulations`
or `... failed`, nox's `Session ... was successful`. Only the tail of the
output is read (runners print their summary at the end), so a huge log costs
what its last lines cost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TAIL = 8_000
"""Characters of output read from the end."""


@dataclass(frozen=True)
class Summary:
    """A test run's own account of itself."""

    runner: str
    """"pytest", "unittest", "jest", "vitest", "go", "cargo", "tox", "nox"."""
    passed: int | None
    """Tests that passed, when the summary says."""
    failed: int
    """Tests that failed (assertions)."""
    errors: int
    """Tests (or collections) that errored."""

    @property
    def green(self) -> bool:
        """True when nothing failed or errored."""
        return self.failed == 0 and self.errors == 0

    def describe(self) -> str:
        """`41 passed, 2 failed` style text."""
        parts = [f"{self.passed} passed"] if self.passed is not None else []
        parts += [f"{self.failed} failed"] if self.failed else []
        parts += [f"{self.errors} errors"] if self.errors else []
        return ", ".join(parts) or ("green" if self.green else "red")


_PYTEST = re.compile(r"^=+ (?P<body>(?:\d+ \w+(?:, )?)+)(?: in [\d.]+s)?(?: \([^)]*\))? =+\s*$", re.MULTILINE)
_PYTEST_Q = re.compile(r"^(?P<body>(?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)"
                       r"(?:, )?)+)(?: in [\d.]+s)?\s*$", re.MULTILINE)
_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*$", re.MULTILINE)
_UNITTEST_END = re.compile(r"^(OK|FAILED)(?: \((?P<body>[^)]*)\))?\s*$", re.MULTILINE)
_JEST = re.compile(r"^Tests:\s+(?P<body>.*?\d+ total)\s*$", re.MULTILINE)
_VITEST = re.compile(r"^\s*Tests\s+(?P<body>(?:\d+ \w+(?: \| )?)+)\s*\((?P<total>\d+)\)\s*$", re.MULTILINE)
_CARGO = re.compile(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed", re.MULTILINE)
_GO_OK = re.compile(r"^ok\s+\S+", re.MULTILINE)
_GO_FAIL = re.compile(r"^(?:FAIL\s+\S+|--- FAIL: )", re.MULTILINE)
_TOX_OK = re.compile(r"congratulations :\)|^\s*\S+: OK \(", re.MULTILINE)
_TOX_FAIL = re.compile(r"^\s*(?:ERROR:\s+)?\S+: (?:FAIL|commands failed)", re.MULTILINE)
_NOX_OK = re.compile(r"^nox > Session \S+ was successful", re.MULTILINE)
_NOX_FAIL = re.compile(r"^nox > Session \S+ failed", re.MULTILINE)


def _counts(body: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for n, word in _COUNT.findall(body):
        key = "errors" if word.startswith("error") else word
        out[key] = out.get(key, 0) + int(n)
    return out


def _last(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    matches = list(pattern.finditer(text))
    return matches[-1] if matches else None


def parse_summary(output: str) -> Summary | None:
    """The summary the output ends with, or None when it holds no runner's summary."""
    text = output[-TAIL:]
    m = _last(_PYTEST, text) or _last(_PYTEST_Q, text)
    if m is not None:
        c = _counts(m.group("body"))
        if {"passed", "failed", "errors", "skipped"} & c.keys():
            return Summary("pytest", c.get("passed", 0), c.get("failed", 0), c.get("errors", 0))
    ran = _last(_UNITTEST_RAN, text)
    end = _last(_UNITTEST_END, text)
    if ran is not None and end is not None and end.start() > ran.start():
        body = end.group("body") or ""
        failed = sum(int(v) for k, v in re.findall(r"(failures|errors)=(\d+)", body) if k == "failures")
        errors = sum(int(v) for k, v in re.findall(r"(failures|errors)=(\d+)", body) if k == "errors")
        total = int(ran.group(1))
        return Summary("unittest", total - failed - errors, failed, errors)
    m = _last(_JEST, text)
    if m is not None:
        c = _counts(m.group("body"))
        return Summary("jest", c.get("passed", 0), c.get("failed", 0), 0)
    m = _last(_VITEST, text)
    if m is not None:
        c = _counts(m.group("body").replace("|", ","))
        return Summary("vitest", c.get("passed", 0), c.get("failed", 0), 0)
    cargo = list(_CARGO.finditer(text))
    if cargo:
        return Summary("cargo", sum(int(c.group(2)) for c in cargo), sum(int(c.group(3)) for c in cargo), 0)
    if _GO_FAIL.search(text):
        return Summary("go", None, len(_GO_FAIL.findall(text)), 0)
    if _GO_OK.search(text):
        return Summary("go", None, 0, 0)
    if _NOX_FAIL.search(text) or _NOX_OK.search(text):
        return Summary("nox", None, len(_NOX_FAIL.findall(text)), 0)
    if _TOX_FAIL.search(text):
        return Summary("tox", None, len(_TOX_FAIL.findall(text)), 0)
    if _TOX_OK.search(text):
        return Summary("tox", None, 0, 0)
    return None
