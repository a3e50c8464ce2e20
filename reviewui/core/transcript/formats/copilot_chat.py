"""GitHub Copilot Chat in VS Code: a chat session's JSON (`chatSessions/<id>.json`, "Chat: Export Chat…") and its
newer operation log (`chatSessions/<id>.jsonl`).

The JSON is `{version: 3, requesterUsername, responderUsername, initialLocation, sessionId, creationDate,
requests: [...]}` (upstream: microsoft/vscode, `ISerializableChatData` in chat/common/chatModel.ts). Each
request is one exchange: `message.text` (what the user typed), `timestamp` (epoch ms), `modelId`, `response`
(the parts the panel showed: markdown `{value}`, `inlineReference`, `thinking`, `toolInvocationSerialized`
`{toolId, toolCallId, toolSpecificData}`, `textEditGroup` `{uri, edits}`, …) and `result.metadata`, where
Copilot's agent writes what the model really did: `toolCallRounds` `[{response, toolCalls: [{name, arguments
(a JSON string), id}], thinking?}]` and `toolCallResults` `{id: {content: [...]}}` (text parts, or a
prompt-tsx tree whose leaves hold `text`). A request is read from its rounds when it has them (each round
an assistant turn, each call's result a tool turn), else from its response parts. Copilot's tool
arguments are camelCase (`filePath`, `oldString`, `newString`) and are mapped onto the shared tool
vocabulary: `replace_string_in_file` and `multi_replace_string_in_file` are replace edits,
`create_file` a write, `insert_edit_into_file` an edit whose text is a sketch with `...existing code...`
(its content is unknown), `run_in_terminal` a shell command. `result.errorDetails` is a notice.

The operation log (VS Code 1.109+, `ObjectMutationLog`) starts with `{kind: 0, v: <the JSON above>}` and
appends `{kind: 1, k: path, v}` (set), `{kind: 2, k: path, v: [...], i?}` (push, after cutting the array
at `i`) and `{kind: 3, k: path}` (delete); it is replayed, then read as the JSON.

The detector keys on `requests` of `{message, …}` beside a chat session's header (`responderUsername`,
`initialLocation` or `version` with `sessionId`), or on a first line `{kind: 0, v: {requests}}` with every
line an operation. Real samples: tests/fixtures/transcripts/copilot-chat/SOURCE.txt (one JSON, one log, both
agent mode). No usage is recorded in them, so turns have none.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import SHAPE_ERRORS, Draft, Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, keyed
from reviewui.core.transcript.formats._shape import document
from reviewui.core.transcript.model import FileEdit, ToolCall
from reviewui.core.transcript.normalize import parse_arguments
from reviewui.core.transcript.source import LineCounter, iter_jsonl
from reviewui.core.transcript.timestamps import iso_time
from reviewui.core.transcript.tools import interpret_call

NAME = "copilot-chat"
_HEADER = ("responderUsername", "initialLocation", "requesterUsername")
_TOOLS = {"replace_string_in_file": "edit", "create_file": "write_file", "run_in_terminal": "bash",
          "read_file": "read_file", "list_dir": "list_dir", "file_search": "glob", "grep_search": "grep",
          "apply_patch": "apply_patch", "copilot_readFile": "read_file", "copilot_replaceString": "edit",
          "copilot_createFile": "write_file", "copilot_runInTerminal": "bash"}
_ARGS = {"filePath": "file_path", "oldString": "old_string", "newString": "new_string", "dirPath": "path"}
_SKETCH = frozenset({"insert_edit_into_file", "copilot_insertEdit", "edit_notebook_file"})
_MAX_DEPTH = 64
_MAX_TEXT = 1 << 20
_MAX_OPS = 200_000


def _session(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("requests"), list)


def _exchanges(doc: dict[str, Any]) -> bool:
    items = [r for r in doc["requests"][:20] if isinstance(r, dict)]
    return all("message" in r or "requestId" in r for r in items)


def _op(o: dict[str, Any]) -> bool:
    return o.get("kind") in (0, 1, 2, 3) and ("v" in o or "k" in o)


def detect(s: Sniff) -> Claim | None:
    """A chat session's JSON (`requests` of `{message, response}` beside its header), or its operation log."""
    if s.is_dir or s.is_zip:
        return None
    doc = s.doc
    if s.document is not None and len(s.objects) <= 1:
        if not _session(doc) or not (_exchanges(doc) or any(k in doc for k in _HEADER)):
            return None
        return keyed(True, {"`requests` of `{message, response}`": _exchanges(doc),
                            "a chat session header (responderUsername, initialLocation, or version with sessionId)":
                            any(k in doc for k in _HEADER) or ("version" in doc and "sessionId" in doc)})
    first = s.objects[0] if s.objects else None
    return keyed(isinstance(first, dict) and first.get("kind") == 0 and _session(first.get("v")), {
        "a first line `{kind: 0, v: {requests}}`": True, "every line an operation {kind, k, v}": all(
            _op(o) for o in s.objects)})


