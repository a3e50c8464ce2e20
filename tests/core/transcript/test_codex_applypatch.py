"""Codex: `applypatch` / `apply_patch` run inside shell commands are edits (issue 28).

Codex intercepts a patch fed to either spelling from `shell`/`exec_command`
(argv `["applypatch", patch]`, a `bash -lc` heredoc, optionally after
`cd dir &&`). No public unredacted rollout with the `applypatch` spelling was
found (the real rollouts here have their arguments redacted), so these are the
argument shapes the rollouts record, built around one patch.
"""

from __future__ import annotations

import pytest

from reviewui.core.transcript.tools import interpret_call

PATCH = "*** Begin Patch\n*** Update File: src/calc.py\n@@\n-x = 1\n+x = 2\n*** End Patch"


@pytest.mark.parametrize(("name", "args", "path"), [
    ("exec_command", {"cmd": "applypatch <<'PATCH'\n" + PATCH + "\nPATCH"}, "src/calc.py"),
    ("exec_command", {"cmd": "cd pkg && applypatch <<EOF\n" + PATCH + "\nEOF"}, "pkg/src/calc.py"),
    ("shell", {"command": ["bash", "-lc", "applypatch <<'EOF'\n" + PATCH + "\nEOF"]}, "src/calc.py"),
    ("shell", {"command": ["applypatch", PATCH]}, "src/calc.py"),
    ("shell", {"command": ["bash", "-lc", "apply_patch <<'EOF'\n" + PATCH + "\nEOF"]}, "src/calc.py"),
    ("shell", {"command": ["apply_patch", PATCH]}, "src/calc.py"),
])
def test_patches_run_through_the_shell_are_edits(name: str, args: dict, path: str) -> None:
    call, edits = interpret_call(name, args, "c1")
    assert [(e.path, e.operation) for e in edits] == [(path, "patch")]
    assert "-x = 1" in (edits[0].patch or "") and "+x = 2" in (edits[0].patch or "")
    assert call.paths == (path,)
