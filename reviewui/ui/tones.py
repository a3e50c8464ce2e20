"""The bite verdicts' tones and their theme colours: below evidence_view and guard_marks, which both draw them."""

from __future__ import annotations

BITE_TONE: dict[str, str] = {
    "bites": "good", "toothless": "bad", "uncovered": "warn", "broken": "warn",
    "timeout": "warn", "error": "bad", "skipped": "info", "not-code": "info",
}
"""Bite verdict -> badge tone (good | bad | warn | info)."""

TONE_STYLE: dict[str, str] = {"good": "$success", "bad": "$error", "warn": "$warning", "info": "$text-muted"}
"""Badge tone -> the theme variable drawn for it in text."""


def bite_style(verdict: str) -> str:
    """The theme style of a bite verdict word (muted for one this table does not know)."""
    return TONE_STYLE[BITE_TONE.get(verdict, "info")]
