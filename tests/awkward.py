"""A repository whose agent branch has every awkward shape of change at once."""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import RepoBuilder, make_repo

LONG_LINE = "x = '" + "y" * 10_000 + "'\n"
MARKUP = "print('[bold red]x[/bold red]')\nprint('\x1b[31mred\x1b[0m')\n"

BASE = {
    "pkg/__init__.py": "",
    "pkg/calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    "pkg/old_name.py": "VALUE = 1\n" * 20,
    "pkg/gone.py": "def gone():\n    return 1\n",
    "tools/run.sh": "#!/bin/sh\necho hi\n",
    "data/logo.bin": bytes(range(256)) * 4,
    "docs/crlf.txt": "one\r\ntwo\r\nthree\r\n",
    "docs/latin1.txt": "caf\xe9\n".encode("latin-1"),
    "tests/test_calc.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}

BRANCH = {
    "pkg/calc.py": "def add(a, b):\n    if a is None:\n        return b\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    "pkg/old_name.py": None,
    "pkg/new_name.py": "VALUE = 1\n" * 19 + "VALUE = 2\n",
    "pkg/gone.py": None,
    "data/logo.bin": bytes(reversed(range(256))) * 8,
    "docs/crlf.txt": "one\r\n2\r\nthree\r\n",
    "docs/latin1.txt": "caf\xe9 cr\xe8me\n".encode("latin-1"),
    "docs/empty.txt": "",
    "dir with space/naïve ü.py": "S = 'ü'\n",
    "pkg/long.py": LONG_LINE,
    "pkg/markup.py": MARKUP,
    "tests/test_calc.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_none():\n    assert add(None, 2) == 2\n",
}


def awkward_repo(root: Path) -> RepoBuilder:
    """Build the awkward repo; the branch `agent/work` also flips run.sh's mode."""
    rb = make_repo(root, BASE, BRANCH)
    rb.checkout("agent/work")
    (root / "tools/run.sh").chmod(0o755)
    rb.git("add", "-A")
    rb.git("commit", "-q", "-m", "make run.sh executable")
    rb.checkout("main")
    return rb
