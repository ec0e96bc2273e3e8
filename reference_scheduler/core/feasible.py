"""How many feasible nodes a scheduling attempt looks for before it stops filtering.

kube-scheduler's `numFeasibleNodesToFind` (pkg/scheduler/schedule_one.go), with its constants:
a cluster of fewer than MIN_FEASIBLE_NODES nodes is always filtered whole; otherwise the
attempt stops once it has found `percentage` % of the nodes feasible, at least
MIN_FEASIBLE_NODES. Percentage 0 means adaptive: 50 % less one point per 125 nodes, at
least MIN_FEASIBLE_PERCENTAGE; 100 means every node, always (the reference's behaviour
before this, kept for reproducing decisions and messages exactly).

Worked examples: 50 nodes -> 50 (all); 1000 nodes, adaptive -> 50 - 8 = 42 % -> 420;
5000 nodes, adaptive -> max(5, 50 - 40) = 10 % -> 500; 1000 nodes at 5 % -> 50, raised to 100.

An attempt that finds fewer feasible nodes than this has filtered every node, so a pod
that fits nowhere gets the same message, naming every node, whatever the percentage.
"""

from __future__ import annotations

#: Below this many nodes every node is filtered; also the least number of feasible nodes looked for.
MIN_FEASIBLE_NODES = 100
#: The adaptive percentage never goes below this.
MIN_FEASIBLE_PERCENTAGE = 5
#: percentageOfNodesToScore that filters every node.
ALL_NODES = 100


def feasible_nodes_to_find(percentage: int, nodes: int) -> int:
    """feasible_nodes_to_find(percentage, nodes) is how many feasible nodes end the search (see the module)."""
    if nodes < MIN_FEASIBLE_NODES or percentage >= ALL_NODES:
        return nodes
    if percentage <= 0:
        percentage = max(MIN_FEASIBLE_PERCENTAGE, 50 - nodes // 125)
    return max(MIN_FEASIBLE_NODES, nodes * percentage // 100)
