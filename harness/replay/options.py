"""options: `rescon replay`'s command line, and the SuiteConfig it makes so that the suite's own providers and scheduler launch serve it.

The scheduler and cluster options are `rescon conformance`'s, with the same
names and defaults (harness.plugin); the rest are replay's own.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from harness.cluster import kind
from harness.plugin import CLUSTERS, COSCHEDULE_MODES, DEFAULT_ORGANIZATION, DEFAULT_PROJECT, LEASE_MODES, SuiteConfig
from harness.replay import bad_input
from harness.replay.bad_input import ReplayInputError
from harness.suite.features import parse_features, resolve_supported
from harness.suite.lease_names import check_lease_names
from harness.suite.scheduler_under_test import MODES, default_features
from harness.timeouts import DEFAULT_TIMEOUTS, parse_override

#: The pool when neither --nodes nor --pool is given: two nodes of a small CI runner's size.
DEFAULT_POOL = "2x4cpu8Gi"
#: How long a simulated step runs unless its Task says (sim.rescon.dev/run-for).
DEFAULT_RUN_FOR = "2s"
DEFAULT_REPORT = Path("reports/replay-report.yaml")
DEFAULT_JUNIT = Path("reports/replay-junit.xml")
#: Where each run's Allure result and timeline picture go: a directory of their own, replaced on each replay.
DEFAULT_ALLURE = Path("reports/replay-allure-results")
#: A duration both KWOK's Stages and the kind step script read: whole milliseconds, seconds, minutes or hours.
_DURATION = re.compile(r"^[0-9]+(ms|s|m|h)$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """add_arguments() declares `rescon replay`'s options on its subcommand parser."""
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or folders of Tekton YAML (Tasks, Pipelines, PipelineRuns)")
    nodes = parser.add_argument_group("nodes")
    nodes.add_argument("--nodes", type=Path, default=None, metavar="FILE",
                       help="your cluster's nodes, as `kubectl get nodes -o yaml` writes them (names, labels, taints and resources kept)")
    nodes.add_argument("--pool", default=None, metavar="COUNTxCPUcpuMEMORY",
                       help=f"nodes alike instead, e.g. 4x4cpu8Gi, several joined by '+' (default {DEFAULT_POOL})")
    load = parser.add_argument_group("load")
    load.add_argument("--copies", type=int, default=1, metavar="N", help="create N copies of every run at once, to contend for the nodes (default 1)")
    load.add_argument("--repeat", type=int, default=1, metavar="N", help="replay everything N times in a row, each round judged on its own (soak; default 1)")
    load.add_argument("--run-for", default=DEFAULT_RUN_FOR, metavar="DURATION",
                      help=f"how long each simulated task's steps run: 500ms, 2s, 1m (default {DEFAULT_RUN_FOR})")
    scheduler = parser.add_argument_group("the scheduler under test (as for rescon conformance)")
    scheduler.add_argument("--scheduler-name", default="tkn-scheduler", help="the schedulerName under test (default: tkn-scheduler)")
    scheduler.add_argument("--scheduler", default="reference", choices=MODES, help="what serves that name (default: reference)")
    scheduler.add_argument("--scheduler-cmd", default=None, help="with --scheduler command: the launch command, with {kubeconfig}, {scheduler_name} and {config}")
    scheduler.add_argument("--scheduler-config-template", default=None, metavar="FILE", help="a jinja2 config file rendered per launch; its path is {config}")
    scheduler.add_argument("--scheduler-pod-selector", default=None, help="with --scheduler external: label selector of the scheduler's pods")
    scheduler.add_argument("--supported-features", default=None, help="comma-separated features the implementation supports")
    scheduler.add_argument("--exempt-features", default=None, help="comma-separated features to leave untested (ReservationRecords: placement checks only)")
    cluster = parser.add_argument_group("the cluster (as for rescon conformance)")
    cluster.add_argument("--cluster", default="local", choices=CLUSTERS, help="local (default), kind or existing")
    cluster.add_argument("--kubeconfig", default=None, help="kubeconfig of an existing cluster")
    cluster.add_argument("--context", default=None, help="kubeconfig context of an existing cluster")
    cluster.add_argument("--coschedule", default="disabled", choices=COSCHEDULE_MODES, help="Tekton's coschedule mode on local/kind")
    cluster.add_argument("--keep-cluster", action="store_true", help="do not tear the cluster down at the end")
    cluster.add_argument("--kind-node-image", default="auto", help="kind: auto (default), stock, offline, or an image name")
    cluster.add_argument("--kind-name", default=kind.DEFAULT_NAME, help=f"kind: the cluster's name (default {kind.DEFAULT_NAME})")
    cluster.add_argument("--tekton-manifest", default=None, help="kind: install Tekton from this release manifest (URL or path)")
    cluster.add_argument("--tekton-manifest-sha256", default=None, help="kind: the sha256 --tekton-manifest must have")
    cluster.add_argument("--rescon-timeout", action="append", default=[], metavar="NAME=SECONDS",
                         help="override one named timeout, e.g. replay_run_done=1200 (repeatable)")
    report = parser.add_argument_group("reports")
    report.add_argument("--report-output", type=Path, default=DEFAULT_REPORT, help=f"the ConformanceReport YAML (default {DEFAULT_REPORT})")
    report.add_argument("--junit-xml", type=Path, default=DEFAULT_JUNIT, help=f"JUnit XML, one testcase per run (default {DEFAULT_JUNIT})")
    report.add_argument("--alluredir", type=Path, default=DEFAULT_ALLURE,
                        help=f"Allure results, one per run with its timeline picture; replaced on each replay (default {DEFAULT_ALLURE}; "
                             "`make report ALLURE_RESULTS=<dir>` renders them)")
    report.add_argument("--implementation-organization", default=None, help="report metadata")
    report.add_argument("--implementation-project", default=None, help="report metadata (default: the reference, kube-scheduler, or the schedulerName)")
    report.add_argument("--implementation-url", default="")
    report.add_argument("--implementation-version", default="dev")
    report.add_argument("--implementation-contact", default="")


