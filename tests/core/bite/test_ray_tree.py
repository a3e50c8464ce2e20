"""The Ray engine's parts that need no cluster: the shipped tree, the engine's keys, the install line."""

from __future__ import annotations

import io
import sys
import tarfile
import time
from pathlib import Path

import pytest

from reviewui.cli import main
from reviewui.core.bite.engines import engine_for
from reviewui.core.config import Settings, resolve_settings
from reviewui.core.errors import ReviewError
from reviewui.core.ray import cluster
from reviewui.core.ray.tree import build_tree, tree_of, unpack_repo
from tests.gitrepo import make_repo


def _names(data: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: m for m in tar.getmembers()}


def _repo(root: Path):
    branch = {
        "pkg/a.py": "A = 1\n", "run.sh": "#!/bin/sh\n", "link": None, ".gitignore": "pkg/gen.py\n",
        ".gitattributes": "pkg/* export-ignore\n*.py export-subst\n", "data\\r\\n.txt": b"a\r\nb\r\n",
    }
    rb = make_repo(root, {"README.md": "x\n"}, {k: v for k, v in branch.items() if v is not None},
                   stay="agent/work")
    (root / "run.sh").chmod(0o755)
    (root / "pkg" / "gen.py").write_text("GENERATED = 1\n")  # ignored: git add -f keeps it tracked
    rb.git("add", "-f", "run.sh", "pkg/gen.py")
    (root / "link").symlink_to("pkg/a.py")
    rb.git("add", "link")
    rb.git("commit", "-q", "-m", "more")
    return rb


def test_the_tree_is_the_heads_files_exactly_and_never_git(tmp_path: Path) -> None:
    rb = _repo(tmp_path / "r")
    head = rb.git("rev-parse", "HEAD").strip()
    (tmp_path / "r" / "untracked.txt").write_text("not shipped\n")
    shipped = build_tree(rb.root, head, ())
    names = _names(shipped.data)
    assert "pkg/a.py" in names and "pkg/gen.py" in names  # export-ignore is not obeyed: the tree is whole
    assert not any(n == ".git" or n.startswith(".git/") for n in names) and "untracked.txt" not in names
    assert names["link"].issym() and names["link"].linkname == "pkg/a.py"
    assert names["run.sh"].mode & 0o111
    node = unpack_repo(shipped.data, tmp_path / "node")
    assert tree_of(tmp_path / "node" / "tree", node) == tree_of(rb.root, head)  # object for object
    assert (tmp_path / "node" / "tree" / "data\\r\\n.txt").read_bytes() == b"a\r\nb\r\n"
    assert build_tree(rb.root, head, ()).key == shipped.key  # the same tree, the same key: shipped once


def test_extras_are_shipped_and_the_size_is_checked_first(tmp_path: Path) -> None:
    rb = _repo(tmp_path / "r")
    head = rb.git("rev-parse", "HEAD").strip()
    (tmp_path / "r" / "fixtures").mkdir()
    (tmp_path / "r" / "fixtures" / "big.bin").write_bytes(b"\0" * 4096)
    (tmp_path / "r" / "fixtures" / ".git").mkdir()
    (tmp_path / "r" / "fixtures" / ".git" / "config").write_text("[core]\n")
    names = _names(build_tree(rb.root, head, ("fixtures",)).data)
    assert "fixtures/big.bin" in names and not any(".git/" in n for n in names)
    with pytest.raises(ReviewError, match=r"over the limit of 0\.0 MiB \(ray-ship-limit in MiB\)"):
        build_tree(rb.root, head, ("fixtures",), limit=4000)
    for bad in (".git", "../outside", "/etc/passwd", "fixtures/.git/config", "missing"):
        with pytest.raises(ReviewError, match="ray-extras"):
            build_tree(rb.root, head, (bad,))


