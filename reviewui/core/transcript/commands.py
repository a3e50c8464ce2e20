"""The shell commands a run made, each joined to the result that came back.

A shell tool call sits on an assistant turn; its exit code and output arrive
on a later tool turn. `link_commands` pairs them: by the call id the result
names when the format has ids, else in order (the n-th unanswered call of
the latest assistant turn takes the n-th tool turn after it).
"""

from __future__ import annotations

from reviewui.core.transcript.builder import Draft
from reviewui.core.transcript.model import OUTPUT_HEAD_CHARS, Command
from reviewui.core.transcript.tools import shell_command


def _text(d: Draft) -> str:
    return d.texts[0] if len(d.texts) == 1 else "\n".join(d.texts)


def link_commands(drafts: list[Draft]) -> dict[int, tuple[Command, ...]]:
    """The commands of each draft (by position) that ran shell calls, with exit code and output head when known."""
    out: dict[int, list[Command]] = {}
    where: dict[str, tuple[int, int]] = {}  # call id -> (draft position, command position)
    pending: list[tuple[int, int | None]] = []  # the latest calling turn's unanswered calls: (draft, command or None)
    for i, d in enumerate(drafts):
        calls = d.calls
        if calls:
            pending = []
            for c in calls:
                slot: int | None = None
                if c.kind == "shell":
                    cmd = shell_command(c.arguments)
                    if cmd is not None:
                        cmds = out.setdefault(i, [])
                        slot = len(cmds)
                        cmds.append(Command(cmd, None, None, c.id))
                        if c.id:
                            where[c.id] = (i, slot)
                pending.append((i, slot))
            continue
        if d.role != "tool" or not (pending or where):
            continue
        target: tuple[int, int] | None = None
        if d.result_of is not None:
            target = where.get(d.result_of)
            if target is None:
                continue  # the result of a call that ran no command
            pending = [p for p in pending if p != target]
        elif pending:
            j, slot = pending.pop(0)
            if slot is None:
                continue
            target = (j, slot)
        else:
            continue
        j, slot = target
        prev = out[j][slot]
        out[j][slot] = Command(prev.command, d.exit_code, _text(d)[:OUTPUT_HEAD_CHARS], prev.call_id, i + 1)
    return {i: tuple(v) for i, v in out.items()}
