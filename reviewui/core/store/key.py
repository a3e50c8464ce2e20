"""What a piece of stored evidence was computed from: its key, and how old and how current it is.

Evidence holds for the commits it ran on, the command that ran the tests, the
trusted config, the environment that ran them and the reviewui that graded
them. Any of those changed, and the stored result says nothing about now: the
store still hands it back (so the reviewer can see what it was), marked stale
with what changed.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from reviewui import __version__

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport
    from reviewui.core.bite.truth_table import TruthTable
    from reviewui.core.config import Settings
    from reviewui.core.target import Target

T = TypeVar("T")

IDENTITY: tuple[str, ...] = ("head", "base", "test_command", "config", "environment", "version")
"""The fields of a StoreKey that decide whether evidence is current, in the order their change is named."""

_CHANGED_WORDS = {
    "head": "head changed",
    "base": "base changed",
    "test_command": "test command changed",
    "config": "config changed",
    "environment": "environment changed",
    "version": "reviewui version changed",
}


@dataclass(frozen=True)
class StoreKey:
    """Where evidence came from: the review it belongs to and what it was computed from."""

    repo: str
    """The repository's directory (finds a branch's latest evidence; not part of the identity)."""
    branch: str
    """The branch reviewed (finds its latest evidence; not part of the identity)."""
    head: str
    """The head commit."""
    base: str
    """The base commit."""
    test_command: str
    """The test command as run, with the selection flags that change what runs (`--all-tests`)."""
    config: str
    """A digest of the trusted settings in force."""
    environment: str
    """A digest of the environment the tests ran in (Python, platform, sandbox)."""
    version: str
    """The reviewui version that graded it."""

    @functools.cached_property
    def digest(self) -> str:
        """The identity (IDENTITY fields) as a hex digest: the store's primary key (computed once per key)."""
        ident = {name: getattr(self, name) for name in IDENTITY}
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()

    def changed_from(self, other: StoreKey) -> tuple[str, ...]:
        """The IDENTITY fields where `other` differs from this key (empty: the same evidence)."""
        return tuple(name for name in IDENTITY if getattr(self, name) != getattr(other, name))


@dataclass(frozen=True)
class Stored(Generic[T]):
    """A value read from the store, with when it was saved and whether it still holds."""

    value: T
    """The stored record."""
    key: StoreKey
    """The key it was saved under."""
    saved_at: float
    """When it was saved (seconds since the epoch)."""
    changed: tuple[str, ...] = ()
    """What differs from the key asked about (IDENTITY names); empty when it is current."""

    @property
    def current(self) -> bool:
        """True when nothing it was computed from has changed."""
        return not self.changed

    def changed_words(self) -> str:
        """What changed since it was computed, in words (`head changed, test command changed`); "" if current."""
        return ", ".join(_CHANGED_WORDS[c] for c in self.changed)

    def age_words(self, now: float | None = None) -> str:
        """`from 14:02, this head` or `from 2026-11-30 14:02, stale: head changed` (local time)."""
        when = time.localtime(self.saved_at)
        today = time.localtime(time.time() if now is None else now)
        stamp = time.strftime("%H:%M" if when[:3] == today[:3] else "%Y-%m-%d %H:%M", when)
        if self.current:
            return f"from {stamp}, this head"
        return f"from {stamp}, stale: " + self.changed_words()


def settings_digest(settings: Settings) -> str:
    """A digest of every trusted setting (any change makes stored evidence stale)."""
    data = json.dumps(dataclasses.asdict(settings), sort_keys=True, default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def environment_digest(test_command: str) -> str:
    """A digest of what the tests run with: this Python, the platform, the test command's
    program as PATH finds it, and how the sandbox stands (bwrap found, or the reviewer's opt-out)."""
    from reviewui.core.run import sandbox

    words = test_command.split()
    # `VAR=value python -m pytest`: the program is the first word that is not an assignment.
    program = next((w for w in words if not (w.partition("=")[1] and w.partition("=")[0].isidentifier())), "")
    facts = [*_process_facts(), shutil.which(program) or program, sandbox.bwrap_path() or "", str(sandbox.opted_in())]
    return hashlib.sha256("\0".join(facts).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def _process_facts() -> tuple[str, ...]:
    """What cannot change while this process runs: this Python, the kernel, the C library.

    Not `platform.platform()`: on Linux it starts `uname -p` and scans this interpreter's binary for
    the glibc version, ~8 ms of every sweep's start. `os.uname()` and the C library's own answer
    say as much (a stored sweep from before this change is run afresh once: its key named the platform
    in platform()'s words)."""
    u = os.uname()
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):  # not glibc (musl has no such name)
        libc = ""
    return (sys.version, sys.executable, u.sysname, u.release, u.version, u.machine, libc)


def key_for(target: Target, test_command: str, settings: Settings, *, all_tests: bool) -> StoreKey:
    """The key of the evidence a sweep of `target` with `test_command` and `settings` now would
    produce (`all_tests`: the whole suite runs for each hunk). The store never sees the session."""
    return expected_key(str(target.repo_dir), target.branch, target.head, target.base, test_command,
                        settings_digest(settings), all_tests=all_tests)


def expected_key(repo: str, branch: str, head: str, base: str, test_command: str, config: str, *,
                 all_tests: bool = False, environment: str | None = None) -> StoreKey:
    """The key a sweep of `branch` at `head` against `base` with `test_command` and the settings whose
    digest is `config` would be stored under here, now (key_for's, and the review queue's for each row).
    `environment` is environment_digest(test_command), when the caller has it already."""
    return StoreKey(
        repo=repo, branch=branch, head=head, base=base,
        test_command=test_command + (" --all-tests" if all_tests else ""), config=config,
        environment=environment if environment is not None else environment_digest(test_command),
        version=__version__,
    )


@dataclass(frozen=True)
class StoredEvidence:
    """What the store held for a review when it was opened."""

    bite: Stored[BiteReport] | None = None
    """The latest whole-branch sweep of the branch (current or stale), None when there is none."""
    table: Stored[TruthTable] | None = None
    """The truth table stored with the current sweep, None when there is none."""
    notice: str | None = None
    """The store's one line when it had to be set aside or cannot be used."""

    def words(self, now: float | None = None) -> str | None:
        """`stored results from 14:02, this head` / `… stale: head changed`, or None with nothing stored."""
        if self.bite is None:
            return None
        return f"stored results {self.bite.age_words(now)}"
