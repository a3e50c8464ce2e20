"""The queue's batched deltas are `compute_delta`'s (what `reviewui delta` and the review screen use),
whatever the shape of the rework and the reviewer's diff settings."""

from __future__ import annotations

from pathlib import Path

import pytest

import reviewui.core.delta.batch as batch
from reviewui.core.config import user_config_dir
from reviewui.core.delta.batch import Ask, compute_deltas
from reviewui.core.delta.compute import compute_delta
from reviewui.core.diff_batch import porcelain_options
from reviewui.core.errors import ReviewError
from tests.core.delta.test_compute import FUNCS, _edit
from tests.gitrepo import RepoBuilder


def _shapes(rb: RepoBuilder) -> dict[str, Ask]:
    """Reworked branches of every shape the delta tells apart, as (judged base, judged head, base, head)."""
    base = rb.git("rev-parse", "main")
    asks: dict[str, Ask] = {}

    def branch(name: str, start: str = base) -> None:
        rb.git("checkout", "-q", "-B", f"agent/{name}", start)

    branch("push")
    judged = rb.commit({"mod.py": _edit(_edit(_edit(FUNCS, 1, "    return 1\n"), 5, "    return 5\n"), 9,
                                        "    return 9\n")})
    asks["push"] = (base, judged, base, rb.commit({"mod.py": _edit(_edit(_edit(
        FUNCS, 1, "    return 1\n"), 5, "    return 55\n"), 11, "    return 11\n")}))
    branch("reindent")
    judged = rb.commit({"mod.py": _edit(FUNCS, 2, "    for y in x:\n        s = y\n    return s\n")})
    asks["reindent"] = (base, judged, base, rb.commit({"mod.py": _edit(
        FUNCS, 2, "    for y in x:\n        s = y\n        return s\n")}))
    branch("string")
    judged = rb.commit({"mod.py": _edit(FUNCS, 4, "    return 'rm -rf /tmp/build'\n")})
    asks["string"] = (base, judged, base, rb.commit({"mod.py": _edit(FUNCS, 4, "    return 'rm -rf / tmp/build'\n")}))
    branch("rename")
    judged = rb.commit({"mod.py": _edit(_edit(FUNCS, 2, "    return 2\n"), 7, "    return 7\n")})
    asks["rename"] = (base, judged, base, rb.commit({"mod.py": None, "pkg/renamed.py": _edit(_edit(
        FUNCS, 2, "    return 2\n"), 7, "    return 77\n")}))
    branch("rebase")
    judged = rb.commit({"mod.py": _edit(_edit(FUNCS, 3, "    return 3\n"), 8, "    return 8\n")})
    rb.checkout("main")
    moved = rb.commit({"mod.py": "import os\n\n\n" + FUNCS, "other.py": FUNCS + "X = 1\n"}, "upstream")
    branch("rebase", moved)
    asks["rebase"] = (base, judged, moved, rb.commit({"mod.py": "import os\n\n\n" + _edit(_edit(
        FUNCS, 3, "    return 3\n"), 8, "    return 88\n")}))
    branch("binary")
    judged = rb.commit({"blob.bin": b"\x00\x02" * 50, "other.py": None, "img.bin": b"\x00\x07" * 9})
    asks["binary"] = (base, judged, base, rb.commit({"blob.bin": b"\x00\x03" * 50, "img.bin": b"\x00\x07" * 9}))
    branch("latin1")
    judged = rb.commit({"mod.py": _edit(FUNCS, 6, "    return '\xe9'\n").encode("latin-1")})
    asks["latin1"] = (base, judged, base, rb.commit({"mod.py": _edit(FUNCS, 6, "    return '\xe8'\n").encode(
        "latin-1")}))
    # a head whose tree names the next ask's judged head, as a file and as a line: the streams stay in step
    branch("names")
    judged = rb.commit({"mod.py": _edit(FUNCS, 1, "    return -1\n")})
    named = asks["push"][1]
    asks["names"] = (base, judged, base, rb.commit({"mod.py": _edit(FUNCS, 1, "    return -1\n"),
                                                    named: named + "\n", ":odd\tname\n.py": "x = 1\n"}))
    asks["same-head"] = (base, asks["push"][3], base, asks["push"][3])  # judged this very head: nothing between
    asks["empty-now"] = (base, judged, base, base)  # every change taken back
    rb.checkout("main")
    return asks


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> tuple[RepoBuilder, dict[str, Ask]]:
    rb = RepoBuilder(tmp_path_factory.mktemp("batch") / "repo")
    rb.commit({"mod.py": FUNCS, "other.py": FUNCS, "blob.bin": b"\x00\x01" * 50}, "base")
    return rb, _shapes(rb)


def _alone_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_: object) -> None:
        raise AssertionError("computed one by one, not in the batch")
    monkeypatch.setattr(batch, "_one", fail)


