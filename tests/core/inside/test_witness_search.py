"""The witness search and the seed capture (inside/witness_search.py, witness_plugin.py), outside the sandbox.

The search runs here in this process (no fork): a module written to a temp
dir, its function's code swapped for the reverted source's, the seeds and
their variations called on both sides. The capture runs as the baseline
would run it, a pytest subprocess with the plugin loaded. The sandboxed
whole (a sweep) is tests/core/witness/test_witness_sweep.py.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from reviewui.core import inside
from reviewui.core.inside import witness_inputs as inputs
from reviewui.core.inside import witness_search as search
from reviewui.core.inside import witness_values as values
from reviewui.core.witness.targets import hints


@pytest.fixture(autouse=True)
def alarm() -> Iterator[None]:
    """The per-call timer, as the search's fork sets it."""
    old = signal.signal(signal.SIGALRM, search._on_alarm)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, old)


_count = [0]


def target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, head: str, reverted: str, name: str,
           calls: list[tuple[Any, ...]], guard: str = "") -> dict[str, Any]:
    """A module holding `head`, and the search's request for `name` with `reverted` and seeds from `calls`."""
    _count[0] += 1
    module = f"witmod{_count[0]}"
    (tmp_path / f"{module}.py").write_text(head)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module(module)
    fn = getattr(mod, name)
    line = fn.__code__.co_firstlineno
    seeds = []
    for args in calls:
        names = values.Names()
        seeds.append({"values": [values.render(a, names) for a in args], "imports": names.imports()})
    return {"id": "0", "module": module, "path": [[name, line, line]], "source": reverted,
            "filename": str(tmp_path / f"{module}.py"), "params": [list(p) for p in values.params_of(fn.__code__)],
            "seeds": seeds, "hints": hints(guard)}


def run(t: dict[str, Any], **budget: Any) -> dict[str, Any]:
    return search.Search(t, {"seconds": 2.0, "calls": 200, "per_call": 0.5, **budget}).run()


CAP = "def cap(xs, n):\n    if len(xs) > n:\n        xs = xs[:n]\n    return xs\n"


def test_a_guard_no_test_reaches_gets_a_witness_from_a_variation(tmp_path: Path, monkeypatch) -> None:
    t = target(tmp_path, monkeypatch, CAP, CAP.replace("len(xs) > n", "False"), "cap", [([1, 2, 3], 5)],
               guard="len(xs) > n")
    reply = run(t)
    assert reply["found"] is True, reply
    w = reply["witness"]
    # the seed's own call answers the same on both sides; one changed place does not
    assert [a[:2] for a in w["args"]] == [["xs", "pos"], ["n", "pos"]] and w["callee"] == "cap"
    assert w["head"] != w["reverted"] and w["assert"]["kind"] == "returns"
    ns = values.namespace(w["imports"]) | {"cap": importlib.import_module(t["module"]).cap}
    xs, n = (values.evaluate(a[2], ns) for a in w["args"])
    assert len(xs) > n and values.evaluate(w["assert"]["expect"], ns) == xs[:n]  # what the head answers
    assert 2 <= reply["tries"] <= 40


EQUIVALENT = "def size(items):\n    n = len(items)\n    if n < 0:\n        n = 0\n    return n\n"


def test_an_equivalent_guard_gets_none_in_every_try(tmp_path: Path, monkeypatch) -> None:
    t = target(tmp_path, monkeypatch, EQUIVALENT, EQUIVALENT.replace("n < 0", "n <= 0"), "size",
               [([1, 2],), ([],)], guard="n < 0")
    reply = run(t, calls=120)
    assert reply["found"] is False and reply["why"] == ""
    assert 50 <= reply["tries"] <= 60  # the budget spent (two calls a try), no witness in it


NOISY = "import random\n\ndef jitter(x):\n    if x > 100:\n        x = 100\n    return x + random.random()\n"


def test_a_function_that_answers_differently_each_time_gets_no_witness(tmp_path: Path, monkeypatch) -> None:
    t = target(tmp_path, monkeypatch, NOISY, NOISY.replace("x > 100", "False"), "jitter", [(5,), (250,)],
               guard="x > 100")
    reply = run(t, calls=100)
    assert reply["found"] is False and reply["tries"] > 10  # every difference was also a difference head to head


