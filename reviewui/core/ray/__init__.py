"""The Ray engine's own parts: the tree shipped to the nodes, the wire records, the node actor, the cluster.

Only `cluster.py` imports Ray, and lazily: reviewui without the `ray` extra
works as before, and `--engine ray` says how to install it.
"""
