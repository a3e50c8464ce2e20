"""Probe tests the reviewer writes: place them in the scratch and run them on branch, base and revert."""
