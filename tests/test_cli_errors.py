"""User errors: one line on stderr, exit code 2, never a traceback."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from reviewui.cli_parser import COMMANDS, build_parser
from tests.clirun import run_cli
from tests.gitrepo import RepoBuilder, make_repo


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    make_repo(tmp_path / "r", {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    return tmp_path / "r"


@pytest.mark.parametrize(
    "args, message",
    [
        (("nope",), "reviewui: unknown branch: nope"),
        (("agent/work", "--base", "nope"), "reviewui: unknown base: nope"),
        (("agent/work", "--file", "missing.py"), "reviewui: not a changed file: missing.py"),
        (("check", "agent/work", "--jobs", "0"), "reviewui: argument --jobs: must be at least 1: 0"),
        (("open", "agent/work", "--transcript", "missing.jsonl"), "reviewui: no such transcript: missing.jsonl"),
    ],
)
def test_user_errors_are_one_line(repo: Path, args: tuple[str, ...], message: str) -> None:
    proc = run(*args, cwd=repo)
    assert proc.returncode == 2
    assert proc.stderr.strip() == message
    assert "Traceback" not in proc.stderr


def test_not_a_repo(tmp_path: Path) -> None:
    proc = run(cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"reviewui: not a git repository: {tmp_path}"


def test_bare_repo(tmp_path: Path, repo: Path) -> None:
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(tmp_path / "b.git")], check=True)
    proc = run("--repo", str(tmp_path / "b.git"), cwd=tmp_path)
    assert proc.returncode == 2 and "bare repository" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_empty_repo(tmp_path: Path) -> None:
    RepoBuilder(tmp_path / "e")
    proc = run(cwd=tmp_path / "e")
    assert proc.returncode == 2 and proc.stderr.strip() == f"reviewui: repository has no commits yet: {tmp_path / 'e'}"


def test_bad_config_is_one_line(tmp_path: Path) -> None:
    # The base commit's config is read (a working-tree file is not, since issue 13).
    repo = tmp_path / "r"
    make_repo(repo, {"a.py": "A = 1\n", ".reviewui.toml": "test-command = [\n"}, {"a.py": "A = 2\n"})
    proc = run("agent/work", "--file", "a.py", cwd=repo)
    assert proc.returncode == 2
    assert proc.stderr.startswith("reviewui: config: .reviewui.toml is not valid TOML")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_unknown_theme_lists_the_themes_before_the_app_opens(repo: Path) -> None:
    proc = run("agent/work", "--theme", "nosuch", cwd=repo)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("reviewui: unknown theme 'nosuch'; choose from: ")
    assert "reviewui-dark" in line and "reviewui-light" in line
    assert "\x1b[" not in proc.stdout  # the app never took over the terminal


def test_help_lists_every_command_though_each_command_builds_only_its_own_parser(
        capsys: pytest.CaptureFixture[str]) -> None:
    # main() builds only the named subcommand's parser (issue 16: 14 ms before the first paint);
    # the top-level help still shows them all, and each still parses its own flags.
    from reviewui.cli import main

    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    listed = capsys.readouterr().out
    for name in COMMANDS:
        assert f"    {name} " in listed
    assert set(build_parser(only="open")._subparsers._group_actions[0].choices) == {"open"}  # type: ignore[union-attr]
    with pytest.raises(SystemExit) as e:
        main(["log", "--format", "yaml"])
    assert e.value.code == 2
    assert "argument --format: invalid choice: 'yaml'" in capsys.readouterr().err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_argument_of_every_command_says_what_it_is_for(command: str) -> None:
    # `reviewui COMMAND --help` is the manual at hand: an option listed bare (`--task TEXT`)
    # leaves the reviewer to guess, or to read the source.
    sub = next(a for a in build_parser(only=command)._actions if isinstance(a, argparse._SubParsersAction))
    bare = [a.option_strings or [a.dest] for a in sub.choices[command]._actions
            if not (a.help or "").strip() and not isinstance(a, argparse._HelpAction)]
    assert bare == []
