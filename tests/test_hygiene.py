"""The core never imports Textual or Rich: checked in a fresh interpreter."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import reviewui.core
from tests.clirun import ROOT


def test_core_imports_no_textual_or_rich() -> None:
    modules = [m.name for m in pkgutil.walk_packages(reviewui.core.__path__, "reviewui.core.")]
    assert "reviewui.core.diff" in modules and len(modules) > 5
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bad = sorted(k for k in sys.modules if k.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""
