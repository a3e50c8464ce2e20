"""One typed settings object for a review, from trusted sources only.

Settings come from the reviewer's user config (`config.toml` in the user
config dir, the same keys at top level), then the *base* commit's
`[tool.reviewui]` in pyproject.toml and its `.reviewui.toml` (whose keys
win), read as blobs through git. The branch under review and any working
tree that holds it are never read: the agent writes those. The branch's own
changes to the config are listed (`branch_config_changes`) and applied only
when the reviewer accepts them for this review. Command-line flags override
everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reviewui.core.errors import ReviewError
from reviewui.core.git import git_common_dir, rev_parse, show_files
from reviewui.core.roles import DEFAULT_TEST_GLOBS
from reviewui.core.target import default_base_ref
from reviewui.core.test_layout import TestLayout, read_layout
from reviewui.core.user_prefs import load_user_prefs as load_user_prefs
from reviewui.core.user_prefs import save_user_pref as save_user_pref
from reviewui.core.user_prefs import user_cache_dir as user_cache_dir
from reviewui.core.user_prefs import user_config_dir as user_config_dir
from reviewui.core.user_prefs import user_data_dir as user_data_dir
from reviewui.core.user_prefs import user_state_dir as user_state_dir
from reviewui.core.witness.budget import Budget

DEFAULT_TEST_COMMAND = "python -m pytest"
DEFAULT_FULL_SUITE_BUDGET = 600.0
"""Seconds the whole suite may take when it is measured to find the tests of a hunk no selected test runs."""
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
    authorship_ref: str = "refs/notes/ai"
    """The git notes ref git-ai authorship notes are read from (`authorship-notes-ref`; trusted: base or user)."""
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
    branch_config_trusted: bool = False
    """True when the reviewer accepted the branch's own config changes for this review."""
    queue_branches: tuple[str, ...] = ()
    """Ref patterns of the branches the review queue lists (`queue-branches`; empty: `refs/heads/agent/*`)."""
    full_suite_budget: float = DEFAULT_FULL_SUITE_BUDGET
    """Time limit (seconds) of the one measured run of the whole suite that looks for the tests
    executing a hunk no selected test runs (`full-suite-budget`; 0 never runs it)."""
    test_layout: TestLayout = field(default_factory=TestLayout)
    """The base commit's test layout (pytest's python_files/testpaths, unittest-only suites)."""
    engine: str = "local"
    """What carries out a bite sweep: `local` (this machine's slots) or `ray` (a Ray cluster's nodes)."""
    ray_address: str | None = None
    """The Ray cluster to join (`ray-address`; None: a local Ray on loopback). Never from the branch."""
    ray_extras: tuple[str, ...] = ()
    """Untracked paths of the checkout shipped to the nodes beside the head's files (`ray-extras`,
    relative to the repository; never `.git`). Never from the branch."""
    ray_ship_limit: int = 512
    """MiB a tree shipped to the Ray nodes may hold (`ray-ship-limit`)."""
    witness_budget: Budget = field(default_factory=Budget)
    """What one toothless guard's witness search may spend (`witness-budget = {seconds = 2, calls = 200}`).
    Never from the branch."""

    @classmethod
    def from_commit(cls, repo_dir: str | Path, rev: str) -> "Settings":
        """Read the settings stored at commit `rev`, on top of the user's config.

        Raises ReviewError when a config file is not valid TOML or a key has
        the wrong type.
        """
        return cls.from_mapping(merge_mappings(user_settings_mapping(), repo_config_at(repo_dir, rev)))

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
            ref = ref if ref.startswith("refs/") else f"refs/notes/{ref}"
            # A verdict is a note: any other namespace (refs/heads/main) would commit onto a branch.
            if not ref.startswith("refs/notes/") or ".." in ref or ref.endswith("/"):
                raise ReviewError(f"config: notes-ref must be under refs/notes/, got {ref!r}")
            s = replace(s, notes_ref=ref)
        if "authorship-notes-ref" in data:
            aref = _str(data["authorship-notes-ref"], "authorship-notes-ref")
            aref = aref if aref.startswith("refs/") else f"refs/notes/{aref}"
            if not aref.startswith("refs/notes/") or ".." in aref or aref.endswith("/"):
                raise ReviewError(f"config: authorship-notes-ref must be under refs/notes/, got {aref!r}")
            s = replace(s, authorship_ref=aref)
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
        if "queue-branches" in data:
            pats = tuple(_str_list(data["queue-branches"], "queue-branches"))
            if any(not p.startswith("refs/") or ".." in p for p in pats):
                raise ReviewError("config: queue-branches are ref patterns under refs/ (e.g. refs/heads/agent/*)")
            s = replace(s, queue_branches=pats)
        if "full-suite-budget" in data:
            b = data["full-suite-budget"]
            if isinstance(b, bool) or not isinstance(b, (int, float)) or b < 0:
                raise ReviewError("config: full-suite-budget must be a number of seconds (0 turns it off)")
            s = replace(s, full_suite_budget=float(b))
        s = _engine_settings(s, data)
        if "witness-budget" in data:
            s = replace(s, witness_budget=_witness_budget(data["witness-budget"]))
        if "timeout" in data:
            t = data["timeout"]
            if not isinstance(t, (int, float)) or t <= 0:
                raise ReviewError("config: timeout must be a positive number of seconds")
            s = replace(s, timeout=float(t))
        return s


