"""cli: `rescon audit`'s options, its connection to the cluster, its signals and its exit.

    rescon audit --scheduler-name tkn-scheduler [--kubeconfig F] [--context C] [--namespace NS]
                 [--output text|json] [--metrics-port 9095]
    rescon audit --list-rules

Lines go to stdout as violations start, change and clear; on SIGTERM or
SIGINT the auditor stops, writes one summary line on stderr and exits 0. It
exits 1 if a watch gets no answer for `audit_api_unreachable`, or an error no retry
cures, with one line saying which.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType

import kubernetes
from kubernetes.client import ApiClient

from harness.audit.auditor import Auditor
from harness.audit.dedup import AuditLine
from harness.audit.metrics import AuditMetrics
from harness.audit.output import FORMATS, render, summary
from harness.audit.rule_list import describe_rules
from harness.kube import Kube
from harness.timeouts import DEFAULT_TIMEOUTS, parse_override

#: Set inside a pod: with no --kubeconfig there, the pod's ServiceAccount is used.
IN_CLUSTER_ENV = "KUBERNETES_SERVICE_HOST"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """add_arguments() declares `rescon audit`'s options on its subcommand parser."""
    parser.add_argument("--kubeconfig", type=Path, default=None, help="the cluster's kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
    parser.add_argument("--context", default=None, help="the kubeconfig context (default: its current one)")
    parser.add_argument("--scheduler-name", default=None, help="the schedulerName whose decisions are judged (required unless --list-rules)")
    parser.add_argument("--namespace", default=None, help="judge PipelineRuns and records of this namespace only (pods and nodes are always all: room counts every pod)")
    parser.add_argument("--output", choices=FORMATS, default="text", help="text lines, or one JSON object per line")
    parser.add_argument("--metrics-port", type=int, default=0, help="serve Prometheus metrics on this port (0: none)")
    parser.add_argument("--timeout", action="append", default=[], metavar="NAME=SECONDS", help="override a named timeout (label_converges, release_late, audit_api_unreachable)")
    parser.add_argument("--list-rules", action="store_true", help="list the rules and how each is judged without a scenario, then exit")


def connect(kubeconfig: Path | None, context: str | None) -> Kube:
    """connect() is a client of the kubeconfig's cluster, or, inside a pod with no kubeconfig, of the pod's own cluster."""
    if kubeconfig is None and not os.environ.get("KUBECONFIG") and os.environ.get(IN_CLUSTER_ENV):
        configuration = kubernetes.client.Configuration()
        kubernetes.config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        return Kube(ApiClient(configuration), Path("in-cluster"), None)
    path = kubeconfig or Path(os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or Path.home() / ".kube" / "config")
    return Kube.connect(path, context, reachable_within=DEFAULT_TIMEOUTS.api_reachable)


def run_audit(args: argparse.Namespace) -> int:
    """run_audit() is `rescon audit`: 0 after a signal, 1 when the API server stayed unreachable, 2 for bad input."""
    if args.list_rules:
        print("\n".join(describe_rules()))
        return 0
    if not args.scheduler_name:
        print("rescon audit: error: --scheduler-name is required: name the schedulerName whose decisions to judge", file=sys.stderr)
        return 2
    timeouts = DEFAULT_TIMEOUTS.with_overrides(dict(parse_override(t) for t in args.timeout))
    # Our own warnings (a watch retrying) on stderr; the HTTP library's retry chatter is ours to summarise, not to repeat.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="rescon audit: %(message)s")
    logging.getLogger("urllib3").setLevel(logging.ERROR)
    kube = connect(args.kubeconfig, args.context)
    metrics = AuditMetrics()
    if args.metrics_port:
        metrics.serve(args.metrics_port)

    def emit(line: AuditLine) -> None:
        print(render(line, args.output), flush=True)

    def announce(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    auditor = Auditor(kube, args.scheduler_name, args.namespace, timeouts, metrics, emit, announce)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        auditor.stop.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    started = time.monotonic()
    scope = f"namespace {args.namespace}" if args.namespace else "all namespaces"
    print(f"rescon audit: judging schedulerName {args.scheduler_name} on {kube.api.configuration.host} ({scope})", file=sys.stderr, flush=True)
    failure = auditor.run()
    print(summary(
        seconds=time.monotonic() - started, counts=auditor.tracker.counts, active=auditor.tracker.active_by_rule(),
        events=auditor.state.events_applied, restarts=auditor.restarts(),
    ), file=sys.stderr, flush=True)
    if failure is not None:
        print(f"rescon audit: error: {failure}", file=sys.stderr, flush=True)
    # The watch threads may sit in a read for up to a minute, and one writing to stderr while the interpreter
    # shuts down aborts it: leave at once, everything printed.
    os._exit(1 if failure is not None else 0)
