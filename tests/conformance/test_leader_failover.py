"""leader_failover: two replicas, the leader killed mid-run; the new leader honours every claim it did not make.

The suite launches two leader-electing replicas of the scheduler under test in
place of its one process (Scenario.replicas): the first takes the Lease alone,
the second follows. A reserves its peak under the first; the first is killed
(SIGKILL: its Lease stays until it expires) and the second must take over
within `scheduler_failover`. Everything after the kill is the new leader's.

The fault it exists to catch: a new leader that schedules before its
records cache has synced (mutant `leader_unsynced_records`): it counts no
reservation it has not seen a watch event for, so A's claim holds no room.

Hand-computed on 4800m nodes (PoolSpec's default):
    A's peak 3800m on node X, its 200m task running; the filler 1000m on Y.
    B asks 2000m. Honouring A's claim, X has 4800 - 3800 = 1000m < 2000m
    left, Y has 4800 - 1000 = 3800m >= 2000m: B goes to Y.
    A forgetful leader sees X 200m used (4600m free) and Y 1000m used (3800m
    free), so the emptier X gets B; then A's big 3800m no longer fits on X
    (4800 - 2000 = 2800m once small ends).
    Honoured: small ends, X has 4800m free, A's big 3800m lands on X; Y holds
    1000 + 2000 = 3000m <= 4800m. Both runs finish; A's group is Released.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    b_must_avoid_the_kept_peak,
    group_must_be,
    task_must_hold_its_group,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="leader_failover",
    description="Two leader-electing replicas; the leader is killed (SIGKILL) while A reserves 3800m and runs 200m: the other replica takes the Lease, keeps A Reserved on its node, puts B (2000m) on the other node, A's big task on A's node, and A is Released at the end",
    features=(Feature.RESILIENCE, Feature.RESERVATION_RECORDS),
    fixtures=("leader_failover-a", "leader_failover-filler", "leader_failover-b"),
    volumes=("a-source", "b-source"),
    replicas=2,
)


def test_leader_failover(run: ScenarioRun) -> None:
    with run.replicas() as replicas:
        run.apply("leader_failover-a")
        small, a_node, _ = task_must_hold_its_group(run, "leader-failover-a", "small")
        other = next(n for n in run.node_names if n != a_node)
        run.apply("leader_failover-filler", node=other)

        replicas.kill_leader()
        # Bounded by scheduler_failover: the killed leader's lease (6 s for the reference) must expire first.
        replicas.wait_failover()
        group_must_be(run, "leader-failover-a", "small", state=State.RESERVED, node=a_node)
        # The first binding after the kill: the successor has just taken the Lease and syncs its caches.
        b_must_avoid_the_kept_peak(run, "leader_failover", small, a_node=a_node, other=other, timeout="scheduler_failover", when="under the killed leader")
        group_must_be(run, "leader-failover-a", "big", state=State.RELEASED, node=a_node)
