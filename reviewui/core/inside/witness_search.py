"""The witness search: calls on which the head's function and its reverted code disagree.

Copied by reviewui into a run's own directory as `reviewui_witness_search`
and imported by the witness plugin (witness_plugin.py) only in a search run,
after pytest has collected (so conftest files ran and the project's modules
import as its tests import them). Standard library only; Hypothesis when the
project's Python has it. What a test can assert of a witness it finds (and how
two answers compare) is witness_assert.py, copied beside it.

Request (JSON file named by REVIEWUI_WITNESS): {"out": dir, "seconds",
"calls", "per_call", "memory", "targets": [{"id", "module", "path": [[name,
first_line, def_line], ...], "source" (the file with the guard or hunk
reverted), "filename", "params", "seeds": [{"values", "imports"}], "hints":
{"names", "constants"}, "capture": its function's capture id}], "seeds_file":
the capture's reply (witness_plugin.py: a target with no seeds of its own takes
that id's)}. Per target, a fork of this session: the
function's code object is swapped between the head's and the reverted one
(every reference sees it, as in the guard batch), each candidate call made
on fresh arguments (the seed's source evaluated again), bounded in time (a
timer per call, the fork's deadline) and memory (RLIMIT_AS). Candidates:
the tests' own arguments, then variations of them (witness_plugin's hints
first: the names and constants of the guard's code), then, where every
parameter has a type hint, Hypothesis. A call whose result (return value,
exception type, or its arguments afterwards) differs between the two is run
twice more on each side: any change between runs of one version drops it.
Reply `<out>/<id>.json`: {"found": true, "witness": {"callee", "args":
[[name, kind, source]], "imports", "head", "reverted", "assert": {...}},
"tries", "seconds"} or {"found": false, "tries", "seconds", "why"} or
{"error": why}.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

try:
    import reviewui_forks as forks  # type: ignore[import-not-found]  # copied beside the plugin in a run
    import reviewui_guard_batch as batch  # type: ignore[import-not-found]
    import reviewui_witness_assert as asserts  # type: ignore[import-not-found]
    import reviewui_witness_inputs as inputs  # type: ignore[import-not-found]
    import reviewui_witness_values as values  # type: ignore[import-not-found]
except ImportError:  # imported by reviewui itself, for its names
    from reviewui.core.inside import forks
    from reviewui.core.inside import guard_batch_child as batch
    from reviewui.core.inside import witness_assert as asserts
    from reviewui.core.inside import witness_inputs as inputs
    from reviewui.core.inside import witness_values as values

_CO_COROUTINE, _CO_GENERATOR = 0x80, 0x20


class _Stop(BaseException):
    """The guard's budget (calls or seconds) is spent."""


class _CallTimeout(BaseException):
    """One call ran past its time (a BaseException: the code under test's `except Exception` lets it by)."""


@dataclass
class Candidate:
    """One call to try: a source per parameter, over `imports`."""

    sources: list[str]
    imports: list[list[str]]
    ns: dict[str, Any] = field(default_factory=dict)


# --- one guard -----------------------------------------------------------------------


