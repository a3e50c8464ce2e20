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
    ("Queue", "reviewui.ui.screens.queue:QueueScreen"),
    ("Queue app", "reviewui.ui.queue_app:QueueApp"),
    ("Queue list", "reviewui.ui.widgets.queue_table:QueueTable"),
    ("Review", "reviewui.ui.screens.review:ReviewScreen"),
    ("Diff", "reviewui.ui.widgets.diff_view:DiffView"),
    ("File list", "reviewui.ui.widgets.file_list:FileList"),
    ("Results panel", "reviewui.ui.widgets.results_panel:ResultsPanel"),
    ("Transcript", "reviewui.ui.widgets.transcript_view:TranscriptView"),
    ("Fixtures pane", "reviewui.ui.widgets.fixtures_pane:FixturesPane"),
    ("Matrix", "reviewui.ui.screens.matrix:MatrixScreen"),
    ("Findings", "reviewui.ui.screens.findings:FindingsScreen"),
    ("History", "reviewui.ui.screens.history:HistoryScreen"),
    ("Truth table", "reviewui.ui.screens.tests_table:TestsTableScreen"),
    ("Verdict dialog", "reviewui.ui.screens.verdict:VerdictModal"),
    ("Probe editor", "reviewui.ui.screens.probe:ProbeScreen"),
    ("Witness", "reviewui.ui.screens.witness:WitnessModal"),
    ("Comment prompt", "reviewui.ui.screens.text_prompt:TextPromptModal"),
    ("Help", "reviewui.ui.screens.help:HelpScreen"),
    ("No changes", "reviewui.ui.screens.no_changes:NoChangesScreen"),
)
"""(view name as help shows it, `module:Class`), in the order help lists them."""

PART_OF_SCREEN = frozenset({"Diff", "File list", "Queue list"})
"""Views that are their screen itself (the review's diff and file list, the queue's list): help opens at
the screen's keys when one has the focus."""


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


def current_view(screen: DOMNode) -> str | None:
    """The name of the view in front on `screen`, as help lists it (None: a view help does not list).

    The innermost registered view holding the focus (the transcript, a dialog),
    else the screen's own; the diff, the file list and the queue's list count as their screen.
    """
    by_class = {where: name for name, where in VIEWS}
    focused = getattr(screen, "focused", None)
    chain: list[DOMNode] = []
    node: DOMNode | None = focused
    while node is not None and node is not screen:
        chain.append(node)
        node = node.parent  # type: ignore[assignment]
    chain.append(screen)
    for node in chain:
        for cls in type(node).__mro__:
            name = by_class.get(f"{cls.__module__}:{cls.__qualname__}")
            if name is not None and name not in PART_OF_SCREEN:
                return name
    return None


def own_bindings(cls: type[DOMNode]) -> BindingsMap:
    """The bindings `cls` and its reviewui bases declare (a subclass's over its base's); Textual's own left out.

    Textual's (tab, copy, its scrolling) act everywhere and are not ours to list per view.
    """
    merged = BindingsMap()
    for base in reversed(cls.__mro__):
        declared = base.__dict__.get("BINDINGS")
        if declared and base.__module__.startswith("reviewui."):
            merged.key_to_bindings.update(BindingsMap(declared).key_to_bindings)
    return merged


def view_keys(cls: type[DOMNode], app: App[object]) -> list[HelpKey]:
    """Every described key of `cls` (its merged BINDINGS, the app's keymap applied), one row per action."""
    bindings = own_bindings(cls)
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
    """[(view name, its keys)] for every registered view with keys, in `VIEWS` order.

    A key a subclass binds over its base's is listed once, with the meaning it
    has; one key for two actions of one view (`n`: next hunk, or next match
    while a search is active) is listed for each.
    """
    out: list[tuple[str, list[HelpKey]]] = []
    for name, where in VIEWS:
        rows = view_keys(view_class(where), app)
        if rows:
            out.append((name, rows))
    return out
