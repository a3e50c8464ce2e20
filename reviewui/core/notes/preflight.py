"""Before a verdict is typed: can git record it here? (identity, signing setup)

Recording a verdict needs a git identity and, when `user.signingkey` is set,
a signing setup that can sign. Both are checked when the verdict dialog
opens, so the reviewer learns of a problem before writing a reason, with the
exact `git config` line that fixes it.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from reviewui.core.errors import ReviewError
from reviewui.core.git import config_value, run_git
from reviewui.core.notes.signing import signing_setup


@dataclass(frozen=True)
class SetupProblem:
    """One reason a verdict could not be recorded now, and how to fix it."""

    problem: str
    """What is wrong, in words."""
    fix: str
    """The exact command that fixes it (a `git config` line)."""


def _has_identity(repo_dir: str | Path) -> bool:
    try:
        run_git(repo_dir, "var", "GIT_AUTHOR_IDENT")
    except ReviewError:
        return False
    return True


def verdict_setup_problems(repo_dir: str | Path) -> list[SetupProblem]:
    """What stops a verdict from being recorded in `repo_dir` now (empty: nothing does).

    Checks git's author identity (config or environment, as git itself
    decides) and, when a signing key is configured, that reviewui can sign
    with its format and that the signing program and key file exist.
    """
    problems: list[SetupProblem] = []
    if not _has_identity(repo_dir):
        if not config_value(repo_dir, "user.name") and not os.environ.get("GIT_AUTHOR_NAME"):
            problems.append(SetupProblem("git has no user name for you",
                                         'git config --global user.name "Your Name"'))
        if not config_value(repo_dir, "user.email") and not os.environ.get("GIT_AUTHOR_EMAIL"):
            problems.append(SetupProblem("git has no email for you",
                                         'git config --global user.email "you@example.com"'))
        if not problems:  # git refused for another reason (an empty or invalid name, say)
            problems.append(SetupProblem("git has no usable identity for you (git var GIT_AUTHOR_IDENT fails)",
                                         'git config --global user.name "Your Name"'))
    try:
        setup = signing_setup(repo_dir)
    except ReviewError as e:
        return [*problems, SetupProblem(str(e), "git config --global gpg.format ssh")]
    if setup is None:
        return problems
    if shutil.which(setup.program) is None:
        option = "gpg.ssh.program" if setup.format == "ssh" else "gpg.program"
        problems.append(SetupProblem(f"signing program {setup.program!r} is not installed",
                                     f"git config --global {option} /path/to/{Path(setup.program).name}"))
    if setup.format == "ssh" and not setup.key.startswith("key::"):
        key = Path(os.path.expanduser(setup.key))
        if not key.is_file():
            problems.append(SetupProblem(f"signing key file {setup.key} does not exist",
                                         "git config --global user.signingkey ~/.ssh/id_ed25519.pub"))
    return problems
