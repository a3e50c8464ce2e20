"""Tool calls written as text, by agents that run models without native function calling.

OpenHands and SWE-agent prompt such models to answer with
`<function=NAME><parameter=KEY>VALUE</parameter>…</function>`; others use
`<tool_call>{"name": …, "arguments": …}</tool_call>` (Hermes, Qwen),
`<invoke name="…"><parameter name="…">…</parameter></invoke>`, or OpenHands'
older `<execute_bash>…</execute_bash>` tags. The tool's answer comes back as
a user message, `EXECUTION RESULT of [NAME]:` in OpenHands' case.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FUNCTION = re.compile(r"<function=([A-Za-z0-9_.\-]+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_PARAM = re.compile(r"<parameter=([A-Za-z0-9_\-]+)>(.*?)(?:</parameter>|(?=<parameter=)|\Z)", re.DOTALL)
_TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)
_INVOKE = re.compile(r"<invoke name=\"([^\"]+)\">(.*?)</invoke>", re.DOTALL)
_INVOKE_PARAM = re.compile(r"<parameter name=\"([^\"]+)\"[^>]*>(.*?)</parameter>", re.DOTALL)
_EXECUTE = re.compile(r"<(execute_bash|execute_ipython|execute_browse)>(.*?)</\1>", re.DOTALL)
_EXECUTE_ARG = {"execute_bash": "command", "execute_ipython": "code", "execute_browse": "code"}
_RESULT = re.compile(r"^\s*EXECUTION RESULT of \[([A-Za-z0-9_.\-]+)\]:")


def text_tool_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Return `(tool name, arguments)` for every tool call written as text in `text`, in order."""
    if "<" not in text:
        return []
    found: list[tuple[int, str, dict[str, Any]]] = []
    if "<function=" in text:
        for m in _FUNCTION.finditer(text):
            args = {k: _strip(v) for k, v in _PARAM.findall(m.group(2))}
            found.append((m.start(), m.group(1), args))
    if "<tool_call>" in text:
        for m in _TOOL_CALL.finditer(text):
            try:
                obj = json.loads(m.group(1))
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("name"), str):
                raw = obj.get("arguments")
                if isinstance(raw, str):
                    try:
                        raw = json.loads(raw)
                    except ValueError:
                        raw = {"input": raw}
                found.append((m.start(), obj["name"], raw if isinstance(raw, dict) else {}))
    if "<invoke name=" in text:
        for m in _INVOKE.finditer(text):
            found.append((m.start(), m.group(1), {k: _strip(v) for k, v in _INVOKE_PARAM.findall(m.group(2))}))
    if "<execute_" in text:
        for m in _EXECUTE.finditer(text):
            found.append((m.start(), m.group(1), {_EXECUTE_ARG[m.group(1)]: m.group(2).strip()}))
    return [(name, args) for _, name, args in sorted(found, key=lambda f: f[0])]


def _strip(value: str) -> str:
    # The value sits on its own lines between the tags: drop that one leading and trailing newline.
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


def result_tool(text: str) -> str | None:
    """The tool name when a user message is the text answer to a text tool call (`EXECUTION RESULT of [x]:`)."""
    m = _RESULT.match(text[:200])
    return m.group(1) if m else None
