"""A hostile branch, built from real attacks, run through bite (cold and warm) and probe.

The branch's test tries to leave the clean room: git in its scratch aimed at
the reviewer's repository (config, refs, notes, hooks, stash, checkout files),
environment canaries outside the allowlist, the reviewer's home by absolute
path, /proc/<parent>/environ, a server on the host's loopback, a `setsid`
daemon. Each attempt that succeeds fails the test (so the baseline would not be
green); the host then checks a fingerprint of the reviewer's repository and
that the daemon is gone. Limits (memory, disk) and the forged `git diff --quiet`
bite are checked on their own.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from reviewui.core.run import storage
from reviewui.core.run.runner import run_tests
from tests.core.bite.helpers import Watch, load, marked, use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
CANARIES = {"SSH_AUTH_SOCK": "/tmp/agent.canary", "DATABASE_URL": "postgres://u:canary-pw@db/x",
            "NPM_CONFIG__AUTH": "canary-npm", "SLACK_WEBHOOK_URL": "https://hooks/canary",
            "DOCKER_AUTH_CONFIG": "canary-docker", "PGPASS": "canary-pg", "SENTRY_DSN": "https://canary@s/1"}

ATTACK = '''import json, os, socket, subprocess
from pkg.calc import add

REPO = {repo!r}
HOME_SECRET = {home_secret!r}
PORT = {port}
CANARIES = {canaries!r}
OUTSIDE = os.environ.get("PROBE_OUTSIDE") == "1"  # the differential run on the host: read-only probes only


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True)


def test_escape_attempts():
    add(1, 2)
    stolen = []
    # git: from the scratch's own repository, and aimed at the reviewer's by absolute path
    common = git("rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip()
    for gd in ({{common, REPO + "/.git"}} if not OUTSIDE else ()):
        env = dict(os.environ, GIT_DIR=gd)
        for args in (["config", "core.fsmonitor", "touch /tmp/pwned"], ["config", "alias.st", "!id"],
                     ["update-ref", "refs/heads/main", "HEAD"], ["branch", "-D", "main"],
                     ["notes", "--ref=reviewui", "add", "-f", "-m", "approve", "HEAD"], ["stash", "drop"]):
            subprocess.run(["git", *args], env=env, capture_output=True)
        try:
            os.makedirs(gd + "/hooks", exist_ok=True)
            open(gd + "/hooks/post-checkout", "w").write("#!/bin/sh\\ntouch /tmp/pwned\\n")
        except OSError:
            pass
    for path in (REPO + "/pkg/calc.py", REPO + "/planted.txt", REPO + "/.git/info/attributes") if not OUTSIDE else ():
        try:
            open(path, "a").write("# pwned\\n")
        except OSError:
            pass
    # secrets: environment, the reviewer's home, the parent's environ
    stolen += [k for k, v in CANARIES.items() if os.environ.get(k) == v]
    for secret in (HOME_SECRET, REPO + "/.git/config"):
        try:
            stolen.append(open(secret).read())
        except OSError:
            pass
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                data = open(f"/proc/{{pid}}/environ", "rb").read()
            except OSError:
                continue
            stolen += [k for k, v in CANARIES.items() if v.encode() in data]
    # network: the host's loopback must be unreachable, our own loopback must work
    try:
        socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
        stolen.append("reached the host's loopback")
    except OSError:
        pass
    inner = socket.socket(); inner.bind(("127.0.0.1", 0)); inner.listen(1)
    socket.create_connection(inner.getsockname(), timeout=2).close()
    # a daemon that leaves the process group and session
    if not OUTSIDE:
        subprocess.Popen(["setsid", "-f", "sleep", {tag!r}])
    print("STOLEN=" + json.dumps(stolen).encode().hex())
    assert stolen == []
'''


def _accept(host: socket.socket, n: int) -> None:
    """Accept up to `n` connections until the socket is closed."""
    try:
        for _ in range(n):
            host.accept()
    except OSError:
        pass


def fingerprint(root: Path) -> str:
    """HEAD, refs (notes and stash too), .git/config, hooks, info/ and every working-tree file, hashed."""
    h = hashlib.sha256()
    git = lambda *a: subprocess.run(["git", *a], cwd=root, capture_output=True).stdout  # noqa: E731
    h.update(git("rev-parse", "HEAD") + git("for-each-ref") + git("stash", "list") + git("worktree", "list"))
    for p in sorted(root.rglob("*")):
        if p.is_file() and "objects" not in p.relative_to(root).parts:
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    use_venv_python(monkeypatch)
    for k, v in CANARIES.items():
        monkeypatch.setenv(k, v)
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("CANARY-PRIVATE-KEY")
    monkeypatch.setenv("HOME", str(home))
    host = socket.socket()
    host.bind(("127.0.0.1", 0))
    host.listen(8)
    threading.Thread(target=_accept, args=(host, 8), daemon=True).start()
    root = tmp_path / "repo"
    tag = f"77.{os.getpid() % 10**6:06d}"
    test = ATTACK.format(repo=str(root), home_secret=str(home / ".ssh" / "id_rsa"),
                         port=host.getsockname()[1], canaries=CANARIES, tag=tag)
    rb = make_repo(root, {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n"},
                   {"pkg/calc.py": "def add(a, b):\n    return a + b\n", "tests/test_attack.py": test})
    rb.git("stash", "list")
    yield rb, tag
    host.close()


def test_outside_the_sandbox_the_probes_steal(hostile) -> None:
    """The differential: the attack's read-only probes, run on the host (the branch checked out, the
    reviewer's environment), steal what the sandbox keeps from a run; its writes are not run there."""
    rb, tag = hostile
    before = fingerprint(rb.root)
    show = rb.git("show", "agent/work:tests/test_attack.py")
    probe = rb.root.parent / "outside" / "test_attack.py"
    probe.parent.mkdir()
    probe.write_text(show)
    (probe.parent / "pkg").mkdir()
    (probe.parent / "pkg" / "__init__.py").write_text("")
    (probe.parent / "pkg" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    env = {**os.environ, "PROBE_OUTSIDE": "1", "PYTHONPATH": str(probe.parent)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_attack.py"],
                          cwd=probe.parent, env=env, capture_output=True, text=True, timeout=120)
    stolen = json.loads(bytes.fromhex(done.stdout.split("STOLEN=", 1)[1].split()[0]))
    assert done.returncode == 1, done.stdout[-1500:]
    assert set(CANARIES) <= set(stolen), stolen  # the environment, and /proc/<pid>/environ
    assert "CANARY-PRIVATE-KEY" in stolen and "reached the host's loopback" in stolen, stolen
    assert any("[core]" in x for x in stolen), stolen  # the reviewer's .git/config
    assert fingerprint(rb.root) == before  # the outside run changed nothing


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_bite_cannot_leave_the_clean_room(hostile, warm: bool) -> None:
    rb, tag = hostile
    before = fingerprint(rb.root)
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=warm), jobs=1)
    assert rep.baseline.status == "green", rep.baseline.output  # every attempt failed inside
    assert [r.verdict for r in rep.results] == ["toothless"]  # (the attack test checks nothing of add)
    assert fingerprint(rb.root) == before
    assert not marked(tag), "a setsid daemon outlived the run"
    assert not Path("/tmp/pwned").exists()