def test_batched_deltas_are_compute_deltas(shapes, monkeypatch: pytest.MonkeyPatch) -> None:
    rb, asks = shapes
    _alone_fails(monkeypatch)
    # names first: its tree holds the next ask's judged head, so the stream must not take it for a header
    order = ["names", "push", *[k for k in asks if k not in ("names", "push")]]
    got = dict(compute_deltas(rb.root, [asks[k] for k in order]))
    assert set(got) == set(asks.values())
    for name, ask in asks.items():
        assert got[ask] == compute_delta(rb.root, *ask), name
    counts = {name: got[ask].counts() for name, ask in asks.items() if got[ask] is not None}
    # what makes each shape worth having: the whitespace edits are changes, the rename and rebase keep hunks
    assert counts["reindent"]["changed"] == 1 and counts["string"]["changed"] == 1
    assert counts["rename"] == {"changed": 1, "new": 0, "unchanged": 1, "gone": 0}
    assert counts["rebase"] == {"changed": 1, "new": 0, "unchanged": 1, "gone": 0}
    assert counts["latin1"]["changed"] == 1


def test_a_commit_this_clone_lacks_is_no_delta_and_the_rest_still_batch(shapes, monkeypatch) -> None:
    rb, asks = shapes
    lost = ("0" * 40, asks["push"][1], asks["push"][2], asks["push"][3])
    got = dict(compute_deltas(rb.root, [lost, asks["push"]]))  # the lost one alone, the other batched
    assert got[lost] is None
    with pytest.raises(ReviewError):
        compute_delta(rb.root, *lost)
    assert got[asks["push"]] == compute_delta(rb.root, *asks["push"])


def test_a_diff_past_the_budget_loads_as_compute_deltas_does(tmp_path: Path, monkeypatch) -> None:
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"mod.py": FUNCS, "big.py": "X = 0\n"}, "base")
    base = rb.git("rev-parse", "main")
    rb.branch("agent/big")
    judged = rb.commit({"mod.py": _edit(FUNCS, 1, "    return 1\n"), "big.py": "X = 1\n" * 4000})
    head = rb.commit({"mod.py": _edit(FUNCS, 1, "    return 11\n"), "big.py": "X = 2\n" * 4000})
    cfg = user_config_dir() / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text("max-diff-bytes = 10000\n")  # big.py's 24 000 bytes are past it: listed, never loaded
    _alone_fails(monkeypatch)
    ask = (base, judged, base, head)
    got = dict(compute_deltas(rb.root, [ask]))[ask]
    assert got == compute_delta(rb.root, *ask)
    assert got is not None and {h.file: h.header for h in got.hunks}["big.py"] == "(not shown: over the cap)"


ALGO_BEFORE = ("x = 1\nx = 1\ndef f():\nx = 1\ndef f():\n\n\n}\n\n}\ndef f():\nx = 1\nx = 1\n    return x\n}\n"
               "    return x\npass\n}\nx = 1\n    return x\ndef f():\nx = 1\n\n\n    return x\n\n    return x\n"
               "x = 1\nx = 1\n\n")
ALGO_AFTER = ("x = 1\nx = 1\ndef f():\nx = 1\ndef f():\n\n}\n\n}\ndef f():\nx = 1\nx = 1\n    return x\n}\n"
              "    return x\ndef g():\n}\nx = 1\n    return x\ndef f():\nx = 1\n\n\n    return x\n\npass\n"
              "    return x\nx = 1\nx = 1\n\n")
"""An edit myers makes three hunks of and patience two (found by a random search)."""


@pytest.mark.parametrize("setting", ["diff.context=12", "diff.interHunkContext=20", "diff.algorithm=patience",
                                     "diff.noprefix=true"])
def test_the_reviewers_diff_settings_are_given_to_the_batch(tmp_path: Path, monkeypatch, setting: str) -> None:
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"mod.py": FUNCS, "algo.py": ALGO_BEFORE}, "base")
    base = rb.git("rev-parse", "main")
    rb.branch("agent/work")
    judged = rb.commit({"mod.py": _edit(_edit(FUNCS, 2, "    return 2\n"), 5, "    return 5\n")})
    head = rb.commit({"mod.py": _edit(_edit(FUNCS, 2, "    return 2\n"), 5, "    return 55\n"),
                      "algo.py": ALGO_AFTER})
    ask = (base, judged, base, head)
    plain = compute_delta(rb.root, *ask)
    key, value = setting.split("=")
    rb.git("config", key, value)
    assert porcelain_options(rb.root)  # said to diff-tree as an option, not left to the one-by-one path
    _alone_fails(monkeypatch)
    got = dict(compute_deltas(rb.root, [ask]))[ask]
    assert got == compute_delta(rb.root, *ask)
    if key != "diff.noprefix":  # the setting does change the delta: a batch that left it out would differ
        assert got != plain


def test_a_setting_plumbing_cannot_be_given_computes_one_by_one(tmp_path: Path) -> None:
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"a.py": FUNCS, "b.py": FUNCS}, "base")
    base = rb.git("rev-parse", "main")
    rb.branch("agent/work")
    judged = rb.commit({"a.py": _edit(FUNCS, 1, "    return 1\n"), "b.py": _edit(FUNCS, 1, "    return 1\n")})
    head = rb.commit({"a.py": _edit(FUNCS, 1, "    return 11\n"), "b.py": _edit(FUNCS, 1, "    return 1\n")})
    (rb.root / ".git" / "order").write_text("b.py\na.py\n")
    rb.git("config", "diff.orderFile", str(rb.root / ".git" / "order"))
    assert porcelain_options(rb.root) is None
    ask = (base, judged, base, head)
    got = dict(compute_deltas(rb.root, [ask, (base, head, base, judged)]))[ask]
    assert got == compute_delta(rb.root, *ask)
    assert got is not None and [h.file for h in got.hunks] == ["b.py", "a.py"]  # git diff's order, as the file says
