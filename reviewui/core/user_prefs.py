"""The user's own preferences and reviewui's XDG directories: the floor below config, git and limits.

`config.py` (settings from the repository and the user), `bounded.py` (the
reviewer's byte caps) and the runner all read the user's config file; it lives
here, importing nothing of reviewui, so none of them needs another to reach it.
`config.py` re-exports these names for its callers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def _xdg(variable: str, *default: str) -> Path:
    """reviewui's directory under the XDG base directory `variable` (else ~/<default...>)."""
    return Path(os.environ.get(variable) or Path.home().joinpath(*default)) / "reviewui"


def user_config_dir() -> Path:
    """Return reviewui's directory under the user's config dir (XDG)."""
    return _xdg("XDG_CONFIG_HOME", ".config")


def user_state_dir() -> Path:
    """Return reviewui's directory for local state (marks, probes) (XDG)."""
    return _xdg("XDG_STATE_HOME", ".local", "state")


def user_cache_dir() -> Path:
    """Return reviewui's cache directory (scratch worktrees live here) (XDG)."""
    return _xdg("XDG_CACHE_HOME", ".cache")


def user_data_dir() -> Path:
    """Return reviewui's directory for data the user keeps (the built demo) (XDG)."""
    return _xdg("XDG_DATA_HOME", ".local", "share")


def load_user_prefs() -> dict[str, Any]:
    """Return the user's saved preferences; an unreadable file counts as empty."""
    path = user_config_dir() / "config.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def save_user_pref(key: str, value: Any) -> None:
    """Remember one preference (e.g. `theme`) in the user config dir."""
    import tomli_w

    prefs = load_user_prefs()
    prefs[key] = value
    path = user_config_dir()
    path.mkdir(parents=True, exist_ok=True)
    tmp = path / "config.toml.tmp"
    tmp.write_text(tomli_w.dumps(prefs), encoding="utf-8")
    tmp.replace(path / "config.toml")