def test_probe_cannot_leave_the_clean_room(hostile) -> None:
    rb, tag = hostile
    before = fingerprint(rb.root)
    probe = rb.root.parent / "probe_attack.py"
    probe.write_text((rb.root / "tests" / "test_attack.py").read_text() if (rb.root / "tests").exists() else
                     rb.git("show", "agent/work:tests/test_attack.py"))
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    proc = subprocess.run([sys.executable, "-m", "reviewui", "probe", "agent/work", "--file", str(probe),
                           "--format", "json"], cwd=rb.root, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert report["branch"]["status"] == "passed", proc.stdout  # every attempt failed inside
    assert fingerprint(rb.root) == before
    assert not marked(tag)


def test_forged_git_diff_bite_is_toothless(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that only asks git whether the tree changed cannot tell a reverted hunk from the real one."""
    use_venv_python(monkeypatch)
    forged = ("import subprocess\nfrom pkg.calc import add\n\n\ndef test_forged():\n    add(1, 2)\n"
              "    assert subprocess.run(['git', 'diff', '--quiet', 'HEAD']).returncode == 0\n")
    rb = make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n"},
                   {"pkg/calc.py": "def add(a, b):\n    return a + b\n", "tests/test_forged.py": forged})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=False), jobs=1)
    assert rep.baseline.status == "green", rep.baseline.output
    assert [r.verdict for r in rep.results] == ["toothless"]


def test_forged_git_diff_guard_is_toothless(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same forgery against guard reverts: a guard edit is committed too, so git sees no change."""
    use_venv_python(monkeypatch)
    forged = ("import subprocess\nfrom pkg.calc import clamp\n\n\ndef test_forged():\n    clamp(-1)\n    clamp(5)\n"
              "    assert subprocess.run(['git', 'diff', '--quiet', 'HEAD']).returncode == 0\n")
    rb = make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/calc.py": "X = 1\n"},
                   {"pkg/calc.py": "X = 1\n\n\ndef clamp(x):\n    if x < 0:\n        return 0\n    return x\n",
                    "tests/test_forged.py": forged})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=False), jobs=1, guards=True)
    assert rep.baseline.status == "green", rep.baseline.output
    guards = rep.results[0].guards
    assert guards and {g.verdict for g in guards} == {"toothless"}, [(g.description, g.verdict) for g in guards]


