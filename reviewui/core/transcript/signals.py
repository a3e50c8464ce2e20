"""What a turn's text says: a claim to be done, `TOUCH:` declarations, a test run's verdict.

Read off the text alone, with cheap substring checks before any regex (most
turns say none of it). A claim counts only in the agent's own prose: code
blocks, inline code, text tool calls, quotes and comments are left out.
"""

from __future__ import annotations

import re

_CLAIM = re.compile(
    r"\baction:\s*done\b"
    r"|\b(?:is|are|was|were|'s|’s)\s+already\s+(?:correct|fixed|implemented|done|in place|present|handled"
    r"|working|supported|complete|covered|tested)\b"
    r"|\balready\s+(?:works|exists|has\s+(?:a\s+|the\s+)?tests?\b)"
    r"|\b(?:task|work|implementation|fix|change|changes)\s+(?:is|are|has been|have been)\s+(?:now\s+)?"
    r"(?:complete|completed|done|finished)\b"
    r"|\bi(?:'ve|’ve| have)\s+(?:now\s+)?(?:successfully\s+)?(?:completed|finished)\s+the\s+task\b",
    re.IGNORECASE,
)
_TOUCH = re.compile(r"^[ \t>*\-]*TOUCH:[ \t]*`?([^\s`]+)`?[ \t]*$", re.MULTILINE)
# (substring that must be present, pattern): one alternation would be several times slower.
_FAIL = (
    ("fail", re.compile(r"[1-9]\d* (?:failed|failing|failures?)\b")),
    ("error", re.compile(r"(?<![\w.])[1-9]\d* errors?\b")),
    ("FAIL", re.compile(r"^(?:FAILED|--- FAIL|FAIL)\b|test result: FAILED|FAILURES!", re.MULTILINE)),
)
_PASS = (
    ("passed", re.compile(r"\d+ passed\b|All tests passed")),
    ("ok", re.compile(r"test result: ok\b|^ok\s+\S", re.MULTILINE)),
    ("OK", re.compile(r"^OK\b", re.MULTILINE)),
    ("0 failures", re.compile(r"(?<!\d)0 failures\b")),
)
_CLAIM_WINDOW = 20_000
_VERDICT_WINDOW = 3_000  # test runners print their verdict at the end


# What is not the agent's own prose: code (fenced, Aider's <source> blocks, SEARCH/REPLACE
# blocks, inline spans), tool calls written as text, quoted lines and strings, code comments.
_NOT_PROSE = re.compile(
    r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|<source>.*?(?:</source>|\Z)|<{7} SEARCH.*?(?:>{7} REPLACE|\Z)"
    r"|<function=.*?(?:</function>|\Z)|<tool_call>.*?(?:</tool_call>|\Z)|<invoke .*?(?:</invoke>|\Z)"
    r"|`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”"
    r"|^[ \t]*>.*$|^[ \t]+#.*$|^[ \t]*(?://|/\*|\*|--).*$",
    re.DOTALL | re.MULTILINE,
)


def prose(text: str) -> str:
    """`text` without code blocks, inline code, text tool calls, quotes and comment lines."""
    return _NOT_PROSE.sub(" ", text)


def claims_done_text(text: str) -> bool:
    """True when the agent's own prose in `text` claims the work is done ("Action: done", "already correct" …).

    Code blocks, inline code, quotes and comments do not count: a `# done`
    in a patch is not a claim.
    """
    window = text[-_CLAIM_WINDOW:] if len(text) > _CLAIM_WINDOW else text
    # Substring checks first: the regex is far slower and most turns claim nothing.
    if not (
        "done" in window or "Done" in window or "DONE" in window or "lready" in window or "omplete" in window
        or "inished" in window
    ):
        return False
    if not _CLAIM.search(window):
        return False
    return bool(_CLAIM.search(prose(window)))


def touch_paths(text: str) -> list[str]:
    """Return the paths of `TOUCH: <path>` lines in `text`, in order."""
    if "TOUCH:" not in text:
        return []
    return _TOUCH.findall(text)


def read_verdict(output: str) -> str | None:
    """Read a tool output's test summary: `fail`, `pass`, or None when it shows no test run."""
    tail = output[-_VERDICT_WINDOW:]
    if any(hint in tail and pat.search(tail) for hint, pat in _FAIL):
        return "fail"
    if any(hint in tail and pat.search(tail) for hint, pat in _PASS):
        return "pass"
    return None
