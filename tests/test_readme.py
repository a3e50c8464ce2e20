"""The README stays a user's manual: at most 12 KB, and its two commands are what CI runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CI_RUN = ROOT / ".ci" / "run"
VENV = "python3 -m venv .venv && . .venv/bin/activate && "


def _two_commands() -> list[str]:
    section = README.read_text(encoding="utf-8").split("## Two commands on a fresh machine", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, re.DOTALL)


def test_the_readme_is_at_most_12_kb() -> None:
    size = len(README.read_bytes())
    assert size <= 12 * 1024, f"README.md is {size} bytes; figures and stories belong in bench/README.md"


def test_its_two_commands_are_what_ci_runs() -> None:
    demo, tests = _two_commands()
    ci = CI_RUN.read_text(encoding="utf-8")
    ci_lines = [line.strip() for line in ci.splitlines()]
    # Both start in a fresh virtualenv: CI makes and activates it the same way (as a new user, in a copy).
    assert demo.startswith(VENV) and tests.startswith(VENV), (demo, tests)
    assert VENV.removesuffix(" && ") in ci_lines
    # The test command is a line of .ci/run, byte for byte.
    assert tests[len(VENV):] in ci_lines, tests
    # The demo command: CI installs the package (with the test extras) and runs `reviewui demo` headless.
    assert demo[len(VENV):] == "pip install . && reviewui demo", demo
    assert any(re.search(r"\breviewui demo --no-open\b", line) for line in ci_lines)


def test_the_figures_moved_to_bench_readme() -> None:
    bench = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    for script in sorted((ROOT / "bench").glob("bench_*.py")):
        assert f"bench/{script.name}" in bench, script.name
    assert "How the first session's misses were closed" in bench