def test_engine_keys_are_trusted_and_never_the_branchs(tmp_path: Path) -> None:
    assert Settings.from_mapping({"engine": "ray", "ray-address": "10.0.0.1:6379", "ray-extras": ["data"],
                                  "ray-ship-limit": 64}) == Settings(engine="ray", ray_address="10.0.0.1:6379",
                                                                     ray_extras=("data",), ray_ship_limit=64)
    for bad in ({"engine": "dask"}, {"ray-ship-limit": 0}, {"ray-extras": "data"}):
        with pytest.raises(ReviewError, match="config: "):
            Settings.from_mapping(bad)
    branch = '[tool.reviewui]\nengine = "ray"\nray-address = "evil:1"\nray-extras = [".env"]\n'
    rb = make_repo(tmp_path / "r", {"a.py": "A = 1\n"}, {"pyproject.toml": branch})
    head = rb.git("rev-parse", "agent/work").strip()
    base = rb.git("rev-parse", "main").strip()
    trusted = resolve_settings(rb.root, base, head, trust_branch=True)
    assert trusted.engine == "ray"  # a trusted branch may ask for the engine...
    assert trusted.ray_address is None and trusted.ray_extras == ()  # ...never where, nor what leaves


def test_without_ray_the_engine_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, capsys,
                                                       tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(ReviewError, match=r"^the ray engine needs `pip install 'reviewui\[ray\]'`$"):
        engine_for(Settings(engine="ray"))
    assert engine_for(Settings()) is None  # the local engine needs nothing
    monkeypatch.setattr(cluster, "_current", {})
    # a repository of the test's own (the suite's checkout need not be one: a copy of its files, an sdist)
    rb = make_repo(tmp_path / "r", {"a.py": "X = 1\n"}, {"a.py": "X = 2\n"})
    code = main(["bite", "agent/work", "--engine", "ray", "--repo", str(rb.root)])
    err = capsys.readouterr().err
    assert code == 2 and err == "reviewui: the ray engine needs `pip install 'reviewui[ray]'`\n", err


def test_an_address_nobody_answers_is_one_line_before_anything_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys) -> None:
    rb = make_repo(tmp_path / "r", {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    monkeypatch.setattr(cluster, "_current", {})
    started = time.monotonic()
    code = main(["bite", "agent/work", "--engine", "ray", "--ray-address", "127.0.0.1:1", "--repo", str(rb.root)])
    err = capsys.readouterr().err
    assert code == 2 and err == "reviewui: cannot connect to Ray at 127.0.0.1:1: Connection refused\n", err
    assert time.monotonic() - started < cluster.CONNECT_WAIT + 5  # Ray's own retries would take minutes


def _tar(*members: tuple[str, str, str]) -> bytes:
    """A tar of (name, kind, content or link target): kind `file`, `link`, `fifo` or `dir`."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, kind, content in members:
            info = tarfile.TarInfo(name)
            if kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, content
                tar.addfile(info)
            elif kind in ("fifo", "dir"):
                info.type = tarfile.FIFOTYPE if kind == "fifo" else tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size, info.mode = len(content), 0o6777  # setuid, setgid, world-writable: all dropped
                tar.addfile(info, io.BytesIO(content.encode()))
    return out.getvalue()


def test_a_python_without_extraction_filters_unpacks_the_same_and_refuses_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Debian 12's Python 3.11.2 has no tarfile filters: a node there checks each member itself."""
    rb = _repo(tmp_path / "r")
    head = rb.git("rev-parse", "HEAD").strip()
    shipped = build_tree(rb.root, head, ())
    if hasattr(tarfile, "tar_filter"):
        monkeypatch.delattr(tarfile, "tar_filter")
    node = unpack_repo(shipped.data, tmp_path / "node")
    assert tree_of(tmp_path / "node" / "tree", node) == tree_of(rb.root, head)  # object for object
    assert (tmp_path / "node" / "tree" / "link").readlink() == Path("pkg/a.py")
    made = unpack_repo(_tar(("bin/tool", "file", "x")), tmp_path / "modes")
    assert made and (tmp_path / "modes" / "tree" / "bin" / "tool").stat().st_mode & 0o7777 == 0o755
    outside = tmp_path / "outside"
    for n, hostile in enumerate([
        _tar(("../outside/x", "file", "escaped")),
        _tar(("/tmp/abs", "file", "escaped")),
        _tar(("up", "link", "../../outside")),
        _tar(("abs", "link", "/etc/passwd")),
        _tar(("sub", "link", ".."), ("sub/../../outside/y", "file", "escaped")),
        _tar(("pipe", "fifo", "")),
    ]):
        with pytest.raises(ReviewError):
            unpack_repo(hostile, tmp_path / f"hostile{n}")
    assert not outside.exists() and not Path("/tmp/abs").exists()
