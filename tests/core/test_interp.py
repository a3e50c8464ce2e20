"""A run sees its interpreter at neutral paths: the venv, the prefix, their files rewritten (run/interp.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from reviewui.core.run import interp, sandbox
from reviewui.core.run.runner import run_tests

SITE = sysconfig.get_paths()["purelib"]
# Run inside reviewui's own sandbox (bite-checking this suite), this Python already sits at the
# neutral paths: its prefix is then where runs see it, not a host path a run must not see.
MOVED_BASE = not sys.base_prefix.startswith(("/usr", interp.PYTHON))


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A venv of this interpreter (under the hidden tmp dir) that imports this venv's packages, with a
    console script, an `activate` naming it, a big file in bin, and .pth lines into three places."""
    root = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    site = next((root / "lib").glob("python*/site-packages"))
    other = tmp_path / "other"
    other.mkdir()
    (other / "other_mod.py").write_text("VALUE = 7\n")
    checkout = tmp_path / "checkout"
    (checkout / "src").mkdir(parents=True)
    (checkout / "src" / "checkout_mod.py").write_text("VALUE = 1\n")
    sandbox.hide(checkout)
    (site / "zz_dev.pth").write_text(f"{SITE}\n")
    (site / "extra.pth").write_text(f"{other}\n{checkout / 'src'}\nimport os\n")
    script = root / "bin" / "say-prefix"
    script.write_text(f"#!{root}/bin/python\nimport sys\nprint('PREFIX=' + sys.prefix)\n")
    script.chmod(0o755)
    (root / "bin" / "big.bin").write_bytes(b"\0" * (interp.COPY_LIMIT + 1))
    return root


def test_the_layout_names_only_neutral_paths(venv: Path) -> None:
    lay = sandbox.python_layout(str(venv / "bin" / "python"))
    assert lay.pairs[0] == (str(venv.resolve()), interp.VENV)
    # the base, then .pth lines in sys.path order: extra.pth's dir, zz_dev.pth's site-packages
    assert [t for _, t in lay.pairs[1:]] == [t for t in (interp.BASE, interp.OTHER + "0", interp.OTHER + "1")
                                            if t != interp.BASE or not sys.base_prefix.startswith("/usr")]
    over = {there: Path(host) for host, there in lay.overlays}
    cfg = over[interp.VENV + "/pyvenv.cfg"].read_text()
    assert str(venv) not in cfg and "home = " in cfg
    if MOVED_BASE:
        assert sys.base_prefix not in cfg and interp.BASE + "/bin" in cfg
    scripts = over[interp.VENV + "/bin"]
    assert (scripts / "say-prefix").read_text().startswith(f"#!{interp.VENV}/bin/python\n")
    assert os.access(scripts / "say-prefix", os.X_OK)
    assert str(venv) not in (scripts / "activate").read_text()
    for link in scripts.iterdir():  # the python links point where the run can follow them
        if link.is_symlink() and os.path.isabs(os.readlink(link)):
            assert os.readlink(link).startswith(("/reviewui/python/", "/usr/"))
    assert over[interp.VENV + "/bin/big.bin"] == venv / "bin" / "big.bin"  # too big to copy: bound itself
    pth = [p for there, p in over.items() if there.endswith("/extra.pth")]
    assert pth and pth[0].read_text() == f"{interp.OTHER}0\nimport os\n"  # the checkout's line is gone


def test_a_longer_name_is_not_rewritten() -> None:
    lay = interp.Layout(pairs=(("/opt/venv", interp.VENV),))
    text = "#!/opt/venv/bin/python\nX='/opt/venv' Y=/opt/venv2/bin /opt/venv.old\n"
    assert lay.text_inside(text) == f"#!{interp.VENV}/bin/python\nX='{interp.VENV}' Y=/opt/venv2/bin /opt/venv.old\n"
    assert lay.inside("/opt/venv2/x") == "/opt/venv2/x" and lay.inside("/opt/venv") == interp.VENV