def replay(ops: Any) -> dict[str, Any]:
    """The session an operation log's entries rebuild (entries of an unexpected shape are skipped).

    The entries are consumed: the first one's value becomes the session and the later ones change it in place.
    """
    state: Any = None
    for n, o in enumerate(ops):
        if n >= _MAX_OPS:
            break
        kind = o.get("kind")
        if kind == 0:
            state = o.get("v")
            continue
        path = o.get("k")
        if state is None or not isinstance(path, list) or not path:
            continue
        try:
            parent = state
            for key in path[:-1]:
                parent = parent[key]
            last = path[-1]
            if kind == 1:
                parent[last] = o.get("v")
            elif kind == 3 and isinstance(parent, dict):
                parent.pop(last, None)
            elif kind == 2:
                arr = parent[last]
                if isinstance(o.get("i"), int):
                    del arr[o["i"]:]
                arr.extend(o.get("v") or [])
        except SHAPE_ERRORS:
            continue
    return state if isinstance(state, dict) else {}


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the session (the log replayed first): per request the user's message, the rounds or the response."""
    notes: list[str] = []
    if s.document is not None and len(s.objects) <= 1:
        doc = document(path, s, counter, notes)
    else:
        doc = replay(o for _, o in iter_jsonl(path, counter))
    run = Run()
    run.notes.extend(notes)
    requests = doc.get("requests") if isinstance(doc, dict) else None
    for i, r in enumerate(requests if isinstance(requests, list) else [], start=1):
        if not isinstance(r, dict):
            counter.skipped += 1
            continue
        try:
            _request(run, r, i)
        except SHAPE_ERRORS:
            counter.skipped += 1
    return run


def _request(run: Run, r: dict[str, Any], line: int) -> None:
    run.stamp = iso_time(r.get("timestamp"))
    msg = r.get("message")
    text = msg.get("text") if isinstance(msg, dict) else msg
    if isinstance(text, str) and text:
        run.new("user", line).add_text(text)
    result = _dict(r.get("result"))
    meta = _dict(result.get("metadata"))
    rounds = meta.get("toolCallRounds")
    if isinstance(rounds, list) and rounds:
        results = _dict(meta.get("toolCallResults"))
        for rd in rounds:
            if isinstance(rd, dict):
                _round(run, rd, results, line)
    elif isinstance(r.get("response"), list):
        _response(run, r["response"], line)
    err = result.get("errorDetails")
    if isinstance(err, dict) and err.get("message"):
        run.notice(f"error: {err['message']}", line)
    if r.get("isCanceled") is True and run.last is not None and run.last.role == "assistant":
        run.last.note = "the user cancelled this request"


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _call(run: Run, dr: Draft, name: str, args: Any, cid: str | None) -> None:
    """Add Copilot's tool call `name` to `dr`, in the shared vocabulary (the call keeps its own name)."""
    if isinstance(args, dict):
        args = {_ARGS.get(k, k): v for k, v in args.items()}
    path = args.get("file_path") if isinstance(args, dict) else None
    if name in _SKETCH and isinstance(path, str):
        call = ToolCall(name, args, "edit", (path,), cid)
        run.add_call(dr, call, [FileEdit(path, "shell", existed=True, call_id=cid)])
        return
    if name == "multi_replace_string_in_file" and isinstance(args, dict) and isinstance(args.get("replacements"), list):
        edits: list[FileEdit] = []
        for rep in args["replacements"]:
            if isinstance(rep, dict) and isinstance(rep.get("filePath"), str):
                edits.extend(interpret_call("edit", {_ARGS.get(k, k): v for k, v in rep.items()}, cid)[1])
        run.add_call(dr, ToolCall(name, args, "edit", tuple(dict.fromkeys(e.path for e in edits)), cid), edits)
        return
    call, found = interpret_call(_TOOLS.get(name, name), args, cid)
    run.add_call(dr, dataclasses.replace(call, name=name), found)


