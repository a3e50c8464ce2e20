"""Choosing the executor a sweep runs on: `--engine local|ray` over the trusted `engine` setting.

`local` (the default) is None here: run_bite then uses the local executor.
`ray` connects to the cluster (`--ray-address` over `ray-address`; neither:
a local Ray on loopback) before the sweep starts, so the start-up is paid
once per process, and ReviewError says how to install Ray when it is not.
"""

from __future__ import annotations

from typing import Callable

from reviewui.core.bite.executor import Executor
from reviewui.core.config import ENGINES, Settings
from reviewui.core.errors import ReviewError
from reviewui.core.run.worktree import WorktreePool

Engine = Callable[[WorktreePool], Executor]


def engine_for(settings: Settings, engine: str | None = None, address: str | None = None,
               jobs: int | None = None) -> Engine | None:
    """The executor factory for `engine` (default: the setting), None for the local one."""
    name = engine or settings.engine
    if name not in ENGINES:
        raise ReviewError(f"unknown engine {name!r} (one of {', '.join(ENGINES)})")
    if name == "local":
        return None
    from reviewui.core.bite.executor_ray import ray_engine

    return ray_engine(address or settings.ray_address, jobs=jobs, extras=settings.ray_extras,
                      ship_limit=settings.ray_ship_limit * 1024 * 1024)

