"""The agent's own session ids a transcript names (to match git-ai authorship notes' `agent_id.id`)."""

from __future__ import annotations

import re
from pathlib import Path

from reviewui.core.transcript.detect import sniff

_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def session_ids(path: str | Path) -> frozenset[str]:
    """The session ids in the head of the transcript at `path` (`sessionId`, a Codex `session_meta` id,
    a SpecStory `Session <uuid>` comment, an OpenCode `ses_…`); empty when it names none or cannot be read."""
    try:
        s = sniff(Path(path))
    except (OSError, ValueError):
        return frozenset()
    out: set[str] = set()
    for o in s.objects:
        sid = o.get("sessionId")
        if isinstance(sid, str):
            out.add(sid)
        v = o.get("v")  # a VS Code chat session log's first entry
        if o.get("kind") == 0 and isinstance(v, dict) and isinstance(v.get("sessionId"), str):
            out.add(v["sessionId"])
        payload = o.get("payload")
        if o.get("type") == "session_meta" and isinstance(payload, dict) and isinstance(payload.get("id"), str):
            out.add(payload["id"])
    doc = s.doc
    if isinstance(doc, dict):
        for key in ("sessionId", "session_id", "id"):
            if isinstance(doc.get(key), str):
                out.add(doc[key])
        info = doc.get("info")
        if isinstance(info, dict) and isinstance(info.get("id"), str):
            out.add(info["id"])
    if s.document is None and not s.objects:
        head = s.head[:4000]
        out.update(m.group(0) for m in _UUID.finditer(head) if "Session " + m.group(0) in head)
        out.update(re.findall(r"\*\*Session ID:\*\* (ses_\w+)", head))
    return frozenset(x[:200] for x in out)
