"""Loader for Inspect AI eval logs: `.eval` zip archives and `.json` logs.

A log holds one or more samples (an id and an epoch each); one sample is one
agent run. Its `messages` are chat messages (`system`, `user`, `assistant`
with `tool_calls` whose `function` and parsed `arguments`, `tool` results with
`tool_call_id` and an `error` when the call failed); repeated message content
may be stored once in `attachments` and referred to as `attachment://<id>`.
Per-sample usage is a total per model (`model_usage`), so it goes on the last
assistant turn; the scorer's verdict becomes a final system turn.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from reviewui.core.bounded import read_zip_member
from reviewui.core.errors import ReviewError
import reviewui.core.transcript.messages as messages
from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.model import Usage
from reviewui.core.transcript.normalize import content_text, usage_from
from reviewui.core.transcript.source import LineCounter
from reviewui.core.transcript.jsonget import dict_at
from reviewui.core.transcript.timestamps import iso_time

_ATTACHMENT = "attachment://"


def load_zip(path: Path, counter: LineCounter, instance: str | None) -> Run:
    """Read one sample of a `.eval` archive (`instance` = `ID` or `ID:EPOCH`; default the first).

    Raises ReviewError when the archive cannot be read or has no such sample.
    """
    try:
        with zipfile.ZipFile(path) as z:
            names = sorted(n for n in z.namelist() if n.startswith("samples/") and n.endswith(".json"))
            if not names:
                return Run()
            name = _pick_name(names, instance, path)
            sample = json.loads(read_zip_member(z, name, "transcript", path).decode("utf-8", "replace"))  # capped
    except (OSError, zipfile.BadZipFile, ValueError, KeyError) as e:
        raise ReviewError(f"cannot read Inspect AI log {path.name}: {e}") from e
    run = load_sample(sample, counter)
    if len(names) > 1:
        run.notes.append(f"sample {name[len('samples/'):-len('.json')]} of {len(names)} (pick another with --instance ID:EPOCH)")
    return run


def _pick_name(names: list[str], instance: str | None, path: Path) -> str:
    if instance is None:
        return min(names, key=_sample_order)
    sid, _, epoch = instance.partition(":")
    for n in sorted(names, key=_sample_order):
        stem = n[len("samples/") : -len(".json")]
        s_id, _, s_epoch = stem.rpartition("_epoch_")
        if s_id == sid and (not epoch or s_epoch == epoch):
            return n
    raise ReviewError(f"no sample {instance!r} in {path.name}")


def _sample_order(name: str) -> tuple[int, str, int]:
    stem = name[len("samples/") : -len(".json")]
    sid, _, epoch = stem.rpartition("_epoch_")
    return (0 if sid.isdigit() else 1, sid.zfill(12) if sid.isdigit() else sid, int(epoch) if epoch.isdigit() else 0)


def load_log(doc: Any, counter: LineCounter, instance: str | None) -> Run:
    """Read one sample of a parsed `.json` log (`instance` = `ID` or `ID:EPOCH`; default the first)."""
    samples = doc.get("samples") if isinstance(doc, dict) else None
    if not isinstance(samples, list) or not samples:
        return Run()
    chosen = samples[0]
    if instance is not None:
        sid, _, epoch = instance.partition(":")
        found = [
            s for s in samples
            if isinstance(s, dict) and str(s.get("id")) == sid and (not epoch or str(s.get("epoch")) == epoch)
        ]
        if not found:
            raise ReviewError(f"no sample {instance!r} in this log")
        chosen = found[0]
    if not isinstance(chosen, dict):
        counter.skipped += 1
        return Run()
    run = load_sample(chosen, counter)
    if len(samples) > 1:
        run.notes.append(f"sample {chosen.get('id')}:{chosen.get('epoch')} of {len(samples)} (pick another with --instance ID:EPOCH)")
    return run


def load_sample(sample: dict[str, Any], counter: LineCounter) -> Run:
    """Read one sample's messages (attachments resolved), its usage and its score into drafts."""
    attachments = dict_at(sample, "attachments")
    st = messages.State("openai")
    calls = _model_calls(sample.get("events"))
    for i, m in enumerate(sample.get("messages") or [], start=1):
        if not isinstance(m, dict):
            counter.skipped += 1
            continue
        m = _resolve(m, attachments)
        if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list):
            m = dict(m, tool_calls=[_openai_call(c) for c in m["tool_calls"] if isinstance(c, dict)])
        if m.get("role") == "tool" and isinstance(m.get("error"), dict):
            m = dict(m, is_error=True)
        first = len(st.run.drafts)
        messages.guarded(st, m, i, counter)
        call = calls.get(m.get("id")) or calls.get(("tool", m.get("tool_call_id")))
        if call is None and i == 1:
            call = calls.get("start")  # the task's input: as old as the sample
        if call is not None:
            for dr in st.run.drafts[first:]:
                dr.time = call[1] or dr.time
                if dr.role == "assistant" and call[0] is not None:
                    dr.usage = call[0]
    run = st.run
    if not any(u is not None for u, _ in calls.values()):
        _usage(run, sample.get("model_usage"))  # no per-call figures: the sample total is all the log has
    _score(run, sample.get("scores"))
    return run


