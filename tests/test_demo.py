"""The demo samples: deterministic builds, and the story shape each sample must keep.

The shapes are checked by running the built branches (pytest in a scratch
worktree of the built repository, never inside sample_repos/), so a sample
that drifts from its story fails here rather than in a demo.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui import demo
from reviewui.core.errors import ReviewError

SAMPLES_DIR = Path(__file__).resolve().parents[1] / "sample_repos"

COMMITS = {
    "01-trim-reasoning": {"agent/trim-reasoning": 2, "fix/trim-reasoning": 4},
    "02-add-stopped": {"agent/add-stopped": 1},
    "03-null-guard": {"agent/null-guard": 1},
    "04-capped-backoff": {"agent/capped-backoff": 1},
}
OPENS = {
    "01-trim-reasoning": "agent/trim-reasoning",
    "02-add-stopped": "agent/add-stopped",
    "03-null-guard": "agent/null-guard",
    "04-capped-backoff": "agent/capped-backoff",
}


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def refs(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")


def checkout(sample: demo.BuiltSample, ref: str, where: Path) -> Path:
    """A scratch worktree of `ref` in the built repo (the reviewer's checkout stays on main)."""
    git(sample.repo_dir, "worktree", "add", "-q", "--detach", str(where), ref)
    return where


def pytest_in(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    # The sample suites need no plugins; skipping the venv's keeps each run fast and isolated.
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", *args],
        cwd=tree, env=env, capture_output=True, text=True, timeout=120,
    )


def python_in(tree: Path, code: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def added_lines(repo: Path, a: str, b: str, path: str = "") -> list[str]:
    out = git(repo, "diff", "-U0", a, b, *(["--", path] if path else []))
    return [ln[1:] for ln in out.splitlines() if ln.startswith("+") and not ln.startswith("+++")]


def removed_lines(repo: Path, a: str, b: str, path: str) -> list[str]:
    out = git(repo, "diff", "-U0", a, b, "--", path)
    return [ln[1:] for ln in out.splitlines() if ln.startswith("-") and not ln.startswith("---")]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, demo.BuiltSample]:
    return {b.name: b for b in demo.build_all(tmp_path_factory.mktemp("demo"))}


def copy_samples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of sample_repos/ that demo reads instead of the real one."""
    copy = tmp_path / "samples"
    shutil.copytree(SAMPLES_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(demo, "_packaged_root", lambda: copy)
    return copy


# -- building -----------------------------------------------------------------


def test_sample_names_in_build_order() -> None:
    assert demo.sample_names() == list(COMMITS)


def test_builds_are_identical_across_runs_and_directories(tmp_path: Path, built) -> None:
    again = {b.name: b for b in demo.build_all(tmp_path / "elsewhere" / "deeper")}
    assert again.keys() == built.keys()
    for name, first in built.items():
        assert refs(again[name].repo_dir) == refs(first.repo_dir), name
        assert again[name].repo_dir != first.repo_dir


def test_branches_commit_counts_and_checkout_state(built) -> None:
    for name, branches in COMMITS.items():
        b = built[name]
        repo = b.repo_dir
        assert b.repo_dir.name == name
        assert b.branches == tuple(branches)
        assert b.branch == OPENS[name]
        assert b.description
        assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
        assert git(repo, "rev-list", "--count", "main") == "1"
        for branch, count in branches.items():
            assert git(repo, "rev-list", "--count", f"main..{branch}") == str(count), (name, branch)
            assert git(repo, "merge-base", "main", branch) == git(repo, "rev-parse", "main")
        # Transcript and task are present but untracked and ignored: the diff never shows them.
        assert git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored=no") == ""
        assert b.transcript_path.parent == repo / ".reviewui"
        assert b.task_path == repo / ".reviewui" / "task.md"
        assert b.transcript_path.read_bytes() == (SAMPLES_DIR / name / b.transcript_path.name).read_bytes()
        assert b.task_path.read_text(encoding="utf-8").strip()
        git(repo, "check-ignore", "-q", ".reviewui/task.md")
        assert ".reviewui" not in git(repo, "log", "--all", "--name-only", "--format=")


def test_rebuild_replaces_an_earlier_demo_but_not_a_stranger(tmp_path: Path, built) -> None:
    first = demo.build_sample("02-add-stopped", tmp_path)
    (first.repo_dir / "scratch.txt").write_text("reviewer's note", encoding="utf-8")
    second = demo.build_sample("02-add-stopped", tmp_path)
    assert refs(second.repo_dir) == refs(built["02-add-stopped"].repo_dir)
    assert not (second.repo_dir / "scratch.txt").exists()

    stranger = tmp_path / "03-null-guard"
    stranger.mkdir()
    (stranger / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ReviewError, match="not empty"):
        demo.build_sample("03-null-guard", tmp_path)
    assert (stranger / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_unknown_sample_lists_the_names(tmp_path: Path) -> None:
    with pytest.raises(ReviewError) as err:
        demo.build_sample("[bold red]x[/bold red]\x1b[31m", tmp_path)
    for name in COMMITS:
        assert name in str(err.value)
    assert not any(tmp_path.iterdir())


def test_users_git_config_cannot_change_or_block_the_build(tmp_path: Path, monkeypatch, built) -> None:
    home = tmp_path / "home"
    hooks = home / "hooks"
    hooks.mkdir(parents=True)
    for hook in ("pre-commit", "commit-msg", "post-commit"):
        (hooks / hook).write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
        (hooks / hook).chmod(0o755)
    # Each of these would change the SHAs (an encoding header, a clean filter rewriting
    # every blob) or block the commit, if the builder let the user's config in.
    (home / "attributes").write_text("* filter=shout\n", encoding="utf-8")
    (home / ".gitconfig").write_text(
        "[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n[core]\n\tautocrlf = true\n"
        f"\thooksPath = {hooks.as_posix()}\n\tattributesFile = {(home / 'attributes').as_posix()}\n"
        "[filter \"shout\"]\n\tclean = tr a-z A-Z\n\trequired = true\n"
        "[i18n]\n\tcommitEncoding = ISO-8859-1\n[init]\n\tdefaultBranch = trunk\n[user]\n\tname = Someone Else\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Not The Sample")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2001-01-01T00:00:00Z")
    b = demo.build_sample("01-trim-reasoning", tmp_path / "out")
    assert refs(b.repo_dir) == refs(built["01-trim-reasoning"].repo_dir)


def test_caches_and_crlf_in_the_sources_do_not_change_shas(tmp_path: Path, monkeypatch, built) -> None:
    copy = copy_samples(tmp_path, monkeypatch)
    base = copy / "03-null-guard" / "base"
    (base / "ledger" / "__pycache__").mkdir()
    (base / "ledger" / "__pycache__" / "writer.cpython-311.pyc").write_bytes(b"\x00\xff junk")
    (base / ".pytest_cache").mkdir()
    (base / ".pytest_cache" / "README.md").write_text("cache", encoding="utf-8")
    writer = base / "ledger" / "writer.py"
    writer.write_bytes(writer.read_bytes().replace(b"\n", b"\r\n"))
    b = demo.build_sample("03-null-guard", tmp_path / "out")
    assert refs(b.repo_dir) == refs(built["03-null-guard"].repo_dir)


def test_installed_package_data_is_preferred_over_the_checkout(tmp_path: Path, monkeypatch) -> None:
    only = tmp_path / "pkgdata"
    shutil.copytree(SAMPLES_DIR / "02-add-stopped", only / "02-add-stopped")
    monkeypatch.setattr(demo, "_packaged_root", lambda: only)
    assert demo.sample_names() == ["02-add-stopped"]
    monkeypatch.setattr(demo, "_packaged_root", lambda: None)
    assert demo.sample_names() == list(COMMITS)
    monkeypatch.setattr(demo, "_checkout_root", lambda: None)
    with pytest.raises(ReviewError, match="missing"):
        demo.sample_names()


@pytest.mark.parametrize(
    ("old", "new", "complaint"),
    [
        ('files = ["tests/test_trim_reasoning.py"]\n\n[[branches]]', 'files = []\n\n[[branches]]', "in no commit"),
        ('files = ["coder/history.py"]', 'files = ["coder/nowhere.py"]', "not in its overlay"),
        ('open = "agent/trim-reasoning"', 'open = "agent/missing"', "not one of its branches"),
        ('author = "coder-agent <agent@example.com>"', 'author = "no email here"', "Name <email>"),
        ("[[branches.commits]]", "[[branches.commits", "malformed"),
        ('start = "agent/trim-reasoning"', 'start = "later/branch"', "must be main or a branch"),
    ],
)
def test_malformed_samples_are_reported_before_anything_is_built(
    tmp_path: Path, monkeypatch, old: str, new: str, complaint: str
) -> None:
    copy = copy_samples(tmp_path, monkeypatch)
    spec = copy / "01-trim-reasoning" / "sample.toml"
    text = spec.read_text(encoding="utf-8")
    assert old in text
    spec.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(ReviewError, match=re.escape(complaint)):
        demo.build_sample("01-trim-reasoning", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_delete_list_and_stacked_branch(tmp_path: Path, monkeypatch, built) -> None:
    copy = copy_samples(tmp_path, monkeypatch)
    sample = copy / "02-add-stopped"
    (sample / "branches" / "agent__add-stopped" / "DELETE").write_text("# gone on the branch\nREADME.md\n", encoding="utf-8")
    stacked = sample / "branches" / "review__on-top"
    (stacked / "scripts").mkdir(parents=True)
    (stacked / "scripts" / "extra.py").write_text("X = 1\n", encoding="utf-8")
    with (sample / "sample.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[[branches]]\nname = "review/on-top"\nstart = "agent/add-stopped"\n\n[[branches.commits]]\nmessage = "extra"\n')
    b = demo.build_sample("02-add-stopped", tmp_path / "out")
    assert b.branches == ("agent/add-stopped", "review/on-top")
    repo = b.repo_dir
    assert git(repo, "diff", "--name-status", "main", "agent/add-stopped").splitlines() == [
        "D\tREADME.md", "M\tscripts/bench.py", "A\ttests/test_bench_row.py"
    ]
    assert git(repo, "rev-list", "--count", "main..review/on-top") == "2"
    assert git(repo, "rev-parse", "main") == git(built["02-add-stopped"].repo_dir, "rev-parse", "main")
    assert (repo / "README.md").is_file()  # left on main


# -- the transcripts agree with the branches ---------------------------------


def edit_texts(name: str, transcript: Path) -> tuple[list[str], set[str]]:
    """(new text of every edit tool call, repo paths written) for one sample's transcript."""
    texts: list[str] = []
    paths: set[str] = set()
    if name == "01-trim-reasoning":
        for line in transcript.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            content = (rec.get("message") or {}).get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_use" and block["name"] in ("Edit", "Write"):
                    inp = block["input"]
                    texts.append(inp.get("new_string", inp.get("content")))
                    paths.add(os.path.relpath(inp["file_path"], rec["cwd"]))
    elif name == "02-add-stopped":
        for line in transcript.read_text(encoding="utf-8").splitlines():
            p = json.loads(line)["payload"]
            if p.get("type") == "custom_tool_call" and p["name"] == "apply_patch":
                body = p["input"].splitlines()
                texts.append("\n".join(ln[1:] for ln in body if ln.startswith("+")))
                paths.update(ln.split(": ", 1)[1] for ln in body if ln.startswith(("*** Update File", "*** Add File")))
    else:
        for msg in json.loads(transcript.read_text(encoding="utf-8"))["messages"]:
            for call in msg.get("tool_calls") or []:
                args = json.loads(call["function"]["arguments"])
                if call["function"]["name"] == "str_replace_editor" and args["command"] in ("create", "str_replace"):
                    texts.append(args.get("new_str", args.get("file_text")))
                    paths.add(os.path.relpath(args["path"], "/workspace"))
    return texts, paths


@pytest.mark.parametrize("name", list(COMMITS))
def test_transcript_edits_account_for_every_added_line(name: str, built) -> None:
    b = built[name]
    texts, paths = edit_texts(name, b.transcript_path)
    written = {ln for t in texts for ln in t.splitlines()}
    diff_lines = added_lines(b.repo_dir, "main", b.branch)
    assert diff_lines
    missing = [ln for ln in diff_lines if ln.strip() and ln not in written]
    assert missing == []
    changed = set(git(b.repo_dir, "diff", "--name-only", "main", b.branch).splitlines())
    assert paths == changed


def test_transcripts_match_their_generator(monkeypatch, built) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # no __pycache__ inside sample_repos/
    spec = importlib.util.spec_from_file_location("make_transcripts", SAMPLES_DIR / "_tools" / "make_transcripts.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    one = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in gen.make_claude_code())
    assert one == (SAMPLES_DIR / "01-trim-reasoning" / "transcript.jsonl").read_text(encoding="utf-8")
    main_sha = git(built["02-add-stopped"].repo_dir, "rev-parse", "main")
    two = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in gen.make_codex(main_sha))
    assert two == (SAMPLES_DIR / "02-add-stopped" / "transcript.jsonl").read_text(encoding="utf-8")
    three = json.dumps(gen.make_openai(), ensure_ascii=False, indent=1) + "\n"
    assert three == (SAMPLES_DIR / "03-null-guard" / "transcript.json").read_text(encoding="utf-8")
    four = json.dumps(gen.make_backoff(), ensure_ascii=False, indent=1) + "\n"
    assert four == (SAMPLES_DIR / "04-capped-backoff" / "transcript.json").read_text(encoding="utf-8")


# -- every suite is green ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "ref", "passed"),
    [
        ("01-trim-reasoning", "main", 5),
        ("01-trim-reasoning", "agent/trim-reasoning", 7),
        ("01-trim-reasoning", "fix/trim-reasoning", 8),
        ("02-add-stopped", "main", 6),
        ("02-add-stopped", "agent/add-stopped", 7),
        ("03-null-guard", "main", 6),
        ("03-null-guard", "agent/null-guard", 7),
        ("04-capped-backoff", "main", 4),
        ("04-capped-backoff", "agent/capped-backoff", 10),
    ],
)
def test_every_suite_is_green(tmp_path: Path, built, name: str, ref: str, passed: int) -> None:
    proc = pytest_in(checkout(built[name], ref, tmp_path / "wt"))
    assert proc.returncode == 0, proc.stdout
    assert f"{passed} passed" in proc.stdout


