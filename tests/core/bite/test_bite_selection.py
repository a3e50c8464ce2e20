"""Selection without being told, not-code hunks, nothing to check, cross-hunk by ast."""

from __future__ import annotations

from pathlib import Path

import pytest

import reviewui.core.bite.runctx as runctx
from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo


def _verdicts(report) -> dict[tuple[str, int], str]:
    return {r.key: r.verdict for r in report.results}


def test_tests_init_only_change_selects_the_inheriting_tests(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    base = {
        "pkg/__init__.py": "",
        "pkg/calc.py": "def double(x):\n    return x\n",
        "tests/__init__.py": "class Mixin:\n    pass\n",
        "tests/test_calc.py": (
            "from tests import Mixin\nfrom pkg.calc import double\n\n\n"
            "class TestCalc(Mixin):\n    def test_double(self):\n        self.check(double)\n"
        ),
        "tests/test_unrelated.py": "def test_nothing():\n    assert True\n",
    }
    branch = {
        "pkg/calc.py": "def double(x):\n    return 2 * x\n",
        "tests/__init__.py": "class Mixin:\n    def check(self, f):\n        assert f(2) == 4\n",
    }
    rb = make_repo(tmp_path / "r", base, {**base, **branch})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=1)
    assert rep.selected_tests == ("tests/test_calc.py",)
    assert "1 in test files importing a changed helper" in rep.selection
    assert _verdicts(rep) == {("pkg/calc.py", 0): "bites"}
    assert rep.baseline.tests == ("tests/test_calc.py::TestCalc::test_double",)


def test_a_changed_data_file_selects_the_test_that_reads_it(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    reader = (
        "import json\nfrom pathlib import Path\nfrom pkg.parse import parse\n\n\n"
        "def test_cases():\n"
        "    for raw, want in json.loads((Path(__file__).parent / 'data' / 'cases.json').read_text()):\n"
        "        assert parse(raw) == want\n"
    )
    base = {
        "pkg/__init__.py": "",
        "pkg/parse.py": "def parse(s):\n    return s\n",
        "tests/test_parse.py": reader,
        "tests/data/cases.json": "[]\n",
        "tests/test_other.py": "def test_other():\n    assert True\n",
    }
    branch = {
        "pkg/parse.py": "def parse(s):\n    return s.strip()\n",
        "tests/data/cases.json": '[[" a ", "a"]]\n',
        "tests/test_other.py": "def test_other():\n    assert 1\n",
    }
    rb = make_repo(tmp_path / "r", base, {**base, **branch})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=1)
    assert "1 reading a changed data file" in rep.selection
    [r] = rep.results
    assert r.verdict == "bites" and r.failing_tests == ("tests/test_parse.py::test_cases",)


def test_no_test_change_runs_the_tests_that_execute_the_changed_lines(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    base = {
        "pkg/__init__.py": "",
        "pkg/m.py": "def f(x):\n    return x\n\n\ndef g(x):\n    return x\n",
        "tests/test_f.py": "from pkg.m import f\n\n\ndef test_f():\n    assert f(1) == 2\n",
        "tests/test_g.py": "from pkg.m import g\n\n\ndef test_g():\n    assert g(1) == 1\n",
    }
    rb = make_repo(tmp_path / "r", base, {"pkg/m.py": base["pkg/m.py"].replace("    return x\n", "    return x + 1\n", 1)})
    t, d = load(rb.root)
    assert [f.path for f in d.files] == ["pkg/m.py"]
    rep = run_bite(t, d, Settings(), jobs=1)
    assert "of the whole suite" in rep.selection and "execute its lines" in rep.selection
    [r] = rep.results
    assert r.verdict == "bites" and r.tests_run == ("tests/test_f.py::test_f",)


def test_no_source_hunk_says_nothing_to_bite_check_and_runs_nothing(tmp_path: Path, monkeypatch) -> None:
    def refuse(*a, **k):
        raise AssertionError("nothing should run")

    monkeypatch.setattr(runctx, "run_tests", refuse)
    rb = make_repo(tmp_path / "r", {"README.md": "a\n", "tests/test_a.py": "def test_a():\n    pass\n"},
                   {"README.md": "b\n", "tests/test_a.py": "def test_a():\n    assert 1\n"})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings())
    assert rep.results == () and rep.exit_code == 0
    assert "nothing to bite-check" in rep.render_text(t) and "nothing to bite-check" in rep.selection


