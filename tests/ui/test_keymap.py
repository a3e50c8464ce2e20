"""The reviewer's own keys: `[keymap]` in the user config rebinds review keys by id, and help shows them."""

from __future__ import annotations

import tomli_w
from textual.widgets import Static

from reviewui.core.config import user_config_dir
from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.keymap import binding_ids, keymap_from_prefs
from reviewui.ui.screens.help import HelpScreen
from reviewui.ui.screens.review import ReviewScreen
from reviewui.ui.widgets.review_header import ReviewHeader
from tests.ui.ready import app_handled_posted, review_ready

SIZE = (140, 40)


def write_prefs(prefs: dict) -> None:
    user_config_dir().mkdir(parents=True, exist_ok=True)
    (user_config_dir() / "config.toml").write_text(tomli_w.dumps(prefs), encoding="utf-8")


def test_every_review_binding_has_a_unique_id() -> None:
    described = [b for b in ReviewScreen.BINDINGS if getattr(b, "description", "")]
    ids = [b.id for b in described]
    assert all(i and i.startswith("review.") for i in ids)
    assert len(set(ids)) == len(ids)


def test_keymap_from_prefs_keeps_good_entries_and_names_bad_ones() -> None:
    known = binding_ids(ReviewScreen.BINDINGS)
    keymap, problems = keymap_from_prefs(
        {"keymap": {"review.bite": "ctrl+b", "review.nope": "z", "review.sweep": 3, "review.matrix": "a b;c"}}, known)
    assert keymap == {"review.bite": "ctrl+b"}
    assert len(problems) == 3 and any("review.nope" in p for p in problems)
    assert keymap_from_prefs({}, known) == ({}, [])
    assert keymap_from_prefs({"keymap": "j"}, known)[0] == {}


async def test_a_rebound_key_runs_its_action_and_help_shows_it(awkward_session: ReviewSession) -> None:
    write_prefs({"keymap": {"review.reviewed": "ctrl+o", "review.nope": "z"}})
    app = make_app(awkward_session, initial_file="pkg/calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await app_handled_posted(app)  # the warning is posted on mount: wait for it, not for a quiet machine
        assert any("review.nope" in n.message for n in app._notifications)
        await review_ready(app, pilot)  # the header's progress is counted at start-up: read it after that
        header = screen.query_one(ReviewHeader)
        before = header.progress
        await pilot.press("space")  # the old key no longer marks the hunk
        await pilot.pause()
        assert header.progress == before
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert [b.text for b in screen.diff_view.badges[0]][:1] == ["✓ reviewed"]
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text", Static).render())
        line = next(ln for ln in text.splitlines() if "Mark the hunk under the cursor" in ln)
        assert line.split()[0] == "^o" and "review.reviewed" in line  # Textual draws ctrl+o as ^o


async def test_a_dialog_key_can_be_rebound_by_its_id(awkward_session: ReviewSession) -> None:
    """Ids of every registered view count, not only the review screen's: the probe editor's run key, say."""
    write_prefs({"keymap": {"probe.run": "f5", "verdict.approve_anyway": "ctrl+o"}})
    app = make_app(awkward_session)
    assert app.keymap == {"probe.run": "f5", "verdict.approve_anyway": "ctrl+o"} and app.keymap_problems == []


def _described_bindings() -> list[tuple[str, object]]:
    """(class, binding) for every binding with a description in every class of reviewui's UI."""
    import importlib
    import inspect
    import pkgutil

    from textual.binding import Binding

    import reviewui.ui

    found: list[tuple[str, object]] = []
    for info in pkgutil.walk_packages(reviewui.ui.__path__, "reviewui.ui."):
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__:
                found += [(f"{info.name}:{name}", b) for b in cls.__dict__.get("BINDINGS", [])
                          if not isinstance(b, Binding) or b.description]
    return found


def test_every_key_of_every_view_has_an_id_naming_one_action() -> None:
    """`[keymap]` rebinds keys by id, and help lists each key's id: a key without one (the transcript's
    filters, the list motions, the dialogs' keys) could not be rebound at all."""
    from textual.binding import Binding

    described = _described_bindings()
    assert len(described) > 100  # every module was walked, the review screen's keys among them
    without = [f"{where} {getattr(b, 'key', b)}" for where, b in described if not isinstance(b, Binding) or not b.id]
    assert not without, without
    actions: dict[str, set[str]] = {}
    for _, b in described:
        assert isinstance(b, Binding) and b.id and "." in b.id
        actions.setdefault(b.id, set()).add(b.action)
    assert {i: a for i, a in actions.items() if len(a) > 1} == {}  # an id always names the one action


async def test_a_transcript_key_can_be_rebound_by_its_id(tmp_path) -> None:
    from reviewui.demo import build_sample
    from reviewui.ui.widgets.transcript_view import TranscriptView

    write_prefs({"keymap": {"transcript.flagged": "f9", "cursor.down": "j,down,ctrl+n"}})  # the README's example too
    built = build_sample("03-null-guard", tmp_path)
    app = make_app(ReviewSession.open(built.repo_dir, "agent/null-guard"))
    assert app.keymap_problems == []
    async with app.run_test(size=SIZE) as pilot:
        await review_ready(app, pilot)
        await pilot.press("t")
        await review_ready(app, pilot)
        view = app.screen.query_one(TranscriptView)
        total = len(view.shown)
        await pilot.press("exclamation_mark")  # its old key no longer filters
        await pilot.pause()
        assert len(view.shown) == total
        await pilot.press("f9")
        await pilot.pause()
        assert 0 < len(view.shown) < total
        before = view.cursor
        await pilot.press("ctrl+n")  # a motion every list shares, rebound once for all
        await pilot.pause()
        assert view.cursor == before + 1
