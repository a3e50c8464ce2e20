"""The review queue: every agent branch in one list, ordered by what needs a human (`order.py`),
read from the repository in a few batched git calls (`read.py`), drawn by `report.py`."""
