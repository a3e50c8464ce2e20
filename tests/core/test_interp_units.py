"""run/interp.py's pieces on their own, without a sandbox: they hold wherever the suite runs
(also inside reviewui's own sandbox, where the run-level tests see host and inside paths alike)."""

from __future__ import annotations

import os
from pathlib import Path

from reviewui.core.run import interp

V = interp.VENV
LAY = interp.Layout(pairs=(("/opt/venv", V), ("/opt/base", interp.BASE)), command=None)


def test_run_env_writes_the_paths_as_the_run_sees_them_and_drops_an_unseen_venv() -> None:
    env = LAY.run_env({"PATH": "/opt/venv/bin:/usr/bin:rel", "PYTHONPATH": "/opt/base/lib:src",
                       "VIRTUAL_ENV": "/opt/venv", "LANG": "C"})
    assert env == {"PATH": f"{V}/bin:/usr/bin:rel", "PYTHONPATH": f"{interp.BASE}/lib:src",
                   "VIRTUAL_ENV": V, "LANG": "C"}
    assert "VIRTUAL_ENV" not in LAY.run_env({"VIRTUAL_ENV": "/home/me/other-venv"})  # it would name the home
    assert LAY.run_env({"VIRTUAL_ENV": "/usr"})["VIRTUAL_ENV"] == "/usr"  # a system one is seen as it is
    with_lib = interp.Layout(pairs=LAY.pairs, env=(("LD_LIBRARY_PATH", interp.BASE + "/lib"),))
    assert with_lib.run_env({})["LD_LIBRARY_PATH"] == interp.BASE + "/lib"


def test_argv_moves_absolute_paths_only_and_puts_the_interpreter_in_place_of_a_shim() -> None:
    assert LAY.argv(["/opt/venv/bin/python", "-c", "/opt/venv", "opt/venv/x"]) == \
        [f"{V}/bin/python", "-c", V, "opt/venv/x"]
    shimmed = interp.Layout(pairs=LAY.pairs, command=f"{interp.BASE}/bin/python3.11")
    assert shimmed.argv(["python", "-m", "pytest"]) == [f"{interp.BASE}/bin/python3.11", "-m", "pytest"]
    assert shimmed.argv([]) == []


def test_outside_writes_what_a_run_printed_back_as_host_paths() -> None:
    text = f'File "{V}/lib/x.py", line 1 in {interp.BASE}/lib; {V}2 stays; {interp.PYTHON}/path0 stays'
    assert LAY.outside(text) == \
        f'File "/opt/venv/lib/x.py", line 1 in /opt/base/lib; {V}2 stays; {interp.PYTHON}/path0 stays'


def test_python_of_finds_the_interpreter_behind_a_command(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin" / "python").symlink_to("/usr/bin/env")
    tool = venv / "bin" / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    elsewhere = tmp_path / "bin"
    elsewhere.mkdir()
    script = elsewhere / "script"
    real = Path("/usr/bin/python3")
    script.write_text(f"#!{real} -u\nprint()\n")
    script.chmod(0o755)
    other = elsewhere / "other"
    other.write_text("#!/bin/sh\necho\n")
    other.chmod(0o755)
    binary = elsewhere / "binary"
    binary.write_bytes(b"\x7fELF\0\0")
    binary.chmod(0o755)
    path = f"{venv / 'bin'}{os.pathsep}{elsewhere}"
    assert interp.python_of("tool", path) == str(venv / "bin" / "python")  # a venv's console script
    assert interp.python_of(str(venv / "bin" / "python"), path) == str(venv / "bin" / "python")
    assert interp.python_of("script", path) == (str(real) if real.exists() else None)  # its #! line
    assert interp.python_of("other", path) is None and interp.python_of("binary", path) is None
    assert interp.python_of("missing", path) is None and interp.python_of(None) is None


def _facts(tmp_path: Path, *entries: Path) -> interp.Facts:
    for e in entries:
        e.mkdir(parents=True, exist_ok=True)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    (venv / "pyvenv.cfg").write_text("home = /opt/py/bin\n")
    base = tmp_path / "py"
    base.mkdir(exist_ok=True)
    return interp.Facts(str(venv / "bin" / "python"), str(venv), str(base), tuple(str(e) for e in entries))


def test_pairs_keep_a_venv_in_a_checkout_and_leave_its_source_and_hidden_dirs_out(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    (checkout / ".venv").mkdir(parents=True)
    (checkout / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    site = checkout / ".venv" / "lib" / "site-packages"
    src = checkout / "src"
    other = tmp_path / "other" / "lib"
    hidden = tmp_path / "hidden"
    under_hidden = hidden / "pkgs"  # a dir inside a hidden one (a user site under /tmp): needed, kept
    facts = _facts(tmp_path, site, src, other, under_hidden, hidden, Path("/usr/lib"))
    pairs, base, command = interp._pairs(facts.executable, facts, (hidden,), (checkout,), False)
    assert [p for p, _ in pairs] == [str(tmp_path / "venv"), str(tmp_path / "py"), str(site), str(other),
                                     str(under_hidden)]  # not the checkout's src, the hidden dir, /usr
    assert [t for _, t in pairs] == [V, interp.BASE, interp.OTHER + "0", interp.OTHER + "1", interp.OTHER + "2"]
    assert base == tmp_path / "py" and command is None
    # a .pth line of a dir holding a hidden one is left out too (it would show it whole)
    pairs, _, _ = interp._pairs(facts.executable, facts, (under_hidden,), (checkout,), False)
    assert str(hidden) not in [p for p, _ in pairs] and str(under_hidden) not in [p for p, _ in pairs]


def test_a_shim_gets_the_interpreter_it_runs_and_a_venv_python_keeps_its_own(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    shim = str(tmp_path / "shims" / "python")
    _, _, command = interp._pairs(shim, facts, (), (), True)
    assert command == f"{V}/bin/python"
    _, _, command = interp._pairs(shim, facts, (), (), False)  # a command not named python*: never replaced
    assert command is None
    _, _, command = interp._pairs(facts.executable, facts, (), (), True)
    assert command is None  # the interpreter itself is in a bound tree


def test_pth_files_keep_imports_and_system_lines_and_drop_unseen_trees(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "mixed.pth").write_text("/opt/venv/extra\n/usr/lib/python3/dist-packages\n/home/me/src\n"
                                    "import os; os.environ.get('/opt/venv')\n")
    (site / "plain.pth").write_text("relative/dir\n")
    out = interp._pth_overlays(site, tmp_path / "out", interp.Layout(pairs=(("/opt/venv", V), (str(site), V + "/s"))))
    assert out == [(str(tmp_path / "out" / "mixed.pth"), V + "/s/mixed.pth")]  # plain.pth names no host path
    assert (tmp_path / "out" / "mixed.pth").read_text() == \
        f"{V}/extra\n/usr/lib/python3/dist-packages\nimport os; os.environ.get('{V}')\n"
