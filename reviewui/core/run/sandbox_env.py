"""The environment untrusted test code runs in: no secrets, a throw-away HOME, no network.

Agent-written tests are code the reviewer has not read yet. They get the
reviewer's PATH (so the reviewer's Python and tools are used) but not the
reviewer's credentials: any variable whose name looks like a secret is
dropped unless the repository's `env-allow` setting keeps it. HOME points at
an empty temporary directory so `~/.aws`, `~/.netrc`, `~/.ssh` and friends
are out of reach. Where the kernel lets an unprivileged user create a user +
network namespace (`unshare -rn true` succeeds), the command also runs
without network.
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
                                  "REVIEWUI_COV_SEEN")
_HARNESS_PLUGINS: tuple[str, ...] = ("reviewui_covctx",)
"""pytest plugins a hosting reviewui's coverage baseline names in PYTEST_PLUGINS: a
reviewui run inside those tests (reviewui's own suite) must not inherit them."""
_HARNESS_PREFIXES: tuple[str, ...] = ("COV_CORE_",)

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


def scrubbed_env(
    home: str,
    *,
    allow: Iterable[str] = (),
    base: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Return a copy of `base` (default os.environ) fit for running untrusted tests.

    Secret-looking names are removed unless listed in `allow`; HOME is set to
    `home`; PYTHONDONTWRITEBYTECODE=1 keeps `__pycache__` out of the tree;
    `extra` is applied last.
    """
    keep = set(allow)
    src = os.environ if base is None else base
    env: dict[str, str] = {}
    for name, value in src.items():
        if name in _HARNESS_VARS or name.startswith(_HARNESS_PREFIXES):
            continue
        if is_secret_name(name) and name not in keep:
            continue
        if name == "PYTEST_PLUGINS":
            value = ",".join(p for p in value.split(",") if p.strip() not in _HARNESS_PLUGINS)
            if not value:
                continue
        env[name] = value
    env["HOME"] = home
    env["PYTHONDONTWRITEBYTECODE"] = "1"
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
