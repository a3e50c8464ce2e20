"""The since-verdict view on a real public repository's history, with a rebase between the two heads.

hukkin/tomli's TOML 1.1 work (0921abf, 2a2aa62, 12314bd) was written while
upstream commits on CI, external test data and the test list landed between
them (d6b9bb0 .. 38297f8). Replayed as an agent's branch: forked at 871f2c1,
judged with 0921abf (and, in the second case, 12314bd's code and data on top);
then main moves by the five upstream commits and the agent rebases onto it
and adds 2a2aa62 and 12314bd. Only commit ids and hunk headers of upstream
code are kept here; the code comes from the local mirror that the search
tool's `fetch` made (REVIEWUI_MIRRORS, default /work/.mirror).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from reviewui.core.delta.compute import compute_delta

MIRROR = Path(os.environ.get("REVIEWUI_MIRRORS", "/work/.mirror")) / "hukkin+tomli" / "repo"
FORK = "871f2c1cf33bc451376c225eeff77611cf2dd5a9"
UPSTREAM = ("d6b9bb0", "5bda557", "2017309", "fc9c79f", "38297f8")
ENV = {"GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.com", "GIT_COMMITTER_NAME": "Agent",
       "GIT_COMMITTER_EMAIL": "agent@example.com", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
       "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z", "GIT_CONFIG_NOSYSTEM": "1"}
PARSER = "src/tomli/_parser.py"
REPL = "tests/data/valid/multiline-basic-str/replacements"


def _git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **ENV}, input=input, capture_output=True,
                         check=True)
    return out.stdout.decode().strip()


@pytest.fixture(scope="module")
def tomli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (MIRROR / "HEAD").exists():
        pytest.skip(f"no mirror of hukkin/tomli at {MIRROR} (the search tool's fetch makes it)")
    where = tmp_path_factory.mktemp("tomli")
    repo = where / "repo"
    # The mirror belongs to whoever fetched it (root on this machine; CI runs the suite as an ordinary user):
    # git refuses a repository of another owner unless a global config trusts it, and a local clone would
    # copy its owner-only files, so the clone goes through upload-pack with a HOME of its own.
    home = where / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[safe]\n\tdirectory = {MIRROR}\n", encoding="utf-8")
    subprocess.run(["git", "clone", "-q", "--no-local", "--no-checkout", str(MIRROR), str(repo)], check=True,
                   capture_output=True, env={**os.environ, **ENV, "HOME": str(home)})
    _git(repo, "-c", "advice.detachedHead=false", "checkout", "-q", FORK)
    _git(repo, "checkout", "-q", "-b", "main2")
    _git(repo, "cherry-pick", *UPSTREAM)  # main moves on, without the agent's work
    _git(repo, "checkout", "-q", "-b", "agent/rebased")
    _git(repo, "cherry-pick", "0921abf", "2a2aa62", "12314bd")  # the agent rebased, and went on
    _git(repo, "-c", "advice.detachedHead=false", "checkout", "-q", "0921abf")
    _git(repo, "checkout", "-q", "-b", "agent/judged-more")
    _git(repo, "apply", "--index", input=subprocess.run(
        ["git", "diff", "12314bd^", "12314bd", "--", "src", "tests/data"], cwd=repo, capture_output=True,
        check=True).stdout)
    _git(repo, "commit", "-q", "-m", "12314bd's code and data, before the rebase")
    return repo


def _states(repo: Path, judged: str) -> list[tuple[str, str, str]]:
    rev = lambda r: _git(repo, "rev-parse", r)  # noqa: E731
    delta = compute_delta(repo, rev(FORK), rev(judged), rev("main2"), rev("agent/rebased"))
    return [(h.state, h.file, h.header) for h in delta.hunks]


def test_judged_at_the_first_commit(tomli: Path) -> None:
    got = _states(tomli, "0921abf")
    assert got == [
        ("unchanged", PARSER, "@@ -61,6 +61,7 @@"),           # 0921abf's escape shorthand, rebased as it was
        ("new", PARSER, "@@ -531,7 +532,7 @@"),             # 2a2aa62
        ("new", PARSER, "@@ -546,16 +547,18 @@"),
        ("new", PARSER, "@@ -577,6 +580,8 @@"),             # 12314bd
        ("new", "tests/data/valid/inline-table/empty-inline-table.json", "(no text change)"),  # a pure rename
        ("new", "tests/data/valid/inline-table/empty-inline-table.toml", "(no text change)"),
        ("new", "tests/data/valid/inline-table/multiline-inline-table.json", "@@ -0,0 +1,35 @@"),
        ("new", "tests/data/valid/inline-table/multiline-inline-table.toml", "@@ -0,0 +1,12 @@"),
        ("changed", f"{REPL}.json", "@@ -0,0 +1,6 @@"),      # the file 0921abf added, grown by 12314bd
        ("changed", f"{REPL}.toml", "@@ -0,0 +1,4 @@"),
        ("new", "tests/test_data.py", "@@ -46,14 +46,9 @@"),  # the xfail list upstream's 38297f8 added
    ]


def test_judged_later_a_hunk_that_only_moved_is_unchanged(tomli: Path) -> None:
    got = _states(tomli, "agent/judged-more")
    # 12314bd's hunk was judged at +578 and is at +580 now (2a2aa62 added two lines above it): unchanged
    assert ("unchanged", PARSER, "@@ -577,6 +580,8 @@") in got
    assert [s for s, f, _ in got if f.startswith(REPL)] == ["unchanged", "unchanged"]
    assert sum(s == "unchanged" for s, _, _ in got) == 4 and not any(s in ("changed", "gone") for s, _, _ in got)
    # upstream's own commits (CI, 1379 files of external test data) are no hunk of either patch
    assert not any(f.startswith((".github/", "tests/data/toml-test/")) for _, f, _ in got)
