"""Verdicts in git notes: the TOML model, compare-and-swap storage, sync, patch ids."""
