"""Runs that look alike to a stat (run/alike.py): the pad, the padded pristine and its stocked store.

The hostile side (a test that stats to tell a revert) is tests/hostile/test_stat_probes.py; these
are the pieces: a pad is inert Python of one exact size whatever the file ends with, a revert on a
padded scratch is the revert of the head's own bytes, and the pristine's store already holds what
each revert commits.
"""

from __future__ import annotations

import ast
import configparser
import json
import tomllib
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from reviewui.core.run.alike import LINE, SLACK, AlikeRuns, pad, style_of, unpad
from reviewui.core.revert import raw_hunk_for, revert_bytes
from reviewui.core.run.staging import Stager, _stocked
from reviewui.core.run.worktree import WorktreePool
from tests.core.bite.helpers import load
from tests.gitrepo import make_repo

BASE = {
    "pkg/__init__.py": "",
    "pkg/end.py": "def f(x):\n    if x:\n        return 1\n    return 2",  # no newline at the end
    "pkg/crlf.py": "def g():\r\n    return 'a'\r\n",
    "pkg/latin.py": b"# -*- coding: latin-1 -*-\ns = '\xe9t\xe9'\n",
    "data.json": '{"a": 1}\n',
    "page.html": "<p>a</p>\n",
}
HEAD = {
    "pkg/end.py": "def f(x):\n    return 1",
    "pkg/crlf.py": "def g():\r\n    return 'a' * 2\r\n",
    "pkg/latin.py": b"# -*- coding: latin-1 -*-\ns = '\xe9t\xe9!'\n",
    "pkg/new.py": "N = 1\n",
    "data.json": '{"a": 2, "b": [1, 2, 3]}\n',
    "page.html": "<p>b</p>\n",
}


@given(st.binary(max_size=300).filter(lambda b: b"\r" not in b[-1:]), st.integers(0, 400))
def test_a_pad_makes_the_size_exactly_or_leaves_the_bytes(content: bytes, size: int) -> None:
    out = pad(content, size)
    assert out.startswith(content)
    assert len(out) == size if size >= len(content) + 5 else out == content or len(out) == size
    if out != content:
        assert unpad(out, size - len(content)) == content
        # lines a linter run as a test takes in its stride: comments, no trailing space, short
        for line in out[len(content):].lstrip(b"\n").splitlines():
            assert line.startswith(b"#") and line == line.rstrip() and len(line) <= LINE
            assert line == b"#" or line.startswith(b"# ")


@pytest.mark.parametrize("source", ["", "x = 1\n", "x = 1", "def f():\n    return '''a\nb'''", "x = (1 +\n 2)\n",
                                    "if x:\n    pass\r\n", "s = 'é'  # ü\n"])
def test_a_pad_is_inert_python(source: str) -> None:
    data = source.encode()
    out = pad(data, len(data) + SLACK)
    assert len(out) == len(data) + SLACK
    assert ast.dump(ast.parse(out)) == ast.dump(ast.parse(data))


@pytest.mark.parametrize(("path", "text", "read"), [
    ("pyproject.toml", '[tool.x]\na = "b"\nc = """d\ne"""', lambda t: tomllib.loads(t)),
    ("setup.cfg", "[s]\nk = v\n  more", lambda t: {k: dict(v) for k, v in _ini(t).items()}),
    ("data.json", '{"a": [1, 2]}', json.loads),
    ("empty.json", "[]\n", json.loads),
])
def test_a_pad_is_inert_in_its_format(path: str, text: str, read: object) -> None:
    data = text.encode()
    out = pad(data, len(data) + SLACK, style_of(path) or "#")
    assert len(out) == len(data) + SLACK
    assert read(out.decode()) == read(text)  # type: ignore[operator]


def test_formats_without_an_inert_tail_are_not_padded() -> None:
    assert [style_of(p) for p in ("a.html", "b.css", "t.j2", "x.xml", "Makefile", "d/.env", "c.JSON")] == \
        [None, None, None, None, "#", "#", " "]


