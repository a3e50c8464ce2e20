"""ProbeScreen: write the test the agent avoided, run it on the branch and its base, side by side.

The editor opens on the reviewer's last draft for the hunk, else on a
template for it (imports of the changed module and the hunk's symbols, a
`test_probe_…` stub). `ctrl+r` runs the probe in scratch worktrees at the
branch head and at the base in parallel; `ctrl+b` also runs it with the
hunk reverted. The run happens in a thread worker that calls the core and
reports with a message; the outcome boxes are only touched on the UI thread.
`ctrl+s` keeps the probe in the review (with its outcomes), `ctrl+e` exports
it as a regression test file, `escape` cancels any run and closes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Static, TextArea

from reviewui.core.hunks import Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.probe.run import (
    ProbeReport, ProbeRun, check_probe_edited, check_probe_syntax, compare_own, export_to_review, load_draft, probe_name,
    probe_template, save_draft,
)
from reviewui.core.session import ReviewSession
from reviewui.core.state import ReviewState
from reviewui.ui.screens.text_prompt import TextPromptModal
from reviewui.ui.widgets.key_footer import KeyFooter
from reviewui.core.safe_text import visible

STATUS_STYLE = {"passed": "bold $success", "failed": "bold $error", "error": "bold $warning",
                "timeout": "bold $warning", "broken": "bold $error"}
OUTPUT_TAIL = 8
"""Lines of pytest output shown when a run errs without a test outcome."""


class ProbeScreen(Screen[None]):
    """The probe editor and the outcome of its last run on branch, base (and hunk reverted)."""

    BINDINGS = [
        Binding("ctrl+r", "run", "Run probe", priority=True, id="probe.run",
                tooltip="Run the probe at the branch head and at the base, in parallel"),
        Binding("ctrl+b", "run_reverted", "Run, hunk reverted", priority=True, id="probe.run_reverted",
                tooltip="Also run it at the head with this hunk reverted: does the probe bite the hunk?"),
        Binding("ctrl+s", "keep", "Keep", priority=True, id="probe.keep",
                tooltip="Keep the probe in the review; the verdict records it with its outcomes"),
        Binding("ctrl+e", "export", "Export", priority=True, id="probe.export",
                tooltip="Write the probe as a regression test to a path you choose"),
        Binding("ctrl+a", "select_all", "Select all", priority=True, id="probe.select_all",
                tooltip="Select the whole probe: what you type or paste next replaces it"),
        Binding("escape", "close", "Close", priority=True, id="probe.close",
                tooltip="Cancel a running probe and close the editor (the draft is kept)"),
    ]

    DEFAULT_CSS = """
    ProbeScreen { layout: vertical; }
    ProbeScreen #probe-title { height: auto; padding: 0 1; background: $panel; text-style: bold; }
    ProbeScreen #probe-editor { height: 1fr; }
    ProbeScreen #probe-outcomes { height: auto; max-height: 45%; }
    ProbeScreen .outcome {
        width: 1fr; height: auto; max-height: 100%; padding: 0 1;
        border: round $panel-lighten-2; overflow-y: auto;
    }
    ProbeScreen .outcome.-hidden { display: none; }
    ProbeScreen #probe-summary { height: auto; padding: 0 1; text-style: bold; }
    """

    running: reactive[bool] = reactive(False, bindings=True)

    @dataclass
    class Finished(Message):
        """A probe run ended: a report, or an error that stopped it."""

        code: str
        """The probe source that ran."""
        report: ProbeReport | None
        """The outcomes, or None when the run could not happen."""
        error: str | None = None
        """Why there is no report."""

    def __init__(self, session: ReviewSession, hunk: Hunk | None, state: ReviewState) -> None:
        super().__init__()
        self.session = session
        self.hunk = hunk
        self.state = state
        self.last: tuple[str, ProbeReport] | None = None
        """The code of the last finished run and its report."""
        self._cancel = threading.Event()
        self._from_template = False
        """The editor opened on the template (its body is selected, so typing replaces it)."""

    @property
    def draft_key(self) -> str:
        """The key the draft is kept under: the hunk, or "" without one."""
        return f"{self.hunk.file}:{self.hunk.index}" if self.hunk is not None else ""

    @property
    def editor(self) -> TextArea:
        """The probe editor."""
        return self.query_one("#probe-editor", TextArea)

    def compose(self) -> ComposeResult:
        t = self.session.target
        where = f"{self.hunk.file} {self.hunk.header}" if self.hunk is not None else "the branch"
        title = f"Probe — {where} · {t.branch} @ {t.head[:7]} vs base {t.base[:7]}"
        yield Static(Content(visible(title)), id="probe-title")
        code = load_draft(self.state.path, self.draft_key)
        self._from_template = code is None or _untouched(code)  # a kept draft of the bare template is one too
        if code is None:
            try:
                code = probe_template(self.session, self.hunk)
            except ReviewError:
                code = 'def test_probe():\n    assert False, "write the probe"\n'
        # "css" takes its colours from the app's theme; Python highlighting needs tree-sitter.
        editor = TextArea.code_editor(code, theme="css", id="probe-editor")
        if "python" in editor.available_languages:
            editor.language = "python"
        yield editor
        with Horizontal(id="probe-outcomes"):
            yield Static(Content.styled("branch: not run yet (ctrl+r)", "$text-muted"), id="outcome-branch",
                         classes="outcome")
            yield Static(Content.styled("base: not run yet", "$text-muted"), id="outcome-base", classes="outcome")
            yield Static("", id="outcome-reverted", classes="outcome -hidden")
            # Shown when the branch changes its conftest or pytest settings: the branch box then
            # ran with the base's (trusted), this one with the branch's own.
            yield Static("", id="outcome-branch_own", classes="outcome -hidden")
        yield Static("", id="probe-summary")
        yield KeyFooter()

    def on_mount(self) -> None:
        # Seen in a loaded terminal: keys typed ahead pushed this screen while another was opening,
        # and it mounted before its children; focus what is there rather than crash.
        for editor in self.query("#probe-editor").results(TextArea):
            editor.focus()
            if self._from_template:
                select_body(editor)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("run", "run_reverted"):
            if self.running:
                return None  # shown, greyed out, while a run is going
            if action == "run_reverted" and self.hunk is None:
                return None
        return True

    def action_select_all(self) -> None:
        """Select the whole probe (typing replaces it)."""
        self.editor.select_all()

    # --- running ---------------------------------------------------------------------

    def action_run(self) -> None:
        self._start(reverted=False)

    def action_run_reverted(self) -> None:
        self._start(reverted=True)

    def _start(self, reverted: bool) -> None:
        code = self.editor.text
        self._save_draft(code)
        try:
            check_probe_syntax(code)
            check_probe_edited(code)
        except ReviewError as e:
            self._summary(Content.styled(str(e), "bold $error"))
            self.notify(visible(str(e)), severity="error", markup=False)
            line = _line_of(str(e))
            if line is not None:
                self.editor.cursor_location = (line - 1, 0)
            return
        self.running = True
        self._cancel = threading.Event()
        hunk = (self.hunk.file, self.hunk.index) if reverted and self.hunk is not None else None
        t = self.session.target
        self._box("branch", Content.styled(f"branch {t.head[:7]}: running…", "$text-muted"))
        self._box("base", Content.styled(f"base {t.base[:7]}: running…", "$text-muted"))
        rev_box = self.query_one("#outcome-reverted", Static)
        rev_box.set_class(hunk is None, "-hidden")
        if hunk is not None:
            rev_box.update(Content.styled(f"hunk reverted {t.head[:7]}: running…", "$text-muted"))
        self._summary(Content.styled("running the probe… (escape cancels and closes)", "$text-muted"))
        self._probe_worker(code, hunk, self._cancel)

    @work(thread=True, exclusive=True, group="probe", exit_on_error=False)
    def _probe_worker(self, code: str, hunk: tuple[str, int] | None, cancel: threading.Event) -> None:
        """Run the probe off the UI thread; report only with a message."""
        try:
            report = self.session.probe(code, name=probe_name(code), hunk=hunk, cancel=cancel)
        except ReviewError as e:
            self.post_message(self.Finished(code, None, str(e)))
            return
        except Exception as e:  # a bug, but the reviewer must hear of it and the UI must live
            self.post_message(self.Finished(code, None, f"probe failed: {type(e).__name__}: {e}"))
            raise
        self.post_message(self.Finished(code, report))

    @on(Finished)
    def _finished(self, message: Finished) -> None:
        self.running = False
        if message.report is None:
            error = message.error or "the probe could not run"
            self._summary(Content.styled(error, "bold $error"))
            self.notify(visible(error), severity="error", markup=False)
            return
        report = message.report
        self.last = (message.code, report)
        self._box("branch", render_run(report.branch))
        self._box("base", render_run(report.base))
        if report.reverted is not None:
            self.query_one("#outcome-reverted", Static).update(render_run(report.reverted))
        own = self.query_one("#outcome-branch_own", Static)
        own.set_class(report.branch_own is None, "-hidden")
        if report.branch_own is not None:
            own.update(render_run(report.branch_own))
        lines = [Content(visible(report.summary(), multiline=True))]
        if (rs := report.reverted_summary()) is not None:
            lines.append(Content(rs))
        if report.branch_own is not None:
            lines.append(Content(visible(compare_own(report.branch, report.branch_own), multiline=True)))
        self._summary(Content("\n").join(lines))
        self._update_kept(message.code, report)

    def _update_kept(self, code: str, report: ProbeReport) -> None:
        """A kept probe that was just rerun unchanged gets its new outcomes recorded."""
        name = probe_name(code)
        kept = {p.name: p for p in self.state.probes()}.get(name)
        if kept is None or kept.code != code:
            return
        self.state.set_probe_outcomes(name, report.outcomes())
        self._save_state()

    # --- keeping, exporting, closing -------------------------------------------------

    def action_keep(self) -> None:
        code = self.editor.text
        try:
            check_probe_syntax(code)
            check_probe_edited(code)
        except ReviewError as e:
            self._summary(Content.styled(f"not kept: {e}", "bold $error"))
            self.notify(visible(f"not kept: {e}"), severity="error", markup=False)
            return
        name = probe_name(code)
        outcomes = self.last[1].outcomes() if self.last is not None and self.last[0] == code else {}
        self.state.keep_probe(name, code, outcomes)
        if not self._save_state():
            return
        if outcomes:
            self.notify(visible(f"kept probe {name}: {self.last[1].summary() if self.last else ''}"), markup=False)
        else:
            self.notify(visible(f"kept probe {name} without outcomes: run it (ctrl+r) to record them"),
                        severity="warning", markup=False)

    def action_export(self) -> None:
        code = self.editor.text
        t = self.session.target
        try:
            check_probe_syntax(code)
            check_probe_edited(code)
        except ReviewError as e:
            self.notify(visible(f"not exported: {e}"), severity="error", markup=False)
            return

        def write(path: str | None) -> None:
            if not path:
                return
            try:
                written, is_patch = export_to_review(code, path, t.repo_dir, t.git_dir, t.branch, t.head)
            except ReviewError as e:
                self.notify(visible(f"not exported: {e}"), severity="error", markup=False)
                self._summary(Content.styled(f"not exported: {e}", "bold $error"))
                return
            if is_patch:
                said = (f"{t.branch} is not checked out, so the checkout was left alone: wrote a patch adding "
                        f"{path} to {written} (on {t.branch}: git apply {written})")
            else:
                said = f"probe exported to {written}: commit it on the branch to keep it as a regression test"
            self._summary(Content(said))
            self.notify(said, timeout=10)

        default = f"tests/{probe_name(code)}.py"
        self.app.push_screen(
            TextPromptModal(f"Export the probe as a regression test to (relative to {t.repo_dir}; enter accepts):",
                            placeholder=default, value=default),
            write,
        )

    def action_close(self) -> None:
        self._cancel.set()
        self._save_draft(self.editor.text)
        self.dismiss(None)

    # --- helpers ---------------------------------------------------------------------

    def _box(self, place: str, content: Content) -> None:
        self.query_one(f"#outcome-{place}", Static).update(content)

    def _summary(self, content: Content) -> None:
        self.query_one("#probe-summary", Static).update(content)

    def _save_draft(self, code: str) -> None:
        try:
            save_draft(self.state.path, self.draft_key, code)
        except ReviewError as e:
            self.notify(str(e), severity="warning")

    def _save_state(self) -> bool:
        try:
            self.state.save()
        except ReviewError as e:
            self.notify(visible(str(e)), severity="error", markup=False)
            return False
        return True


def render_run(run: ProbeRun) -> Content:
    """One outcome box: where it ran, the status, each test with its message (plain text, never markup)."""
    where = {"branch": "branch", "base": "base", "reverted": "hunk reverted",
             "branch_own": "branch, its own conftest"}[run.place]
    parts: list[Content] = [
        Content.assemble((f"{where} {run.rev[:7]}  ", "bold"), (run.status.upper(), STATUS_STYLE[run.status]))
    ]
    for t in run.tests:
        mark = {"passed": "✓", "failed": "✗"}.get(t.outcome, "!")
        name = t.id.split("::", 1)[1] if "::" in t.id else t.id  # the file is the same for all
        parts.append(Content.assemble(f"{mark} {t.outcome}  ", (visible(name), "bold")))
        if t.message:
            parts.append(Content("    " + visible(t.message, multiline=True)))
    if not run.tests:
        if run.reason:
            parts.append(Content(visible(run.reason)))
        tail = [ln for ln in run.output.splitlines() if ln.strip()][-OUTPUT_TAIL:]
        if run.status in ("error", "broken") and tail:
            parts.append(Content.styled(visible("\n".join(tail), multiline=True), "$text-muted"))
    return Content("\n").join(parts)


def _untouched(code: str) -> bool:
    """True while `code` still holds the template's stub line (nobody wrote the probe yet)."""
    try:
        check_probe_edited(code)
    except ReviewError:
        return True
    return False


def select_body(editor: TextArea) -> None:
    """Select the body of the template's test function (from its first body line to the end), so typing replaces it.

    The imports and the `def` line stay: they are what the template is for.
    """
    lines = editor.text.split("\n")
    start = next((i + 1 for i, line in enumerate(lines) if line.startswith("def test_")), None)
    if start is None or start >= len(lines):
        editor.select_all()
        return
    end = len(lines) - 1
    while end > start and not lines[end].strip():
        end -= 1  # the trailing blank line stays
    from textual.widgets.text_area import Selection

    editor.selection = Selection((start, 0), (end, len(lines[end])))


def _line_of(error: str) -> int | None:
    head = error.split(":", 1)[0]
    digits = head.rsplit(" ", 1)[-1]
    return int(digits) if head.startswith("probe line ") and digits.isdigit() else None