def check_counts(args: argparse.Namespace) -> None:
    """check_counts() refuses a run count or duration replay cannot use, naming the fix."""
    for option, value in (("--copies", args.copies), ("--repeat", args.repeat)):
        if value < 1:
            raise ReplayInputError(bad_input.bad_count(option, value))
    if not _DURATION.match(args.run_for):
        raise ReplayInputError(bad_input.bad_duration(args.run_for))
    if args.nodes is not None and args.pool is not None:
        raise ReplayInputError(bad_input.nodes_and_pool())


def suite_config(args: argparse.Namespace) -> SuiteConfig:
    """suite_config() is the SuiteConfig the suite's providers and scheduler launch read, from replay's options; kind's go to its session options."""
    mode = args.scheduler
    if mode in LEASE_MODES:
        check_lease_names(args.scheduler_name)
    kind.SESSION_OPTIONS.update(
        node_image=args.kind_node_image, name=args.kind_name, tekton_manifest=args.tekton_manifest, tekton_manifest_sha256=args.tekton_manifest_sha256,
    )
    return SuiteConfig(
        scheduler_name=args.scheduler_name,
        scheduler_mode=mode,
        scheduler_cmd=args.scheduler_cmd,
        cluster=args.cluster,
        kubeconfig=args.kubeconfig,
        context=args.context,
        coschedule=args.coschedule,
        supported=resolve_supported(
            declared=parse_features(args.supported_features), exempt=parse_features(args.exempt_features), all_features=False,
            default=default_features(mode),
        ),
        report_output=args.report_output,
        implementation={
            "organization": args.implementation_organization or DEFAULT_ORGANIZATION.get(mode, "unspecified"),
            "project": args.implementation_project or DEFAULT_PROJECT.get(mode, args.scheduler_name),
            "url": args.implementation_url,
            "version": args.implementation_version,
            "contact": [c for c in (args.implementation_contact or "").split(",") if c],
        },
        keep_cluster=bool(args.keep_cluster),
        timeouts=DEFAULT_TIMEOUTS.with_overrides(dict(parse_override(text) for text in args.rescon_timeout)),
        scheduler_pod_selector=args.scheduler_pod_selector,
        scheduler_config_template=args.scheduler_config_template,
        contract_keep_going=True,
    )