def test_memory_hog_is_graded_memory_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    monkeypatch.setenv("REVIEWUI_MEMORY_LIMIT", "1G")
    (tmp_path / "test_hog.py").write_text("def test_hog():\n    b = bytearray(3 * 1024 ** 3)\n")
    res = run_tests(tmp_path, "python -m pytest", ["test_hog.py"], 120)
    assert res.returncode == 1 and res.limit == "memory limit", res.output


def test_disk_filler_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    monkeypatch.setenv("REVIEWUI_DISK_LIMIT", "64M")
    (tmp_path / "test_fill.py").write_text(
        "def test_fill():\n    with open('big.bin', 'wb') as f:\n"
        "        for _ in range(256):\n            f.write(b'x' * 1024 * 1024)\n")
    res = run_tests(tmp_path, "python -m pytest", ["test_fill.py"], 120)
    # 1: the file-size limit failed the test first; None: reviewui stopped the run at the disk limit
    assert res.returncode in (1, None) and res.limit == "disk limit", res.output
    if storage.level() == "tmpfs":
        assert not (tmp_path / "big.bin").exists()  # the run wrote into its tmpfs copy, never the host's tree
    else:
        assert (tmp_path / "big.bin").stat().st_size <= 64 * 1024 * 1024


def test_without_bwrap_reviewui_refuses_unless_the_reviewer_opts_in(tmp_path: Path) -> None:
    """REVIEWUI_NO_BWRAP=1 stands for a machine where bubblewrap cannot run."""
    rb = make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n"},
                   {"pkg/calc.py": "def add(a, b):\n    return a + b\n",
                    "tests/test_calc.py": "from pkg.calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"})
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "REVIEWUI_NO_BWRAP": "1",
           "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]}
    cmd = [sys.executable, "-m", "reviewui", "bite", "agent/work", "--format", "json", "--jobs", "1"]
    refused = subprocess.run(cmd, cwd=rb.root, env=env, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "without a sandbox" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    allowed = subprocess.run([*cmd, "--unsandboxed"], cwd=rb.root, env=env, capture_output=True, text=True,
                             timeout=300)
    assert allowed.returncode == 0, allowed.stderr
    assert [r["verdict"] for r in json.loads(allowed.stdout)["hunks"]] == ["bites"]
    assert json.loads(allowed.stdout)["sandbox"] == "none"  # the evidence says how it was produced
    text = subprocess.run([*cmd[:-4], "--jobs", "1", "--unsandboxed"], cwd=rb.root, env=env, capture_output=True,
                          text=True, timeout=300)
    assert "sandbox: NONE" in text.stdout, text.stdout


def test_bite_of_a_memory_hog_is_broken_with_reason_memory_limit(tmp_path: Path, monkeypatch) -> None:
    """Reverting the hunk makes the code ask for 3 GiB: graded honestly, not as a bite."""
    use_venv_python(monkeypatch)
    monkeypatch.setenv("REVIEWUI_MEMORY_LIMIT", "1G")
    rb = make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/buf.py": "def make():\n    return bytearray(3 * 1024 ** 3)\n"},
                   {"pkg/buf.py": "def make():\n    return bytearray(16)\n",
                    "tests/test_buf.py": "from pkg.buf import make\n\ndef test_make():\n    assert len(make()) >= 0\n"})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=False), jobs=1)
    assert rep.baseline.status == "green", rep.baseline.output
    [r] = rep.results
    assert (r.verdict, r.reason) == ("broken", "memory limit"), r


