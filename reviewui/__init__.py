"""reviewui: evidence for reviewing a coding agent's git branch."""

__version__ = "0.1.0"
