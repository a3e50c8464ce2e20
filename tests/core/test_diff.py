"""The diff model on a real repository with every awkward shape of change."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.diff import load_diff
from reviewui.core.target import resolve_target
from tests.awkward import LONG_LINE, MARKUP, awkward_repo


@pytest.fixture(scope="module")
def diff(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("awk")
    awkward_repo(root)
    t = resolve_target(root, "agent/work")
    return load_diff(str(root), t.base, t.head)


def by_path(diff, path):
    f = diff.file(path)
    assert f is not None, f"{path} missing from {[x.path for x in diff.files]}"
    return f


def test_statuses_and_roles(diff) -> None:
    assert by_path(diff, "pkg/new_name.py").status == "renamed"
    assert by_path(diff, "pkg/new_name.py").old_path == "pkg/old_name.py"
    assert by_path(diff, "pkg/gone.py").status == "deleted"
    assert by_path(diff, "docs/empty.txt").status == "added"
    assert by_path(diff, "pkg/calc.py").status == "modified"
    assert by_path(diff, "pkg/calc.py").role == "source"
    assert by_path(diff, "tests/test_calc.py").role == "test"
    assert by_path(diff, "docs/crlf.txt").role == "other"


def test_rename_hunk_is_only_the_changed_line(diff) -> None:
    f = by_path(diff, "pkg/new_name.py")
    assert (f.added, f.removed) == (1, 1)
    assert [ln.text for ln in f.hunks[0].lines if ln.kind == "added"] == ["VALUE = 2"]


def test_mode_change(diff) -> None:
    f = by_path(diff, "tools/run.sh")
    assert f.mode_changed and f.display_status == "mode"
    assert (f.old_mode, f.new_mode) == ("100644", "100755")
    assert f.hunks == ()


def test_binary_has_sizes_and_no_hunks(diff) -> None:
    f = by_path(diff, "data/logo.bin")
    assert f.binary and f.hunks == ()
    assert f.sizes() == (1024, 2048)


def test_deleted_file_lines_are_removed(diff) -> None:
    f = by_path(diff, "pkg/gone.py")
    assert f.removed == 2
    assert all(ln.kind == "removed" for ln in f.hunks[0].lines)


def test_empty_file(diff) -> None:
    f = by_path(diff, "docs/empty.txt")
    assert (f.added, f.removed, f.hunks) == (0, 0, ())


def test_crlf_lines_have_no_carriage_return(diff) -> None:
    f = by_path(diff, "docs/crlf.txt")
    texts = [ln.text for ln in f.hunks[0].lines]
    assert "2" in texts and not any("\r" in t for t in texts)


def test_non_utf8_is_decoded_with_replacement_and_marked(diff) -> None:
    f = by_path(diff, "docs/latin1.txt")
    assert f.non_utf8
    added = [ln.text for ln in f.hunks[0].lines if ln.kind == "added"]
    assert added == ["caf\ufffd cr\ufffdme"]
    assert not by_path(diff, "pkg/calc.py").non_utf8


def test_long_line_kept_whole(diff) -> None:
    f = by_path(diff, "pkg/long.py")
    assert f.hunks[0].lines[0].text == LONG_LINE.rstrip("\n")


def test_non_ascii_path_with_space(diff) -> None:
    f = by_path(diff, "dir with space/naïve ü.py")
    assert f.hunks[0].lines[0].text == "S = 'ü'"


def test_markup_is_kept_verbatim(diff) -> None:
    f = by_path(diff, "pkg/markup.py")
    assert [ln.text for ln in f.hunks[0].lines] == MARKUP.splitlines()


def test_hunk_numbers_and_header(diff) -> None:
    h = by_path(diff, "pkg/calc.py").hunks[0]
    assert h.header == "@@ -1,4 +1,6 @@"
    assert (h.old_start, h.old_len, h.new_start, h.new_len) == (1, 4, 1, 6)
    assert h.text.startswith("@@ -1,4 +1,6 @@")
    guard = [ln for ln in h.lines if ln.kind == "added"]
    assert [ln.new_no for ln in guard] == [2, 3]


def test_preload_matches_lazy(tmp_path: Path) -> None:
    awkward_repo(tmp_path)
    t = resolve_target(tmp_path, "agent/work")
    lazy = load_diff(str(tmp_path), t.base, t.head)
    eager = load_diff(str(tmp_path), t.base, t.head)
    eager.preload()
    assert [f.path for f in lazy] == [f.path for f in eager]
    for a, b in zip(lazy, eager, strict=True):
        assert a.raw_patch == b.raw_patch, a.path
        assert a.hunks == b.hunks


def test_symlink_and_submodule_are_said_to_be_so(tmp_path: Path) -> None:
    from reviewui.ui.diff_rows import file_notes
    from tests.gitrepo import RepoBuilder

    rb = RepoBuilder(tmp_path)
    rb.commit({"README.md": "x\n"})
    rb.branch("agent/work")
    (tmp_path / "link.txt").symlink_to("README.md")
    rb.git("update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,vendor/lib")
    rb.git("add", "link.txt")
    rb.git("commit", "-qm", "link and submodule")
    t = resolve_target(tmp_path, "agent/work", "main")
    diff = load_diff(str(tmp_path), t.base, t.head)
    link, sub = diff.file("link.txt"), diff.file("vendor/lib")
    assert link is not None and sub is not None
    assert file_notes(link)[0] == "link.txt is a symbolic link (its content is the link target)"
    assert [ln.text for ln in link.hunks[0].lines] == ["README.md"]
    assert file_notes(sub)[0].startswith("vendor/lib is a submodule")


def test_line_counts_are_joined_when_the_file_list_is_first_read(tmp_path: Path, monkeypatch) -> None:
    """load_diff returns before git's line counts are in; reading the files waits for them."""
    import threading
    from concurrent.futures import Future

    import reviewui.core.diff as diff_module

    awkward_repo(tmp_path / "repo")
    t = resolve_target(tmp_path / "repo", "agent/work")
    started: list[Future] = []
    gate = threading.Event()
    real_async = diff_module.run_git_async

    def gated_async(cwd, *args, **kw):
        inner = real_async(cwd, *args, **kw)
        outer: Future = Future()

        def hand_over() -> None:
            gate.wait(10)
            outer.set_result(inner.result())

        threading.Thread(target=hand_over, daemon=True).start()
        started.append(outer)
        return outer

    monkeypatch.setattr(diff_module, "run_git_async", gated_async)
    d = load_diff(str(t.repo_dir), t.base, t.head)
    assert len(started) == 1 and not started[0].done()  # returned with the counts still pending
    gate.set()
    calc = d.file("pkg/calc.py")
    assert calc is not None and (calc.added, calc.removed) == (calc.hunks[0].added, calc.hunks[0].removed)
    assert calc.added > 0


