"""The pure core of reviewui: git, diffs, tests, transcripts, findings, notes.

Nothing under this package imports Textual or Rich, so every headless command
and every core test runs without a terminal.
"""
