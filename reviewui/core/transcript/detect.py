"""Working out which agent wrote a transcript, from its first bytes and its name.

JSONL files are told apart by their first parseable lines (Codex lines have a
`payload`, Claude Code lines a session envelope, message lists a `role`);
JSON documents by their top-level shape; folders by their event files. Only
the head of a file is read here (a few hundred KB at most).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reviewui.core.errors import ReviewError
from reviewui.core.transcript.model import FORMATS
from reviewui.core.transcript.source import load_document, read_head_lines

ALIASES: dict[str, str] = {
    "claude": "claude-code",
    "claude_code": "claude-code",
    "cc": "claude-code",
    "codex-cli": "codex",
    "codex-rollout": "codex",
    "openai-chat": "openai",
    "chat": "openai",
    "mini": "mini-swe-agent",
    "mini_swe_agent": "mini-swe-agent",
    "mini-swe": "mini-swe-agent",
    "swe_agent": "swe-agent",
    "sweagent": "swe-agent",
    "open-hands": "openhands",
}

_CC_TYPES = {"user", "assistant", "system", "summary", "progress", "file-history-snapshot", "queue-operation"}
_CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking"}
_HEAD_LINES = 200
_HEAD_BYTES = 4 * 1024 * 1024


def canonical_format(name: str) -> str:
    """Return the canonical format name for `name` (an alias or a format).

    Raises ReviewError naming the known formats when `name` is not one.
    """
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in FORMATS:
        raise ReviewError(f"unknown transcript format {name!r} (known: {', '.join(FORMATS)})")
    return key


def detect_format(path: Path) -> str:
    """Return the format of the transcript at `path` (a file or a conversation folder).

    Raises ReviewError when the file cannot be read or no known format fits.
    """
    return detect(path)[0]


def detect(path: Path) -> tuple[str, Any]:
    """Return `(format, document)`: the document is the parsed JSON when the file is one, else None.

    Raises ReviewError when the file cannot be read or no known format fits.
    """
    if path.is_dir():
        if _event_folder(path):
            return "openhands", None
        raise ReviewError(f"{path} is a folder but not an OpenHands conversation (no events/*.json)")
    lines, complete = read_head_lines(path, _HEAD_LINES, _HEAD_BYTES)
    texts = [ln.strip() for ln in lines]
    texts = [t for t in texts if t]
    if not texts:
        raise ReviewError(f"transcript {path.name} is empty")
    first = texts[0].lstrip(b"\xef\xbb\xbf")
    first_obj = _parse(first)
    doc: Any = None
    if first[:1] == b"[" or (first[:1] == b"{" and first_obj is None):
        doc = _parse(b"".join(lines)) if complete else _load_whole(path)
    elif isinstance(first_obj, dict) and complete and len(texts) == 1:
        doc = first_obj  # one JSON object on one line: a document, not a log
    if doc is not None:
        fmt = from_document(doc, path.name)
        if fmt is not None:
            return fmt, doc
    # JSONL (a malformed first line is just a skipped line).
    objects = [first_obj] + [_parse(t) for t in texts[1:]]
    fmt = _from_objects([o for o in objects if isinstance(o, dict)])
    if fmt is not None:
        return fmt, None
    raise ReviewError(f"cannot tell the format of transcript {path.name}; pass --transcript-format")


def document_or_none(path: Path) -> Any:
    """Return the parsed JSON document when the file is one, or None when it is JSONL.

    Raises ReviewError when it cannot be read, or looks like one JSON document but is not valid JSON.
    """
    lines, complete = read_head_lines(path, _HEAD_LINES, _HEAD_BYTES)
    texts = [t for t in (ln.strip() for ln in lines) if t]
    if not texts:
        return None
    first = texts[0].lstrip(b"\xef\xbb\xbf")
    first_obj = _parse(first)
    if first[:1] == b"[" or (first[:1] == b"{" and first_obj is None):
        return load_document(path)
    if isinstance(first_obj, dict) and complete and len(texts) == 1:
        return first_obj
    return None


def _parse(raw: bytes) -> Any:
    # Decoded as the loaders decode: an invalid byte costs a character, not the line.
    try:
        return json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return None


def _load_whole(path: Path) -> Any:
    try:
        return load_document(path)
    except ReviewError:
        return None


def _event_folder(path: Path) -> bool:
    """True when `path` (or its `events/`) holds OpenHands event files (`event-*.json` or `<n>.json`)."""
    events = path / "events" if (path / "events").is_dir() else path
    try:
        return any(p.suffix == ".json" and (p.name.startswith("event-") or p.stem.isdigit()) for p in events.iterdir())
    except OSError:
        return False


def _from_objects(objects: list[dict[str, Any]]) -> str | None:
    """Classify JSONL by its first parseable lines, or None when none fits."""
    for o in objects:
        t = o.get("type")
        if t in _CODEX_TYPES and "payload" in o:
            return "codex"
        if o.get("record_type") == "state":
            return "codex"
    for o in objects:
        t = o.get("type")
        if t in _CC_TYPES and ("sessionId" in o or "parentUuid" in o or "uuid" in o or "leafUuid" in o):
            return "claude-code"
    messages = [o for o in objects if "role" in o or "choices" in o]
    if messages:
        return messages_flavor(messages, "")
    return None


def from_document(doc: Any, name: str = "") -> str | None:
    """Classify a parsed JSON document, or None when no format fits."""
    if isinstance(doc, list):
        items = [x for x in doc[:50] if isinstance(x, dict)]
        if not items:
            return None
        if any("action" in x or "observation" in x for x in items) and any("source" in x for x in items):
            return "openhands"
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
