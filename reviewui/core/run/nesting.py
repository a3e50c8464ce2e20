"""Whether this reviewui runs inside a sandboxed run of another (reviewui bite-checking its own tests).

The lowest floor of the runner: the temp dirs (nothing of an outer run is
stale) and the sandbox (the outer /proc is reused) both ask it.
"""

INSIDE_VAR = "REVIEWUI_IN_SANDBOX"
"""Set in the environment of every sandboxed run (so a reviewui inside one knows it is nested)."""
