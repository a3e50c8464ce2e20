"""The views help lists, each with its keys: one registry, read from the views' own BINDINGS.

Help lists every key of every view and dialog, whether or not it was ever
opened, so it cannot walk the widgets on screen: a view is named here once
(`VIEWS`), and its keys come from its class's merged BINDINGS, with the
reviewer's keymap applied. A new screen adds one line to `VIEWS`; the test
`test_every_view_with_keys_is_registered` fails when a screen or widget of
reviewui with bindings is left out.

Views are named by `module:Class` and imported when help opens: most are
loaded lazily and must not be imported before the first paint.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.binding import Binding, BindingsMap

if TYPE_CHECKING:
    from textual.app import App
    from textual.dom import DOMNode

VIEWS: tuple[tuple[str, str], ...] = (
    ("Anywhere", "reviewui.ui.app:ReviewApp"),
    ("Review", "reviewui.ui.screens.review:ReviewScreen"),
    ("Diff", "reviewui.ui.widgets.diff_view:DiffView"),
    ("File list", "reviewui.ui.widgets.file_list:FileList"),
    ("Results panel", "reviewui.ui.widgets.results_panel:ResultsPanel"),
    ("Transcript", "reviewui.ui.widgets.transcript_view:TranscriptView"),
    ("Fixtures pane", "reviewui.ui.widgets.fixtures_pane:FixturesPane"),
    ("Matrix", "reviewui.ui.screens.matrix:MatrixScreen"),
    ("Findings", "reviewui.ui.screens.findings:FindingsScreen"),
    ("History", "reviewui.ui.screens.history:HistoryScreen"),
    ("Verdict dialog", "reviewui.ui.screens.verdict:VerdictModal"),
    ("Probe editor", "reviewui.ui.screens.probe:ProbeScreen"),
    ("Comment prompt", "reviewui.ui.screens.text_prompt:TextPromptModal"),
    ("Help", "reviewui.ui.screens.help:HelpScreen"),
    ("No changes", "reviewui.ui.screens.no_changes:NoChangesScreen"),
)
"""(view name as help shows it, `module:Class`), in the order help lists them."""


@dataclass(frozen=True)
class HelpKey:
    """One key of one view as help lists it."""

    keys: str
    """The keys in force, as the footer draws them (`?`, `ctrl+r`, `j, ↓`)."""
    help: str
    """What it does (the binding's tooltip, else its description)."""
    id: str
    """The binding id a `[keymap]` entry rebinds it by ("" for none)."""


def view_class(where: str) -> type[DOMNode]:
    """The class named `module:Class` (imported now)."""
    module, name = where.split(":")
    cls: type[DOMNode] = getattr(importlib.import_module(module), name)
    return cls


def view_keys(cls: type[DOMNode], app: App[object]) -> list[HelpKey]:
    """Every described key of `cls` (its merged BINDINGS, the app's keymap applied), one row per action."""
    bindings: BindingsMap = cls._merge_bindings().copy()
    keymap = app._keymap
    if keymap:
        bindings.apply_keymap(keymap)
    by_action: dict[str, list[Binding]] = {}
    for binding_list in bindings.key_to_bindings.values():
        for b in binding_list:
            by_action.setdefault(b.action, []).append(b)
    rows: list[HelpKey] = []
    for group in by_action.values():
        b = group[0]
        if not b.description:
            continue
        keys = b.key_display or ", ".join(
            sorted({app.get_key_display(Binding(x.key, "")) for x in group}, key=len))
        rows.append(HelpKey(keys, b.tooltip or b.description, b.id or ""))
    return rows


def help_views(app: App[object]) -> list[tuple[str, list[HelpKey]]]:
    """[(view name, its keys)] for every registered view with keys, in `VIEWS` order; no key twice in a view.

    A key bound twice in one view (a widget's own binding over one it
    inherits, say) is listed once, with the meaning it has.
    """
    out: list[tuple[str, list[HelpKey]]] = []
    for name, where in VIEWS:
        taken: set[str] = set()
        rows: list[HelpKey] = []
        for k in view_keys(view_class(where), app):
            keys = {x.strip() for x in k.keys.split(",")}
            if keys & taken:
                continue
            taken |= keys
            rows.append(k)
        if rows:
            out.append((name, rows))
    return out
