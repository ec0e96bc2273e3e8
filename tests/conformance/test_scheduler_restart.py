"""scheduler_restart: reservations live in the API, so a restarted scheduler neither leaks nor double-books them.

The fault it exists to catch: reservation state kept only in memory (mutant
`memory_only_state`): after a crash the new process no longer counts A's
held reservation and gives its room to B. The scheduler is killed (SIGKILL, or
its pods deleted for `--scheduler external`) while A holds its peak and runs
only its small task; B arrives after the restart.
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
    name="scheduler_restart",
    description="The scheduler is killed and restarted while A reserves 3800m and runs 200m: A stays Reserved on its node, B (2000m) created after the restart goes to the other node, A's big task lands on A's node and A is Released at the end",
    features=(Feature.RESTART,),
    fixtures=("scheduler_restart-a", "scheduler_restart-filler", "scheduler_restart-b"),
    volumes=("a-source", "b-source"),
)


def test_scheduler_restart(run: ScenarioRun) -> None:
    run.apply("scheduler_restart-a")
    small, a_node, _ = task_must_hold_its_group(run, "scheduler-restart-a", "small")
    other = next(n for n in run.node_names if n != a_node)
    run.apply("scheduler_restart-filler", node=other)

    run.restart_scheduler()
    group_must_be(run, "scheduler-restart-a", "small", state=State.RESERVED, node=a_node)
    # The first binding after the kill: the successor may first wait out a leader-election lease.
    b_must_avoid_the_kept_peak(run, "scheduler_restart", small, a_node=a_node, other=other, timeout="scheduler_failover", when="before the restart")
    group_must_be(run, "scheduler-restart-a", "big", state=State.RELEASED, node=a_node)