def test_the_budget_in_calls_and_seconds_holds(tmp_path: Path, monkeypatch) -> None:
    slow = "import time\n\ndef nap(x):\n    if x < 0:\n        x = 0\n    time.sleep(0.05)\n    return x\n"
    t = target(tmp_path, monkeypatch, slow, slow.replace("x < 0", "False"), "nap", [(3,)], guard="x < 0")
    reply = run(t, seconds=0.5, calls=1000)
    assert reply["seconds"] < 1.0  # the deadline ends the search
    hanging = "def spin(x):\n    if type(x) is int and x > 1:\n        while True:\n            pass\n    return x\n"
    t = target(tmp_path, monkeypatch, hanging, hanging.replace("type(x) is int and x > 1", "False"), "spin", [(5,)],
               guard="x > 1")
    reply = run(t, seconds=1.5, per_call=0.1)
    assert reply["found"] is False and reply["seconds"] < 2.0  # a call that hangs is stopped by its timer, not a witness


ARGUMENT = "def log(line, out):\n    if line:\n        out.append(line)\n    return None\n"
RAISES = "def age(years):\n    if years < 0:\n        raise ValueError('negative')\n    return years\n"


def test_witnesses_by_argument_and_by_exception(tmp_path: Path, monkeypatch) -> None:
    t = target(tmp_path, monkeypatch, ARGUMENT, ARGUMENT.replace("if line:", "if False:"), "log",
               [("x", [])], guard="line")
    w = run(t)["witness"]
    assert w["assert"]["kind"] == "argument" and w["assert"]["param"] == "out"
    assert (w["head"], w["reverted"]) == ("out = ['x']", "out = []")  # the call returns None either way
    t = target(tmp_path, monkeypatch, RAISES, RAISES.replace("years < 0", "False"), "age", [(3,)], guard="years < 0")
    w = run(t)["witness"]
    assert w["assert"] == {"kind": "raises", "type": "ValueError"} and w["head"] == "raises ValueError"
    assert [a[2] for a in w["args"]] != ["3"]


INIT = """class Opt:
    def __init__(self, help=None, deprecated=False):
        if deprecated:
            label = "(DEPRECATED)"
            help = f"{help} {label}" if help else label
        self.help = help
"""


def test_an_object_s_state_tells_them_apart_when_it_has_no_equality_of_its_own(tmp_path: Path, monkeypatch) -> None:
    t = target(tmp_path, monkeypatch, INIT + "\n\ndef unused():\n    pass\n",
               INIT.replace('f"{help} {label}" if help else label', 'label'), "unused", [])
    line = importlib.import_module(t["module"]).Opt.__init__.__code__.co_firstlineno
    t.update(path=[["Opt", 1, 1], ["__init__", line, line]], params=[["self", "pos"], ["help", "pos"],
                                                                       ["deprecated", "pos"]],
             seeds=[{"values": ["_obj(Opt)", "None", "True"], "imports": [[t["module"], "Opt", "Opt"]]}],
             hints=hints('help = f"{help} {label}" if help else label'))
    w = run(t)["witness"]
    # Opt has no __eq__: compared by their state, the head's self.help keeps the help the revert drops
    assert w["assert"]["kind"] == "argument" and w["assert"]["param"] == "self" and w["assert"]["attr"] == "help"
    assert w["head"].startswith("self.help = '") and w["head"].endswith(" (DEPRECATED)'")
    assert w["reverted"] == "self.help = '(DEPRECATED)'"


TYPED = "def bucket(n: int) -> str:\n    if n > 123456:\n        return 'big'\n    return 'small'\n"


