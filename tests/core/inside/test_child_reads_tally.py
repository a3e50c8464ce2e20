"""The inotify tally (inside/child_reads.py) in this process, where coverage sees it: which opens by
other processes make a changed file read. The plugin that feeds it runs inside each sandboxed
baseline (tests/core/bite/test_child_reads.py, tests/hostile/test_child_source_reads.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.inside.child_reads import Tally, open_watch


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m0.py").write_text("X = 0\n")
    (pkg / "m1.py").write_text("X = 1\n")
    store = tmp_path / ".git" / "objects"
    store.mkdir(parents=True)
    (store / "blob").write_bytes(b"x")
    return pkg / "m0.py", pkg / "m1.py", store


def _tally(m0: Path, m1: Path, store: Path | None = None) -> Tally:
    tally = Tally.watching([os.path.realpath(m0), os.path.realpath(m1)],
                           [os.path.realpath(store)] if store else ())
    assert tally is not None, "inotify is there on Linux"
    return tally


def test_a_file_another_process_reads_is_read_and_only_that_one(tree: tuple[Path, Path, Path]) -> None:
    m0, m1, _ = tree
    tally = _tally(m0, m1)
    subprocess.run(["cat", str(m0)], check=True, capture_output=True)
    assert tally.end() == [os.path.realpath(m0)]
    assert tally.end() == []  # the counts start again with each phase
    subprocess.run(["cat", str(m1), str(m1)], check=True, capture_output=True)  # twice in a row: counted
    assert tally.end() == [os.path.realpath(m1)]
    tally.watch.close()


def test_this_python_s_own_opens_are_subtracted_and_an_importer_is_excused(tree: tuple[Path, Path, Path]) -> None:
    m0, m1, _ = tree
    tally = _tally(m0, m1)
    with open(m0) as f:  # the audit hook reports its own Python's opens
        f.read()
    tally.here[os.path.realpath(m0)] = 1
    assert tally.end() == []
    # a child Python that imports pkg.m0 lists pkg/ first, then opens m0.py: no reader
    subprocess.run([sys.executable, "-B", "-c", "import pkg.m0"], cwd=m0.parent.parent, check=True,
                   env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert tally.end() == []
    # ...while one that reads it as well is
    subprocess.run([sys.executable, "-B", "-c", "import pkg.m0; open(pkg.m0.__file__).read()"],
                   cwd=m0.parent.parent, check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert tally.end() == [os.path.realpath(m0)]
    # this Python's own listing of pkg/ excuses no child's read
    tally.listing(str(m0.parent))
    os.listdir(m0.parent)
    subprocess.run(["cat", str(m1)], check=True, capture_output=True)
    assert tally.end() == [os.path.realpath(m1)]
    tally.watch.close()


def test_a_read_of_git_s_store_by_another_process_reads_every_file(tree: tuple[Path, Path, Path]) -> None:
    m0, m1, store = tree
    tally = _tally(m0, m1, store)
    subprocess.run(["cat", str(store / "blob")], check=True, capture_output=True)
    assert tally.end() == sorted([os.path.realpath(m0), os.path.realpath(m1)])
    os.listdir(store)  # this Python's own listing, as the audit hook reports it: no read by another
    tally.git(str(store))
    assert tally.end() == []
    subprocess.run(["ls", str(store)], check=True, capture_output=True)
    assert tally.end(count=False) == []  # a phase not counted says nothing
    assert tally.end() == []
    tally.watch.close()


def test_no_watch_where_a_file_cannot_be_watched_and_close_is_final(tree: tuple[Path, Path, Path]) -> None:
    m0, m1, _ = tree
    assert open_watch([str(m0), str(m1.parent / "gone.py")]) is None
    assert open_watch([]) is None
    watch = open_watch([str(m0)])
    assert watch is not None
    watch.close()
    with pytest.raises(OSError):
        os.fstat(watch.fd)
    watch.close()  # twice: quiet


def test_this_python_s_listings_count_only_for_the_watched_places(tree: tuple[Path, Path, Path],
                                                                   tmp_path: Path) -> None:
    m0, m1, store = tree
    tally = _tally(m0, m1, store)
    other = tmp_path / "elsewhere" / "pkg"  # the same name, another folder
    other.mkdir(parents=True)
    (store / "sub").mkdir()
    tally.listing(str(other))
    tally.listing(str(m0))  # a file, not the folder
    tally.git(str(tmp_path / ".gitignore"))
    tally.git(str(store / "sub"))  # a folder inside the store is no file read in it
    assert tally.listed == {} and tally.in_store == 0
    tally.listing(str(m0.parent))
    tally.git(str(store))
    tally.git(str(store / "blob"))
    assert tally.listed == {os.path.realpath(m0.parent): 1} and tally.in_store == 2
    tally.watch.close()
