"""bench: the reference scheduler against the stock kube-scheduler on the local cluster.

`python -m bench run` (or `make bench`) measures, `python -m bench report`
writes docs/benchmarks.md and its plots from the JSON results. The pure parts
(workload shapes, metrics, report tables) are unit-tested; nothing here runs
inside the unit tests against a cluster.
"""
