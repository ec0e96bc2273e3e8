"""foreign_pod_shapes: pods no reservation scheduler placed count with their effective request, whatever their shape.

The faults it exists to catch: counting a node's other pods by their
containers' requests alone. Kubernetes counts a pod by kube-scheduler's
PodRequests (docs/contract.md section 7, Headroom: "A pod counts with its
effective request"), and a pod a DaemonSet, kube-scheduler or `spec.nodeName`
put on the node takes exactly that room on a real kubelet. Here the pool's one
node holds five such pods, each with 200/4800 of the node's CPU in its
container and more in all, each a different way: a RuntimeClass's overhead, a
native sidecar, a larger init container, a pod-level request, and a pod being
deleted that a finalizer holds Terminating (it counts until it is gone). B's
group of one needs 500 where 400 are left. A scheduler that misses any one of
the five shapes finds at least 600 free and binds B onto a node it does not
fit (tests/mutants/faults.py: ignores_pod_overhead_of_others,
native_sidecars_as_init, ignores_init_containers, ignores_pod_level_requests,
terminating_pods_free). Every pod is held for the whole window (the hold
annotation, the finalizer), so the verdict never depends on a race.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    pipelinerun_must_succeed,
    pod_must_be_running,
    pod_must_be_terminating,
    runtime_class_must_be_in_force,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="foreign_pod_shapes",
    description=(
        "Five pods pinned to the only node, 200 of 4800 in their containers and 4400 in all (overhead, a native sidecar, a larger "
        "init container, a pod-level request, one held Terminating): B's group (500) waits until the Terminating pod is gone"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("foreign_pod_shapes-class", "foreign_pod_shapes-pods", "foreign_pod_shapes-b"),
    pool=PoolSpec(count=1),
    volumes=("b-source",),
    # Measured 2026-12-05 on kind (one run): the last of the five pods, pinned to a node whose room the suite sized as
    # allocatable less its daemons, ended Failed at once, as a kubelet refusing a pod at admission does; the kubelet's
    # own count of a node's pods is not yet traced (issue #34, as for runtime_class_overhead).
    local_only="on kind the kubelet refused the last of the five pinned pods at once (Failed): its own count of the node's pods is not yet traced (docs/coverage.md)",
)
NAME = "foreign-pod-shapes-b"
SHAPES = ("overhead", "sidecar", "init", "pod-level", "terminating")


def test_foreign_pod_shapes(run: ScenarioRun) -> None:
    (node,) = run.node_names
    cpu = run.node_cpu_millis()
    run.apply("foreign_pod_shapes-class")
    runtime_class_must_be_in_force(run, f"rescon-foreign-{run.namespace}", cpu=cpu * 600 // 4800)
    run.apply("foreign_pod_shapes-pods", node=node)
    for shape in SHAPES:
        pod_must_be_running(run, run.named(shape))
    run.hold_terminating(run.named("terminating"))
    pod_must_be_terminating(run, run.named("terminating"))

    # By hand: 800 + 800 + 1000 + 1000 + 800 = 4400 of 4800 taken, 400 left; B's group needs 500.
    run.apply("foreign_pod_shapes-b")
    task_pod_must_stay_pending(run, NAME, "build")

    # The Terminating pod goes: 1200 left, B fits.
    run.let_go(run.named("terminating"))
    b_pod = task_pod_must_be_bound(run, NAME, "build")
    assert b_pod["spec"]["nodeName"] == node, f"B ran on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    group_must_be(run, NAME, "build", state=State.RESERVED, node=node)
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, NAME)
