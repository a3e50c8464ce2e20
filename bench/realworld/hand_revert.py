"""Establish the expected verdict of each source hunk of a real commit, without reviewui.

For every hunk of every changed non-test .py file: a fresh `git worktree` at the commit,
that one hunk reverse-applied with `git apply -R` (a one-hunk patch cut from `git diff`),
then the project's own test command on the whole test suite. The same command runs once
on the unreverted commit first: tests already failing there (a missing optional module,
a platform-only test) are printed as `red at head` and left out of each hunk's list.
Prints one line per hunk: header, exit code, and the first failing test ids new to that
revert, so a human can decide bites / toothless / broken (cross-hunk, or a collection
error) and write it into cases.toml. Not a test; needs the mirrors fetched under
/work/.mirror.

    python bench/realworld/hand_revert.py MIRROR_GIT_DIR COMMIT [TEST_CMD]
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath

# Test ids pytest prints in -rfE's short summary (no -x: one red-at-head test must not hide the rest).
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)
# unittest's own runner: "FAIL: test_x (module.Class.test_x)" / "ERROR: ...".
_UNITTEST = re.compile(r"^(?:FAIL|ERROR): (\S+ \([^)]*\))", re.M)


def sh(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command, capturing text output."""
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=check)


def is_test(name: str) -> bool:
    """A test file by the usual conventions (src/flask/testing.py is source, test.py at the root is not)."""
    p = PurePosixPath(name)
    return (any(part in ("tests", "test", "testing") for part in p.parts[:-1]) or p.name.startswith("test_")
            or p.name.endswith("_test.py") or p.name in ("test.py", "tests.py", "conftest.py"))


def hunks_of(git_dir: str, commit: str) -> list[tuple[str, str, str]]:
    """(file, header, one-hunk patch) for each hunk of the commit's non-test Python files."""
    names = sh("git", "--git-dir", git_dir, "diff", "--name-only", f"{commit}^", commit).stdout.split()
    out = []
    for name in names:
        if not name.endswith(".py") or is_test(name) or name in ("setup.py", "noxfile.py") or name.startswith("docs/"):
            continue
        patch = sh("git", "--git-dir", git_dir, "diff", "-U3", f"{commit}^", commit, "--", name).stdout
        head, _, body = patch.partition("\n@@")
        for part in re.split(r"\n(?=@@)", "@@" + body):
            out.append((name, part.splitlines()[0].split(" @@")[0] + " @@", head + "\n" + part.rstrip("\n") + "\n"))
    return out


def run_suite(git_dir: str, commit: str, cmd: list[str], patch: str | None) -> tuple[int, list[str], str]:
    """(exit code, failing ids, last and first error line) of `cmd` in a worktree of `commit`, `patch` reverted."""
    with tempfile.TemporaryDirectory() as tmp:
        wt = Path(tmp) / "wt"
        sh("git", "--git-dir", git_dir, "worktree", "add", "-q", "--detach", str(wt), commit)
        try:
            if patch is not None:
                applied = subprocess.run(["git", "apply", "-R", "-"], input=patch, cwd=wt, capture_output=True,
                                         text=True)
                if applied.returncode:
                    return -1, [], f"cannot apply: {applied.stderr.strip()[:200]}"
            env = {**os.environ, "PYTHONPATH": f"{wt / 'src'}:{wt}"}
            run = subprocess.run(cmd, cwd=wt, capture_output=True, text=True, env=env, timeout=900)
            out = run.stdout + run.stderr
            failed = _FAILED.findall(out) + _UNITTEST.findall(out)
            lines = [ln for ln in out.strip().splitlines() if ln.strip()]
            # The first `E   ...` line says whether a failure is about behaviour or a name another hunk needs.
            first_e = next((ln.strip() for ln in lines if ln.startswith("E   ")), "")
            return run.returncode, failed, (lines[-1][:120] if lines else "") + (f" | {first_e[:160]}" if first_e else "")
        finally:
            sh("git", "--git-dir", git_dir, "worktree", "remove", "--force", str(wt), check=False)


def main() -> None:
    git_dir, commit = sys.argv[1], sys.argv[2]
    cmd = shlex.split(sys.argv[3]) if len(sys.argv) > 3 else [sys.executable, "-m", "pytest", "-q", "-rfE",
                                                              "--color=no", "-p", "no:cacheprovider"]
    code, red, last = run_suite(git_dir, commit, cmd, None)
    print(f"(head) exit {code}, red at head: {red[:5]} {last}")
    for name, header, patch in hunks_of(git_dir, commit):
        code, failed, last = run_suite(git_dir, commit, cmd, patch)
        new = [t for t in failed if t not in red]
        print(f"{name} {header}: exit {code} {new[:3]} {last}")


if __name__ == "__main__":
    main()
