"""The format registry: every format registered once, with a detector, a loader and a real sample that it detects."""

from __future__ import annotations

import subprocess
import sys

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.transcript import FORMATS, detect_format, format_names, load_transcript, registry
from reviewui.core.transcript.formats import FORMAT_LIST
from tests.core.transcript.helpers import FIXTURES, REPO


def test_every_registered_format_has_a_detector_a_loader_and_a_sample() -> None:
    assert set(format_names()) == set(FORMATS) and len(FORMAT_LIST) == len(FORMATS)
    for f in FORMAT_LIST:
        assert callable(f.detect) and callable(f.load), f.name
        sample = FIXTURES / f.sample
        assert sample.exists(), f"{f.name}: sample {f.sample} missing"
        # Detection picks this format for its own sample, and loading it gives turns.
        assert detect_format(sample) == f.name, f.name
        t = load_transcript(sample)
        assert t.format == f.name and t.turns, f.name


def test_real_samples_have_a_source_manifest() -> None:
    for f in FORMAT_LIST:
        sample = FIXTURES / f.sample
        manifest = sample.parent / "SOURCE.txt"
        if sample.parent == FIXTURES:
            continue  # the project's own hand-written fixtures (helpers.py says what each covers)
        text = manifest.read_text()
        line = next(ln for ln in text.splitlines() if ln.startswith(sample.name))
        assert "repo " in line and "path " in line and "commit " in line, f.name


def test_names_and_aliases_resolve_and_nothing_else_does() -> None:
    for f in FORMAT_LIST:
        assert registry.canonical(f.name) == f.name
        for a in f.aliases:
            assert registry.canonical(a.upper()) == f.name
    with pytest.raises(ReviewError, match="accepted: claude-code, codex, .*aider, inspect-ai"):
        registry.canonical("gpt")


def test_the_cli_lists_the_accepted_names_in_help_and_in_its_error() -> None:
    run = [sys.executable, "-m", "reviewui", "transcript"]
    help_text = subprocess.run(run + ["--help"], capture_output=True, text=True, cwd=REPO).stdout
    flat = " ".join(help_text.split())
    assert "force the transcript format: " + ", ".join(FORMATS) in flat
    err = subprocess.run(
        run + [str(FIXTURES / "codex_red_green.jsonl"), "--transcript-format", "bogus"],
        capture_output=True, text=True, cwd=REPO,
    )
    assert err.returncode != 0 and "Traceback" not in err.stderr
    assert "accepted: " + ", ".join(FORMATS) in err.stderr