class Search:
    """The search for one target, in its own fork (see the module docstring)."""

    def __init__(self, target: dict[str, Any], request: dict[str, Any]) -> None:
        self.target = target
        self.started = time.monotonic()
        self.deadline = self.started + float(request.get("seconds", 2.0))
        self.calls_left = int(request.get("calls", 200))
        self.per_call = float(request.get("per_call", 0.5))
        self.tries = 0
        self.params: list[list[str]] = [list(p) for p in target.get("params", [])]

    def reply(self, **more: Any) -> dict[str, Any]:
        return {"tries": self.tries, "seconds": round(time.monotonic() - self.started, 3), **more}

    def setup(self) -> str | None:
        """Find the function and the reverted code; why not, else None."""
        import importlib

        module = importlib.import_module(self.target["module"])
        path = self.target["path"]
        fn = batch._function_at(module, path)
        code = compile(self.target["source"], self.target["filename"], "exec", dont_inherit=True)
        new = batch._code_at(code, path)
        if new.co_freevars != fn.__code__.co_freevars:
            return "the function's closure differs"
        if fn.__code__.co_flags & _CO_COROUTINE:
            return "an async function"
        self.fn, self.head, self.reverted = fn, fn.__code__, new
        owner: Any = module
        for name, _, _ in path[:-1]:
            owner = vars(owner)[name]
        name = path[-1][0]
        raw = vars(owner).get(name)
        if isinstance(raw, property):
            return "a property"
        self.drop_first = isinstance(raw, classmethod)
        self.bound = len(path) > 1 and not isinstance(raw, staticmethod)
        """Its first parameter is `self` or `cls` (a method of a class)."""
        self.public = getattr(owner, name)
        if not callable(self.public):
            return f"{name} is not callable"
        if not self.params:
            self.params = [list(p) for p in values.params_of(self.head)]
        self.callee_path = (self.target["module"], [p[0] for p in path])
        return None

    def callee(self, names: Any) -> str:
        module, parts = self.callee_path
        return ".".join([names.alias(module, parts[0]), *parts[1:]])

    def run(self) -> dict[str, Any]:
        why = self.setup()
        if why is not None:
            return {"error": why}
        seeds = [s for s in self.target.get("seeds", []) if len(s.get("values", ())) == len(self.params)]
        hints = self.target.get("hints", {})
        named = set(hints.get("names", ()))
        at = [i for i, (name, _) in enumerate(self.params) if name in named]
        # Calls that give the guard's own parameters something first (they reach its code), then the
        # shortest: the most readable witness.
        seeds.sort(key=lambda s: (not any(s["values"][i] not in inputs.EMPTY for i in at), sum(len(v) for v in s["values"])))
        siblings = inputs.constants_by_label([v for s in seeds for v in s["values"]])
        streams = [self._from_seed(s, hints, siblings) for s in seeds]
        tried: set[tuple[str, ...]] = set()
        first: list[Candidate] = []
        try:
            for cand in inputs.interleaved(streams):
                if self._new(cand, tried):
                    first.append(cand)
                    found = self.try_one(cand)
                    if found is not None:
                        return self.reply(found=True, witness=found)
            # Two places changed at once: each variation varied again, while the budget lasts.
            again = [(Candidate(changed, c.imports) for changed in inputs.variations(c.sources, self.params, hints, siblings))
                     for c in first]
            for cand in inputs.interleaved(again):
                if self._new(cand, tried):
                    found = self.try_one(cand)
                    if found is not None:
                        return self.reply(found=True, witness=found)
            found = self.hypothesis(seeds)
            if found is not None:
                return self.reply(found=True, witness=found)
        except _Stop:
            pass
        why = "" if seeds else "no seed: no test's call of it could be written as source"
        return self.reply(found=False, why=why)

    @staticmethod
    def _new(cand: Candidate, tried: set[tuple[str, ...]]) -> bool:
        key = tuple(cand.sources)
        if key in tried:
            return False
        tried.add(key)
        return True

    def _from_seed(self, seed: dict[str, Any], hints: dict[str, Any],
                   siblings: dict[str, list[Any]]) -> Iterator[Candidate]:
        imports = seed.get("imports", [])
        yield Candidate(list(seed["values"]), imports)
        for changed in inputs.variations(list(seed["values"]), self.params, hints, siblings):
            yield Candidate(changed, imports)

    # --- calling ----------------------------------------------------------------------

    def call(self, code: types.CodeType, cand: Candidate) -> asserts.Outcome | None:
        """One call of the function with `code` in place (None: no answer, the call cannot count)."""
        if self.calls_left <= 0 or time.monotonic() >= self.deadline:
            raise _Stop()
        self.calls_left -= 1
        try:
            if not cand.ns:
                cand.ns = values.namespace(cand.imports)
            args = [values.evaluate(s, cand.ns) for s in cand.sources]
        except Exception:
            return None
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        for (name, kind), v in zip(self.params, args, strict=True):
            if kind == "pos":
                positional.append(v)
            elif kind == "var" and isinstance(v, tuple):
                positional.extend(v)
            elif kind == "kw":
                keywords[name] = v
            elif kind == "varkw" and isinstance(v, dict):
                keywords.update(v)
        if self.drop_first and positional:
            positional = positional[1:]
        left = min(self.per_call, self.deadline - time.monotonic())
        if left <= 0:
            raise _Stop()
        self.fn.__code__ = code
        clear = getattr(self.public, "cache_clear", None)
        try:
            if callable(clear):
                clear()
            signal.setitimer(signal.ITIMER_REAL, left)
            value = self.public(*positional, **keywords)
            if isinstance(value, types.GeneratorType):
                value = list(_take(value, 1000))
            kind = "return"
        except (_CallTimeout, MemoryError, RecursionError):
            return None
        except BaseException as e:  # SystemExit and KeyboardInterrupt are answers too
            kind, value = "raise", type(e)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self.fn.__code__ = self.head
        return asserts.Outcome(kind, value, args)

    def try_one(self, cand: Candidate) -> dict[str, Any] | None:
        """The witness this candidate makes, or None."""
        h, r = self.call(self.head, cand), self.call(self.reverted, cand)
        self.tries += 1  # counted once both sides answered (a budget spent half-way is no try)
        if h is None or r is None or asserts.same_outcome(h, r):
            return None
        for _ in range(2):  # the same answer every time, on each side, or no witness at all
            h2, r2 = self.call(self.head, cand), self.call(self.reverted, cand)
            if h2 is None or r2 is None or not asserts.same_outcome(h, h2) or not asserts.same_outcome(r, r2):
                return None
        return self.witness(cand, h, r)

    # --- what a test can assert ---------------------------------------------------------

    def witness(self, cand: Candidate, h: asserts.Outcome, r: asserts.Outcome) -> dict[str, Any] | None:
        names = values.Names.of(cand.imports)
        callee = self.callee(names)
        check = asserts.assertion(names, self.params, h, r)
        if check is None:
            return None
        args = asserts.readable([[name, kind, src] for (name, kind), src in zip(self.params, cand.sources, strict=True)],
                                self.params, self.fn, self.head, self.drop_first)
        if check["kind"] == "argument":  # the call answers alike: what it leaves behind tells them apart
            head, reverted = asserts.left(h, r, self.params, check)
        elif h.kind == r.kind == "return":
            head, reverted = values.show_pair(h.value, r.value)
        else:
            head, reverted = asserts.said(h), asserts.said(r)
        return {"callee": callee, "args": args, "imports": names.imports(), "assert": check,
                "head": head, "reverted": reverted}

    # --- Hypothesis ---------------------------------------------------------------------

    def hypothesis(self, seeds: list[dict[str, Any]]) -> dict[str, Any] | None:
        """A witness drawn by Hypothesis where every parameter has a type hint (None when it cannot)."""
        strategies = inputs.strategies(self.fn, self.params, seeds, self.bound)
        if strategies is None:
            return None
        import hypothesis
        from hypothesis import HealthCheck, Phase, settings

        found: list[Candidate] = []

        def differs(drawn: dict[str, Any]) -> bool:
            if self.calls_left < 2 or time.monotonic() >= self.deadline:
                return False
            names = values.Names()
            try:
                sources = [values.render(drawn[name], names) for name, _ in self.params]
            except Exception:
                return False
            cand = Candidate(sources, names.imports())
            h, r = self.call(self.head, cand), self.call(self.reverted, cand)
            self.tries += 1
            if h is None or r is None or asserts.same_outcome(h, r):
                return False
            found.append(cand)
            return True

        options = settings(database=None, max_examples=max(1, self.calls_left // 2), deadline=None,
                           derandomize=True, phases=[Phase.generate, Phase.shrink], report_multiple_bugs=False,
                           suppress_health_check=list(HealthCheck))
        try:
            hypothesis.find(strategies, differs, settings=options)
        except Exception:  # NoSuchExample, Unsatisfiable, a strategy it cannot build
            pass
        for cand in reversed(found[-3:]):  # the last one is the shrunk one
            try:
                witness = self.try_one(cand)
            except _Stop:
                return None
            if witness is not None:
                return witness
        return None


def _take(gen: Any, n: int) -> Iterator[Any]:
    for i, item in enumerate(gen):
        if i >= n:
            break
        yield item


def _silence() -> None:
    fd = os.open(os.devnull, os.O_RDWR)
    for n in (0, 1, 2):
        os.dup2(fd, n)
    os.close(fd)


def _limit_memory(extra: int) -> None:
    try:
        import resource

        with open("/proc/self/statm", encoding="ascii") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = size + extra
        if soft == resource.RLIM_INFINITY or want < soft:
            resource.setrlimit(resource.RLIMIT_AS, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))
    except (OSError, ValueError, ImportError):
        pass  # the sandbox's own limits still hold


