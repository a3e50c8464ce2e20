"""Witnesses: a call on which the head and a toothless guard's (or hunk's) revert answer differently.

`model.py` (the record a guard or hunk result carries), `literal.py` (the
grammar every source from a run must fit, the test it becomes, how it is
shown), `seeds.py` (the capture run of the tests' own arguments),
`targets.py` (what to search for each toothless guard or hunk), `search.py`
(the sandboxed search run), `verify.py` (every witness run as a tiny test on
the head and on the revert, in one session), `phase.py` (the sweep's hook). The code that
runs inside the project's Python is `core/inside/witness_plugin.py` and
`core/inside/witness_search.py`.
"""
