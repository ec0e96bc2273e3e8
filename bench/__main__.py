"""python -m bench run|report|cold-build: see docs/benchmarks.md ("Reproduce")."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from types import FrameType


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="measure on the local cluster (BENCH_SCALE=full|smoke|small|medium|large)")
    run.add_argument("--scale", default=os.environ.get("BENCH_SCALE", "full"))
    run.add_argument("--parts", default=os.environ.get("BENCH_PARTS") or None,
                     help="comma-separated: throughput, contention, requeue, suite (default: the scale's; full and smoke: throughput,contention,requeue); --parts requeue measures only the requeue latency, keeping the other parts' results")
    run.add_argument("--nodes", default=os.environ.get("BENCH_NODES"),
                     help="comma-separated node counts: run only those throughput cases, keep the others' results")
    run.add_argument("--contention-modes", default=os.environ.get("BENCH_CONTENTION_MODES"),
                     help="comma-separated subset of reference,kube-scheduler,tekton-workspaces,tekton-isolate")
    sub.add_parser("report", help="write docs/benchmarks.md and its plots from docs/benchmarks/results-*.json")
    cold = sub.add_parser("cold-build", help="time 'rescon tools' with empty build and binary caches (long: ~1 h on 2 cores)")
    cold.add_argument("--log", default="docs/benchmarks/cold-build.log")
    args = parser.parse_args(argv)
    # Run as a background job, the shell may have set SIGINT to "ignore"; and SIGTERM would end
    # the process without running the `finally` blocks that delete pools and namespaces.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _stop)

    if args.command == "run":
        from bench.run import run as run_bench
        from bench.scales import scale_named

        scale = scale_named(args.scale, contention_modes=args.contention_modes, nodes=args.nodes)
        parts = [p for p in args.parts.split(",") if p] if args.parts else list(scale.parts)
        out = run_bench(scale, parts)
        print(f"results: {out}")
        return 0
    if args.command == "report":
        from bench.report import write_report

        print(f"report: {write_report()}")
        return 0
    if args.command == "cold-build":
        from bench.cold_build import cold_build

        return cold_build(args.log)
    return 2


if __name__ == "__main__":
    sys.exit(main())
