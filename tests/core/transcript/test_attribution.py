"""Closing the loop with the diff, on real runs and their real patches: every changed file linked to the
turns that produced it, files written by a script attributed to the turn that ran it, the rest `unattributed`."""

from __future__ import annotations

import json
from pathlib import Path

from unidiff import PatchSet

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.linking import link_hunks
from tests.core.transcript.helpers import FIXTURES, FakeHunk, Line

DJANGO = FIXTURES / "mini-swe-agent" / "django__django-13660_messages1-52.traj.json"
RESOLVER = FIXTURES / "openhands" / "resolver_output.jsonl"
SHELL_PY = "django/core/management/commands/shell.py"


def _hunks(patch: str) -> list[FakeHunk]:
    kind = {"+": "added", "-": "removed", " ": "context"}
    return [
        FakeHunk(pf.path, i, tuple(Line(kind.get(ln.line_type, "context"), ln.value.rstrip("\r\n")) for ln in h))
        for pf in PatchSet(patch.replace("\r\n", "\n"))
        for i, h in enumerate(pf)
    ]


def test_a_file_written_by_a_script_is_attributed_to_the_turn_that_ran_it() -> None:
    doc = json.loads(DJANGO.read_text())
    t = load_transcript(DJANGO)
    assert not any(p.endswith(SHELL_PY) for x in t.turns for p in x.files_written)  # no edit names it
    links = link_hunks(t, _hunks(doc["info"]["submission"]))
    runner = t.turn(51)
    assert "python patch_shell.py" in runner.tool_calls[0].arguments["command"]
    assert links.turns_for_file(SHELL_PY) == [51] and links.by_script == {SHELL_PY: (51,)}
    assert links.unattributed == () and links.note() is None


def test_a_changed_file_no_turn_accounts_for_is_unattributed(tmp_path: Path) -> None:
    doc = json.loads(DJANGO.read_text())
    cut = dict(doc, messages=doc["messages"][:48])  # the run as recorded up to before it wrote its patch script
    p = tmp_path / "cut.traj.json"
    p.write_text(json.dumps(cut))
    links = link_hunks(load_transcript(p), _hunks(doc["info"]["submission"]))
    assert links.unattributed == (SHELL_PY,) and links.is_unattributed(SHELL_PY)
    assert links.turns_for_file(SHELL_PY) == []
    assert links.note() == f"unattributed: 1 changed file no turn accounts for: {SHELL_PY}"


def test_every_file_of_a_real_patch_is_linked_to_its_turns() -> None:
    record = json.loads(RESOLVER.read_text().splitlines()[1])
    t = load_transcript(RESOLVER, instance="1")
    links = link_hunks(t, _hunks(record["git_patch"]))
    assert set(links.by_file) == {"src/App.css", "src/PullRequestViewer.tsx"}
    for f, turns in links.by_file.items():
        assert turns and all(any(p.endswith(f) for p in t.turn(i).files_written) for i in turns), f
    assert links.unattributed == ()
    # The LICENSE of the other run is not explained by this one.
    other = json.loads(RESOLVER.read_text().splitlines()[0])
    mixed = link_hunks(t, _hunks(record["git_patch"]) + _hunks(other["git_patch"]))
    assert mixed.unattributed == ("LICENSE",)


def test_a_file_with_no_hunks_is_still_checked() -> None:
    t = load_transcript(RESOLVER)  # writes LICENSE
    links = link_hunks(t, [], files=["LICENSE", "logo.png"])
    assert links.turns_for_file("LICENSE") == [4] and links.unattributed == ("logo.png",)