# -- 01: the fixture dodges the bug; the guard's regression test bites ---------

PROBE = '''
from coder.history import NUDGE, Message, ToolCall, clear_truncated_reasoning


def test_probe_continuation_with_reasoning():
    messages = [
        Message("assistant", reasoning="wasted"),
        Message("user", NUDGE),
        Message("assistant", reasoning="short", tool_calls=[ToolCall("c", "run_tests")]),
    ]
    clear_truncated_reasoning(messages)
    assert (messages[0].reasoning, messages[2].reasoning) == ("", "short")
'''


def test_agent_fixture_has_no_continuation_with_reasoning(built) -> None:
    b = built["01-trim-reasoning"]
    source = git(b.repo_dir, "show", "agent/trim-reasoning:tests/test_trim_reasoning.py")
    calls = [
        n for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "Message"
    ]
    with_tools = [c for c in calls if any(k.arg == "tool_calls" for k in c.keywords)]
    assert with_tools, "the agent's fixture should have a continuation with a tool call"
    assert not any(k.arg == "reasoning" for c in with_tools for k in c.keywords)


def test_agent_and_fix_differ_by_one_condition(built) -> None:
    b = built["01-trim-reasoning"]
    assert git(b.repo_dir, "diff", "--numstat", "agent/trim-reasoning", "fix/trim-reasoning", "--", "coder/history.py") == (
        "1\t1\tcoder/history.py"
    )
    assert added_lines(b.repo_dir, "agent/trim-reasoning", "fix/trim-reasoning", "coder/history.py") == [
        '        if msg.role == "assistant" and msg.reasoning and not msg.tool_calls:'
    ]


