"""The witness record a toothless guard (or hunk) carries (its search's budget: budget.py).

A leaf module: the bite reports (guard_report.py, report.py) and the store
import it, so it imports nothing of reviewui's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Witness:
    """The outcome of looking for a call on which the head and the revert answer differently."""

    found: bool
    """True when a witness was found and re-verified (a tiny test passed on the head and failed reverted)."""
    call: str = ""
    """The call, shortened for a person (`trim([…], 1)`); "" when none was found."""
    head: str = ""
    """What the head answers (a short repr, or `raises T`), as the run said it: untrusted text."""
    reverted: str = ""
    """What the revert answers, likewise."""
    tries: int = 0
    """Inputs tried (each called on both sides)."""
    seconds: float = 0.0
    """Time its search took, and its share of the re-verification (not the session's start-up or capture)."""
    test: str = ""
    """The re-verified test (what `w` offers to keep as a probe); "" when none was found."""
    reason: str = ""
    """Why none was found or searched (no seed, not a function, dropped at re-verification), else ""."""
    dropped: int = 0
    """Witnesses the search found that the re-verification dropped."""

    @property
    def searched(self) -> bool:
        """True when a search ran (found, or none in `tries` tries)."""
        return self.found or self.tries > 0

    def words(self) -> str:
        """`witness: found (…)` or `witness: none found in N tries`, the grade as a person reads it."""
        if self.found:
            return f"witness: `{self.call}`: head `{self.head}`, reverted `{self.reverted}`; no test checks this case"
        if self.tries:
            why = f"; {self.reason}" if self.reason else ""
            return f"witness: none found in {self.tries} tries (likely equivalent{why})"
        return f"witness: not searched ({self.reason or 'no search ran'})"

    def to_json(self) -> dict[str, Any]:
        """The contract object `witness` of `bite --guards --witness`."""
        return {
            "found": self.found,
            "call": self.call or None,
            "head": self.head if self.found else None,
            "reverted": self.reverted if self.found else None,
            "tries": self.tries,
            "seconds": round(self.seconds, 3),
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Seed:
    """One call a selected test made, as source (validated: witness/literal.py)."""

    values: tuple[str, ...]
    """A source per parameter, in the function's order."""
    imports: tuple[tuple[str, str, str], ...]
    """(module, attribute, alias) of every name the sources use."""


@dataclass(frozen=True)
class FunctionSeeds:
    """What the capture run saw of one function's calls."""

    params: tuple[tuple[str, str], ...]
    """(name, kind) per parameter: `pos`, `var` (*args), `kw` (keyword-only), `varkw` (**kwargs)."""
    seeds: tuple[Seed, ...]
    """Distinct calls kept (bounded in count and size)."""
    seen: int = 0
    """Calls the tests made."""
    why: str = ""
    """Why some could not be kept (unrenderable arguments), else ""."""


@dataclass(frozen=True)
class Seeds:
    """The tests' own arguments per function, captured in a run of their own: (file, def line) -> seeds."""

    functions: tuple[tuple[str, int, FunctionSeeds], ...] = ()

    def of(self, file: str, def_line: int) -> FunctionSeeds | None:
        """The seeds of the function defined at `def_line` of `file`, or None when it was not called."""
        return next((s for f, n, s in self.functions if f == file and n == def_line), None)
