"""FixturesPane: what the tests near the cursor are made of.

On a test hunk: each test's anatomy (fixtures with their source and where
they are defined, parametrize cases, the data it builds, its checks). On a
source hunk: the tests that exercise its symbols, each expandable to its
anatomy, and a plain warning when no added or changed test calls them and
none fails with the hunk (or a guard in it) reverted: a test the sweep or the
truth table saw bite the hunk calls its code, whatever the static scan saw.
Literal inputs and asserted values are emphasised so what the fixture does
and does not vary is visible at a glance. `enter` on a fixture shows its
definition; `backspace` comes back.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from functools import lru_cache

from pygments.lexers import PythonLexer
from pygments.token import Comment, Literal
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from typing import TYPE_CHECKING

from reviewui.core.hunks import Hunk
from reviewui.core.safe_text import visible
from reviewui.ui.evidence_view import plural

if TYPE_CHECKING:  # the analysis itself loads in a worker after the first paint
    from reviewui.core.fixtures import FixtureReport, TestAnatomy

@lru_cache(maxsize=1)
def _lexer() -> PythonLexer:
    # Built on first use: constructing it costs ~40 ms, paid at start-up otherwise.
    return PythonLexer(stripnl=False, ensurenl=False)


def emphasize_literals(text: str, style: str) -> Content:
    """`text` as Content with its literal values (strings, numbers, None/True/False) styled."""
    parts: list[str | tuple[str, str]] = []
    for ttype, value in _lexer().get_tokens(visible(text)):
        if ttype in Literal or value in ("None", "True", "False"):
            parts.append((value, style))
        elif ttype in Comment:
            parts.append((value, "$text-muted"))
        else:
            parts.append(value)
    return Content.assemble(*parts)


@dataclass
class _Page:
    title: Content
    options: list[Option]


WIDTH_SHARE = 0.45
"""The share of the screen's width the pane takes beside the diff (its DEFAULT_CSS width)."""