def test_toml_hunk_is_not_code_and_leaves_the_exit_code_alone(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    base = {"pkg/__init__.py": "", "pkg/g.py": "def clamp(x):\n    return x\n",
            "pyproject.toml": "[tool.x]\na = 1\n", ".pre-commit-config.yaml": "repos: []\n"}
    branch = {"pkg/g.py": "def clamp(x):\n    return max(x, 0)\n", "pyproject.toml": "[tool.x]\na = 2\n",
              ".pre-commit-config.yaml": "repos: [1]\n",
              "tests/test_g.py": "from pkg.g import clamp\n\n\ndef test_clamp():\n    assert clamp(-1) == 0\n"}
    rb = make_repo(tmp_path / "r", base, {**base, **branch})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=1)
    assert _verdicts(rep) == {("pkg/g.py", 0): "bites", ("pyproject.toml", 0): "not-code",
                              (".pre-commit-config.yaml", 0): "not-code"}
    assert rep.exit_code == 0 and rep.summary()["not-code"] == 2
    checked = run_bite(t, d, Settings(), jobs=1, include_config=True)
    assert _verdicts(checked)[("pyproject.toml", 0)] == "toothless" and checked.exit_code == 1


CROSS_BASE = {
    "pkg/__init__.py": "",
    "pkg/util.py": "def one():\n    return 1\n\n\ndef two():\n    return 2\n",
    "pkg/geo.py": "def area(w, h):\n    return w * h\n",
    "pkg/c.py": "from pkg.util import (\n    one,\n)\n\n\ndef total():\n    return one()\n" + "\nX = 1\n" * 5,
    "pkg/shop.py": "from pkg.geo import area\n\n\ndef price(w, h):\n    return area(w, h)\n",
}
CROSS_BRANCH = {
    # hunk 0 of geo adds a parameter; shop.py's hunk uses it
    "pkg/geo.py": "def area(w, h, scale=1):\n    return w * h * scale\n",
    "pkg/shop.py": "from pkg.geo import area\n\n\ndef price(w, h):\n    return area(w, h, scale=2)\n",
    # a name added inside a parenthesised import block whose first line is unchanged context,
    # used by a second hunk further down the file
    "pkg/c.py": (
        "from pkg.util import (\n    one,\n    two,\n)\n\n\n"
        "def total():\n    return one()\n" + "\nX = 1\n" * 5 + "\n\ndef both():\n    return one() + two()\n"
    ),
    "tests/test_cross.py": (
        "from pkg.c import both\nfrom pkg.shop import price\n\n\n"
        "def test_price():\n    assert price(2, 3) == 12\n\n\n"
        "def test_both():\n    assert both() == 3\n"
    ),
}


def test_cross_hunk_parameter_and_parenthesised_import(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "r", CROSS_BASE, {**CROSS_BASE, **CROSS_BRANCH})
    t, d = load(rb.root)
    c_hunks = [h.header for h in d.file("pkg/c.py").hunks]
    assert len(c_hunks) == 2, c_hunks
    rep = run_bite(t, d, Settings(), jobs=2)
    got = {r.key: r for r in rep.results}
    geo = got[("pkg/geo.py", 0)]
    assert geo.verdict == "broken", geo.reason
    assert geo.reason.startswith("cross-hunk: scale is defined by this hunk and used by pkg/shop.py:5")
    imp = got[("pkg/c.py", 0)]
    assert imp.verdict == "broken", imp.reason
    assert imp.reason.startswith("cross-hunk: two is defined by this hunk and used by pkg/c.py:")
    # the hunk that uses the parameter is guarded by a real failure
    assert got[("pkg/shop.py", 0)].verdict == "bites"


@pytest.mark.parametrize("head,reverted,names,params,functions", [
    ("def f(a, b=1):\n    pass\n", "def f(a):\n    pass\n", set(), {"b"}, {"f"}),
    ("from x import (\n    a,\n    b,\n)\n", "from x import (\n    a,\n)\n", {"b"}, set(), set()),
    ("class C:\n    size = 1\n    def m(self, k): pass\n", "class C:\n    def m(self): pass\n",
     {"size"}, {"k"}, {"m"}),
])
def test_removed_by_revert(head: str, reverted: str, names: set, params: set, functions: set) -> None:
    from reviewui.core.bite.crosshunk import removed_by_revert

    r = removed_by_revert(head, reverted)
    assert r is not None
    assert (set(r.names), set(r.params), set(r.functions)) == (names, params, functions)
    assert removed_by_revert("def (:\n", reverted) is None


def test_user_of_skips_tests_docs_and_other_definitions(tmp_path: Path) -> None:
    from reviewui.core.bite.crosshunk import user_of

    base = {"pkg/__init__.py": "", "pkg/a.py": "def f():\n    pass\n", "pkg/b.py": "def g():\n    pass\n",
            "pkg/c.py": "def h():\n    pass\n", "docs/x.md": "a\n", "tests/test_a.py": "def test_a():\n    pass\n"}
    branch = {"pkg/a.py": "def f():\n    pass\nf.cache = {}\n", "pkg/b.py": "def g():\n    pass\ng.cache = {}\n",
              "docs/x.md": "a\nuse f.cache\n", "tests/test_a.py": "def test_a():\n    assert f.cache == {}\n"}
    rb = make_repo(tmp_path / "r", base, {**base, **branch})
    t, d = load(rb.root)
    mine = d.file("pkg/a.py").hunks[0]
    assert user_of("cache", d, mine) is None  # b.py defines its own .cache; docs and tests don't count
    rb.checkout("agent/work")
    rb.commit({"pkg/c.py": "def h():\n    return g.cache\n"}, "use")
    t, d = load(rb.root)
    assert user_of("cache", d, d.file("pkg/a.py").hunks[0]) == "pkg/c.py:2"



