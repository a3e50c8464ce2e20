"""Per-turn metadata at the top of the prompt: prompt-changed on the prompt, cache-miss on the reply."""

from __future__ import annotations

import json
from pathlib import Path

from reviewui.core.transcript import load_transcript


def conversation(tmp_path: Path, heads: list[str], cached: int = 0) -> Path:
    messages: list[dict] = [{"role": "system", "content": "You are a coding agent."}]
    for i, head in enumerate(heads):
        messages.append({"role": "user", "content": f"{head}\nnext step please"})
        messages.append({
            "role": "assistant", "content": f"step {i}",
            "usage": {"prompt_tokens": 2000 * (i + 1) ** 2, "completion_tokens": 10,
                      "prompt_tokens_details": {"cached_tokens": cached}},
        })
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"messages": messages}))
    return p


def flags_by_role(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    t = load_transcript(path)
    return [(turn.role, turn.flags) for turn in t.turns if turn.role in ("user", "assistant")]


def test_metadata_line_changing_every_turn_is_flagged(tmp_path: Path) -> None:
    heads = [f"[session] turn={n} ts=02:1{n}:07 rules_hash=9c1f" for n in range(1, 4)]
    rows = flags_by_role(conversation(tmp_path, heads))
    users = [f for r, f in rows if r == "user"]
    replies = [f for r, f in rows if r == "assistant"]
    assert ["prompt-changed" in f for f in users] == [False, True, True]
    assert ["cache-miss" in f for f in replies] == [False, True, True]


def test_stable_prompt_head_is_quiet(tmp_path: Path) -> None:
    rows = flags_by_role(conversation(tmp_path, ["[session] rules v2"] * 3))
    assert not any("prompt-changed" in f or "cache-miss" in f for _, f in rows)


def test_changing_head_that_hits_the_cache_is_not_a_cache_miss(tmp_path: Path) -> None:
    heads = [f"[session] turn={n}" for n in range(1, 4)]
    rows = flags_by_role(conversation(tmp_path, heads, cached=1500))
    assert not any("cache-miss" in f for r, f in rows if r == "assistant")


def test_prose_with_numbers_that_differs_is_not_metadata(tmp_path: Path) -> None:
    heads = ["Fix bug 12 in the parser", "Now look at 3 failing tests"]
    rows = flags_by_role(conversation(tmp_path, heads))
    assert not any("prompt-changed" in f for _, f in rows)
