"""One typed settings object for a review.

Read from the reviewed repository: `[tool.reviewui]` in its pyproject.toml,
then `.reviewui.toml` (whose keys win). Command-line flags override both.
The user's own preferences (the theme) live in the user config dir.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomli_w

from reviewui.core.errors import ReviewError
from reviewui.core.roles import DEFAULT_TEST_GLOBS

DEFAULT_TEST_COMMAND = "python -m pytest"
DEFAULT_NOTES_REF = "refs/notes/reviewui"
DEFAULT_TRANSCRIPT_PATHS: tuple[str, ...] = (
    ".reviewui/transcript.jsonl",
    ".reviewui/transcript.json",
    "transcript.jsonl",
)


@dataclass(frozen=True)
class Settings:
    """Everything a review can be configured with."""

    test_globs: tuple[str, ...] = DEFAULT_TEST_GLOBS
    """Globs that make a path a test file."""
    test_command: str = DEFAULT_TEST_COMMAND
    """The command that runs the tests (pytest gets JUnit and coverage extras)."""
    notes_ref: str = DEFAULT_NOTES_REF
    """The git notes ref verdicts are written to."""
    transcript_paths: tuple[str, ...] = DEFAULT_TRANSCRIPT_PATHS
    """Paths, relative to the repo root, where a transcript is looked for."""
    severity: dict[str, str] = field(default_factory=dict)
    """Per-finding-kind severity overrides (`error`, `warning`, `info`)."""
    env_allow: tuple[str, ...] = ()
    """Environment variable names kept even when they look like secrets."""
    timeout: float | None = None
    """Per-run time limit in seconds; None means derived from the baseline."""
    exclude: tuple[str, ...] = ()
    """Globs of paths left out of findings and bite-checks (vendored code, sample data)."""
    network: bool = False
    """Let the tests reach the network (by default they run without it where `unshare` allows,
    which also takes away loopback: a suite that talks to localhost needs this)."""
    warm_runner: bool = True
    """Run bite-checks of a `<python> -m pytest` command as forks of one warm pytest process
    (see core/run/warm_runner.py); `warm-runner = false` starts every run cold."""

    @classmethod
    def from_repo(cls, repo_dir: str | Path) -> "Settings":
        """Read the settings of the repository at `repo_dir`.

        Raises ReviewError when a config file is not valid TOML or a key has
        the wrong type.
        """
        root = Path(repo_dir)
        data: dict[str, Any] = {}
        pyproject = root / "pyproject.toml"
        if pyproject.is_file():
            data.update(_load_toml(pyproject).get("tool", {}).get("reviewui", {}))
        dotfile = root / ".reviewui.toml"
        if dotfile.is_file():
            loaded = _load_toml(dotfile)
            data.update(loaded.get("tool", {}).get("reviewui", loaded))
        return cls.from_mapping(data)

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> "Settings":
        """Build settings from a `[tool.reviewui]` style mapping."""
        s = cls()
        if "test-globs" in data:
            s = replace(s, test_globs=tuple(_str_list(data["test-globs"], "test-globs")))
        if "test-command" in data:
            s = replace(s, test_command=_str(data["test-command"], "test-command"))
        if "notes-ref" in data:
            ref = _str(data["notes-ref"], "notes-ref")
            s = replace(s, notes_ref=ref if ref.startswith("refs/") else f"refs/notes/{ref}")
        if "transcript" in data:
            s = replace(s, transcript_paths=(_str(data["transcript"], "transcript"),))
        if "severity" in data:
            sev = data["severity"]
            if not isinstance(sev, dict) or any(
                v not in ("error", "warning", "info") for v in sev.values()
            ):
                raise ReviewError("config: severity must map kinds to error|warning|info")
            s = replace(s, severity=dict(sev))
        if "env-allow" in data:
            s = replace(s, env_allow=tuple(_str_list(data["env-allow"], "env-allow")))
        if "network" in data:
            if not isinstance(data["network"], bool):
                raise ReviewError("config: network must be true or false")
            s = replace(s, network=data["network"])
        if "warm-runner" in data:
            if not isinstance(data["warm-runner"], bool):
                raise ReviewError("config: warm-runner must be true or false")
            s = replace(s, warm_runner=data["warm-runner"])
        if "exclude" in data:
            s = replace(s, exclude=tuple(_str_list(data["exclude"], "exclude")))
        if "timeout" in data:
            t = data["timeout"]
            if not isinstance(t, (int, float)) or t <= 0:
                raise ReviewError("config: timeout must be a positive number of seconds")
            s = replace(s, timeout=float(t))
        return s


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ReviewError(f"config: {path.name} is not valid TOML: {e}") from e


def _str(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ReviewError(f"config: {key} must be a non-empty string")
    return value


def _str_list(value: Any, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ReviewError(f"config: {key} must be a list of strings")
    return value


# --- the user's own preferences -------------------------------------------


def user_config_dir() -> Path:
    """Return reviewui's directory under the user's config dir (XDG)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "reviewui"


def user_state_dir() -> Path:
    """Return reviewui's directory for local state (marks, probes) (XDG)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "reviewui"


def user_cache_dir() -> Path:
    """Return reviewui's cache directory (scratch worktrees live here) (XDG)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "reviewui"


def load_user_prefs() -> dict[str, Any]:
    """Return the user's saved preferences; an unreadable file counts as empty."""
    path = user_config_dir() / "config.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def save_user_pref(key: str, value: Any) -> None:
    """Remember one preference (e.g. `theme`) in the user config dir."""
    prefs = load_user_prefs()
    prefs[key] = value
    path = user_config_dir()
    path.mkdir(parents=True, exist_ok=True)
    tmp = path / "config.toml.tmp"
    tmp.write_text(tomli_w.dumps(prefs), encoding="utf-8")
    tmp.replace(path / "config.toml")
