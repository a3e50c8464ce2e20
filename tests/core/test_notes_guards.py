"""A verdict's `[[review.bite]]` entries carry their guards, and read back the same."""

from __future__ import annotations

import tomllib
from datetime import datetime, timezone

from reviewui.core.notes.body import parse_note
from reviewui.core.notes.model import Review
from reviewui.core.notes.records import BiteRecord, GuardRecord

HOSTILE = "line 5: `x\x1b[31m` dropped \"quoted\" ]]\n[[review]]"


def review(bites: tuple[BiteRecord, ...]) -> Review:
    return Review(id="r1", verdict="reject", reason="why", reviewer="Ann <a@x>",
                  at=datetime(2026, 11, 30, tzinfo=timezone.utc), tool="reviewui", branch="b", base="0" * 40,
                  head="1" * 40, tree="2" * 40, patch_id="3" * 40, bites=bites)


def test_guards_round_trip_under_their_bite() -> None:
    first = BiteRecord("a.py", "@@ -1 +1,9 @@", "broken", (), (
        GuardRecord(57, "operand", "`msg.role == \"assistant\"` dropped from the condition", "toothless"),
        GuardRecord(59, "early-exit", HOSTILE, "bites", ("t.py::test_x",)),
    ))
    second = BiteRecord("b.py", "@@ -3 +3,2 @@", "bites", ("t.py::test_y",))
    third = BiteRecord("c.py", "@@ -1 +1 @@", "toothless", (), (GuardRecord(1, "body", "body", "toothless"),))
    r = review((first, second, third))
    text = r.to_toml()
    assert "[[review.bite.guards]]" in text
    table = tomllib.loads(text)["review"][0]
    assert [len(b.get("guards", [])) for b in table["bite"]] == [2, 0, 1]
    assert table["bite"][0]["guards"][0] == {
        "line": 57, "kind": "operand", "description": "`msg.role == \"assistant\"` dropped from the condition",
        "verdict": "toothless", "failing_tests": [],
    }
    back = Review.from_mapping(table)
    assert back is not None and back.bites == (first, second, third)
    # the note still cuts into exactly one review: a description can never start a `[[review]]` line
    chunks = parse_note(text + "\n" + review((second,)).to_toml())
    assert [c.review.bites if c.review else None for c in chunks] == [(first, second, third), (second,)]


def test_a_bite_without_guards_is_written_as_before() -> None:
    text = review((BiteRecord("b.py", "@@ -3 +3,2 @@", "bites", ("t",)),)).to_toml()
    assert "guards" not in text