PROBE = '''import json, os, subprocess, sys


def test_where():
    sub = subprocess.run([sys.executable, "-c", "import sys; print(sys.prefix, sys.version)"], capture_output=True,
                         text=True)
    script = subprocess.run(["say-prefix"], capture_output=True, text=True)
    import other_mod
    print("SEEN=" + json.dumps({{
        "exe": sys.executable, "prefix": sys.prefix, "base": sys.base_prefix, "path": sys.path,
        "sub": sub.stdout.strip() or sub.stderr[-300:], "script": script.stdout.strip() or script.stderr[-300:],
        "other": other_mod.VALUE, "host": [p for p in {hosts!r} if os.path.exists(p)],
        "env": {{k: v for k, v in os.environ.items() if any(h in v for h in {hosts!r})}},
    }}).encode().hex())
'''


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_run_sees_its_venv_at_the_neutral_path(venv: Path, tmp_path: Path, warm: bool,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewui.core.run.warm_runner import WarmPytest

    monkeypatch.setenv("PATH", f"{venv}/bin" + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    work = tmp_path / "work"
    work.mkdir()
    hosts = [str(venv)] + ([sys.base_prefix] if MOVED_BASE else [])
    (work / "test_where.py").write_text(PROBE.format(hosts=hosts))
    python = str(venv / "bin" / "python")
    server = WarmPytest(python) if warm else None
    try:
        res = run_tests(work, [python, "-m", "pytest", "-s", "-p", "no:randomly", "-p", "no:cacheprovider"],
                        ["test_where.py"], 120, warm=server)
    finally:
        if server is not None:
            server.close()
    assert res.returncode == 0, res.output[-3000:]
    assert res.warm == warm
    seen = json.loads(bytes.fromhex(res.output.split("SEEN=", 1)[1].split()[0]))
    assert seen["exe"] == interp.VENV + "/bin/python" and seen["prefix"] == interp.VENV
    # a child Python starts too, with its own libpython (not a system one of the same soname)
    assert seen["sub"] == interp.VENV + " " + sys.version
    assert seen["script"] == "PREFIX=" + interp.VENV  # a console script's #! line works inside
    assert seen["other"] == 7 and interp.OTHER + "0" in seen["path"]
    assert seen["host"] == [] and seen["env"] == {}
    assert not [p for p in seen["path"] if any(h in p for h in hosts)]
    if not sys.base_prefix.startswith("/usr"):
        assert seen["base"] == interp.BASE  # moved, or already there


def test_a_shim_on_path_runs_the_interpreter_it_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pyenv's way: `python` on PATH is a script under the home that execs the real interpreter.
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "python"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}" + os.pathsep + os.environ["PATH"])
    work = tmp_path / "work"
    work.mkdir()
    (work / "test_s.py").write_text(
        "import sys\n\ndef test_s():\n    print('EXE=' + sys.executable.encode().hex())\n")  # hex: not translated back
    res = run_tests(work, "python -m pytest -s -p no:randomly", ["test_s.py"], 120)
    assert res.returncode == 0, res.output[-2000:]
    assert bytes.fromhex(res.output.split("EXE=", 1)[1].split()[0]).decode().startswith("/reviewui/python/")


def test_what_a_run_prints_names_its_interpreter_where_the_reviewer_has_it(tmp_path: Path) -> None:
    (tmp_path / "test_p.py").write_text("import sys\n\ndef test_p():\n    print('PREFIX=' + sys.prefix)\n")
    res = run_tests(tmp_path, [sys.executable, "-m", "pytest", "-s", "-p", "no:randomly"], ["test_p.py"], 120)
    assert res.returncode == 0, res.output[-2000:]
    assert "PREFIX=" + str(Path(sys.prefix).resolve()) + "\n" in res.output


def test_a_script_installed_meanwhile_is_in_the_next_runs_overlay(venv: Path) -> None:
    # The overlays are written once per layout, and again when a tree's bin dir changed.
    python = str(venv / "bin" / "python")
    before = {t: Path(h) for h, t in sandbox.python_layout(python).overlays}[interp.VENV + "/bin"]
    assert not (before / "late-tool").exists()
    late = venv / "bin" / "late-tool"
    late.write_text(f"#!{venv}/bin/python\n")
    os.utime(venv / "bin", ns=(1, 10**18))  # a new mtime whatever the clock's resolution
    after = {t: Path(h) for h, t in sandbox.python_layout(python).overlays}[interp.VENV + "/bin"]
    assert (after / "late-tool").read_text() == f"#!{interp.VENV}/bin/python\n"
