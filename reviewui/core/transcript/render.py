"""Plain-text rendering of a transcript for `reviewui transcript FILE` (the headless twin of the pane).

One block per turn: its index, role, stop reason, usage and flags, then a
short preview of its text, its reasoning size, its tool calls and the files
it wrote. Control characters in agent-written text are shown escaped, so a
transcript cannot drive the reader's terminal.
"""

from __future__ import annotations


from reviewui.core.transcript.model import FLAGS, Transcript, Turn
from reviewui.core.safe_text import visible

_PREVIEW_LINES = 4
_PREVIEW_WIDTH = 160


def safe(text: str) -> str:
    """Return `text` with control characters (escape sequences, bidi overrides) shown as `\\xNN`."""
    return visible(text)


def _preview(text: str) -> list[str]:
    lines = [ln for ln in text.replace("\r\n", "\n").split("\n") if ln.strip()]
    out = []
    for ln in lines[:_PREVIEW_LINES]:
        ln = safe(ln.rstrip())
        out.append(ln if len(ln) <= _PREVIEW_WIDTH else ln[: _PREVIEW_WIDTH - 1] + "…")
    if len(lines) > _PREVIEW_LINES:
        out.append(f"… ({len(lines) - _PREVIEW_LINES} more lines)")
    return out


def _n(v: int) -> str:
    return f"{v:,}"


def render_turn(turn: Turn, cumulative: int | None = None) -> str:
    """Return the plain-text block for one turn."""
    head = [f"#{turn.index} {turn.role}" + (f" ({turn.kind})" if turn.kind else "")]
    if turn.time:
        head.append("at " + safe(turn.time.split(".", 1)[0]))
    if turn.role == "assistant":
        head.append(f"stop={turn.stop}")
    u = turn.usage
    if u.input or u.output:
        usage = f"in={_n(u.input)} cached={_n(u.cached)} out={_n(u.output)}"
        if cumulative is not None:
            usage += f" Σin={_n(cumulative)}"
        head.append(usage)
    lines = ["  ".join(head)]
    if turn.flags:
        lines.append("    flags: " + ", ".join(turn.flags))
    if turn.note:
        lines.append("    note: " + safe(turn.note))
    if turn.reasoning_chars:
        lines.append(f"    reasoning: {_n(turn.reasoning_chars)} chars")
    lines.extend("    | " + ln for ln in _preview(turn.text))
    for c in turn.tool_calls:
        paths = " ".join(safe(p) for p in c.paths)
        lines.append(f"    → {safe(c.name)} [{c.kind}]" + (f" {paths}" if paths else ""))
    for cmd in turn.commands:
        lines.append(f"    $ {safe(cmd.command.splitlines()[0] if cmd.command else '')}"
                     + (f"   exit {cmd.exit}" if cmd.exit is not None else ""))
    if turn.files_written:
        lines.append("    wrote: " + ", ".join(safe(p) for p in turn.files_written))
    if turn.touch_paths:
        lines.append("    TOUCH: " + ", ".join(safe(p) for p in turn.touch_paths))
    return "\n".join(lines)


def render_text(t: Transcript) -> str:
    """Return the whole transcript as plain text: a summary header, then one block per turn."""
    cumulative = t.cumulative_input()
    total_in = cumulative[-1] if cumulative else 0
    out = [
        f"transcript: {safe(t.source)}",
        f"format: {t.format}   turns: {len(t.turns)}   skipped lines: {t.skipped_lines}"
        f"   input tokens: {_n(total_in)}",
    ]
    counts = {f: sum(1 for turn in t.turns if f in turn.flags) for f in FLAGS}
    flagged = [f"{f} {n}" for f, n in counts.items() if n]
    out.append("flags: " + (" · ".join(flagged) if flagged else "none"))
    claim = t.last_claim()
    if claim is not None:
        out.append(f"last claim: turn {claim.index}")
    for note in t.notes:
        out.append("note: " + safe(note))
    if not t.turns:
        out.append("0 turns")
    touched = t.touch_declared()
    if touched:
        out.append("TOUCH declared: " + ", ".join(safe(p) for p in touched))
    out.append("")
    for turn, cum in zip(t.turns, cumulative, strict=True):
        out.append(render_turn(turn, cum if turn.usage.input else None))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