class FixturesPane(Vertical):
    """The anatomy of the tests behind the hunk under the cursor."""

    BINDINGS = [
        Binding("enter", "open", "Definition", id="fixtures.definition",
                tooltip="Show the fixture's definition / expand a test"),
        Binding("backspace", "back", "Back", id="fixtures.back", tooltip="Back from a fixture definition"),
        Binding("j", "move(1)", "Down", id="fixtures.down", show=False, tooltip="Next fixture or test"),
        Binding("k", "move(-1)", "Up", id="fixtures.up", show=False, tooltip="Previous fixture or test"),
    ]

    DEFAULT_CSS = """
    FixturesPane { width: 45%; border-left: solid $panel-lighten-2; }
    FixturesPane.-hidden { display: none; }
    FixturesPane > #fixtures-title { height: auto; padding: 0 1; background: $boost; }
    FixturesPane > OptionList { height: 1fr; border: none; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.report: FixtureReport | None = None
        self.hunk: Hunk | None = None
        self.role: str = ""
        self.biting: tuple[str, ...] = ()
        """Tests that fail with this hunk (or a guard in it) reverted, from the sweep and the truth table."""
        self.expanded: set[str] = set()
        self._fixtures: dict[str, object] = {}
        self._back: list[_Page] = []

    def compose(self) -> ComposeResult:
        yield Static(Content("Fixtures"), id="fixtures-title")
        yield OptionList(id="fixture-lines")

    def show(self, report: FixtureReport | None, hunk: Hunk | None, role: str, biting: tuple[str, ...] = ()) -> None:
        """Follow the cursor: show the tests behind `hunk` (a file of `role`); `biting` are the tests
        that fail with it reverted (they call its code, whatever the static scan saw)."""
        self.report, self.hunk, self.role, self.biting = report, hunk, role, biting
        self._back.clear()
        self._rebuild()

    def on_mount(self) -> None:
        self._rebuild()  # what was shown before the pane was composed

    def _set(self, title: Content, options: list[Option]) -> None:
        if not self.query("#fixtures-title"):
            return  # mounted just now and not composed yet: on_mount draws
        self.query_one("#fixtures-title", Static).update(title)
        lines = self.query_one("#fixture-lines", OptionList)
        lines.set_options(options or [Option(Content(""), disabled=True)])
        # a row is always selected when there is one to select, so enter acts at once
        lines.highlighted = next((i for i, o in enumerate(lines.options) if not o.disabled), None)

    @on(events.DescendantFocus)
    def _focused(self) -> None:
        lines = self.query_one("#fixture-lines", OptionList)
        if lines.highlighted is None:
            lines.highlighted = next((i for i, o in enumerate(lines.options) if not o.disabled), None)

    def action_move(self, step: int) -> None:
        """Move to the next (1) or previous (-1) fixture or test row."""
        lines = self.query_one("#fixture-lines", OptionList)
        lines.action_cursor_down() if step > 0 else lines.action_cursor_up()

    def _rebuild(self) -> None:
        self._fixtures = {}
        report, hunk = self.report, self.hunk
        if report is None:
            self._set(Content.assemble(("Fixtures", "bold"), ("  analysing the tests…", "$text-muted")), [])
            return
        if hunk is None:
            self._set(Content.assemble(("Fixtures", "bold")), [_line("No hunk under the cursor.", "$text-muted")])
            return
        start, end = hunk.new_lines[0], hunk.new_lines[-1]
        options: list[Option] = []
        if self.role == "test":
            tests = report.tests_for_lines(hunk.file, start, end)
            title = Content.assemble(("Tests in this hunk", "bold"), f"  {len(tests)}")
            if not tests:
                options.append(_line("No added or changed test function in this hunk.", "$text-muted"))
            for t in tests:
                options.extend(self._anatomy(t))
        else:
            symbols = report.symbols_in_lines(hunk.file, start, end)
            title = Content.assemble(("Tests exercising this hunk", "bold"), f"  {plural(len(symbols), 'changed symbol')}")
            if not symbols:
                options.append(_line("No changed function or class in this hunk.", "$text-muted"))
            for sym in symbols:
                options.append(Option(Content.assemble(("● ", "$accent"), (visible(sym.name), "bold"), f"  {visible(sym.file)}:{sym.line}"),
                                      disabled=True))
                bit = _own_biting(report, self.biting) if not sym.tests_calling else ()
                if bit:
                    # The sweep saw them fail with the code reverted: they call it (the truth table agrees).
                    options.append(_line("  fails when this hunk is reverted: " + ", ".join(visible(t) for t in bit[:3])
                                         + (f" (+{len(bit) - 3} more)" if len(bit) > 3 else ""), "$success"))
                elif not sym.tests_calling and report.data_readers:
                    # A data-driven test may exercise it through the file it reads: say so, not "untested".
                    n = len(report.data_readers)
                    options.append(_line(f"  no added or changed test calls this; {n} test{'s' if n != 1 else ''} "
                                         "read changed data files", "$warning"))
                elif not sym.tests_calling:
                    options.append(_line("  ⚠ no added or changed test calls this", "bold $error"))
                for tid in sym.tests_importing_only:
                    options.append(_line(f"  only imports/mentions it: {tid}", "$warning"))
                for tid in sym.tests_calling:
                    opened = tid in self.expanded
                    options.append(Option(Content.assemble(("  ▾ " if opened else "  ▸ ", "$accent"), visible(tid)),
                                          id=f"t:{tid}"))
                    test = report.test(tid)
                    if opened and test is not None:
                        options.extend(self._anatomy(test, indent="    "))
        for err in report.errors:
            if err.path == hunk.file:
                options.append(_line(f"{err.path}:{err.line}: cannot analyse: {err.message}", "$error"))
        self._set(title, options)

    def _anatomy(self, t: TestAnatomy, indent: str = "") -> list[Option]:
        out: list[Option] = [Option(Content.assemble(
            (indent + visible(t.id), "bold"), (f"  {t.status}", "$success" if t.status == "added" else "$warning"),
            (f"  {visible(t.file)}:{t.line}", "$text-muted"),
        ), disabled=True)]
        for fx in t.fixtures:
            key = f"fx:{len(self._fixtures)}"
            self._fixtures[key] = fx
            where = "builtin" if fx.builtin else (fx.defined_in or "not found")
            extra = f"  params={list(fx.params)}" if fx.params else ""
            out.append(Option(Content.assemble(
                (indent + "  fixture ", "$text-muted"), (visible(fx.name), "bold $accent"), visible(f"  {where}{extra}"),
                (visible(f"  requires {', '.join(fx.requires)}") if fx.requires else "", "$text-muted"),
            ), id=key))
        for table in t.parametrize:
            out.append(_line(indent + "  parametrize " + ", ".join(table.argnames), "$accent"))
            for i, case in enumerate(table.cases):
                label = table.ids[i] if i < len(table.ids) else f"#{i + 1}"  # cases counted from 1, as people count
                out.append(Option(Content.assemble(
                    (f"{indent}    [{visible(label)}] ", "$text-muted"), emphasize_literals(", ".join(case), "bold $warning")),
                    disabled=True))
        if t.data:
            out.append(_line(indent + "  data built", "$accent"))
            for span in t.data:
                origin = "" if span.origin == "test" else f" ({span.origin})"
                # One row per source line: a list of inputs reads best item by item.
                for k, text in enumerate(textwrap.dedent(" " * span.col + span.text).splitlines()):
                    out.append(Option(Content.assemble(
                        (f"{indent}    {span.line + k:>4}{origin if not k else ''} ", "$text-muted"),
                        emphasize_literals(text, "bold $warning")), disabled=True))
        out.append(_line(indent + f"  checks ({len(t.checks)})", "$accent" if t.checks else "bold $error"))
        for span in t.checks:
            out.append(Option(Content.assemble(
                (f"{indent}    {span.line:>4} ", "$text-muted"),
                emphasize_literals(_one_line(span.text), "bold $success")), disabled=True))
        return out

    @on(OptionList.OptionSelected, "#fixture-lines")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._open(event.option.id)

    def action_open(self) -> None:
        opt = self.query_one("#fixture-lines", OptionList).highlighted_option
        self._open(opt.id if opt is not None else None)

    def _open(self, key: str | None) -> None:
        if not key:
            return
        if key.startswith("t:"):
            self.expanded ^= {key[2:]}
            self._rebuild()
            return
        fx = self._fixtures.get(key)
        if fx is None:
            return
        lines = self.query_one("#fixture-lines", OptionList)
        title = self.query_one("#fixtures-title", Static)
        self._back.append(_Page(Content(str(title.render())), list(lines.options)))
        source = getattr(fx, "source", "") or "(no source: builtin or from a plugin)"
        # The source starts at the decorator; `line` is the `def`, `end_line` the last line.
        end = getattr(fx, "end_line", 0) or 0
        first = end - len(source.splitlines()) + 1 if end else (getattr(fx, "line", 0) or 1)
        options = [
            Option(Content.assemble((f"{first + i:>5} ", "$text-muted"), emphasize_literals(text, "bold $warning")),
                   disabled=True)
            for i, text in enumerate(source.splitlines())
        ]
        self._set(Content.assemble(("fixture ", "$text-muted"), (visible(getattr(fx, "name", "")), "bold $accent"),
                                   f"  {visible(getattr(fx, 'defined_in', '') or '')}   (backspace: back)"), options)

    def action_back(self) -> None:
        if not self._back:
            return
        page = self._back.pop()
        self._set(page.title, page.options)


def _line(text: str, style: str = "") -> Option:
    return Option(Content.assemble((visible(text), style)), disabled=True)


def _one_line(text: str) -> str:
    return " ".join(text.split()) if "\n" in text else text


def _own_biting(report: FixtureReport, biting: tuple[str, ...]) -> tuple[str, ...]:
    """The added or changed tests among `biting` (node ids, parametrized cases by their function)."""
    own = {t.id for t in report.tests}
    return tuple(t for t in biting if t.split("[", 1)[0] in own)