@pytest.mark.slow
def test_probe_fails_on_agent_branch_and_passes_on_fix(tmp_path: Path, built) -> None:
    b = built["01-trim-reasoning"]
    agent = checkout(b, "agent/trim-reasoning", tmp_path / "agent")
    fix = checkout(b, "fix/trim-reasoning", tmp_path / "fix")
    for tree in (agent, fix):
        (tree / "tests" / "test_probe.py").write_text(PROBE, encoding="utf-8")
    on_agent = pytest_in(agent, "tests/test_probe.py")
    assert on_agent.returncode == 1
    assert "('wasted', '')" in on_agent.stdout  # the waste kept, the live reasoning cleared
    assert pytest_in(fix, "tests/test_probe.py").returncode == 0


@pytest.mark.slow
def test_fix_regression_test_bites_when_the_guard_is_removed(tmp_path: Path, built) -> None:
    tree = checkout(built["01-trim-reasoning"], "fix/trim-reasoning", tmp_path / "fix")
    history = tree / "coder" / "history.py"
    text = history.read_text(encoding="utf-8")
    assert text.count(" and not msg.tool_calls") == 1
    history.write_text(text.replace(" and not msg.tool_calls", ""), encoding="utf-8")
    proc = pytest_in(tree, "tests/test_trim_reasoning.py")
    assert proc.returncode == 1
    assert "1 failed, 2 passed" in proc.stdout
    assert "FAILED tests/test_trim_reasoning.py::test_continuation_keeps_its_own_short_reasoning" in proc.stdout


