"""Loader for OpenHands resolver and evaluation output: JSONL, one run per line.

Each line is one instance the agent worked on (`instance_id`, or an `issue`
with its number), the patch it produced (`git_patch`, or
`test_result.git_patch`) and its `history` of V0 events. Older resolver
versions flatten an event's `args` into the event and leave out `source`.
One run is read: the one `--instance` names, else the one whose patch touches
the most files the branch under review changes, else the first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from reviewui.core.errors import ReviewError
import reviewui.core.transcript.openhands as openhands
from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.pathmatch import paths_match
from reviewui.core.transcript.patches import parse_unified_diff
from reviewui.core.transcript.source import LineCounter, iter_jsonl

_EVENT_KEYS = {"id", "timestamp", "source", "message", "action", "observation", "cause", "content",
               "tool_call_metadata", "llm_metrics", "extras", "args", "timeout", "hidden"}


def instance_id(record: dict[str, Any], position: int) -> str:
    """The run's id: `instance_id`, the issue number, or its 1-based line position."""
    iid = record.get("instance_id")
    if isinstance(iid, (str, int)) and str(iid):
        return str(iid)
    issue = record.get("issue")
    if isinstance(issue, dict) and isinstance(issue.get("number"), int):
        return str(issue["number"])
    return str(position)


def patch_of(record: dict[str, Any]) -> str:
    """The patch the run produced ('' when none is recorded)."""
    patch = record.get("git_patch")
    if not isinstance(patch, str):
        tr = record.get("test_result")
        patch = tr.get("git_patch") if isinstance(tr, dict) else None
    return patch if isinstance(patch, str) else ""


def _overlap(record: dict[str, Any], branch_files: frozenset[str]) -> int:
    if not branch_files:
        return 0
    files = {e.path for e in parse_unified_diff(patch_of(record).replace("\r\n", "\n"))}
    return sum(1 for f in files if any(paths_match(f, b) for b in branch_files))


def load(path: Path, counter: LineCounter, instance: str | None, branch_files: frozenset[str]) -> Run:
    """Read the chosen run of a resolver output file. Raises ReviewError when `instance` is not in it."""
    return load_records((rec for _, rec in iter_jsonl(path, counter)), counter, instance, branch_files, path.name)


def load_records(
    records: Iterable[Any], counter: LineCounter, instance: str | None, branch_files: frozenset[str], name: str = "",
) -> Run:
    """Read the chosen run among `records` (see the module docstring for which)."""
    chosen: tuple[str, dict[str, Any]] | None = None
    best = -1
    ids: list[str] = []
    for pos, rec in enumerate(records, start=1):
        if not isinstance(rec, dict) or not isinstance(rec.get("history"), list):
            counter.skipped += 1
            continue
        iid = instance_id(rec, pos)
        ids.append(iid)
        if instance is not None:
            if iid == instance and chosen is None:
                chosen = (iid, rec)
            continue
        score = _overlap(rec, branch_files)
        if score > best:
            chosen, best = (iid, rec), score
    if chosen is None:
        if instance is not None:
            shown = ", ".join(ids[:20]) + (" …" if len(ids) > 20 else "")
            raise ReviewError(f"no instance {instance!r} in {name or 'the resolver output'} (it has: {shown})")
        return Run()
    iid, rec = chosen
    run = openhands.load_events(_v0_events(rec["history"]), counter)
    if len(ids) > 1:
        why = "as asked" if instance is not None else "its patch matches the branch" if best > 0 else "the first"
        run.notes.append(
            f"instance {iid}, one of {len(ids)} runs in the file ({why}; others: "
            f"{', '.join(i for i in ids[:20] if i != iid)}; pick one with --instance ID)"
        )
    return run


def _v0_events(history: list[Any]) -> list[Any]:
    out: list[Any] = []
    last_action: Any = None
    for i, e in enumerate(history):
        ev = _v0_event(e, i)
        if isinstance(ev, dict):
            if "action" in ev:
                last_action = ev["id"]
            elif "observation" in ev and "cause" not in ev:
                ev["cause"] = last_action  # old resolver output: a result follows its action
        out.append(ev)
    return out


def _v0_event(e: Any, i: int) -> Any:
    """An event in today's V0 shape (args nested, a source), whatever resolver version wrote it."""
    if not isinstance(e, dict):
        return e
    out = dict(e)
    if "action" in e and "args" not in e:
        out["args"] = {k: v for k, v in e.items() if k not in _EVENT_KEYS}
        if e.get("action") == "message" and "content" in e:
            out["args"]["content"] = e["content"]
    if "observation" in e and "extras" not in e and "exit_code" in e:
        out["extras"] = {"metadata": {"exit_code": e.get("exit_code")}}
    if "source" not in e and "action" in e:
        # The first message is the task; every other action is the agent's.
        out["source"] = "user" if e.get("action") == "message" and i == 0 else "agent"
    out.setdefault("id", i)
    return out
