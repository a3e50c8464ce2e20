"""The runner on hostile test code: secrets, floods, hangs with grandchildren, JUnit node ids."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.run import sandbox
from reviewui.core.run.runner import OUTPUT_CAP, run_tests
from reviewui.core.run.sandbox_env import is_secret_name, scrubbed_env
from tests.core.bite.helpers import Watch, alive, use_venv_python

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _venv(monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)



def test_secrets_are_not_visible_to_tests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "GITHUB_TOKEN": "ghp_leak1", "AWS_ACCESS_KEY_ID": "AKIALEAK2", "MY_API_KEY": "leak3",
        "DB_PASSWORD": "leak4", "OPENAI_ORG": "leak5", "ANTHROPIC_X": "leak6", "GH_HOST": "leak7",
        "SOME_SECRET": "leak8", "CREDENTIALS_FILE": "leak9", "KEEP_TOKEN": "allowed-by-config",
    }
    for k, v in secrets.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("HARMLESS", "visible")
    # Shown in the output: the run's writes to its tree stay in the sandbox (run/storage.py).
    write(tmp_path, {"tests/test_env.py": (
        "import json, os\n"
        # hex: the runner writes the run's own paths in its output as the host's
        "def test_dump():\n    print('ENV=' + json.dumps(dict(os.environ)).encode().hex())\n"
    )})
    res = run_tests(tmp_path, "python -m pytest -s", ["tests/test_env.py"], 60, env_allow=["KEEP_TOKEN"])
    assert res.returncode == 0, res.output
    env = json.loads(bytes.fromhex(res.output.split("ENV=", 1)[1].splitlines()[0]))
    dumped = json.dumps(env)
    for k, v in secrets.items():
        if k == "KEEP_TOKEN":
            assert env[k] == v
        else:
            assert k not in env and v not in dumped
    assert "HARMLESS" not in env  # an allowlist now: only what a run needs passes (was: every non-secret name)
    # The reviewer's PATH, less what the run cannot see (entries under their home would name it),
    # the interpreter's entries written where the run sees them (run/interp.py).
    assert env["PATH"] == sandbox.run_env({"PATH": sandbox.visible_path(
        os.environ["PATH"], "python", [Path(shutil.which("python") or "/").parent])}, "python")["PATH"]
    if not sys.prefix.startswith("/reviewui/python"):  # (already there when run in reviewui's sandbox)
        assert sys.prefix not in env["PATH"] and sys.prefix not in env.get("VIRTUAL_ENV", "")
    assert env["HOME"] != os.environ["HOME"] and not os.path.exists(env["HOME"])  # temp HOME, removed after
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_secret_names() -> None:
    assert is_secret_name("github_token") and is_secret_name("AWS_REGION") and is_secret_name("X_PASSWORD")
    assert not is_secret_name("PATH") and not is_secret_name("LANG")
    env = scrubbed_env("/h", base={"PATH": "/bin", "A_SECRET": "s", "PYTEST_CURRENT_TEST": "x",
                                   "SSH_AUTH_SOCK": "/run/a", "DATABASE_URL": "pg://u:p@h", "LC_ALL": "C"})
    assert env["PATH"] == "/bin" and "A_SECRET" not in env and "PYTEST_CURRENT_TEST" not in env
    assert "SSH_AUTH_SOCK" not in env and "DATABASE_URL" not in env and env["LC_ALL"] == "C"


def test_flood_is_capped(tmp_path: Path) -> None:
    write(tmp_path, {"flood.py": (
        "import sys\nchunk = 'x' * 1023 + '\\n'\n"
        "sys.stdout.write('HEAD-MARK\\n')\n"
        "for _ in range(40 * 1024):\n    sys.stdout.write(chunk)\n"
        "sys.stdout.write('TAIL-MARK\\n')\n"
    )})
    res = run_tests(tmp_path, "python flood.py", timeout=60)
    assert res.returncode == 0
    assert res.output_bytes > 40 * 1024 * 1024
    assert len(res.output) < 2 * OUTPUT_CAP + 200
    assert res.output.startswith("HEAD-MARK") and res.output.rstrip().endswith("TAIL-MARK")
    assert "bytes of output dropped" in res.output


def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    # The run is in its own PID namespace: its grandchild is found by this tag, one of this process's
    # own (another suite on the machine running this test at once would otherwise be seen too).
    tag = f"300.{os.getpid() % 1000000:06d}"
    write(tmp_path, {"tests/test_hang.py": (
        "import os, subprocess, time\n"
        "def test_hang():\n"
        f"    child = subprocess.Popen(['sleep', {tag!r}])\n"
        "    time.sleep(300)\n"
    )})
    start = time.monotonic()
    with Watch(tag) as watch:
        # 8 s, not 3: under a loaded machine pytest (with this venv's plugins) may need more than 3 s
        # to reach the test, and then there is no grandchild to find
        res = run_tests(tmp_path, "python -m pytest", ["tests/test_hang.py"], timeout=8)
    assert res.timed_out and res.returncode is None
    assert time.monotonic() - start < 15
    [(child, me)] = watch.seen.items()
    deadline = time.monotonic() + 5
    while (alive(me) or alive(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(me) and not alive(child)


def test_cancel_stops_promptly(tmp_path: Path) -> None:
    import threading

    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    start = time.monotonic()
    res = run_tests(tmp_path, "sleep 60", timeout=None, cancel=cancel)
    assert res.cancelled and time.monotonic() - start < 5


def test_junit_node_ids_and_messages(tmp_path: Path) -> None:
    write(tmp_path, {
        "tests/sub/test_ids.py": (
            "import pytest\n"
            "class TestC:\n    def test_m(self):\n        assert 1 == 2, 'first line\\nsecond line'\n"
            "@pytest.mark.parametrize('v', [1, 'a.b'])\n"
            "def test_p(v):\n    assert v == 1\n"
            "def test_ok():\n    pass\n"
            "def test_name():\n    undefined_thing\n"
            "@pytest.fixture\ndef bad():\n    raise RuntimeError('fixture broke')\n"
            "def test_setup(bad):\n    pass\n"
            "def test_skip():\n    pytest.skip('nope')\n"
            "def test_markup():\n    assert '[bold red]x[/bold red]' == '\\x1b[31m'\n"
        ),
    })
    res = run_tests(tmp_path, "python -m pytest", ["tests/sub/test_ids.py"], 60)
    got = {t.id: t for t in res.tests}
    assert res.returncode == 1
    f = "tests/sub/test_ids.py"
    assert got[f"{f}::TestC::test_m"].outcome == "failed"
    assert got[f"{f}::TestC::test_m"].message.startswith("AssertionError: first line")
    assert "second line" not in got[f"{f}::TestC::test_m"].message
    assert got[f"{f}::test_p[1]"].outcome == "passed"
    assert got[f"{f}::test_p[a.b]"].outcome == "failed"
    assert got[f"{f}::test_ok"].outcome == "passed"
    assert got[f"{f}::test_name"].exception == "NameError"
    assert got[f"{f}::test_setup"].outcome == "error" and "fixture broke" in got[f"{f}::test_setup"].message
    assert got[f"{f}::test_skip"].outcome == "skipped"
    assert got[f"{f}::test_markup"].outcome == "failed"


def test_collection_error_is_marked(tmp_path: Path) -> None:
    write(tmp_path, {"tests/test_bad.py": "from nowhere_at_all import thing\n\ndef test_x():\n    pass\n"})
    res = run_tests(tmp_path, "python -m pytest", ["tests/test_bad.py"], 60)
    assert res.returncode == 2
    [t] = res.tests
    assert t.collection and t.outcome == "error" and "nowhere_at_all" in t.message


def test_non_pytest_command_exit_code_only(tmp_path: Path) -> None:
    res = run_tests(tmp_path, ["sh", "-c", 'printf "%s" "$REVIEWUI_TEST_PATHS"; exit 3'], ["a", "b"], 30)
    assert res.returncode == 3 and not res.pytest and res.tests == ()
    assert res.output == "a\nb"


def test_unstartable_command_is_a_review_error(tmp_path: Path) -> None:
    with pytest.raises(ReviewError, match="cannot start"):
        run_tests(tmp_path, "definitely-not-a-command-xyz", timeout=5)
    with pytest.raises(ReviewError, match="cannot parse"):
        run_tests(tmp_path, "python -c 'unterminated", timeout=5)


def test_a_hosting_reviewuis_coverage_harness_is_not_inherited() -> None:
    """reviewui's own suite runs reviewui: its runs must not load the outer baseline's coverage plugin."""
    env = scrubbed_env("/h", base={"PATH": "/bin", "PYTEST_PLUGINS": "mine,reviewui_covctx",
                                   "REVIEWUI_COV_SEEN": "/w/seen.txt", "COVERAGE_CORE": "sysmon"})
    assert env["PYTEST_PLUGINS"] == "mine"
    assert "REVIEWUI_COV_SEEN" not in env and "COVERAGE_CORE" not in env
    assert "PYTEST_PLUGINS" not in scrubbed_env("/h", base={"PYTEST_PLUGINS": "reviewui_covctx"})


def test_an_outer_runs_plugins_and_harness_vars_are_not_inherited() -> None:
    # reviewui's own suite run by reviewui: the inner run cannot see (or use) the outer run's plugins.
    env = scrubbed_env("/h", base={"PATH": "/bin", "PYTEST_PLUGINS": "mine,reviewui_origin,reviewui_guard_batch",
                                   "REVIEWUI_ORIGIN_OUT": "/tmp/x/origin.json", "REVIEWUI_GUARD_BATCH": "/tmp/x/b"})
    assert env["PYTEST_PLUGINS"] == "mine"
    assert "REVIEWUI_ORIGIN_OUT" not in env and "REVIEWUI_GUARD_BATCH" not in env


def test_harness_variables_are_dropped_even_when_the_reviewer_allows_them() -> None:
    # An outer run of reviewui's own suite sets them; an inner run must set its own or none:
    # an inherited quiet stop would end every inner run at its first collection error.
    harness = {"REVIEWUI_QUIET_STOP": "1", "REVIEWUI_GUARD_BATCH": "/tmp/x/b", "COVERAGE_RCFILE": "/tmp/x/rc"}
    env = scrubbed_env("/h", allow=[*harness, "MY_VAR"], base={**harness, "MY_VAR": "x"})
    assert env["MY_VAR"] == "x" and not set(harness) & set(env)


def test_hypothesis_keeps_its_storage_in_the_private_home_not_the_tree() -> None:
    """`.hypothesis/` in the tree changed it under a batch session's other forks: every guard then ran alone."""
    env = scrubbed_env("/run/home/", base={"PATH": "/bin", "HYPOTHESIS_STORAGE_DIRECTORY": "/tree/.hypothesis"})
    assert env["HYPOTHESIS_STORAGE_DIRECTORY"] == "/run/home/.hypothesis"  # an unallowed value never passes
    allowed = scrubbed_env("/h", allow=["HYPOTHESIS_STORAGE_DIRECTORY"],
                           base={"HYPOTHESIS_STORAGE_DIRECTORY": "/reviewer/hyp"})
    assert allowed["HYPOTHESIS_STORAGE_DIRECTORY"] == "/reviewer/hyp"  # the reviewer's own, let through