# -- 02: the field is never added; the new function is an uncalled duplicate ---


def normalized(fn: ast.FunctionDef) -> str:
    """The function's body with docstring dropped and every name replaced by its first-use order."""
    body = fn.body[1:] if ast.get_docstring(fn) else fn.body
    names: dict[str, str] = {a.arg: f"v{i}" for i, a in enumerate(fn.args.args)}
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.setdefault(node.id, f"v{len(names)}")
    text = ast.dump(ast.Module(body=body, type_ignores=[]))
    for old, new in names.items():
        text = text.replace(f"id='{old}'", f"id='{new}'")
    return text


def function(source: str, name: str) -> ast.FunctionDef:
    return next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == name)


def test_stopped_never_reaches_the_branch(built) -> None:
    b = built["02-add-stopped"]
    task = b.task_path.read_text(encoding="utf-8")
    assert "result.stopped" in task
    bench = git(b.repo_dir, "show", "agent/add-stopped:scripts/bench.py")
    assert "stopped" not in bench
    assert "stopped" not in "\n".join(added_lines(b.repo_dir, "main", "agent/add-stopped"))
    assert subprocess.run(
        ["git", "grep", "-q", "result.stopped", "agent/add-stopped"], cwd=b.repo_dir
    ).returncode == 1


@pytest.mark.slow
def test_run_row_has_no_stopped_key_on_the_branch(tmp_path: Path, built) -> None:
    tree = checkout(built["02-add-stopped"], "agent/add-stopped", tmp_path / "wt")
    keys = json.loads(python_in(tree, "import json; from scripts.bench import run; print(json.dumps(sorted(run('x'))))"))
    assert "task" in keys and "stopped" not in keys


