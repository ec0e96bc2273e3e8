"""The backlog run of `make bench` only, again and again, the schedulers in turns: CPU per bound pod, medians.

    PYTHONPATH=$PWD .venv/bin/python -m bench.backlog_turns --nodes 100 --pods 300 --turns 5 \\
        --kinds kube-scheduler,reference-baseline,reference [--spy .venv/bin/py-spy --spy-dir reports/bench/spy]

One pool, one namespace, then `--turns` rounds of `bench.run.run_backlog` (the same pods, the same
QPS 50/100 client setting, the same whole-process CPU) for each kind in the order given; a
`reference-baseline` runs the reference from BENCH_BASELINE_TREE. On 2 shared cores one run's CPU moves
by a fifth or more, so only medians of runs taken in turns are compared. With `--spy`, py-spy records
each reference run (every thread, 200 samples a second, raw stacks) beside the figures; those runs are
slower and their CPU is printed but not for comparing. Nothing is written to docs/.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import cluster as bc
from bench.run import WORK_DIR, Context, run_backlog, say, short_id
from bench.scales import SCALES, ThroughputCase
from bench.schedulers import DEFAULT_QPS, REFERENCE_KINDS, BenchScheduler
from harness.cluster.cluster_lock import local_cluster_lock
from harness.cluster.local import LocalCluster
from harness.contract.install import install_crd
from harness.timeouts import DEFAULT_TIMEOUTS


def spying(spy: str, out_dir: Path) -> None:
    """spying(path_to_py_spy, dir) makes every reference start under py-spy record (attached by pid, written at its exit)."""
    started = BenchScheduler.start

    def start(self: BenchScheduler) -> int:
        pid = started(self)
        if self.kind in REFERENCE_KINDS:
            out = out_dir / f"{self.kind}-{time.strftime('%H%M%S')}.txt"
            out.parent.mkdir(parents=True, exist_ok=True)
            # Attached as soon as the interpreter is up: py-spy refuses a process that has not started Python yet.
            for _ in range(40):
                spy_process = subprocess.Popen([spy, "record", "--threads", "-r", "200", "-f", "raw", "-o", str(out), "--pid", str(pid)],
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(0.05)
                if spy_process.poll() is None:
                    break
            say(f"  py-spy: {out}")
        return pid

    BenchScheduler.start = start  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.backlog_turns", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pods", type=int, default=300)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--kinds", default="kube-scheduler,reference")
    parser.add_argument("--spy", help="py-spy's path: record each reference run")
    parser.add_argument("--spy-dir", default=str(WORK_DIR / "spy"))
    parser.add_argument("--out", default=str(WORK_DIR / "backlog-turns.json"))
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if args.spy:
        spying(args.spy, Path(args.spy_dir))
    case = ThroughputCase(args.nodes, backlog_pods=args.pods)
    scale = SCALES["full"]
    rows: list[dict[str, Any]] = []
    with local_cluster_lock(timeouts=DEFAULT_TIMEOUTS, purpose="the benchmark's backlog in turns"):
        local = LocalCluster(name="rescon")
        local.up().close()
        ctx = Context(bc.connect(local.kubeconfig), local.kubeconfig, scale, {}, Path(args.out))
        install_crd(ctx.kube, timeouts=DEFAULT_TIMEOUTS)
        ctx.kubeconfig = bc.set_up_identity(ctx.kube, admin_kubeconfig=local.kubeconfig, path=WORK_DIR / "bench-scheduler.kubeconfig")
        pool_name, namespace = f"bench-n{args.nodes}-{short_id()}", f"bench-n{args.nodes}-{short_id()}"
        try:
            bc.make_namespace(ctx.kube, namespace)
            pool = bc.add_pool(ctx.kube, pool_name, count=args.nodes, cpu=scale.node_cpu, memory=scale.node_memory, pods=scale.node_pods, say=say)
            pvcs = bc.make_pvcs(ctx.kube, namespace, 10)
            for turn in range(args.turns):
                for kind in kinds:
                    say(f"turn {turn + 1} of {args.turns}: {kind}")
                    result = run_backlog(ctx, case, pool, namespace, pvcs, kind, DEFAULT_QPS)
                    bound, cpu = result.get("bound") or 0, result.get("cpu_seconds_total")
                    row = {"turn": turn, "kind": kind, "bound": bound, "pods": result.get("pods"), "cpu_seconds": cpu,
                           "ms_per_pod": 1000 * cpu / bound if cpu and bound else None, "complete": result.get("complete"),
                           "at": time.strftime("%H:%M:%S UTC", time.gmtime()), "load": Path("/proc/loadavg").read_text().split()[0]}
                    rows.append(row)
                    say(f"  {json.dumps(row)}")
                    bc.clear_namespace(ctx.kube, namespace)
                    Path(args.out).write_text(json.dumps(rows, indent=1))
        finally:
            bc.remove_namespace(ctx.kube, namespace, say)
            bc.remove_pool(ctx.kube, pool_name)
            bc.tear_down_identity(ctx.kube)
    for kind in kinds:
        figures = [r["ms_per_pod"] for r in rows if r["kind"] == kind and r["ms_per_pod"]]
        if figures:
            print(f"{kind}: CPU per bound pod median {statistics.median(figures):.2f} ms (range {min(figures):.2f}-{max(figures):.2f}, {len(figures)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
