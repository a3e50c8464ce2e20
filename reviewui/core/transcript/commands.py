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


def _command(command: str, exit: int | None, head: str | None, call_id: str | None, turn: int | None) -> Command:
    """A Command without the frozen dataclass's per-field `object.__setattr__` (thousands in a long session)."""
    c = object.__new__(Command)
    d = c.__dict__
    d["command"], d["exit"], d["output_head"], d["call_id"], d["result_turn"] = command, exit, head, call_id, turn
    return c


def link_commands(drafts: list[Draft]) -> dict[int, tuple[Command, ...]]:
    """The commands of each draft (by position) that ran shell calls, with exit code and output head when known."""
    out: dict[int, list[list[object]]] = {}  # draft -> [command, call id, result's position or None] per shell call
    where: dict[str, list[object]] = {}  # call id -> its entry
    pending: list[list[object] | None] = []  # the latest calling turn's unanswered calls (None: ran no command)
    for i, d in enumerate(drafts):
        calls = d.calls
        if calls:
            pending = []
            for c in calls:
                entry: list[object] | None = None
                if c.kind == "shell":
                    cmd = shell_command(c.arguments)
                    if cmd is not None:
                        entry = [cmd, c.id, None]
                        out.setdefault(i, []).append(entry)
                        if c.id:
                            where[c.id] = entry
                pending.append(entry)
            continue
        if d.role != "tool" or not (pending or where):
            continue
        if d.result_of is not None:
            target = where.get(d.result_of)
            if target is None:
                continue  # the result of a call that ran no command
            if target in pending:
                pending.remove(target)
        elif pending:
            target = pending.pop(0)
            if target is None:
                continue
        else:
            continue
        target[2] = i
    result: dict[int, tuple[Command, ...]] = {}
    for i, entries in out.items():
        cmds = []
        for line, cid, at in entries:
            call_id = cid if isinstance(cid, str) else None
            if isinstance(at, int):
                res = drafts[at]
                cmds.append(_command(str(line), res.exit_code, _text(res)[:OUTPUT_HEAD_CHARS], call_id, at + 1))
            else:
                cmds.append(_command(str(line), None, None, call_id, None))
        result[i] = tuple(cmds)
    return result
