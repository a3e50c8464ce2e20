"""Turn one revert run into a verdict, honestly.

`bites` needs a test that failed inside the test. A run that could not even
collect or import (pytest exit codes 2-5, collection errors) is `broken`. So
is a run whose only failures are NameError/ImportError/AttributeError about
a name the reverted hunk itself defines or imports: reverting it merely
broke other code that uses the name (a cross-hunk dependency), which says
nothing about whether the tests check behaviour. A failure about any other
name (say a misspelt attribute the hunk corrected) is a real bite.
Non-pytest commands only have an exit code: 0 is `toothless`, anything else
`bites`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Callable

from reviewui.core.bite.crosshunk import type_error_name
from reviewui.core.bite.report import Verdict

from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk
from reviewui.core.run.junit import TestOutcome
from reviewui.core.run.runner import RunResult

NAME_ERRORS = frozenset({"NameError", "ImportError", "ModuleNotFoundError", "AttributeError", "UnboundLocalError"})

PYTEST_EXIT = {2: "interrupted (collection errors)", 3: "internal error", 4: "usage error", 5: "no tests collected"}

_NAME_IN_MESSAGE = (
    re.compile(r"name '([\w.]+)' is not defined"),
    re.compile(r"cannot import name '([\w.]+)'"),
    re.compile(r"No module named '([\w.]+)'"),
    re.compile(r"has no attribute '([\w.]+)'"),
    re.compile(r"local variable '(\w+)'"),
)
_DEF = re.compile(r"^\s*(?:async\s+def|def|class)\s+([A-Za-z_]\w*)")
_ASSIGN = re.compile(r"^\s*((?:[A-Za-z_][\w.]*\s*,\s*)*[A-Za-z_][\w.]*)\s*(?::[^=]*)?=(?!=)")
_IMPORT = re.compile(r"^\s*import\s+(.+)")
_FROM = re.compile(r"^\s*from\s+(\S+)\s+import\s+(.*)")
# A dict literal's string key on a line of its own (`"TRUSTED_HOSTS": None,` in a default config).
_KEY = re.compile(r"""^\s*(['"])([A-Za-z_][\w.-]*)\1\s*:""")
_KEY_ERROR = re.compile(r"""KeyError: (['"])([A-Za-z_][\w.-]*)\1""")


@dataclass(frozen=True)
class Grade:
    """A verdict with its evidence."""

    verdict: Verdict
    """One of the verdict words."""
    failing_tests: tuple[str, ...] = ()
    """The tests that bit (excused failures excluded)."""
    messages: dict[str, str] = field(default_factory=dict, hash=False)
    """Node id -> first line of its message."""
    reason: str = ""
    """One line saying why."""


def defined_names(filediff: FileDiff, hunk: Hunk) -> frozenset[str]:
    """Names the hunk's added lines define or import, dict keys they add (and an added file's module name)."""
    names: set[str] = set()
    in_from_parens = False
    for ln in hunk.lines:
        if ln.kind != "added":
            continue
        text = ln.text.split("#", 1)[0]
        if in_from_parens:
            names |= _import_list(text)
            in_from_parens = ")" not in text
            continue
        if m := _DEF.match(text):
            names.add(m.group(1))
        elif m := _FROM.match(text):
            names |= _import_list(m.group(2))
            in_from_parens = "(" in m.group(2) and ")" not in m.group(2)
        elif m := _IMPORT.match(text):
            for part in m.group(1).split(","):
                bits = part.split()
                if not bits:
                    continue
                names |= set(bits[0].split("."))
                if len(bits) == 3 and bits[1] == "as":
                    names.add(bits[2])
        elif m := _KEY.match(text):
            names.add(m.group(2))
        elif (m := _ASSIGN.match(text)) and not text.rstrip().endswith(","):  # not a keyword argument line
            for target in m.group(1).split(","):
                names.add(target.strip().rsplit(".", 1)[-1])
    if filediff.status == "added" and hunk.old_len == 0:
        p = PurePosixPath(filediff.path)
        if p.suffix == ".py":
            parts = list(p.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names |= {".".join(parts[i:]) for i in range(len(parts))}
            names |= set(parts)
    names.discard("")
    return frozenset(names)


def _import_list(text: str) -> set[str]:
    out: set[str] = set()
    for part in text.replace("(", " ").replace(")", " ").replace("\\", " ").split(","):
        bits = part.split()
        if bits:
            out.add(bits[-1] if len(bits) == 3 and bits[1] == "as" else bits[0])
            out.add(bits[0])
    return out


def referenced_name(t: TestOutcome) -> str | None:
    """The name a NameError/ImportError/AttributeError-style failure (or a KeyError's key) is about, else None."""
    exc = t.exception
    if exc == "TypeError":
        return type_error_name(t.message)
    if exc == "KeyError":  # a key the hunk adds to a dict literal that another hunk reads
        m = _KEY_ERROR.search(t.message)
        return m.group(2) if m else None
    if exc not in NAME_ERRORS:
        return None
    for rx in _NAME_IN_MESSAGE:
        if m := rx.search(t.message):
            return m.group(1)
    return None


def _excused(t: TestOutcome, names: frozenset[str]) -> bool:
    name = referenced_name(t)
    if name is None:
        return False
    return name in names or name.rsplit(".", 1)[-1] in names or name.split(".", 1)[0] in names


def grade_pytest(run: RunResult, names: frozenset[str], user_of: Callable[[str], str | None] | None = None,
                 needed: frozenset[str] = frozenset()) -> Grade:
    """Grade a pytest revert run (see the module docstring).

    `names` are what the revert removed (names, parameters, functions whose
    signature changed); `user_of(name)` says where another code hunk uses one,
    and when given, a failure about a name no other code hunk uses is a bite
    (the test checks what the hunk adds). `needed` are names the reverted code
    uses that the rest of the branch no longer defines (a rename's other half):
    a failure only about them is `broken` too.
    """
    if run.timed_out:
        return Grade("timeout", reason=f"killed after {run.seconds:.1f}s")
    if run.cancelled:
        return Grade("skipped", reason="cancelled")
    if run.limit:  # the sandbox's memory or disk limit stopped it: says nothing about the tests
        return Grade("broken", reason=run.limit)
    collection = [t for t in run.tests if t.collection]
    if run.returncode in PYTEST_EXIT or collection:
        why = collection[0].message if collection else _last_line(run.output)
        code = "collection errors" if collection else PYTEST_EXIT.get(run.returncode or 0, f"exit code {run.returncode}")
        return Grade("broken", reason=f"tests could not run ({code}): {why}".rstrip(": "))
    if run.junit_error:
        return Grade("error", reason=f"runner failed: {run.junit_error} (exit code {run.returncode})")
    failing = run.failing
    if not failing:
        if run.returncode == 0:
            return Grade("toothless", reason="every selected test still passed")
        return Grade("error", reason=f"exit code {run.returncode} but no test reported a failure")
    real = [t for t in failing if not _excused(t, needed) and (
        not _excused(t, names) or (user_of is not None and user_of(referenced_name(t) or "") is None))]
    if not real:
        first = failing[0]
        name = referenced_name(first) or ""
        if _excused(first, needed):
            return Grade("broken", messages={t.id: t.message for t in failing},
                         reason=f"cross-hunk: the reverted code needs {name}, which another hunk of the branch "
                                f"removes or renames ({first.message})")
        where = (user_of(name) if user_of else None) or "other code of the branch"  # found above when given
        return Grade(
            "broken",
            messages={t.id: t.message for t in failing},
            reason=f"cross-hunk: {name} is defined by this hunk and used by {where} ({first.message})",
        )
    return Grade("bites", tuple(t.id for t in real), {t.id: t.message for t in real})


_MISSING_NAME = re.compile(r"name '(\w+)' is not defined|cannot import name '(\w+)'")
_ASSERTED = re.compile(r"^FAIL: |AssertionError", re.MULTILINE)


def grade_exit_code(run: RunResult, names: frozenset[str] = frozenset(),
                    user_of: Callable[[str], str | None] | None = None) -> Grade:
    """Grade a non-pytest revert run by its exit code (and, for a failure, its output: a run whose
    every error is a name the revert removes that another hunk of the branch uses is `broken`, as
    grade_pytest says it: the revert broke the branch, it tested nothing)."""
    if run.timed_out:
        return Grade("timeout", reason=f"killed after {run.seconds:.1f}s")
    if run.cancelled:
        return Grade("skipped", reason="cancelled")
    if run.limit:  # the sandbox's memory or disk limit stopped it: says nothing about the tests
        return Grade("broken", reason=run.limit)
    if run.returncode == 0:
        return Grade("toothless", reason="the test command still exits 0")
    missing = {a or b for a, b in _MISSING_NAME.findall(run.output)}
    if missing and user_of is not None and not _ASSERTED.search(run.output) \
            and all(n in names and user_of(n) is not None for n in missing):
        name = sorted(missing)[0]
        return Grade("broken", reason=f"the revert removes {name}, which {user_of(name)} uses: every failure "
                                      f"is that name missing (exit code {run.returncode})")
    return Grade("bites", reason=f"exit code {run.returncode}: {_last_line(run.output)}".rstrip(": "))


def _last_line(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""