def test_new_function_is_uncalled_and_duplicates_the_existing_check(built) -> None:
    b = built["02-add-stopped"]
    new = "reject_github_tokens_in_prompt"
    files = git(b.repo_dir, "ls-tree", "-r", "--name-only", "agent/add-stopped").splitlines()
    calls, imports = 0, []
    for path in (p for p in files if p.endswith(".py")):
        tree = ast.parse(git(b.repo_dir, "show", f"agent/add-stopped:{path}"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                calls += (isinstance(f, ast.Name) and f.id == new) or (isinstance(f, ast.Attribute) and f.attr == new)
            if isinstance(node, ast.ImportFrom) and any(a.name == new for a in node.names):
                imports.append(path)
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test") and new in node.name:
                pytest.fail(f"{path}:{node.name} is named after the function")
    assert calls == 0
    assert imports == ["tests/test_bench_row.py"]

    bench = git(b.repo_dir, "show", "agent/add-stopped:scripts/bench.py")
    guards = git(b.repo_dir, "show", "agent/add-stopped:vibe/guards.py")
    assert normalized(function(bench, new)) == normalized(function(guards, "has_github_token"))
    assert normalized(function(bench, new)) != normalized(function(guards, "check_prompt"))


def test_codex_run_ends_claiming_done_and_already_correct(built) -> None:
    b = built["02-add-stopped"]
    records = [json.loads(ln) for ln in b.transcript_path.read_text(encoding="utf-8").splitlines()]
    assert records[0]["type"] == "session_meta"
    assert records[0]["payload"]["git"]["commit_hash"] == git(b.repo_dir, "rev-parse", "main")
    final = [r["payload"] for r in records if r["payload"].get("phase") == "final_answer" and r["type"] == "response_item"]
    assert len(final) == 1
    text = final[0]["content"][0]["text"]
    assert text.startswith("Done") and "already correct" in text
    assert records[-1]["payload"] == {"type": "task_complete", "turn_id": records[-1]["payload"]["turn_id"], "last_agent_message": text}


# -- 03: three existing asserts edited; one undeclared write; uncached prompts --


def test_branch_edits_exactly_three_existing_asserts(built) -> None:
    b = built["03-null-guard"]
    removed = removed_lines(b.repo_dir, "main", "agent/null-guard", "tests/test_writer.py")
    assert len(removed) == 3
    assert all(ln.strip().startswith("assert ") for ln in removed)
    added = added_lines(b.repo_dir, "main", "agent/null-guard", "tests/test_writer.py")
    assert all(ln.replace('""', '"0.00"').replace(",,", ",0.00,") in added for ln in removed)


@pytest.mark.slow
def test_original_asserts_fail_against_the_branch_code(tmp_path: Path, built) -> None:
    b = built["03-null-guard"]
    tree = checkout(b, "agent/null-guard", tmp_path / "wt")
    (tree / "tests" / "test_writer.py").write_text(git(b.repo_dir, "show", "main:tests/test_writer.py") + "\n", encoding="utf-8")
    proc = pytest_in(tree)
    assert proc.returncode == 1
    assert "3 failed, 3 passed" in proc.stdout
    for test in ("test_format_amount_unknown_is_empty", "test_entry_row_pending_amount", "test_write_ledger_rows"):
        assert f"FAILED tests/test_writer.py::{test}" in proc.stdout


def test_touch_lines_miss_one_written_file(built) -> None:
    b = built["03-null-guard"]
    messages = json.loads(b.transcript_path.read_text(encoding="utf-8"))["messages"]
    declared = {
        m.group(1)
        for msg in messages if msg["role"] == "assistant"
        for m in re.finditer(r"^TOUCH: (\S+)$", msg.get("content") or "", re.M)
    }
    assert declared == {"ledger/writer.py", "tests/test_writer.py"}
    _, written = edit_texts("03-null-guard", b.transcript_path)
    assert written - declared == {"ledger/defaults.py"}
    changed = set(git(b.repo_dir, "diff", "--name-only", "main", "agent/null-guard").splitlines())
    assert changed == written


def test_every_prompt_starts_with_changing_metadata_and_nothing_is_cached(built) -> None:
    messages = json.loads(built["03-null-guard"].transcript_path.read_text(encoding="utf-8"))["messages"]
    prompts = [m["content"] for m in messages if m["role"] in ("system", "user")]
    firsts = [p.splitlines()[0] for p in prompts]
    assert all(re.fullmatch(r"\[session\] turn=\d+ ts=\d\d:\d\d:\d\d rules_hash=\w+", f) for f in firsts)
    assert len(set(firsts)) == len(firsts)
    usage = [m["usage"] for m in messages if m["role"] == "assistant"]
    assert len(usage) >= 10
    assert all(u["prompt_tokens_details"]["cached_tokens"] == 0 for u in usage)
    tokens = [u["prompt_tokens"] for u in usage]
    steps = [b - a for a, b in zip(tokens, tokens[1:], strict=False)]
    assert all(s > 0 for s in steps) and all(b > a for a, b in zip(steps, steps[1:], strict=False))
