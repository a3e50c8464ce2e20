"""`reviewui demo` builds its stories once into a stable directory and reuses them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from reviewui import cli, demo, demo_home
from reviewui.core.errors import ReviewError


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                          env={**os.environ, **IDENTITY}).stdout.strip()


IDENTITY = {"GIT_AUTHOR_NAME": "Demo Reviewer", "GIT_AUTHOR_EMAIL": "reviewer@example.com",
            "GIT_COMMITTER_NAME": "Demo Reviewer", "GIT_COMMITTER_EMAIL": "reviewer@example.com"}
"""A reviewer's git identity, as the test's own: a new machine has none (and reviewui refuses a verdict without)."""


@pytest.fixture
def reviewer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reviewer has a git identity (in the environment: the demo's repos are not the test's to configure)."""
    for name, value in IDENTITY.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> list[tuple[Path, str, str]]:
    """Replace the terminal app with a headless run; record (repo, branch, what was printed before it opened)."""
    seen: list[tuple[Path, str, str]] = []

    def fake_run_app(session, initial_file=None, theme=None) -> None:
        printed = capsys.readouterr().out
        from reviewui.ui.app import make_app

        async def headless() -> str:
            app = make_app(session, initial_file, theme)
            async with app.run_test(size=(120, 40)) as pilot:
                await pilot.pause()
                return type(app.screen).__name__

        assert asyncio.run(headless())
        seen.append((session.target.repo_dir, session.target.branch, printed))

    import reviewui.ui.app as app_module

    monkeypatch.setattr(app_module, "run_app", fake_run_app)
    return seen


def test_default_dir_is_per_user_and_stable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert demo_home.default_demo_dir() == tmp_path / "data" / "reviewui" / "demo"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert demo_home.default_demo_dir() == Path.home() / ".local" / "share" / "reviewui" / "demo"


def test_verdict_in_story_1_survives_opening_story_2(tmp_path: Path, opened, capsys, reviewer: None) -> None:
    where = tmp_path / "demo"
    assert cli.main(["demo", "--dir", str(where)]) == 0
    story1 = where / "01-trim-reasoning"
    assert opened[-1][0] == story1 and opened[-1][1] == "agent/trim-reasoning"
    assert cli.main(["verdict", "--repo", str(story1), "agent/trim-reasoning", "approve", "--reason", "looked"]) == 0
    (story1 / "probe_export.py").write_text("def test_probe(): pass\n")
    assert cli.main(["demo", "02-add-stopped", "--dir", str(where)]) == 0
    assert opened[-1][0] == where / "02-add-stopped" and opened[-1][1] == "agent/add-stopped"
    # the list is on screen before the app opens, naming every story and marking the one opened
    printed = opened[-1][2]
    for name in demo.sample_names():
        assert name in printed
    assert "> 02-add-stopped" in printed
    capsys.readouterr()
    assert cli.main(["log", "--repo", str(story1), "agent/trim-reasoning", "--format", "json"]) == 0
    log = json.loads(capsys.readouterr().out)
    assert [r["verdict"] for r in log["reviews"]] == ["approve"]
    assert (story1 / "probe_export.py").is_file()


def test_rebuild_asks_before_deleting_the_users_work(tmp_path: Path) -> None:
    first = {s.sample.name: s for s in demo_home.ensure_stories(tmp_path)}
    assert not any(s.reused for s in first.values())
    mine = first["01-trim-reasoning"].sample.repo_dir
    git(mine, "notes", "--ref", "reviewui", "add", "-m", "verdict", "agent/trim-reasoning")
    plain = first["02-add-stopped"].sample.repo_dir
    (plain / ".git" / "rebuilt-if-gone").write_text("x")
    asked: list[str] = []

    def say_no(question: str) -> bool:
        asked.append(question)
        return False

    again = {s.sample.name: s for s in demo_home.ensure_stories(tmp_path, rebuild=True, confirm=say_no)}
    assert again["01-trim-reasoning"].reused and git(mine, "notes", "--ref", "reviewui", "list")
    assert [q.split(" ")[0] for q in asked] == ["01-trim-reasoning"] and "verdict notes" in asked[0]
    # a story holding nothing of the user's is rebuilt without a question
    assert not again["02-add-stopped"].reused and not (plain / ".git" / "rebuilt-if-gone").exists()
    # without anyone to ask, the answer is no
    assert demo_home.ensure_stories(tmp_path, rebuild=True)[0].reused
    yes = demo_home.ensure_stories(tmp_path, rebuild=True, confirm=lambda q: True)
    assert not yes[0].reused and git(mine, "notes", "--ref", "reviewui", "list") == ""


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda r: (r / "new.py").write_text("x = 1\n"), "changed or new file"),
        (lambda r: git(r, "branch", "mine"), "mine"),
        (lambda r: git(r, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "--allow-empty", "-m", "m"), "main"),
    ],
)
def test_user_additions_are_seen(tmp_path: Path, change, words: str) -> None:
    [story] = [s for s in demo_home.ensure_stories(tmp_path) if s.sample.name == "03-null-guard"]
    repo = story.sample.repo_dir
    assert demo_home.user_additions(repo) == []
    change(repo)
    assert words in " ".join(demo_home.user_additions(repo))


def test_reused_story_describes_like_a_fresh_build(tmp_path: Path) -> None:
    fresh = [s.sample for s in demo_home.ensure_stories(tmp_path)]
    reused = [s.sample for s in demo_home.ensure_stories(tmp_path)]
    assert fresh == reused


def test_story_names_by_number_or_prefix() -> None:
    assert demo_home.resolve_name("2") == "02-add-stopped"
    assert demo_home.resolve_name("04") == "04-capped-backoff"
    assert demo_home.resolve_name("03-null") == "03-null-guard"
    with pytest.raises(ReviewError, match="01-trim-reasoning"):
        demo_home.resolve_name("9")
    with pytest.raises(ReviewError):
        demo_home.resolve_name("0")


def test_unknown_story_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    assert cli.main(["demo", "nosuch", "--dir", str(tmp_path), "--no-open"]) == 2
    assert "choose from" in capsys.readouterr().err
    assert not (tmp_path / "01-trim-reasoning").exists()