def test_a_junit_report_swapped_for_a_symlink_or_fifo_is_not_read(tmp_path: Path) -> None:
    """The run can write where its report goes; reviewui reads only a regular file (a FIFO would hang it)."""
    from reviewui.core.run.junit import JUnitError, parse_junit

    secret = tmp_path / "secret.xml"
    secret.write_text('<testsuite><testcase classname="x" name="leak"/></testsuite>')
    link = tmp_path / "junit.xml"
    link.symlink_to(secret)
    fifo = tmp_path / "fifo.xml"
    os.mkfifo(fifo)
    for path in (link, fifo):
        with pytest.raises(JUnitError, match="not a regular file"):
            parse_junit(path)


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_setsid_and_double_fork_daemons_die_with_the_run(tmp_path: Path, monkeypatch, warm: bool) -> None:
    from reviewui.core.run.warm_runner import WarmPytest

    use_venv_python(monkeypatch)
    tag = f"88.{os.getpid() % 10**6:06d}{int(warm)}"
    root = tmp_path / "slot" / "tree"
    root.mkdir(parents=True)
    (root / "test_daemon.py").write_text(
        "import os, subprocess, time\n\ndef test_daemon():\n"
        # a setsid daemon (not via `setsid -f`, whose short-lived launcher also carries the tag)
        f"    subprocess.Popen(['sleep', {tag!r}], start_new_session=True)\n"
        "    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n"
        f"            os.execvp('sleep', ['sleep', {tag + '1'!r}])\n        os._exit(0)\n"
        "    def mine():\n"
        "        found = 0\n"
        "        for p in os.listdir('/proc'):\n"
        "            try:\n"
        f"                found += p.isdigit() and open(f'/proc/{{p}}/cmdline', 'rb').read().startswith(b'sleep\\0{tag}')\n"
        "            except OSError:\n"
        "                pass\n"
        "        return found\n"
        "    deadline = time.monotonic() + 20\n"
        "    while mine() < 2 and time.monotonic() < deadline:\n"
        "        time.sleep(0.05)\n"
        "    time.sleep(0.2)  # the host's watch polls every 20 ms\n")
    server = WarmPytest(sys.executable) if warm else None
    try:
        with Watch(tag) as watch:
            res = run_tests(root, [sys.executable, "-m", "pytest"], ["test_daemon.py"], 60, warm=server)
        assert res.returncode == 0 and res.warm == warm, res.output
        assert len(watch.seen) == 2  # both daemons ran
        deadline = __import__("time").monotonic() + 3
        while marked(tag) and __import__("time").monotonic() < deadline:
            pass
        assert not marked(tag), "a daemon outlived its run"
        if server is not None:  # and the server still serves
            assert run_tests(root, [sys.executable, "-m", "pytest"], ["test_daemon.py"], 60, warm=server).warm
    finally:
        if server is not None:
            server.close()