def _model_calls(events: Any) -> dict[Any, tuple[Usage | None, str | None]]:
    """Each model event's reply message id → that call's own usage and time (tool events: ("tool", id) → time)."""
    out: dict[Any, tuple[Usage | None, str | None]] = {}
    for e in events if isinstance(events, list) else []:
        if not isinstance(e, dict):
            continue
        if "start" not in out and e.get("event") == "sample_init":
            out["start"] = (None, iso_time(e.get("timestamp")))
        if e.get("event") == "tool" and e.get("id") is not None:
            out[("tool", e["id"])] = (None, iso_time(e.get("timestamp")))
        if e.get("event") != "model":
            continue
        output = dict_at(e, "output")
        choices = output.get("choices")
        msg = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        if isinstance(msg, dict) and msg.get("id") is not None:
            out[msg["id"]] = (_call_usage(output.get("usage")), iso_time(e.get("timestamp")))
    return out


def _call_usage(u: Any) -> Usage | None:
    """Inspect's ModelUsage: `input_tokens` (the cached part within it), `input_tokens_cache_read`, `output_tokens`."""
    if not isinstance(u, dict):
        return None

    def n(key: str) -> int:
        v = u.get(key)
        return v if type(v) is int and v > 0 else 0
    return Usage(n("input_tokens"), min(n("input_tokens_cache_read"), n("input_tokens")), n("output_tokens"),
                 n("reasoning_tokens"))


def _resolve(m: dict[str, Any], attachments: dict[str, Any]) -> dict[str, Any]:
    """Replace `attachment://<id>` strings in a message's content with the stored text."""
    content = m.get("content")
    if isinstance(content, str) and content.startswith(_ATTACHMENT):
        return dict(m, content=attachments.get(content[len(_ATTACHMENT) :], content))
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict):
                for key in ("text", "reasoning"):
                    v = part.get(key)
                    if isinstance(v, str) and v.startswith(_ATTACHMENT):
                        part = dict(part, **{key: attachments.get(v[len(_ATTACHMENT) :], v)})
            out.append(part)
        return dict(m, content=out)
    return m


def _openai_call(c: dict[str, Any]) -> dict[str, Any]:
    # Inspect stores `function` as the tool's name and `arguments` already parsed.
    return {"id": c.get("id"), "function": {"name": str(c.get("function") or "tool"), "arguments": c.get("arguments")}}


def _usage(run: Run, model_usage: Any) -> None:
    if not isinstance(model_usage, dict) or not model_usage:
        return
    last = next((d for d in reversed(run.drafts) if d.role == "assistant"), None)
    if last is None:
        return
    for u in model_usage.values():
        usage = usage_from(u)
        if usage is not None:
            last.usage = usage  # the sample's total for its (first) model: the only figure the log has
            return


def _score(run: Run, scores: Any) -> None:
    if not isinstance(scores, dict) or not scores:
        return
    parts = []
    for name, s in scores.items():
        if isinstance(s, dict):
            value = s.get("value")
            expl = content_text(s.get("explanation")) if s.get("explanation") else ""
            parts.append(f"score {name}: {json.dumps(value)}" + (f" — {expl.strip()}" if expl.strip() else ""))
    if parts:
        run.new("system", None).add_text("\n".join(parts))
