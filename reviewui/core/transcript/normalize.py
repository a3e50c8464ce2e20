"""Small normalizers shared by the loaders: text, token usage, stop reasons.

Providers spell the same facts differently. Anthropic's `input_tokens`
excludes cached tokens while OpenAI's `prompt_tokens` and Codex's
`input_tokens` include them; truncation is `length`, `max_tokens` or
`max_output_tokens` depending on who you ask. Everything here maps those
spellings onto the model's single vocabulary.
"""

from __future__ import annotations

import json
import re
from typing import Any

from reviewui.core.transcript.model import Usage

_REDACTED = re.compile(r"\[REDACTED[A-Z_]* len=(\d+)")

_STOPS: dict[str, str] = {
    "end_turn": "end",
    "stop": "end",
    "stop_sequence": "end",
    "end": "end",
    "completed": "end",
    "complete": "end",
    "tool_use": "tool_use",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "tool_call": "tool_use",
    "max_tokens": "max_tokens",
    "length": "max_tokens",
    "max_output_tokens": "max_tokens",
    "model_length": "max_tokens",
    "incomplete": "max_tokens",
    "model_context_window_exceeded": "context_window",
    "context_length_exceeded": "context_window",
    "context_window": "context_window",
    "exit_context": "context_window",
    "error": "error",
    "content_filter": "error",
    "refusal": "error",
    "insufficient_system_resource": "error",
}


def norm_stop(raw: Any) -> str | None:
    """Map a provider's stop/finish reason onto the model's; None when absent or unrecognised."""
    if not isinstance(raw, str) or not raw:
        return None
    return _STOPS.get(raw.lower())


def text_size(text: str) -> int:
    """Return the size of `text` in characters, or the declared size of a redaction marker.

    Sanitised transcripts replace text with `[REDACTED_TEXT len=3017 sha=…]`;
    the declared length is the honest size of what was there.
    """
    if text.startswith("[REDACTED"):
        m = _REDACTED.match(text)
        if m:
            return int(m.group(1))
    return len(text)


def content_text(content: Any) -> str:
    """Return the text of a message `content`: a string, a list of parts, or None."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                t = part.get("text")
                if isinstance(t, str):
                    parts.append(t)
                elif part.get("type") == "tool_result":
                    parts.append(content_text(part.get("content")))
        return "\n".join(parts)
    if isinstance(content, dict):
        t = content.get("text")
        return t if isinstance(t, str) else ""
    return str(content)


def parse_arguments(raw: Any) -> Any:
    """Return tool-call arguments parsed from a JSON string (the raw value when not JSON)."""
    if isinstance(raw, str):
        s = raw.strip()
        if s[:1] in ("{", "["):
            try:
                return json.loads(s)
            except ValueError:
                return raw
    return raw


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


def usage_from(u: Any) -> Usage | None:
    """Normalize one provider usage object to Usage; None when `u` is not one.

    Handles Anthropic (`input_tokens` + `cache_read_input_tokens` +
    `cache_creation_input_tokens`), OpenAI/DeepSeek/LiteLLM (`prompt_tokens`,
    `prompt_tokens_details.cached_tokens`, `prompt_cache_hit_tokens`), Codex
    (`input_tokens` + `cached_input_tokens`) and OpenHands
    (`cache_read_tokens`).
    """
    if not isinstance(u, dict):
        return None
    if "cache_read_input_tokens" in u and "prompt_tokens" not in u:
        # Anthropic's own shape (every Claude Code line): the common case, kept short.
        read, inp = u.get("cache_read_input_tokens"), u.get("input_tokens")
        made, out = u.get("cache_creation_input_tokens"), u.get("output_tokens")
        read = read if type(read) is int and read > 0 else 0
        total = read + (inp if type(inp) is int and inp > 0 else 0) + (made if type(made) is int and made > 0 else 0)
        return Usage(total, read, out if type(out) is int and out > 0 else 0, 0)
    read = _int(u.get("cache_read_input_tokens")) or _int(u.get("cache_read_tokens"))
    write = _int(u.get("cache_creation_input_tokens")) or _int(u.get("cache_write_tokens"))
    if "prompt_tokens" in u:
        prompt = _int(u.get("prompt_tokens"))
        details = u.get("prompt_tokens_details")
        cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
        cached = cached or _int(u.get("prompt_cache_hit_tokens")) or read
        if prompt < read + write:
            # LiteLLM versions differ on whether Anthropic's cache tokens are in prompt_tokens.
            prompt += read + write
        cdetails = u.get("completion_tokens_details")
        reasoning = _int(cdetails.get("reasoning_tokens")) if isinstance(cdetails, dict) else 0
        reasoning = reasoning or _int(u.get("reasoning_tokens"))
        return Usage(prompt, min(cached, prompt), _int(u.get("completion_tokens")), reasoning)
    if "cached_input_tokens" in u:
        total = _int(u.get("input_tokens"))
        cached = _int(u.get("cached_input_tokens"))
        return Usage(
            total, min(cached, total), _int(u.get("output_tokens")), _int(u.get("reasoning_output_tokens"))
        )
    if "input_tokens" in u or "output_tokens" in u:
        total = _int(u.get("input_tokens")) + read + write
        return Usage(total, read, _int(u.get("output_tokens")), _int(u.get("reasoning_tokens")))
    return None


def prompt_key(*parts: Any) -> str:
    """Return a stable key for what a model call was prompted with (to spot prefix changes)."""
    import hashlib  # here, not at the top: only the loaders that key prompts need it (not Claude Code's)

    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha1(blob.encode("utf-8", "replace")).hexdigest()
