"""The since-verdict view: each hunk of a branch `new`, `changed` or `unchanged` since the reviewer's verdict.

`since.py` finds where to start (the reviewer's own latest verdict, or a head
they name), `compute.py` reads the two patches and `match.py` pairs their
hunks (pure); `model.py` holds the records, `report.py` the headless output.
"""
