"""step_request_floor: Tekton splits a LimitRange's default across the steps no lower than its min, and a limit is not a request.

The fault it exists to catch: splitting the LimitRange's defaultRequest
across the steps without its `min`, so that steps without a request are
predicted below what Tekton gives them. Tekton's LimitRange transformer
(pkg/internal/computeresources/transformer.go; docs/contract.md section 6.1,
step 5) gives each step without requests `max(defaultRequest / steps, min)`,
and a step with only a limit gets that too: its limit does not become its
request, because Tekton acts before the API server copies limits to missing
requests. A second fault, taking the limit for the request, is caught by the
group's peak here as well.

What Tekton v1.15 builds for that shape (measured with the same kind of
LimitRange and steps by tests/integration/test_tekton_pod_shapes.py: 1000m /
300Mi for steps 500m, split, and limit-only): big's containers `step-work`
(its own request), `step-work-2` and `step-work-3` (the min, each; work-3
keeps its limit), init containers `prepare` and `place-scripts` with the
LimitRange's whole defaultRequest (the LimitRanger).
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    b_must_land_beside_the_filler,
    group_must_be,
    group_must_end_on_its_node,
    group_must_have,
    limit_range_must_be_in_force,
    task_must_hold_its_group,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="step_request_floor",
    description="With a LimitRange defaultRequest of 0.2 CPU and a min of 0.15, A's later task (a 0.25 step, a step without a request, a step with only a limit) asks 0.55: Tekton gives the last two the min, not a third of the default nor the limit; so B (0.55) goes to the other node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("step_request_floor-limits", "step_request_floor-a", "step_request_floor-filler", "step_request_floor-b"),
    volumes=("a-source", "b-source"),
)


# Peak, by hand (fractions of one node, as cpu() renders them; nothing asks memory and the
#   LimitRange has no memory default, so the memory peak is 0):
#   LimitRange: defaultRequest 0.2 CPU (960m), min 0.15 (720m). Tekton's split over 3 steps:
#          max(960 // 3, 720) = max(320, 720) = 720m.
#   small: step work asks 0.15 (720m, the min: less would be refused); init containers prepare and
#          place-scripts get the whole 960m each from the LimitRanger. Pod: max(720, 960) = 960m.
#   big:   step work asks 0.25 (1200m), keeps it; work-2 asks nothing: 720m; work-3 has only a
#          0.25 limit: 720m (the limit stays a limit). Containers 1200 + 720 + 720 = 2640m; init
#          containers 960m each. Pod: max(2640, 960) = 2640m.
#   small then big is a chain: the peak is max(960, 2640) = 2640m.
# Placement: A's node has 4800 - 960 (small's pod) - (2640 - 960) (A's residual) = 2160m left; B's pod
#   asks max(2640, 960) = 2640m (0.55), so it goes to the other node (4800 - 1920 filler = 2880m
#   left). The margin, 480m (0.1 of a node), is wider than the ~100m by which two kind workers'
#   daemons can differ (a slot pool is sized by its smallest node).
#   Splitting without the min (320m each) A would reserve 1840m and leave 4800 - 960 - 880 = 2960m
#   on its node, the emptier one: least-allocated with B's 2640m and the 200Mi scoring counts for a
#   pod without memory, in Mi: A's node ((4800 - 4480) * 100 // 4800 + (8192 - 400) * 100 // 8192) // 2
#   = (6 + 95) // 2 = 50, the filler's node ((4800 - 4560) * 100 // 4800 + (8192 - 1224) * 100 // 8192) // 2
#   = (5 + 85) // 2 = 45.
#   Taking work-3's limit for its request, A would reserve 1200 + 720 + 1200 = 3120m.

def test_step_request_floor(run: ScenarioRun) -> None:
    cpu = run.node_cpu_millis()
    run.apply("step_request_floor-limits")
    limit_range_must_be_in_force(run, cpu=share_of(cpu, 0.2))
    run.apply("step_request_floor-a")
    small, a_node, record = task_must_hold_its_group(run, run.named("a"), "small")
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=share_of(cpu, 0.25) + 2 * max(share_of(cpu, 0.2) // 3, share_of(cpu, 0.15)), peak_memory_bytes=0,
    )

    b_pod = b_must_land_beside_the_filler(run, "step_request_floor", a_node=a_node, why="inside the room A's steps need there at the LimitRange's min")
    group_must_be(run, run.named("a"), "small", state=State.RESERVED, node=a_node)
    group_must_end_on_its_node(run, run.named("a"), held=small, next_task="big", node=a_node, others=(b_pod,))
