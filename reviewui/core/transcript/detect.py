"""What a transcript's head shows, and the shape tests the format detectors share.

`sniff` reads the first lines of a file (the whole file only when it is one
JSON document, salvaged when damaged) into a `Sniff`; each format's detector
(in `formats/`) decides from it. JSONL files are told apart by their first
parseable lines (Codex lines have a `payload`, Claude Code lines a session
envelope, message lists a `role`); JSON documents by their top-level shape;
folders by their event files; zip archives and Markdown by their first bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewui.core.errors import ReviewError
from reviewui.core.transcript.source import Document, parse_document, read_head_lines, read_text

_CC_TYPES = {"user", "assistant", "system", "summary", "progress", "file-history-snapshot", "queue-operation"}
_CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking"}
_HEAD_LINES = 200
_HEAD_BYTES = 4 * 1024 * 1024
_ZIP_MAGIC = b"PK\x03\x04"
CODEX_EXEC_EVENTS = frozenset({"thread.started", "turn.started", "item.started", "item.updated", "item.completed",
                               "turn.completed", "turn.failed", "error"})
"""The `type`s of `codex exec --json` lines."""
AIDER_HEADER = "# aider chat started at"
"""The line that opens every session in an Aider history file (what its detector looks for)."""


@dataclass(frozen=True)
class Sniff:
    """What the head of a transcript shows: the evidence every format's detector reads."""

    path: Path
    """The file or folder."""
    is_dir: bool = False
    """A folder (an OpenHands conversation)."""
    is_zip: bool = False
    """A zip archive (an Inspect AI `.eval` log)."""
    head: str = ""
    """The first lines of the (decompressed) file as text, a byte-order mark dropped."""
    objects: tuple[dict[str, Any], ...] = ()
    """The JSON objects of the first lines, when the file reads as JSONL."""
    document: Document | None = None
    """The parsed document, when the file is one JSON document (salvaged when damaged)."""

    @property
    def doc(self) -> Any:
        """The parsed document's value, or None when the file is not one JSON document."""
        return self.document.value if self.document is not None else None


def sniff(path: Path) -> Sniff:
    """Read the head of `path` (the whole file only when it is one JSON document).

    Raises ReviewError when it cannot be read or holds nothing but blank lines.
    """
    if path.is_dir():
        return Sniff(path, is_dir=True)
    try:
        with open(path, "rb") as f:
            if f.read(4) == _ZIP_MAGIC:
                return Sniff(path, is_zip=True)
    except OSError as e:
        raise ReviewError(f"cannot read transcript {path}: {e.strerror or e}") from e
    lines, complete = read_head_lines(path, _HEAD_LINES, _HEAD_BYTES)
    if lines and lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
    head = b"".join(lines).decode("utf-8", "replace")
    texts = [t for t in (ln.strip() for ln in lines) if t]
    if not texts:
        raise ReviewError(f"transcript {path.name} is empty")
    first = texts[0]
    first_obj = _parse(first)
    document: Document | None = None
    if first_obj is None and len(texts) > 1 and _log_line(first) and isinstance(_parse(texts[1]), dict):
        pass  # a log line in front of JSONL (`[WARN] …` before `codex exec --json` events): not a document
    elif first[:1] == b"[" or (first[:1] == b"{" and first_obj is None):
        document = parse_document(path, head if complete else read_text(path))
    elif isinstance(first_obj, dict) and complete and len(texts) == 1:
        document = Document(first_obj)  # one JSON object on one line: a document, not a log
    objects = [first_obj] + [_parse(t) for t in texts[1:]]
    return Sniff(path, head=head, objects=tuple(o for o in objects if isinstance(o, dict)), document=document)


def _log_line(first: bytes) -> bool:
    """True for a first line that cannot open a JSON document: not `[`/`{` alone nor followed by a value."""
    if first[:1] not in (b"[", b"{"):
        return True
    rest = first[1:].lstrip()
    return bool(rest) and rest[:1] not in b'[{"-0123456789tfn]}'


def _parse(raw: bytes) -> Any:
    # Decoded as the loaders decode: an invalid byte costs a character, not the line.
    try:
        return json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return None