def _ini(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read_string(text)
    return parser


def _bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode()


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_the_pristine_is_padded_committed_and_stocked(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "repo", BASE, HEAD)
    t, d = load(rb.root)
    alike = AlikeRuns.of(d, t.head)
    # modified files of a format with an inert tail: not the added one, not HTML
    assert sorted(alike.reserve) == ["data.json", "pkg/crlf.py", "pkg/end.py", "pkg/latin.py"]
    with WorktreePool(rb.root, 1) as pool, pool.acquire() as s:
        pool.look_alike(alike)
        s.checkout(t.head)
        for rel, reserve in alike.reserve.items():
            head = _bytes(HEAD[rel])
            assert (s.path / rel).read_bytes() == pad(head, len(head) + reserve, style_of(rel) or "#")
        assert json.loads((s.path / "data.json").read_text()) == json.loads(HEAD["data.json"])
        assert (s.path / "page.html").read_text() == HEAD["page.html"]  # a pad would be rendered: as it is
        assert _git(s.path, "status", "--porcelain") == ""  # HEAD is the padded tree
        _git(s.path, "fsck", "--strict")
        objects = s.path / ".git" / "objects"
        [stock] = objects.glob("pack/stock-*.idx")  # every variant's objects, before any run
        stocked = Stager.of(s.path)._stocked  # type: ignore[union-attr]
        assert not list(objects.glob("??/*"))
        for f in d.files:  # each revert alone commits nothing new: its objects are there already
            for h in f.hunks:
                s.checkout(t.head)
                s.revert_hunk(f, h)
                assert not list(objects.glob("??/*")), (f.path, h.index)
                head = bytes.fromhex(_git(s.path, "rev-parse", "HEAD").strip())
                blob = bytes.fromhex(_git(s.path, "rev-parse", f"HEAD:{f.path}").strip()) \
                    if f.status != "added" else head
                assert {head, blob} <= stocked, (f.path, h.index)
                if f.path in alike.reserve:  # the reverted file is the head's size, and the base's code
                    base, size = _bytes(BASE[f.path]), len(_bytes(HEAD[f.path])) + alike.reserve[f.path]
                    reverted = (s.path / f.path).read_bytes()
                    assert len(reverted) == size and unpad(reverted, size - len(base)) == base
        pool.look_alike(None)  # a plain checkout of the same commit: the head's own bytes
        s.checkout(t.head)
        assert (s.path / "pkg/end.py").read_text() == HEAD["pkg/end.py"]


def test_a_plain_pristine_is_apart_from_a_padded_one(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "repo", BASE, HEAD)
    t, d = load(rb.root)
    with WorktreePool(rb.root, 1) as pool, pool.acquire() as s:
        s.checkout(t.head)
        plain = (s.path / "pkg/end.py").read_bytes()
        pool.look_alike(AlikeRuns.of(d, t.head))
        s.checkout(t.base)  # another commit: plain
        assert (s.path / "pkg/end.py").read_text() == BASE["pkg/end.py"]
        s.checkout(t.head)
        assert len((s.path / "pkg/end.py").read_bytes()) > len(plain)
    assert plain == HEAD["pkg/end.py"].encode()


@pytest.mark.parametrize("extra", [2, 4, 73, 74, 76, 77, 128, 301])
def test_a_padded_module_is_as_clean_to_a_linter_as_before(tmp_path: Path, extra: int) -> None:
    """A project that runs a linter as a test (pytest-flake8, pytest-ruff) sees no new complaint:
    else that test would be red at the head only in reviewui's runs."""
    source = b'"""A clean module."""\n\n\ndef f(x: int) -> int:\n    return x + 1\n'
    (tmp_path / "m.py").write_bytes(pad(source, len(source) + extra))
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--select", "E,W", "--preview",
                           "--line-length", "79", "m.py"], cwd=tmp_path, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    assert len((tmp_path / "m.py").read_bytes()) == len(source) + extra


def test_a_batch_stager_places_nothing_the_stock_holds(tmp_path: Path) -> None:
    """A batch session's forks get only objects the store lacks (staging.py): on a sweep's pristine,
    every revert's are in the stock pack, so a fork places none (placed loose, a revert's blob would
    exist in its fork alone: the stat tell tests/hostile/test_stat_probes.py shows)."""
    rb = make_repo(tmp_path / "repo", BASE, HEAD)
    t, d = load(rb.root)
    with WorktreePool(rb.root, 1) as pool, pool.acquire() as s:
        pool.look_alike(AlikeRuns.of(d, t.head))
        s.checkout(t.head)
        stager = Stager.of(s.path)
        assert stager is not None
        stager.store = tmp_path / "staged"
        f = d.file("pkg/end.py")
        assert f is not None
        before = (s.path / f.path).read_bytes()
        reverted = s.padded(f.path, revert_bytes(s.unpadded(f.path, before), raw_hunk_for(f, f.hunks[0])))
        stager.stage({f.path: reverted}, tmp_path / "index")
        assert stager.made == [] and not (tmp_path / "staged").exists()
        stager.stage({f.path: before + b"# not a variant\n"}, tmp_path / "index")  # one the stock lacks
        assert len(stager.made) >= 3


@pytest.mark.parametrize("data", [b"", b"PACK\0\0\0\2" + b"\xff" * 2000, b"\377tOc\0\0\0\2" + bytes(100)],
                         ids=["empty", "not-an-index", "cut-short"])
def test_a_stock_index_that_is_not_one_holds_nothing(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "stock-x.idx").write_bytes(data)
    assert _stocked(tmp_path) == frozenset()


def test_a_run_alone_hides_what_its_commit_wrote(tmp_path: Path) -> None:
    """A guard edit run alone commits objects the stock lacks; after `hide_new_objects` the store's
    loose objects are the pristine's and one pack more holds the edit's, under a name no run shares:
    git still reads HEAD. A null edit gets its pack too (its random object alone)."""
    rb = make_repo(tmp_path / "repo", BASE, HEAD)
    t, d = load(rb.root)
    packs: list[set[str]] = []
    with WorktreePool(rb.root, 1) as pool, pool.acquire() as s:
        pool.look_alike(AlikeRuns.of(d, t.head))
        s.checkout(t.head)
        objects = s.path / ".git" / "objects"
        pristine = {p.name for p in objects.glob("pack/*")}
        for edit in (b"def f(x):\n    return None\n", b"def f(x):\n    return None\n", None):
            s.checkout(t.head)
            s.edit_file("pkg/end.py", edit if edit is not None else (s.path / "pkg/end.py").read_bytes())
            assert list(objects.glob("??/*")) or edit is None  # git wrote the edit's objects loose
            s.hide_new_objects()
            assert not list(objects.glob("??/*"))
            added = {p.name for p in objects.glob("pack/*")} - pristine
            assert len(added) == 2 and {n.rsplit(".", 1)[1] for n in added} == {"idx", "pack"}
            packs.append(added)
            _git(s.path, "fsck", "--strict")
            assert _git(s.path, "show", "HEAD:pkg/end.py").encode() == (s.path / "pkg/end.py").read_bytes()
    assert packs[0] != packs[1]  # the same edit twice: two names no test can work out