def _round(run: Run, rd: dict[str, Any], results: dict[str, Any], line: int) -> None:
    dr = run.new("assistant", line)
    dr.add_text(rd.get("response") if isinstance(rd.get("response"), str) else None)
    thinking = rd.get("thinking")
    if isinstance(thinking, dict):
        shown = thinking.get("text")
        dr.add_reasoning(shown if isinstance(shown, str) else None, present=True)
    ids: list[str | None] = []
    for tc in rd.get("toolCalls") or []:
        if not isinstance(tc, dict):
            continue
        cid = tc.get("id") if isinstance(tc.get("id"), str) else None
        _call(run, dr, str(tc.get("name") or "tool"), parse_arguments(tc.get("arguments")), cid)
        ids.append(cid)
    for cid in ids:
        if cid is not None and cid in results:
            res = run.new("tool", line)
            out = _text(results[cid])
            res.add_text(out)
            run.result(res, cid)
            if out.startswith("ERROR"):
                res.is_error = True
                run.call_failed(cid)


def _text(v: Any, depth: int = 0, out: list[str] | None = None) -> str:
    """The text of a tool result: its string parts and the `text` leaves of a prompt-tsx tree (bounded)."""
    top = out is None
    acc: list[str] = [] if out is None else out
    if depth > _MAX_DEPTH or sum(map(len, acc)) > _MAX_TEXT:
        return ""
    if isinstance(v, str):
        acc.append(v)
    elif isinstance(v, list):
        for x in v:
            _text(x, depth + 1, acc)
    elif isinstance(v, dict):
        if isinstance(v.get("text"), str):
            acc.append(v["text"])
        for key in ("content", "value", "node", "children"):
            if key in v and not isinstance(v[key], (int, float, bool)):
                _text(v[key], depth + 1, acc)
    return "".join(acc)[:_MAX_TEXT] if top else ""


def _response(run: Run, parts: list[Any], line: int) -> None:
    """A request without rounds: its response parts (markdown, references, thinking, tool invocations, edits)."""
    dr = run.new("assistant", line)
    said: list[str] = []  # markdown fragments and references, one text as the panel showed it
    for p in parts:
        if not isinstance(p, dict):
            continue
        kind = p.get("kind")
        if kind in (None, "markdownContent") and isinstance(p.get("value"), str):
            said.append(p["value"])
        elif kind == "inlineReference":
            ref = p.get("inlineReference")
            where = ref.get("path") if isinstance(ref, dict) else None
            name = p.get("name") or (where.rsplit("/", 1)[-1] if isinstance(where, str) else "")
            said.append(name if isinstance(name, str) else "")
        elif kind == "thinking":
            dr.add_reasoning(p.get("value") if isinstance(p.get("value"), str) else None, present=True)
        elif kind == "toolInvocationSerialized":
            data = p.get("toolSpecificData")
            cmd = data.get("commandLine") if isinstance(data, dict) and data.get("kind") == "terminal" else None
            args = {"command": cmd.get("original")} if isinstance(cmd, dict) else None
            cid = p.get("toolCallId") if isinstance(p.get("toolCallId"), str) else None
            _call(run, dr, "run_in_terminal" if args else str(p.get("toolId") or "tool"), args, cid)
        elif kind == "textEditGroup":
            uri = p.get("uri")
            where = uri.get("path") if isinstance(uri, dict) else None
            if isinstance(where, str) and where:
                dr.edits.append(FileEdit(where, "shell", existed=None))  # what the panel applied; its text is ranges
    dr.add_text("".join(said))


FORMAT = Format(NAME, detect, load, "copilot-chat/git-ai_copilot_session_simple.json",
                ("copilot-vscode", "vscode-copilot", "copilot_chat"))
"""Registered in formats/__init__.py."""

__all__ = ["FORMAT", "detect", "load", "replay"]
