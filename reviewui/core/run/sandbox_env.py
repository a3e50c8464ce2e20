"""The environment untrusted test code runs in: an allowlist, a throw-away HOME.

Agent-written tests are code the reviewer has not read yet. They get the
reviewer's PATH, locale, TERM, TZ and the Python variables a run needs, and
nothing else unless the trusted `env-allow` setting names it: an allowlist,
never a denylist, so `SSH_AUTH_SOCK`, `DATABASE_URL` or `NPM_CONFIG__AUTH`
never reach a test. HOME points at an empty private directory. The rest of
the clean room (filesystem, namespaces, limits) is `sandbox.py`; without
bwrap (`--unsandboxed`) `network_isolation_prefix` still takes the network
away where `unshare -rn` works.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from typing import Iterable, Mapping

SECRET_WORDS: tuple[str, ...] = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "APIKEY", "PRIVATE_KEY")
"""A variable whose upper-cased name contains one of these is a secret."""

SECRET_PREFIXES: tuple[str, ...] = ("AWS_", "GITHUB_", "GH_", "OPENAI_", "ANTHROPIC_", "AZURE_", "GOOGLE_APPLICATION_")
"""A variable whose upper-cased name starts with one of these is a secret."""

# Variables our own harness (or a pytest hosting reviewui) sets that would
# change how the test subprocess behaves without being the reviewer's choice.
_HARNESS_VARS: tuple[str, ...] = ("PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT",
                                  "COVERAGE_PROCESS_START", "COVERAGE_RCFILE", "COVERAGE_FILE", "COVERAGE_CORE",
                                  "REVIEWUI_COV_SEEN", "REVIEWUI_ORIGIN_OUT", "REVIEWUI_ORIGIN_MODULES",
                                  "REVIEWUI_DATA_FILES", "REVIEWUI_GUARD_BATCH", "REVIEWUI_QUIET_STOP",
                                  "REVIEWUI_REVERT_BATCH", "REVIEWUI_WITNESS", "REVIEWUI_WITNESS_SEEDS")
HARNESS_PLUGINS: tuple[str, ...] = ("reviewui_covctx", "reviewui_origin", "reviewui_guard_batch",
                                    "reviewui_revert_batch", "reviewui_witness")
"""pytest plugins a hosting reviewui's coverage baseline names in PYTEST_PLUGINS: a
reviewui run inside those tests (reviewui's own suite) must not inherit them."""
_HARNESS_PREFIXES: tuple[str, ...] = ("COV_CORE_",)
NEVER_PREFIXES: tuple[str, ...] = ("RAY_",)
"""Variables no run gets, whatever `env-allow` says: a Ray cluster's own (its address, its auth
token, its node's ids), set in every process of a node that runs a sweep (core/ray)."""

SCRATCH_MARKER = "REVIEWUI_SCRATCH"
"""Every test process carries this variable (the scratch path), so a crashed
run's orphans can be found and killed by the next start."""

WARM_OWNER_MARKER = "REVIEWUI_WARM_OWNER"
"""A warm pytest server (and every run it forks) carries this variable: the pid of
the reviewui that started it, so the next start can kill them after a crash."""


def is_secret_name(name: str) -> bool:
    """True when an environment variable name looks like it holds a secret."""
    upper = name.upper()
    return any(w in upper for w in SECRET_WORDS) or upper.startswith(SECRET_PREFIXES)


ALLOWED_NAMES: frozenset[str] = frozenset({
    "PATH", "LANG", "LANGUAGE", "TERM", "TZ", "COLORTERM", "NO_COLOR", "USER", "LOGNAME",
    "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHASHSEED", "PYTHONUTF8", "PYTHONIOENCODING", "PYTHONWARNINGS",
    "PYTHONFAULTHANDLER", "PYTHONDEVMODE", "PYTHONNOUSERSITE", "PYTHONSAFEPATH", "PYTHONOPTIMIZE",
    "PYTHONMALLOC", "PYTHONTRACEMALLOC", "PYTEST_PLUGINS",
})
"""Variables a run gets from the reviewer's environment (plus LC_*, plus `env-allow`); nothing else
passes, so a secret with an innocent name (SSH_AUTH_SOCK, DATABASE_URL, NPM_CONFIG__AUTH) never does."""


def scrubbed_env(
    home: str,
    *,
    allow: Iterable[str] = (),
    base: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
    tmpdir: str | None = None,
) -> dict[str, str]:
    """Return the environment a run of untrusted tests gets, built from `base` (default os.environ).

    Only ALLOWED_NAMES, LC_* and the names in `allow` (trusted `env-allow`)
    are copied; HOME is `home`; TMPDIR is `tmpdir` when given;
    PYTHONDONTWRITEBYTECODE=1 keeps `__pycache__` out of the tree, and
    HYPOTHESIS_STORAGE_DIRECTORY (unless allowed through) `.hypothesis/`; `extra`
    is applied last.
    """
    keep = set(allow)
    src = os.environ if base is None else base
    env: dict[str, str] = {}
    for name, value in src.items():
        if name in _HARNESS_VARS or name.startswith(_HARNESS_PREFIXES) or name.upper().startswith(NEVER_PREFIXES):
            continue
        if not (name in ALLOWED_NAMES or name.startswith("LC_") or name in keep):
            continue
        if name == "PYTEST_PLUGINS":
            value = ",".join(p for p in value.split(",") if p.strip() not in HARNESS_PLUGINS)
            if not value:
                continue
        env[name] = value
    env["HOME"] = home
    if tmpdir:
        env["TMPDIR"] = tmpdir
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # Hypothesis keeps its example database and constants cache in `.hypothesis/` under the working
    # directory (the tree) by default: a batch session's fork that writes there changed the tree
    # under its siblings, and every guard after it ran alone (~50x slower). The private HOME instead,
    # unless the reviewer let a storage directory of their own through.
    env.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", home.rstrip("/") + "/.hypothesis")
    # Keep tools from prompting on a terminal they do not own.
    env["GIT_TERMINAL_PROMPT"] = "0"
    if extra:
        env.update(extra)
    return env


@functools.lru_cache(maxsize=1)
def network_isolation_prefix() -> tuple[str, ...]:
    """Return the argv prefix that runs a command without network, or () when unavailable.

    Checked once per process: `unshare -rn true` must succeed (unprivileged
    user namespaces enabled). Set REVIEWUI_NO_UNSHARE=1 to opt out.
    """
    if os.environ.get("REVIEWUI_NO_UNSHARE") == "1":
        return ()
    exe = shutil.which("unshare")
    if not exe:
        return ()
    try:
        ok = subprocess.run([exe, "-rn", "true"], capture_output=True, timeout=5).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return (exe, "-rn") if ok else ()
