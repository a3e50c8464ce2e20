"""Establish the expected verdict of each source hunk of a real commit, without reviewui.

For every hunk of every changed non-test .py file: a fresh `git worktree` at the commit,
that one hunk reverse-applied with `git apply -R` (a one-hunk patch cut from `git diff`),
then the project's own test command on the whole test suite. Prints one line per hunk:
header, exit code, and the first failing test ids, so a human can decide bites /
toothless / broken (cross-hunk) and write it into cases.toml. Not a test; needs the
mirrors fetched under /work/.mirror.

    python bench/realworld/hand_revert.py MIRROR_GIT_DIR COMMIT [TEST_CMD]
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path


def sh(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command, capturing text output."""
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=check)


def hunks_of(git_dir: str, commit: str) -> list[tuple[str, str, str]]:
    """(file, header, one-hunk patch) for each hunk of the commit's non-test Python files."""
    names = sh("git", "--git-dir", git_dir, "diff", "--name-only", f"{commit}^", commit).stdout.split()
    out = []
    for name in names:
        if not name.endswith(".py") or "test" in name or name in ("setup.py", "noxfile.py") or name.startswith("docs/"):
            continue
        patch = sh("git", "--git-dir", git_dir, "diff", "-U3", f"{commit}^", commit, "--", name).stdout
        head, _, body = patch.partition("\n@@")
        for part in re.split(r"\n(?=@@)", "@@" + body):
            out.append((name, part.splitlines()[0].split(" @@")[0] + " @@", head + "\n" + part.rstrip("\n") + "\n"))
    return out


def main() -> None:
    git_dir, commit = sys.argv[1], sys.argv[2]
    cmd = shlex.split(sys.argv[3]) if len(sys.argv) > 3 else [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
    for name, header, patch in hunks_of(git_dir, commit):
        with tempfile.TemporaryDirectory() as tmp:
            wt = Path(tmp) / "wt"
            sh("git", "--git-dir", git_dir, "worktree", "add", "-q", "--detach", str(wt), commit)
            try:
                applied = subprocess.run(["git", "apply", "-R", "-"], input=patch, cwd=wt, capture_output=True, text=True)
                if applied.returncode:
                    print(f"{name} {header}: cannot apply: {applied.stderr.strip()[:200]}")
                    continue
                env_pp = {"PYTHONPATH": f"{wt / 'src'}:{wt}"}
                import os
                run = subprocess.run(cmd, cwd=wt, capture_output=True, text=True, env={**os.environ, **env_pp}, timeout=900)
                failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", run.stdout, re.M)[:3]
                print(f"{name} {header}: exit {run.returncode} {failed} {run.stdout.strip().splitlines()[-1][:120] if run.stdout.strip() else ''}")
            finally:
                sh("git", "--git-dir", git_dir, "worktree", "remove", "--force", str(wt), check=False)


if __name__ == "__main__":
    main()