def event_folder(path: Path) -> bool:
    """True when `path` (or its `events/`) holds OpenHands event files (`event-*.json` or `<n>.json`)."""
    events = path / "events" if (path / "events").is_dir() else path
    try:
        return any(p.suffix == ".json" and (p.name.startswith("event-") or p.stem.isdigit()) for p in events.iterdir())
    except OSError:
        return False


def is_codex_line(o: dict[str, Any]) -> bool:
    """True for a Codex rollout line."""
    return (o.get("type") in _CODEX_TYPES and "payload" in o) or o.get("record_type") == "state"


def is_claude_code_line(o: dict[str, Any]) -> bool:
    """True for a Claude Code session (or subagent) line."""
    return o.get("type") in _CC_TYPES and (
        "sessionId" in o or "parentUuid" in o or "uuid" in o or "leafUuid" in o or "agentId" in o
    )


def message_objects_flavor(objects: tuple[dict[str, Any], ...]) -> str | None:
    """The message-list flavor of JSONL lines that are messages (None when none is one)."""
    messages = [o for o in objects if "role" in o or "choices" in o]
    return messages_flavor(messages, "") if messages else None


def from_document(doc: Any, name: str = "") -> str | None:
    """Classify a parsed JSON document, or None when no format fits."""
    if isinstance(doc, list):
        items = [x for x in doc[:50] if isinstance(x, dict)]
        if not items:
            return None
        if any("action" in x or "observation" in x for x in items) and any("source" in x for x in items):
            return "openhands"
        if any(type(x.get("ts")) is int for x in items):
            return "cline"  # Cline stamps every message (and UI record) with `ts`: not a plain message list
        if any("role" in x for x in items):
            return messages_flavor(items, name)
        return None
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("history"), list) or isinstance(doc.get("trajectory"), list):
        if "trajectory_format" not in doc and "messages" not in doc:
            return "swe-agent"
    fmt_tag = doc.get("trajectory_format")
    info = doc.get("info")
    if (isinstance(fmt_tag, str) and fmt_tag.startswith("mini-swe-agent")) or (
        isinstance(info, dict) and "mini_version" in info
    ):
        return "mini-swe-agent"
    messages = doc.get("messages")
    agent = _agent_session(doc, messages)
    if agent is not None:
        return agent
    if isinstance(messages, list):
        items = [x for x in messages[:50] if isinstance(x, dict)]
        if "system" in doc and isinstance(doc.get("system"), (str, list)):
            return "anthropic"
        return messages_flavor(items, name) if items else "openai"
    if "choices" in doc:
        return "openai"
    if doc.get("type") == "message" and doc.get("role") == "assistant":
        return "anthropic"
    return None


def _agent_session(doc: dict[str, Any], messages: Any) -> str | None:
    """The agent whose session object `doc` is, when its shape says so (not a plain message list)."""
    if "sessionId" in doc and ("projectHash" in doc):
        return "gemini-cli"
    if not isinstance(messages, list):
        return None
    items = [x for x in messages[:20] if isinstance(x, dict)]
    if items and all(isinstance(x.get("info"), dict) and isinstance(x.get("parts"), list) for x in items):
        return "opencode"  # an OpenCode export, no OpenAI chat
    if items and all("role" not in x and x.get("type") in ("user", "gemini", "info", "error", "warning") for x in items):
        return "gemini-cli"
    return None


def messages_flavor(items: list[dict[str, Any]], name: str) -> str:
    """Tell an OpenAI-shaped list from an Anthropic-shaped one (or a mini-swe-agent one)."""
    if name.endswith(".traj.json"):
        return "mini-swe-agent"
    for m in items:
        extra = m.get("extra")
        if isinstance(extra, dict) and "actions" in extra:
            return "mini-swe-agent"
        content = m.get("content")
        if isinstance(content, str) and "```mswea_bash_command" in content:
            return "mini-swe-agent"
    for m in items:
        if "tool_calls" in m or m.get("role") == "tool" or "choices" in m or "finish_reason" in m:
            return "openai"
        if "stop_reason" in m:
            return "anthropic"
        content = m.get("content")
        if isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") in _ANTHROPIC_BLOCKS:
                    return "anthropic"
    return "openai"
