"""A revert fork's failure reports (inside/reports.py): pytest's own bytes, each source parsed once, not per failure."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from reviewui.core.inside import reports

# Statements of every kind pytest's statement finder cares about, around each failing assert.
_TEST = '''import pytest


def _check(x):
    try:
        assert x == -1
    finally:
        pass


@pytest.mark.parametrize("k", range(30))
def test_param(k):
    for i in range(1):
        pass
    else:
        assert k == -1, (
            "multi-line message")


class TestBox:
    def test_method(self):
        _check(3)
'''

_PLUGIN = '''import ast, os
from reviewui.core.inside import reports

_real = ast.parse
PARSED = []


def _counting(source, filename="<unknown>", *a, **k):
    if filename == "source":  # pytest's name for a failure report's parse
        PARSED.append(1)
    return _real(source, filename, *a, **k)


ast.parse = _counting
if os.environ.get("SHARE") == "1":
    assert reports.share()


def pytest_unconfigure(config):
    with open(os.environ["PARSED_OUT"], "w") as f:
        f.write(str(len(PARSED)))
'''


def _run(tmp: Path, share: bool) -> tuple[str, int]:
    out = tmp / f"parsed-{share}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp), *sys.path]), "SHARE": "1" if share else "0",
           "PARSED_OUT": str(out), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "countplug", "-p", "no:cacheprovider", "-q",
                           "test_many.py"], cwd=tmp, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    # no timing, no object addresses: they differ from one process to the next
    text = "\n".join(ln for ln in proc.stdout.splitlines() if " in " not in ln or "failed" not in ln)
    text = re.sub(r"0x[0-9a-f]+", "0x", text)
    return text, int(out.read_text())


def test_shared_reports_are_pytests_own_bytes_with_one_parse_per_file(tmp_path: Path) -> None:
    (tmp_path / "test_many.py").write_text(_TEST)
    (tmp_path / "countplug.py").write_text(_PLUGIN)
    plain, parsed_plain = _run(tmp_path, share=False)
    shared, parsed_shared = _run(tmp_path, share=True)
    assert plain.count("\nFAILED test_many.py::") == 31
    assert shared == plain  # every line of every report, as pytest writes it
    assert parsed_plain >= 2 * 31  # pytest alone: the file and the statement, per failure
    assert parsed_shared <= 4  # shared: each text once (the file, each failing test's statement)


def test_the_statement_lines_agree_with_pytests_on_every_line() -> None:
    import _pytest._code.source as source

    tree = ast.parse(_TEST)
    assert all(reports._startend(n, tree) == source.get_statement_startend2(n, tree)
               for n in range(len(_TEST.splitlines())))
