"""Loader for OpenCode's Markdown export (the TUI's `/export`, the usual way a session is shared).

`# <title>`, `**Session ID:** ses_…`, `**Created:**`/`**Updated:**` (in the
exporter's locale), then sections separated by `---`: `## User` (what was
typed) and `## Assistant (<agent> · <model> · <seconds>s)` (or a bare
`## Assistant`). In an assistant section `_Thinking:_` opens reasoning,
`**Tool: name**` a tool call, followed, when the export kept tool input and
output, by `**Input:**` and a ```json block of the call's arguments and
`**Output:**` (or `**Error:**`) and a block of its result; an export made
without them lists the calls by name only (kept as calls of kind `other`:
what they touched is unknown). The export writes no per-message
time, so turns have none. Reasoning and the reply are both plain paragraphs
after `_Thinking:_`: the first paragraph is read as the reasoning, the rest
as the reply (the exporter writes no boundary between them).
"""

from __future__ import annotations

import json
import re

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.model import ToolCall
from reviewui.core.transcript.tools import interpret_call

_SECTION = re.compile(r"^## (User|Assistant)\b.*$", re.M)
_TOOL = re.compile(r"^\*\*Tool: ([^*]+)\*\*\s*$", re.M)
_BLOCK = re.compile(r"^\*\*(Input|Output|Error):\*\*\s*\n```[^\n]*\n(.*?)\n```", re.M | re.S)
_ARG_NAMES = {"filePath": "file_path", "oldString": "old_string", "newString": "new_string",
              "replaceAll": "replace_all", "patchText": "input"}


def load_markdown(text: str) -> Run:
    """Read an OpenCode Markdown export into drafts."""
    run = Run()
    heads = list(_SECTION.finditer(text))
    n = 0
    for k, m in enumerate(heads):
        body = text[m.end():heads[k + 1].start() if k + 1 < len(heads) else len(text)].strip()
        body = body.removesuffix("---").strip()
        line = text.count("\n", 0, m.start()) + 1
        if m.group(1) == "User":
            run.new("user", line).add_text(body)
            continue
        dr = run.new("assistant", line)
        tools = list(_TOOL.finditer(body))
        prose = body[:tools[0].start()] if tools else body
        _prose(dr, prose)
        for j, t in enumerate(tools):
            chunk = body[t.end():tools[j + 1].start() if j + 1 < len(tools) else len(body)]
            blocks = dict(_BLOCK.findall(chunk))
            n += 1
            cid = f"oc-md-{n}"
            args = _args(blocks.get("Input"))
            call, edits = interpret_call("apply_patch" if t.group(1) == "patch" else t.group(1).strip(), args, cid)
            if args is None:  # exported without its input: which file or command it touched is unknown
                call = ToolCall(call.name, None, "other", (), cid)
            run.add_call(dr, call, edits)
            tail = _BLOCK.sub("", chunk).strip()
            if "Output" in blocks or "Error" in blocks:
                res = run.new("tool", line)
                res.add_text(blocks.get("Output", blocks.get("Error", "")))
                run.result(res, cid)
                if "Error" in blocks:
                    res.is_error = True
                    run.call_failed(cid)
            if tail and not tail.startswith("**Tool:"):
                dr = run.new("assistant", line)
                _prose(dr, tail)
    return run


def _prose(dr: object, text: str) -> None:
    from reviewui.core.transcript.builder import Draft

    assert isinstance(dr, Draft)
    text = text.strip()
    if text.startswith("_Thinking:_"):
        rest = text[len("_Thinking:_"):].strip()
        thought, _, reply = rest.partition("\n\n")
        dr.add_reasoning(thought.strip(), present=True)
        dr.add_text(reply.strip())
    else:
        dr.add_text(text)


def _args(raw: str | None) -> object:
    if raw is None:
        return None
    try:
        v = json.loads(raw)
    except ValueError:
        return None
    return {_ARG_NAMES.get(k, k): x for k, x in v.items()} if isinstance(v, dict) else v
