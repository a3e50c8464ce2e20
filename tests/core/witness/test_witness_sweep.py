"""Witnesses in a real sandboxed sweep: found where one exists, none for an equivalent guard or a noisy
function, and a false one (the search's process is not a test's) dropped at re-verification.

Two sweeps (module-scoped) serve every assertion: a branch adding four functions
whose toothless guards are each one of those cases (and a fifth whose guards all bite), swept first without
witnesses (it must capture nothing), then with them on the first's cached
baseline (the seeds are captured in a run of their own, for the toothless
functions only, and every witness re-verified in one session).
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

import pytest

from reviewui.core.bite import sweep
from reviewui.core.bite.cache import BiteCache
from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.report import BiteReport
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.config import Settings
from reviewui.core.findings.guard_rules import guard_findings
from reviewui.core.target import Target
from reviewui.core.witness import seeds, verify
from reviewui.core.witness.budget import Budget
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

CODE = '''import random
import sys


def size(items):
    n = len(items)
    if n < 0:
        n = 0
    return n


def jitter(x):
    if x > 100:
        x = 100
    return x + random.random()


def pick(x):
    if "reviewui_witness_search" in sys.modules and x == 1:
        return 2
    return 1


def cap(xs, n):
    if len(xs) > n:
        xs = xs[:n]
    return list(xs)


def half(x):
    if x > 10:
        return x // 2
    return x
'''

TESTS = '''from pkg.w import cap, half, jitter, pick, size


def test_size():
    assert size([1, 2]) == 2
    assert size([]) == 0


def test_jitter():
    assert 5 <= jitter(5) < 6


def test_pick():
    assert pick(1) == 1


def test_cap():
    assert cap([1, 2], 5) == [1, 2]


def test_half():
    assert (half(20), half(11), half(10), half(4)) == (10, 5, 10, 4)
'''


@dataclasses.dataclass
class Sweeps:
    """The plain sweep, then the witness sweep on its cached baseline, and what each ran."""

    target: Target
    plain: BiteReport
    report: BiteReport
    plain_captures: list[list[tuple[str, object]]]
    """The capture requests made during the plain sweep (each: (file, def path) watched)."""
    captures: list[list[tuple[str, object]]]
    """Those made during the witness sweep."""
    baselines: int
    """Baselines the witness sweep ran itself (0: it took the plain sweep's from the cache)."""
    one_by_one: int
    """Re-verification runs made the ordinary way (a witness the one session could not answer for)."""


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> Sweeps:
    mp = pytest.MonkeyPatch()
    use_venv_python(mp)
    made: list[list[tuple[str, object]]] = []
    count = {"prepare": 0, "outcomes": 0}
    real_files, real_prepare, real_outcomes = seeds.SeedCapture.files, sweep.prepare, verify._outcomes

    def files(self: seeds.SeedCapture, scratch: object) -> object:
        made.append(list(self.targets))
        return real_files(self, scratch)  # type: ignore[arg-type]

    def counted(name: str, real: Any) -> Any:
        def call(*a: Any, **k: Any) -> Any:
            count[name] += 1
            return real(*a, **k)
        return call

    mp.setattr(seeds.SeedCapture, "files", files)
    mp.setattr(sweep, "prepare", counted("prepare", real_prepare))
    mp.setattr(verify, "_outcomes", counted("outcomes", real_outcomes))
    try:
        root = tmp_path_factory.mktemp("witness") / "repo"
        make_repo(root, {"pkg/__init__.py": "", "README.md": "x\n"}, {"pkg/w.py": CODE, "tests/test_w.py": TESTS})
        t, d = load(root)
        cache = BiteCache()
        try:
            plain = run_bite(t, d, Settings(), jobs=2, guards=True, cache=cache)
            plain_made, made[:] = list(made), []
            count["prepare"] = 0
            report = run_bite(t, d, Settings(), jobs=2, guards=True, witness=Budget(seconds=1.0, calls=200),
                              cache=cache)
        finally:
            cache.close()
        return Sweeps(t, plain, report, plain_made, list(made), count["prepare"], count["outcomes"])
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def swept(sweeps: Sweeps) -> tuple[Target, BiteReport]:
    return sweeps.target, sweeps.report


def toothless(report: BiteReport) -> dict[tuple[int, str], GuardResult]:
    return {(g.line, g.description): g for r in report.results for g in r.guards if g.verdict == "toothless"}


def test_a_guard_no_test_reaches_gets_a_re_verified_witness(swept: tuple[Target, BiteReport]) -> None:
    _, report = swept
    assert report.baseline.status == "green" and report.witnesses_checked
    g = toothless(report)[(25, "condition `len(xs) > n` never true")]
    w = g.witness
    assert w is not None and w.found, w
    assert w.call.startswith("cap(") and w.head != w.reverted and w.tries >= 1 and 0 < w.seconds < 30
    # the kept test: made of the call, passes at the head (re-verified), so it states what the head answers
    tree = ast.parse(w.test)
    assert "from pkg.w import cap" in w.test and any(isinstance(n, ast.FunctionDef) for n in tree.body)
    assert "witness: `cap(" in g.one_line() and "no test checks this case" in g.one_line()
    # `xs[:n]` taken always is not equivalent either: for n=None the head raises, the revert does not
    other = toothless(report)[(25, "condition `len(xs) > n` always true")].witness
    assert other is not None and other.found and other.head == "raises TypeError", other
    assert "with pytest.raises(TypeError):" in other.test


def test_an_equivalent_guard_gets_none_found_in_its_tries(swept: tuple[Target, BiteReport]) -> None:
    _, report = swept
    guards = toothless(report)
    for key in [(7, "condition `n < 0` never true"), (7, "`<` turned into `<=` in `n < 0`"),
                (25, "`>` turned into `>=` in `len(xs) > n`"), (13, "`>` turned into `>=` in `x > 100`")]:
        w = guards[key].witness
        assert w is not None and not w.found and w.searched and w.tries > 0, (key, w)
        assert guards[key].one_line().endswith(f"witness: none found in {w.tries} tries (likely equivalent)")


def test_a_function_that_answers_differently_each_time_gets_no_witness(swept: tuple[Target, BiteReport]) -> None:
    _, report = swept
    w = toothless(report)[(13, "condition `x > 100` never true")].witness
    # jitter(250) differs reverted (350.x against 100.x), but never the same twice: no witness
    assert w is not None and not w.found and w.tries > 0 and w.dropped == 0, w


def test_a_witness_wrong_by_construction_is_dropped_at_re_verification(swept: tuple[Target, BiteReport]) -> None:
    _, report = swept
    guards = toothless(report)
    # pick() answers 2 only inside the search's own process: the witness fails at the head as a test
    at_head = guards[(19, 'condition `"reviewui_witness_search" in sys.modules and x == 1` never true')].witness
    assert at_head is not None and not at_head.found and at_head.dropped == 1
    assert "does not pass at the head (failed)" in at_head.reason and at_head.test == ""
    # with `x == 1` dropped, the revert answers 2 only in the search: as a test the revert passes too
    reverted = guards[(19, "`x == 1` dropped from the condition")].witness
    assert reverted is not None and not reverted.found and reverted.dropped == 1
    assert "does not fail with that reverted (passed)" in reverted.reason


def test_witnesses_in_json_stryker_and_findings(swept: tuple[Target, BiteReport]) -> None:
    t, report = swept
    [hunk] = report.to_json(t)["hunks"]
    by_line = {(g["line"], g["description"]): g for g in hunk["guards"]}
    found = by_line[(25, "condition `len(xs) > n` never true")]["witness"]
    assert set(found) >= {"call", "head", "reverted", "tries", "seconds"} and found["found"] is True
    assert found["call"].startswith("cap(") and isinstance(found["tries"], int) and found["seconds"] > 0
    none = by_line[(7, "condition `n < 0` never true")]["witness"]
    assert none["found"] is False and none["call"] is None and none["tries"] > 0
    assert all("witness" not in g for g in hunk["guards"] if g["verdict"] != "toothless")
    mutants = [m for f in report.to_stryker(t)["files"].values() for m in f["mutants"]]
    survived = [m for m in mutants if m["status"] == "Survived"]
    assert len(survived) == len(toothless(report)) and all("witness" in m for m in survived)
    assert any(m["witness"]["found"] and "witness: `cap(" in m["statusReason"] for m in survived)
    kinds = sorted((f.kind, f.severity) for f in guard_findings(report))
    assert kinds.count(("toothless-guard-with-witness", "warning")) == 2
    assert ("toothless-guard-no-witness", "info") in kinds and all(k != "toothless-guard" for k, _ in kinds)
    # a sweep without witnesses keeps the plain kind: nothing searched, nothing said
    plain = dataclasses.replace(report, results=tuple(dataclasses.replace(r, guards=tuple(
        dataclasses.replace(g, witness=None) for g in r.guards)) for r in report.results))
    assert {f.kind for f in guard_findings(plain)} == {"toothless-guard"}



def test_a_plain_sweep_captures_nothing_and_a_witness_sweep_only_the_toothless_functions(sweeps: Sweeps) -> None:
    assert sweeps.plain.baseline.status == "green" and not sweeps.plain.witnesses_checked
    assert toothless(sweeps.plain) and sweeps.plain_captures == []  # toothless guards, yet nothing watched
    assert all(g.witness is None for r in sweeps.plain.results for g in r.guards)
    # the witness sweep watched the functions holding its toothless guards, nothing else (half's all bite)
    assert not any(g.line > 28 for g in toothless(sweeps.report).values())
    watched = {(file, path[-1][0]) for request in sweeps.captures for file, path in request}  # type: ignore[index]
    assert watched == {("pkg/w.py", name) for name in ("size", "jitter", "pick", "cap")}


def test_a_cached_baseline_still_gives_seeds(sweeps: Sweeps) -> None:
    # the witness sweep took the plain sweep's baseline from the cache (no baseline of its own) ...
    assert sweeps.baselines == 0 and sweeps.report.baseline.status == "green"
    # ... and still found the witness only a seed leads to (cap() has no type hints to draw from)
    w = toothless(sweeps.report)[(25, "condition `len(xs) > n` never true")].witness
    assert w is not None and w.found and w.tries >= 1


def test_every_witness_is_re_verified_in_one_session(sweeps: Sweeps) -> None:
    # four witnesses found by the search (two kept, two dropped), none re-verified the ordinary way
    searched = [g.witness for g in toothless(sweeps.report).values() if g.witness and (g.witness.found or g.witness.dropped)]
    assert len(searched) == 4 and sweeps.one_by_one == 0


UNITTEST_CASE = '''import unittest

from calc import clamp


class ClampTest(unittest.TestCase):
    def test_clamp(self):
        self.assertEqual(clamp(3), 3)
'''


def test_a_unittest_command_says_why_no_witness_is_looked_for(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    made: list[object] = []
    real = seeds.SeedCapture.files
    monkeypatch.setattr(seeds.SeedCapture, "files", lambda self, scratch: made.append(self) or real(self, scratch))
    make_repo(tmp_path / "r", {"calc.py": "def clamp(x):\n    return x\n", "test_calc.py": UNITTEST_CASE},
              {"calc.py": "def clamp(x):\n    if x < 0:\n        return 0\n    return x\n"})
    t, d = load(tmp_path / "r")
    report = run_bite(t, d, Settings(), jobs=2, guards=True, witness=Budget(seconds=1.0, calls=200),
                      test_cmd="python -m unittest")
    assert report.test_command == "python -m unittest" and report.baseline.status == "green", report.baseline
    guards = toothless(report)
    assert guards and report.witnesses_checked  # `x < 0` is never reached by the one case
    for g in guards.values():
        w = g.witness
        assert w is not None and not w.found and not w.searched, w
        assert w.reason == "witnesses need a pytest command (the plugins run in pytest)"
        assert g.one_line().endswith("witness: not searched (witnesses need a pytest command (the plugins run in pytest))")
    assert made == []  # nothing captured for a search that cannot run
    [hunk] = report.to_json(t)["hunks"]
    said = [g["witness"] for g in hunk["guards"] if g["verdict"] == "toothless"]
    assert said and all(w["found"] is False and w["tries"] == 0 and "pytest command" in w["reason"] for w in said)
    # nothing was searched: the plain kind, never a `no-witness` that would read as "likely equivalent"
    assert {f.kind for f in guard_findings(report)} == {"toothless-guard"}