def test_type_hints_let_hypothesis_find_one_without_a_seed(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("hypothesis")  # a dependency of reviewui: always there in its own suite
    t = target(tmp_path, monkeypatch, TYPED, TYPED.replace("n > 123456", "False"), "bucket", [])
    reply = run(t)
    assert reply["found"] is True, reply
    w = reply["witness"]
    assert int(w["args"][0][2]) > 123456 and w["head"] == "'big'" and w["reverted"] == "'small'"
    assert not (tmp_path / ".hypothesis").exists() and not Path(".hypothesis", "examples").exists()


METHOD = '''from dataclasses import dataclass


@dataclass
class Box:
    limit: int

    def fits(self, n):
        if n > self.limit:
            return False
        return True

    @classmethod
    def make(cls, n):
        if n < 0:
            n = 0
        return cls(n)
'''


def test_methods_and_classmethods_are_called_through_their_class(tmp_path: Path, monkeypatch) -> None:
    t = target(tmp_path, monkeypatch, METHOD + "\n\ndef unused():\n    pass\n",
               METHOD.replace("n > self.limit", "False"), "unused", [])
    mod = importlib.import_module(t["module"])
    line = mod.Box.fits.__code__.co_firstlineno
    names = values.Names()
    seed = [values.render(mod.Box(5), names), values.render(3, names)]
    t.update(path=[["Box", 4, 5], ["fits", line, line]], seeds=[{"values": seed, "imports": names.imports()}],
             params=[["self", "pos"], ["n", "pos"]], hints=hints("n > self.limit"))
    w = run(t)["witness"]
    assert w["callee"] == "Box.fits" and w["args"][0][0] == "self"
    line = mod.Box.make.__func__.__code__.co_firstlineno
    t.update(path=[["Box", 4, 5], ["make", line - 1, line]], source=METHOD.replace("n < 0", "False"),
             seeds=[{"values": ["Box", "2"], "imports": [[t["module"], "Box", "Box"]]}],
             params=[["cls", "pos"], ["n", "pos"]], hints=hints("n < 0"))
    w = run(t)["witness"]
    assert w["callee"] == "Box.make" and [a[0] for a in w["args"]] == ["n"]  # `cls` is the class's to give


def test_variations_take_the_guards_names_and_constants_first() -> None:
    seed = ["Policy(base_delay=0.5, max_delay=3600.0, attempts=12)", "3"]
    params = [["policy", "pos"], ["attempt", "pos"]]
    found = list(inputs.variations(seed, params, hints("delay = policy.base_delay * 2**attempt\n"
                                                       "return min(delay, policy.max_delay)"), {}))
    assert found[0][0].startswith("Policy(base_delay=2.0,") or found[0][0].startswith("Policy(base_delay=0.5, max_delay=2.0")
    assert ["Policy(base_delay=0.5, max_delay=2.0, attempts=12)", "3"] in found[:4]
    assert ["None", "3"] in found and ["Policy(base_delay=0.5, max_delay=3600.0, attempts=12)", "2"] in found
    listed = list(inputs.variations(["[1, 2, 3]"], [["xs", "pos"]], {}, {}))
    assert {"[]", "[2, 3]", "[1, 2, 3, 3]"} <= {v[0] for v in listed}  # empty, one shorter, one longer


def test_capture_keeps_the_tests_arguments_as_they_were_before_the_call(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "mod.py").write_text(
        "def trim(items, n=2):\n    del items[n:]\n    return len(items)\n\n\ndef other(x):\n    return x\n")
    (project / "test_mod.py").write_text(
        "from pkg.mod import other, trim\n\n\n"
        "def test_trim():\n    xs = [1, 2, 3, 4]\n    assert trim(xs) == 2\n    assert trim([9], n=5) == 1\n"
        "    assert trim([1, 2, 3, 4]) == 2\n    assert other(lambda: 0)\n"
        # the watcher (sys.monitoring on 3.12+, a profile function before) is never seen by a test
        "    import sys\n    mon = getattr(sys, 'monitoring', None)\n"
        "    assert sys.getprofile() is None and (mon is None or mon.get_tool(4) is None and mon.get_tool(3) is None)\n")
    plugins = tmp_path / "plugins"
    inside.place_all(plugins)
    request = {"out": str(tmp_path / "seeds.json"), "max_seeds": 16, "max_bytes": 2048,
               "targets": [{"id": "0", "filename": str(project / "pkg" / "mod.py"), "name": "trim", "lines": [1, 1]},
                           {"id": "1", "filename": str(project / "pkg" / "mod.py"), "name": "other", "lines": [6, 6]}]}
    (tmp_path / "request.json").write_text(json.dumps(request))
    env = {**os.environ, "PYTHONPATH": f"{plugins}{os.pathsep}{project}", "PYTEST_PLUGINS": "reviewui_witness",
           values.SEEDS_VAR: str(tmp_path / "request.json")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mod.py"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = json.loads((tmp_path / "seeds.json").read_text())["targets"]
    trim = found["0"]
    assert trim["params"] == [["items", "pos"], ["n", "pos"]] and trim["seen"] == 3
    # before the call deleted anything; the same call twice kept once
    assert [s["values"] for s in trim["seeds"]] == [["[1, 2, 3, 4]", "2"], ["[9]", "5"]]
    assert found["1"]["seeds"] == [] and "not reachable by name" in found["1"]["why"]  # a lambda is no seed
