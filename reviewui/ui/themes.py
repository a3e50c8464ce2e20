"""Themes from TOML files: the ones shipped in `themes/` and the user's own.

A theme file holds the fields of Textual's Theme (name, dark, primary, …)
and a `[variables]` table; `syntax-theme` there names the pygments style
the diff is highlighted with.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from textual.theme import Theme

from reviewui.core.config import user_config_dir

FIELDS = (
    "primary", "secondary", "warning", "error", "success", "accent",
    "foreground", "background", "surface", "panel", "boost",
)


def theme_dirs() -> list[Path]:
    """Where theme files are looked for: shipped first, then the user's."""
    dirs: list[Path] = []
    # A plain path, not importlib.resources: that costs ~5 ms on first use, at
    # start-up, and reviewui is never run from a zip.
    packaged = Path(__file__).resolve().parents[1] / "_data" / "themes"
    if packaged.is_dir():
        dirs.append(packaged)
    checkout = Path(__file__).resolve().parents[2] / "themes"
    if checkout.is_dir():
        dirs.append(checkout)
    dirs.append(user_config_dir() / "themes")
    return dirs


def load_theme_file(path: Path) -> Theme:
    """Read one theme file; raises ValueError when it is not a valid theme."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path.name}: {e}") from e
    if not isinstance(data.get("name"), str) or not isinstance(data.get("primary"), str):
        raise ValueError(f"{path.name}: a theme needs `name` and `primary`")
    kwargs = {k: data[k] for k in FIELDS if isinstance(data.get(k), str)}
    variables = data.get("variables", {})
    return Theme(
        name=data["name"],
        dark=bool(data.get("dark", True)),
        variables={str(k): str(v) for k, v in variables.items()} if isinstance(variables, dict) else {},
        **kwargs,
    )


def load_themes() -> tuple[list[Theme], list[str]]:
    """Every theme found, and one line per file that could not be read."""
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for d in theme_dirs():
        if not d.is_dir():
            continue
        for path in sorted(d.glob("*.toml")):
            try:
                theme = load_theme_file(path)
            except ValueError as e:
                problems.append(str(e))
                continue
            themes[theme.name] = theme
    return list(themes.values()), problems