ENGINES: tuple[str, ...] = ("local", "ray")
"""The engines a sweep can run on (`engine`, `--engine`)."""


def _engine_settings(s: Settings, data: dict[str, Any]) -> Settings:
    """`s` with the engine keys of `data` (`engine`, `ray-address`, `ray-extras`, `ray-ship-limit`)."""
    if "engine" in data:
        if data["engine"] not in ENGINES:
            raise ReviewError(f"config: engine must be one of {', '.join(ENGINES)}")
        s = replace(s, engine=data["engine"])
    if "ray-address" in data:
        s = replace(s, ray_address=_str(data["ray-address"], "ray-address") or None)
    if "ray-extras" in data:
        s = replace(s, ray_extras=tuple(_str_list(data["ray-extras"], "ray-extras")))
    if "ray-ship-limit" in data:
        n = data["ray-ship-limit"]
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ReviewError("config: ray-ship-limit must be a positive number of MiB")
        s = replace(s, ray_ship_limit=n)
    return s


def _witness_budget(value: Any) -> Budget:
    """`witness-budget`: a table `{seconds = 2, calls = 200}` (either key may be left out), or seconds alone."""
    def seconds(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 600:
            raise ReviewError("config: witness-budget seconds must be a number of seconds (0 to 600)")
        return float(v)

    if not isinstance(value, dict):
        return Budget(seconds=seconds(value))
    if set(value) - {"seconds", "calls"}:
        raise ReviewError("config: witness-budget takes `seconds` and `calls`")
    calls = value.get("calls", Budget().calls)
    if isinstance(calls, bool) or not isinstance(calls, int) or not 0 < calls <= 100_000:
        raise ReviewError("config: witness-budget calls must be a positive whole number")
    return Budget(seconds=seconds(value.get("seconds", Budget().seconds)), calls=calls)


BRANCH_NEVER: tuple[str, ...] = ("ray-address", "ray-extras", "witness-budget")
"""Keys a branch's own config never sets, even when the reviewer trusts it: where its evidence is
made, which of the reviewer's untracked files leave the machine, and how hard its toothless guards
are searched for witnesses."""

CONFIG_FILES: tuple[str, ...] = ("pyproject.toml", ".reviewui.toml")
"""The files (at the repository root) reviewui's config is read from, later ones winning."""

MAX_CONFIG_BYTES = 4 * 1024 * 1024
"""A config blob larger than this is refused rather than parsed."""


def config_from_blobs(blobs: dict[str, bytes | None]) -> dict[str, Any]:
    """Return the `[tool.reviewui]` mapping held by the contents of CONFIG_FILES.

    `blobs` maps a file name to its bytes (None when absent). Raises
    ReviewError when a present file is not valid TOML (or is too large).
    """
    data: dict[str, Any] = {}
    pyproject = blobs.get("pyproject.toml")
    if pyproject is not None and _may_name_reviewui(pyproject):
        section = _load_toml("pyproject.toml", pyproject).get("tool", {}).get("reviewui", {})
        data.update(section if isinstance(section, dict) else {})
    dotfile = blobs.get(".reviewui.toml")
    if dotfile is not None:
        loaded = _load_toml(".reviewui.toml", dotfile)
        section = loaded.get("tool", {}).get("reviewui", loaded)
        data.update(section if isinstance(section, dict) else {})
    return data


def repo_config_at(repo_dir: str | Path, rev: str) -> dict[str, Any]:
    """Return the reviewui config mapping stored at commit `rev` (blobs read through git).

    Raises ReviewError when a config file there is not valid TOML.
    """
    blobs = show_files(repo_dir, [(rev, name) for name in CONFIG_FILES], cap=MAX_CONFIG_BYTES)
    return config_from_blobs(dict(zip(CONFIG_FILES, blobs, strict=True)))


LOCAL_CONFIG = "reviewui.toml"
"""The reviewer's own settings for one repository, kept in its git dir (git never fetches or pushes it)."""


def local_config(repo_dir: str | Path) -> dict[str, Any]:
    """Return the review settings in `<git dir>/reviewui.toml` (the reviewer's, per repository), or {}."""
    path = git_common_dir(repo_dir) / LOCAL_CONFIG
    if not path.is_file():
        return {}
    return {k: v for k, v in _load_toml(str(path), path.read_bytes()).items() if k in SETTING_KEYS}


def user_settings_mapping() -> dict[str, Any]:
    """Return the review settings in the user's own config file (top-level keys)."""
    return {k: v for k, v in load_user_prefs().items() if k in SETTING_KEYS}


SETTING_KEYS: tuple[str, ...] = (
    "test-globs", "test-command", "notes-ref", "authorship-notes-ref", "transcript", "severity",
    "env-allow", "network", "warm-runner", "exclude", "timeout", "full-suite-budget", "queue-branches",
    "engine", "ray-address", "ray-extras", "ray-ship-limit", "witness-budget",
)
"""Every key Settings.from_mapping reads."""


def merge_mappings(*layers: dict[str, Any]) -> dict[str, Any]:
    """Merge config mappings, later layers winning key by key (and kind by kind for `severity`)."""
    out: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if key == "severity" and isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = {**out[key], **value}
            else:
                out[key] = value
    return out


def changed_keys(before: dict[str, Any], after: dict[str, Any]) -> tuple[str, ...]:
    """Return the config keys whose value differs (`severity.KIND` for one severity), sorted."""
    keys: set[str] = set()
    for key in set(before) | set(after):
        old, new = before.get(key), after.get(key)
        if key == "severity" and isinstance(old, (dict, type(None))) and isinstance(new, (dict, type(None))):
            o, n = old or {}, new or {}
            keys |= {f"severity.{k}" for k in set(o) | set(n) if o.get(k) != n.get(k)}
        elif old != new:
            keys.add(key)
    return tuple(sorted(keys))


@dataclass(frozen=True)
class BranchConfigChange:
    """How the branch under review changes reviewui's own config, relative to its base."""

    keys: tuple[str, ...]
    """Changed keys (`network`, `severity.no-change`…), sorted; empty when none changed."""
    files: tuple[str, ...]
    """The config files (of CONFIG_FILES) whose reviewui part the branch changes."""
    error: str | None = None
    """Why the branch's config could not be read (then `keys` is empty), else None."""

    @property
    def changed(self) -> bool:
        """True when the branch changes (or breaks) reviewui's config."""
        return bool(self.keys) or self.error is not None


def branch_config_change(repo_dir: str | Path, base: str, head: str) -> BranchConfigChange:
    """Compare reviewui's config at `head` with the one at `base`.

    Raises ReviewError only when the base's config is unreadable (that one is trusted).
    """
    if base == head:
        return BranchConfigChange((), ())
    blobs = show_files(repo_dir, [(rev, n) for rev in (base, head) for n in CONFIG_FILES], cap=MAX_CONFIG_BYTES)
    before = dict(zip(CONFIG_FILES, blobs[:len(CONFIG_FILES)], strict=True))
    after = dict(zip(CONFIG_FILES, blobs[len(CONFIG_FILES):], strict=True))
    base_map = config_from_blobs(before)
    files = []
    for name in CONFIG_FILES:
        if before[name] == after[name]:
            continue
        try:
            one_before = config_from_blobs({name: before[name]})
            one_after = config_from_blobs({name: after[name]})
        except ReviewError as e:
            return BranchConfigChange((), (name,), str(e).removeprefix("config: "))
        if changed_keys(one_before, one_after):
            files.append(name)
    try:
        head_map = config_from_blobs(after)
    except ReviewError as e:  # pragma: no cover - caught per file above
        return BranchConfigChange((), tuple(files), str(e).removeprefix("config: "))
    return BranchConfigChange(changed_keys(base_map, head_map), tuple(files))


def resolve_settings(repo_dir: str | Path, base: str, head: str, *, trust_branch: bool = False) -> Settings:
    """Return the settings for reviewing `base..head`: user config, the base commit's, the reviewer's local one.

    The local layer (`<git dir>/reviewui.toml`) is the reviewer's own: no
    branch can write it (tests run in a sandbox that hides `.git`).

    With `trust_branch` (the reviewer accepted the branch's config for this
    review) the branch head's config is laid on top, except that the branch
    can never lower the severity of the `config-changed` finding about itself.
    Raises ReviewError for a config that is not valid TOML or has a bad value.
    """
    layers = [user_settings_mapping(), repo_config_at(repo_dir, base), local_config(repo_dir)]
    if trust_branch and base != head:
        branch = {k: v for k, v in repo_config_at(repo_dir, head).items() if k not in BRANCH_NEVER}
        if isinstance(branch.get("severity"), dict):
            branch["severity"] = {k: v for k, v in branch["severity"].items() if k != "config-changed"}
        layers.append(branch)
    merged = merge_mappings(*layers)
    return with_layout(replace(Settings.from_mapping(merged), branch_config_trusted=trust_branch),
                       read_layout(repo_dir, base), command_set="test-command" in merged)


def with_layout(settings: Settings, layout: TestLayout, *, command_set: bool) -> Settings:
    """`settings` with the base commit's test layout: its test files count as tests, and a
    unittest-only suite runs under `python -m unittest` unless a test command is configured."""
    command = layout.unittest_command if layout.wants_unittest and not command_set else settings.test_command
    return with_command(replace(settings, test_command=command), command, layout)


def with_command(settings: Settings, command: str, layout: TestLayout | None = None) -> Settings:
    """`settings` whose test layout (by default its own) knows the files `command` names by path
    (a `--test-cmd` given for this review included): those count as tests everywhere."""
    known = (layout or settings.test_layout).with_command(command).with_globs(settings.test_globs)
    globs = tuple(dict.fromkeys([*settings.test_globs, *known.role_globs()]))
    return replace(settings, test_globs=globs, test_layout=known)


def _may_name_reviewui(pyproject: bytes) -> bool:
    """False when a pyproject.toml cannot hold a `[tool.reviewui]` table (no need to parse it).

    Most projects' pyproject.toml never mentions reviewui, and parsing it (and
    importing tomllib) is time the reviewer waits for the first screen. A quoted
    key may spell the name with escapes, so any escape sends the file to the parser.
    """
    return b"reviewui" in pyproject or b"\\u" in pyproject or b"\\U" in pyproject


def _load_toml(name: str, data: bytes) -> dict[str, Any]:
    import tomllib  # not at the top: most starts never parse TOML (see _may_name_reviewui)

    if len(data) > MAX_CONFIG_BYTES:
        raise ReviewError(f"config: {name} is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ReviewError(f"config: {name} is not valid TOML: {e}") from e


def _str(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ReviewError(f"config: {key} must be a non-empty string")
    return value


def _str_list(value: Any, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ReviewError(f"config: {key} must be a list of strings")
    return value


def notes_ref_for(repo_dir: str | Path) -> str:
    """The notes ref of a repository without a branch under review (`notes pull|push`).

    Read from the user's config and the default branch's committed config
    (never the checked-out branch or the working tree). Raises ReviewError
    for a bad config value.
    """
    try:
        rev = rev_parse(repo_dir, default_base_ref(Path(repo_dir)))
    except ReviewError:
        rev = None
    repo = repo_config_at(repo_dir, rev) if rev else {}
    return Settings.from_mapping(merge_mappings(user_settings_mapping(), repo)).notes_ref
