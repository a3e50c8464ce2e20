"""Test-run summaries read off a command's output: what the agent's own run reported.

Each runner ends its output with a summary line of its own: pytest
`1 failed, 6 passed in 3.28s`, unittest `Ran 14 tests` then `OK (skipped=5)`
or `FAILED (errors=1)`, Jest `Tests: 1 failed, 5 passed, 6 total`, Vitest
`Tests  2 failed | 40 passed (42)`, `go test` `ok  pkg 0.01s` / `FAIL pkg`,
`cargo test` `test result: ok. 41 passed; 0 failed; 2 ignored`, tox/nox
`congratulations :)` / `Session … failed`. `parse_summary` reads the last
summary in the output; it only parses, it runs nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Literal

Verdict = Literal["pass", "fail"]


@dataclass(frozen=True)
class TestSummary:
    """The counts a test run reported, as its runner printed them."""

    __test__ = False  # not a pytest test class, though its name starts with Test

    runner: str
    """`pytest`, `unittest`, `jest`, `vitest`, `go`, `cargo`, `tox` or `nox`."""
    passed: int
    """Tests reported passing."""
    failed: int
    """Tests reported failing (assertion failures)."""
    errors: int = 0
    """Tests or collections reported as errors (not counted in `failed`)."""
    skipped: int = 0
    """Tests reported skipped, ignored, xfailed or todo."""
    line: str = ""
    """The summary line itself, as printed."""

    @property
    def verdict(self) -> Verdict:
        """`fail` when anything failed or errored, else `pass`."""
        return "fail" if self.failed or self.errors else "pass"

    @property
    def green(self) -> bool:
        """True when nothing failed or errored."""
        return self.verdict == "pass"

    def describe(self) -> str:
        """`41 passed, 2 failed` style words (`exit code 0` for a run judged by its exit code)."""
        if self.runner == "exit":
            return "exit code 0" if self.green else "a non-zero exit code"
        parts = [f"{self.passed} passed"]
        parts += [f"{self.failed} failed"] if self.failed else []
        parts += [f"{self.errors} errors"] if self.errors else []
        return ", ".join(parts)


_WINDOW = 20_000  # summaries are printed last: only the tail of a long output is read


def _n(m: re.Match[str], name: str) -> int:
    v = m.group(name)
    return int(v) if v else 0


_PYTEST = re.compile(
    r"^[=\s]*(?P<body>(?:\d+ (?:failed|passed|skipped|deselected|xfailed|xpassed|warnings?|errors?|rerun)"
    r"(?:, )?)+) in [\d.]+s(?: \([^)]*\))?[=\s]*$", re.M)
_PYTEST_PART = re.compile(r"(\d+) (failed|passed|skipped|deselected|xfailed|xpassed|warnings?|errors?|rerun)")
_PYTEST_EMPTY = re.compile(r"^[=\s]*no tests ran in [\d.]+s[=\s]*$", re.M)


def _pytest(tail: str) -> TestSummary | None:
    found = list(_PYTEST.finditer(tail))
    if not found:
        m0 = list(_PYTEST_EMPTY.finditer(tail))
        return TestSummary("pytest", 0, 0, 0, 0, m0[-1].group(0).strip(" =")) if m0 else None
    m = found[-1]
    counts: dict[str, int] = {}
    for n, word in _PYTEST_PART.findall(m.group("body")):
        key = word.rstrip("s") if word.startswith(("error", "warning")) else word
        counts[key] = counts.get(key, 0) + int(n)
    return TestSummary("pytest", counts.get("passed", 0) + counts.get("xpassed", 0), counts.get("failed", 0),
                       counts.get("error", 0), counts.get("skipped", 0) + counts.get("xfailed", 0),
                       m.group(0).strip(" ="))


_UNITTEST_RAN = re.compile(r"^Ran (?P<n>\d+) tests? in [\d.]+s\s*$", re.M)
_UNITTEST_END = re.compile(
    r"^(?P<word>OK|FAILED)(?: \((?P<args>[^)]*)\))?\s*$", re.M)


def _unittest(tail: str) -> TestSummary | None:
    ran = list(_UNITTEST_RAN.finditer(tail))
    if not ran:
        return None
    r = ran[-1]
    end = _UNITTEST_END.search(tail, r.end())
    if end is None:
        return None
    args = {
        k.strip(): int(v) for k, v in (a.split("=", 1) for a in (end.group("args") or "").split(",") if "=" in a)
        if v.strip().isdigit()
    }
    total = int(r.group("n"))
    failed, errors = args.get("failures", 0), args.get("errors", 0)
    skipped = args.get("skipped", 0) + args.get("expected failures", 0)
    passed = max(total - failed - errors - skipped, 0)
    return TestSummary("unittest", passed, failed, errors, skipped, f"{r.group(0).strip()} … {end.group(0).strip()}")


_JEST = re.compile(r"^Tests:\s+(?P<body>.*\d+ total)\s*$", re.M)
_JEST_PART = re.compile(r"(\d+) (failed|passed|skipped|todo|pending)")


def _jest(tail: str) -> TestSummary | None:
    found = list(_JEST.finditer(tail))
    if not found:
        return None
    m = found[-1]
    c = {w: int(n) for n, w in _JEST_PART.findall(m.group("body"))}
    return TestSummary("jest", c.get("passed", 0), c.get("failed", 0), 0,
                       c.get("skipped", 0) + c.get("todo", 0) + c.get("pending", 0), m.group(0).strip())


_VITEST = re.compile(r"^\s*Tests\s+(?P<body>(?:\d+ \w+(?: \| )?)+)\s*\(\d+\)\s*$", re.M)
_VITEST_PART = re.compile(r"(\d+) (failed|passed|skipped|todo)")


def _vitest(tail: str) -> TestSummary | None:
    found = list(_VITEST.finditer(tail))
    if not found:
        return None
    m = found[-1]
    c = {w: int(n) for n, w in _VITEST_PART.findall(m.group("body"))}
    return TestSummary("vitest", c.get("passed", 0), c.get("failed", 0), 0, c.get("skipped", 0) + c.get("todo", 0),
                       m.group(0).strip())


_CARGO = re.compile(
    r"^test result: (?P<word>ok|FAILED)\. (?P<passed>\d+) passed; (?P<failed>\d+) failed; (?P<ignored>\d+) ignored.*$",
    re.M)


def _cargo(tail: str) -> TestSummary | None:
    found = list(_CARGO.finditer(tail))
    if not found:
        return None
    # One line per test binary (unit tests, each integration test, doc tests): the run is their sum.
    return TestSummary("cargo", sum(_n(m, "passed") for m in found), sum(_n(m, "failed") for m in found), 0,
                       sum(_n(m, "ignored") for m in found), found[-1].group(0).strip())


_GO_PKG = re.compile(r"^(?P<word>ok|FAIL|---)\s+(?P<pkg>\S+)(?:\s+[\d.]+s|\s+\[[^\]]+\])?.*$", re.M)
_GO_TEST = re.compile(r"^\s*--- (?P<word>PASS|FAIL|SKIP): \S+", re.M)


def _go(tail: str) -> TestSummary | None:
    tests = _GO_TEST.findall(tail)
    pkgs = [m for m in _GO_PKG.finditer(tail) if m.group("word") in ("ok", "FAIL") and m.group("pkg") != "FAIL"]
    if not pkgs and not tests:
        return None
    if tests:  # `-v`: one line per test
        return TestSummary("go", tests.count("PASS"), tests.count("FAIL"), 0, tests.count("SKIP"),
                           pkgs[-1].group(0).strip() if pkgs else "")
    # Without -v only packages are reported: count them (a failed package holds at least one failing test).
    return TestSummary("go", sum(m.group("word") == "ok" for m in pkgs), sum(m.group("word") == "FAIL" for m in pkgs),
                       0, 0, pkgs[-1].group(0).strip())


_TOX_OK = re.compile(r"^\s*(?:congratulations :\)|  \S+: OK \(.*)$", re.M)
_TOX_FAIL = re.compile(r"^\s*(?:ERROR:\s+\S+: (?:commands failed|parallel child exit code)|  \S+: FAIL code \d+.*)$", re.M)
_NOX = re.compile(r"^nox > (?:\* )?Session (?P<name>\S+) (?P<word>was successful|failed)\.?.*$", re.M)


def _tox(tail: str) -> TestSummary | None:
    nox = list(_NOX.finditer(tail))
    if nox:
        bad = sum(m.group("word") == "failed" for m in nox)
        return TestSummary("nox", len(nox) - bad, bad, 0, 0, nox[-1].group(0).strip())
    ok, bad = _TOX_OK.findall(tail), _TOX_FAIL.findall(tail)
    if not ok and not bad:
        return None
    return TestSummary("tox", len(ok), len(bad), 0, 0, (bad or ok)[-1].strip())


_PARSERS: tuple[tuple[str, Callable[[str], TestSummary | None]], ...] = (
    ("passed", _pytest), ("in ", _pytest), ("Ran ", _unittest), ("Tests:", _jest), ("Tests ", _vitest),
    ("test result:", _cargo), ("--- ", _go), ("ok ", _go), ("FAIL", _go), ("nox >", _tox), ("congratulations", _tox),
    ("ERROR:", _tox), (": OK (", _tox),
)


def parse_summary(output: str) -> TestSummary | None:
    """The summary of the last test run `output` shows, or None when it shows none.

    When several runners' summaries appear (a script running two suites), the
    one printed last wins.
    """
    tail = output[-_WINDOW:]
    best: tuple[int, TestSummary] | None = None
    tried: set[Callable[[str], TestSummary | None]] = set()
    for hint, parse in _PARSERS:
        if parse in tried or hint not in tail:
            continue
        tried.add(parse)
        got = parse(tail)
        if got is None:
            continue
        at = tail.rfind(got.line.split(" … ")[-1]) if got.line else -1
        if best is None or at > best[0]:
            best = (at, got)
    return best[1] if best else None