def test_failing_line_counts_raise_a_review_error_when_read(tmp_path: Path, monkeypatch) -> None:
    from concurrent.futures import Future

    import reviewui.core.diff as diff_module
    from reviewui.core.errors import ReviewError

    awkward_repo(tmp_path / "repo")
    t = resolve_target(tmp_path / "repo", "agent/work")
    failed: Future = Future()
    failed.set_exception(ReviewError("git diff: fatal: out of memory"))
    monkeypatch.setattr(diff_module, "run_git_async", lambda *a, **k: failed)
    d = load_diff(str(t.repo_dir), t.base, t.head)
    with pytest.raises(ReviewError, match="out of memory"):
        _ = d.files


def test_a_path_holding_a_tab_keeps_its_line_counts_and_binary_mark(tmp_path: Path) -> None:
    from tests.gitrepo import RepoBuilder

    rb = RepoBuilder(tmp_path / "repo")
    base = rb.commit({"keep.py": "x = 0\n"}, "base")
    head = rb.commit({"tab\tname.py": "a = 1\nb = 2\n", "tab\tblob.bin": b"\x00\x01\x02"}, "tabs")
    files = {f.path: f for f in load_diff(str(rb.root), base, head).files}
    assert (files["tab\tname.py"].added, files["tab\tname.py"].binary) == (2, False)
    assert files["tab\tblob.bin"].binary
