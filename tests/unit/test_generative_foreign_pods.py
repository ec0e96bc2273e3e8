"""The generative batches' foreign pods (harness.generative.foreign_pods): each shape takes the part of a node it was drawn for, no more."""

from __future__ import annotations

import random

import pytest

from harness.cluster.namespaces import HOLD_TERMINATING_FINALIZER
from harness.generative.foreign_pods import (
    FOREIGN_CHANCE,
    SHAPES,
    draw_foreign_pods,
    foreign_pod,
    is_foreign,
    load,
    runtime_class_manifest,
    with_overhead,
)
from harness.generative.grammar import DrawContext
from harness.quantities import pod_request

pytestmark = pytest.mark.unit

CONTEXT = DrawContext("tkn-scheduler", {"rescon.dev/pool": "p"}, 4800, 8 << 30, None, nodes=("p-0", "p-1"), runtime_class="rc")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fraction", [0.05, 0.1, 0.15])
def test_each_shape_takes_its_drawn_part_and_more_than_its_containers_say(shape: str, fraction: float) -> None:
    pod = with_overhead(foreign_pod("generative-00-foreign-0", "p-0", shape, fraction, CONTEXT), CONTEXT.node_cpu_millis)
    taken = pod_request(pod).cpu
    assert int(4800 * fraction) - 3 <= taken <= int(4800 * fraction), f"{shape}: {taken}m for {fraction} of 4800m"
    containers = sum(int(c["resources"]["requests"]["cpu"].removesuffix("m")) for c in pod["spec"]["containers"])
    if shape in ("plain", "terminating"):
        assert containers == taken
    else:
        assert containers < taken, f"{shape} must count more than its containers' {containers}m"
    assert (HOLD_TERMINATING_FINALIZER in pod["metadata"].get("finalizers", ())) == (shape == "terminating")
    assert is_foreign(pod) and pod["spec"]["nodeName"] == "p-0"


def test_the_runtime_class_gives_the_overhead_the_shape_counts_on() -> None:
    manifest = runtime_class_manifest("rc", 4800)
    pod = foreign_pod("x", "p-0", "overhead", 0.1, CONTEXT)
    assert with_overhead(pod, 4800)["spec"]["overhead"] == manifest["overhead"]["podFixed"]


def test_some_batches_get_one_pod_per_node_and_their_load_is_the_fullest_node_s() -> None:
    drawn = [draw_foreign_pods(random.Random(seed), nodes=CONTEXT.nodes, prefix="generative-00", sizes=CONTEXT) for seed in range(200)]
    with_pods = [pods for pods in drawn if pods]
    assert abs(len(with_pods) / len(drawn) - FOREIGN_CHANCE) < 0.1
    assert all(sorted(p["spec"]["nodeName"] for p in pods) == ["p-0", "p-1"] for pods in with_pods)
    pods = with_pods[0]
    per_node = [pod_request(with_overhead(p, 4800)).cpu for p in pods]
    assert load(pods, 4800) == max(per_node) / 4800
    assert load([], 4800) == 0
    assert draw_foreign_pods(random.Random(1), nodes=(), prefix="g", sizes=CONTEXT) == []
    no_class = DrawContext("s", {}, 4800, 8 << 30, None, nodes=("p-0",), runtime_class=None)
    shapes = {p["metadata"]["annotations"]["rescon.dev/generative-foreign-shape"] for s in range(200) for p in draw_foreign_pods(random.Random(s), nodes=no_class.nodes, prefix="g", sizes=no_class)}
    assert "overhead" not in shapes and shapes == set(SHAPES) - {"overhead"}