def _on_alarm(signum: int, frame: Any) -> None:
    raise _CallTimeout()


def _child(target: dict[str, Any], request: dict[str, Any], out: str) -> None:
    reply: dict[str, Any]
    try:
        os.setpgid(0, 0)
        _silence()
        _limit_memory(int(request.get("memory", 512 << 20)))
        signal.signal(signal.SIGALRM, _on_alarm)
        reply = Search(target, request).run()
    except batch.Fallback as e:
        reply = {"error": str(e)[:300]}
    except BaseException as e:
        reply = {"error": f"{type(e).__name__}: {e}"[:300]}
    try:
        text = json.dumps(reply)
        with open(out + ".part", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(out + ".part", out)
    finally:
        os._exit(0)


def _captured(path: Any) -> dict[str, Any]:
    """What the capture fork (witness_plugin._capture_in_fork) kept, per capture id ({} when nothing)."""
    try:
        with open(str(path), encoding="utf-8") as f:
            found = json.load(f).get("targets")
    except (OSError, ValueError, TypeError, AttributeError):
        return {}
    return found if isinstance(found, dict) else {}


def search(path: str, fork: Callable[[], int] = os.fork) -> None:
    """Answer every target of the request at `path`, each in a fork of its own."""
    with open(path, encoding="utf-8") as f:
        request = json.load(f)
    gc.collect()
    gc.freeze()
    if any(t.get("hypothesis") for t in request.get("targets", [])):
        try:
            import hypothesis  # noqa: F401  (imported once here: every fork inherits it)
        except Exception:
            pass
    limit = float(request.get("seconds", 2.0)) + 2.0
    captured = _captured(request.get("seeds_file"))
    for target in request.get("targets", []):
        got = captured.get(str(target.get("capture")))
        if isinstance(got, dict) and not target.get("seeds"):  # the tests' own calls, captured in this run
            target["seeds"] = [x for x in got.get("seeds", []) if isinstance(x, dict)]
            target["params"] = target.get("params") or got.get("params", [])
        out = os.path.join(request["out"], f"{target['id']}.json")
        sys.stdout.flush()
        sys.stderr.flush()
        pid = fork()
        if pid == 0:
            _child(target, request, out)
        if forks.wait(pid, limit) is None and not os.path.exists(out):
            with open(out, "w", encoding="utf-8") as f:
                json.dump({"error": f"the search outlived {limit:g}s"}, f)
