"""Scales: how big a benchmark run is. `BENCH_SCALE=full` (the default of `make bench`) takes about 35 minutes,
`BENCH_SCALE=smoke` a few.

Each field is documented where it is defined; docs/benchmarks.md prints the
scale a result was measured at next to the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from bench.schedulers import DEFAULT_QPS, UNTHROTTLED, Qps

#: Stream pods for a p99 below the two slowest: metrics.percentile interpolates at rank (n − 1) × 0.99
#: (0-based), which is n − 3, the third slowest, at n = 201, and 206.9 of 209, between the fourth and
#: third slowest, at 210 (nearest-rank, ceil(0.99 n), would need n ≥ 200). 210 is 42 units of the Tekton mix.
STREAM_PODS_FOR_P99 = 210
#: The volumes mix's pods at 100 nodes: 10 units of 5 pods, 30 runs and so 30 claims to provision.
VOLUME_PODS = 50


@dataclass(frozen=True)
class ThroughputCase:
    """ThroughputCase is one node count and what runs on it.

    backlog_pods: direct-mode pods created before the scheduler starts (pure scheduling throughput);
    stream_pods / stream_rate: direct-mode pods created at a fixed rate while it runs (latency);
    volume_pods / volume_rate: the same, of the `volumes` mix (a volumeClaimTemplate of the default
    class per run, provisioned on the node chosen), at QPS 50/100 only (0: skipped; bench/provisioning.py);
    tekton_runs: PipelineRuns that Tekton runs end to end (0: skipped).
    """

    nodes: int
    mix: str = "tekton"
    backlog_pods: int = 300
    stream_pods: int = 150
    stream_rate: float = 15.0
    volume_pods: int = 0
    volume_rate: float = 5.0
    tekton_runs: int = 0
    profile: bool = False
    #: Backlog runs per scheduler at the unthrottled setting, taken in turns (kube-scheduler, the
    #: reference, kube-scheduler, ...): on 2 shared cores one run's pods/s moves by a third from one
    #: run to the next, so the ratio is of the medians (bench/summary.py).
    unthrottled_repeats: int = 1


@dataclass(frozen=True)
class Scale:
    name: str
    cases: tuple[ThroughputCase, ...]
    qps: tuple[Qps, ...] = (DEFAULT_QPS, UNTHROTTLED)
    #: Longest a single run may take before it is cut off and reported as incomplete.
    run_timeout: float = 240.0
    contention_nodes: int = 4
    contention_runs: int = 8
    contention_modes: tuple[str, ...] = ("reference", "kube-scheduler", "tekton-workspaces", "tekton-isolate")
    contention_timeout: float = 180.0
    #: Node size of the throughput pools; a pod asks 100m / 64Mi.
    node_cpu: str = "4"
    node_memory: str = "16Gi"
    node_pods: int = 110
    #: Requeue (bench/requeue.py): how many times room is freed per scheduler (and per way of freeing it),
    #: and how long one free may wait for a waiting pod's bind before it counts as missed.
    requeue_samples: int = 20
    requeue_timeout: float = 30.0
    #: What `make bench` measures at this scale unless BENCH_PARTS says otherwise.
    parts: tuple[str, ...] = ("throughput", "contention", "requeue", "suite")
    notes: tuple[str, ...] = field(default=())


SCALES = {
    # What `make bench` runs: the reference beside kube-scheduler (and BENCH_SCHEDULER_CMD's scheduler, if
    # given) at 100, 1000 and 5000 nodes, both QPS settings, a Tekton-shaped backlog and a stream each;
    # the contention check with the two schedulers; the requeue measurement (25 frees each); the 1000-node unthrottled backlog three times each, in turns.
    # Sized to take about 35 minutes on 2 cores (28 min measured at 11ebd60, before the four more runs of
    # about 110 s each; each stage's seconds are in the results' stage_seconds); a third scheduler adds about half.
    # Measured at 17:14 UTC on 2026-12-01: Tekton marks pending PipelineRuns Pending at about 5 a
    # second, so resolving a backlog's plans costs ~0.12 s per pod (600 runs of a 1000-pod backlog:
    # 120 s) on every run; hence 600 pods at 1000 nodes. At 5000 nodes the backlog is 300 pods.
    #
    # The streams at 1000 and 5000 nodes (issue #35): STREAM_PODS_FOR_P99 pods, so that the p99 is not
    # decided by the slowest pod or the one after it (40 pods at 5000 nodes made it the slowest but one).
    # At 10 pods/s, not 5 and 2: a stream run costs its runs' resolution (~0.19 s per run, Tekton's pace;
    # 210 pods are 126 runs, ~24 s) plus the stream itself, 21 s, so each of the four stream runs per
    # node count takes about 50 s, against 52 s (150 pods at 5/s) and 30 s (40 at 2/s) before: about
    # 70 s more in all, where 5 pods/s would add 4 minutes. 10 pods/s stays below both schedulers'
    # capacity at QPS 50/100: the reference's ~2.8 requests a stream pod on the main bucket (bind, 1.6
    # record writes, reads) are 28 a second, under the bucket's refill of 50 (kube-scheduler's 1 a pod,
    # 10), and its CPU at 8239a55,
    # 17 and 25 ms a pod at 1000 and 5000 nodes, is a quarter of a core at most. Pods 100 ms apart
    # still wait mostly for their own work at 1000 nodes (the reference's p90 there was 39 ms); at 5000
    # nodes its p90 was 126 ms at 2 pods/s, mostly its writes' round trips, which overlap between pods
    # (a lane per record, 8 bind workers), so a tail the faster rate lengthens is a finding, not noise.
    #
    # The volumes mix (issue #35) at 100 nodes only: 50 pods of 30 runs, 30 claims provisioned by the
    # local-path provisioner, at 5 pods/s and QPS 50/100, per scheduler. About 35 s a run (6 s resolving,
    # 10 s streaming, the last claims' ~2 s of provisioning, then the claims' volumes deleted on their
    # nodes before the next run): about 70 s more. The node count does not change what is measured (one
    # node is chosen per claim either way); 1000 and 5000 nodes would only add their runs' cost.
    "full": Scale(
        "full",
        (
            ThroughputCase(100, backlog_pods=300, stream_pods=75, stream_rate=5.0, volume_pods=VOLUME_PODS, volume_rate=5.0),
            ThroughputCase(1000, backlog_pods=600, stream_pods=STREAM_PODS_FOR_P99, stream_rate=10.0, unthrottled_repeats=3),
            ThroughputCase(5000, backlog_pods=300, stream_pods=STREAM_PODS_FOR_P99, stream_rate=10.0),
        ),
        run_timeout=300.0,
        contention_nodes=6,
        contention_runs=12,
        contention_modes=("reference", "kube-scheduler"),
        requeue_samples=25,
        parts=("throughput", "contention", "requeue"),
    ),
    # A check that the benchmark itself works (a few minutes: one pool of 100 nodes, QPS 50/100, a
    # small backlog and stream, 10 pods (6 claims) of the volumes mix, the contention check, 5 frees of
    # the requeue measurement); its numbers mean little and stay in reports/bench/.
    "smoke": Scale(
        "smoke",
        (ThroughputCase(100, backlog_pods=60, stream_pods=20, stream_rate=5.0, volume_pods=10, volume_rate=5.0),),
        qps=(DEFAULT_QPS,),
        run_timeout=90.0,
        contention_nodes=2,
        contention_runs=4,
        contention_timeout=90.0,
        contention_modes=("reference", "kube-scheduler"),
        requeue_samples=5,
        parts=("throughput", "contention", "requeue"),
    ),
    "small": Scale(
        "small",
        (ThroughputCase(100, backlog_pods=300, stream_pods=100, stream_rate=5.0, tekton_runs=30),),
        run_timeout=180.0,
    ),
    "medium": Scale(
        "medium",
        (
            ThroughputCase(100, backlog_pods=1000, stream_pods=150, stream_rate=5.0, tekton_runs=60),
            ThroughputCase(1000, backlog_pods=1000, stream_pods=150, stream_rate=5.0, tekton_runs=60, profile=True),
        ),
        run_timeout=420.0,
        contention_nodes=6,
        contention_runs=12,
    ),
    "large": Scale(
        "large",
        (
            ThroughputCase(100, backlog_pods=1000, stream_pods=150, stream_rate=5.0, tekton_runs=60),
            ThroughputCase(1000, backlog_pods=2000, stream_pods=150, stream_rate=5.0, tekton_runs=60, profile=True),
            # At 5000 nodes one reference attempt takes ~0.2 s: fewer pods and a slower stream.
            ThroughputCase(5000, mix="plain-heavy", backlog_pods=500, stream_pods=60, stream_rate=2.0, profile=True),
        ),
        run_timeout=600.0,
        contention_nodes=6,
        contention_runs=12,
    ),
}


def scale_named(name: str, *, contention_modes: str | None = None, nodes: str | None = None) -> Scale:
    """scale_named('small'); BENCH_CONTENTION_MODES='reference,kube-scheduler' runs fewer modes and
    BENCH_NODES='5000' only the cases of those node counts (results of the others are kept)."""
    if name not in SCALES:
        raise SystemExit(f"unknown BENCH_SCALE {name!r}: use one of {', '.join(SCALES)}")
    scale = SCALES[name]
    if contention_modes is not None:
        modes = tuple(m for m in contention_modes.split(",") if m)
        scale = replace(scale, contention_modes=modes)
    if nodes:
        wanted = {int(n) for n in nodes.split(",") if n}
        scale = replace(scale, cases=tuple(c for c in scale.cases if c.nodes in wanted))
    return scale