def test_user_of_a_name_only_in_a_string_literal_is_no_use(tmp_path: Path) -> None:
    # six 10a2b75: `_assertNotRegex = "assertNotRegex"` names unittest's method in a string; the hunk that adds
    # six.assertNotRegex is not used by it, so its revert's AttributeError is a bite, not a cross-hunk break.
    from reviewui.core.bite.crosshunk import user_of

    base = {"pkg/__init__.py": "", "pkg/a.py": "X = 1\n", "pkg/b.py": "def g():\n    pass\n"}
    branch = {"pkg/a.py": "X = 1\n_name = 'cache'  # cache\n", "pkg/b.py": "def g():\n    pass\n\n\ndef cache():\n    pass\n"}
    rb = make_repo(tmp_path / "r", base, {**base, **branch})
    t, d = load(rb.root)
    assert user_of("cache", d, d.file("pkg/b.py").hunks[0]) is None
    rb.checkout("agent/work")
    rb.commit({"pkg/a.py": "X = 1\n_name = 'cache'  # cache\nf'{cache()}'\ny = \"s\" + cache()\n"}, "use")
    t, d = load(rb.root)
    assert user_of("cache", d, d.file("pkg/b.py").hunks[0]) == "pkg/a.py:3"  # an f-string's braces are code
    rb.commit({"pkg/a.py": "X = 1\n_name = 'cache'  # cache\ny = cfg['cache']\n"}, "read a key")
    t, d = load(rb.root)
    assert user_of("cache", d, d.file("pkg/b.py").hunks[0]) == "pkg/a.py:3"  # a subscript's key is a use

RENAME_BASE = {
    "pkg/__init__.py": "",
    "pkg/env.py": ("_PLUGINS = ('cov',)\n\n\n\n\n\n\n\n"
                   "def keep(names):\n    return [n for n in names if n not in _PLUGINS]\n"),
}
RENAME_BRANCH = {
    # One rename, two hunks: the definition and, far below, its use. Reverting the use alone
    # brings the old name back, which the other hunk removed: a NameError that says nothing.
    "pkg/env.py": ("PLUGINS = ('cov', 'origin')\n\n\n\n\n\n\n\n"
                   "def keep(names):\n    return [n for n in names if n not in PLUGINS]\n"),
    "tests/test_env.py": "from pkg.env import keep\n\n\ndef test_keep():\n    assert keep(['a', 'origin']) == ['a']\n",
}


def test_reverting_one_half_of_a_rename_is_cross_hunk(tmp_path: Path, monkeypatch) -> None:
    # Found by reviewui bite-checking its own change (sandbox_env's _HARNESS_PLUGINS rename).
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "r", RENAME_BASE, RENAME_BRANCH)
    t, d = load(rb.root)
    assert len(d.file("pkg/env.py").hunks) == 2
    got = {r.key: r for r in run_bite(t, d, Settings(), jobs=2).results}
    use = got[("pkg/env.py", 1)]
    assert use.verdict == "broken", use.reason
    assert use.reason.startswith("cross-hunk: the reverted code needs _PLUGINS"), use.reason


def test_needed_by_revert() -> None:
    from reviewui.core.bite.crosshunk import needed_by_revert

    head = "X = 1\n\n\ndef f(a):\n    return a + X + len([])\n"
    assert needed_by_revert(head, head.replace("+ X", "+ _X")) == {"_X"}
    assert needed_by_revert(head, head.replace("+ X", "+ a")) == frozenset()  # a parameter is bound
    assert needed_by_revert(head, head.replace("len([])", "sum([])")) == frozenset()  # builtins never count
    assert needed_by_revert(head, "def (:\n") == frozenset()


def test_needed_by_revert_sees_scopes() -> None:
    # jaraco.functools cf501aa renamed retry's *args/**kwargs to *r_args/**r_kwargs: reverting the use in the
    # nested wrapper brings back `args`, which other functions of the module bind as their own parameters.
    from reviewui.core.bite.crosshunk import needed_by_revert

    head = ("def compose(*args, **kwargs):\n    return args, kwargs\n\n\n"
            "def retry(*r_args, **r_kwargs):\n    def deco(func):\n        def wrapper():\n"
            "            return func(*r_args, **r_kwargs)\n        return wrapper\n    return deco\n")
    reverted = head.replace("func(*r_args, **r_kwargs)", "func(*args, **kwargs)")
    assert needed_by_revert(head, reverted) == {"args", "kwargs"}
    assert needed_by_revert(head, head.replace("return args, kwargs", "return kwargs, args")) == frozenset()
    assert needed_by_revert(head, "from os import *\n" + reverted) == frozenset()  # a star import binds anything
