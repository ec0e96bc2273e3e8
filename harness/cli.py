"""rescon: the harness's command line (toolchain, clusters, the installed suite and the live auditor).

    rescon tools                 build the local cluster's programs that are missing
    rescon tools --list          show each program's cache path and whether it is built
    rescon cluster up            bring the local cluster up (building what is missing)
    rescon cluster down          stop it and remove its processes and files
    rescon cluster status        one line per component
    rescon cluster nodes         the nodes, their allocatable resources and their capacity
    rescon kind node-image       build the offline kind node image (cached; prints its name)
    rescon kind deploy-reference a kept kind cluster running the reference from reference_scheduler/deploy/
    rescon conformance [pytest options]
                                 the installed scenarios, from any directory (reports under ./reports/);
                                 every option of the suite passes through: --scheduler-cmd, --cluster, -k, -n 2, ...
    rescon audit --scheduler-name N  the contract monitor's rules on a live cluster, one line per violation (docs/audit.md)
    rescon replay PATH... [--nodes FILE | --pool 4x4cpu8Gi] [--copies N] [--repeat N] [scheduler options]
                                 your own Tekton YAML, steps simulated, run against the scheduler and judged run by run (docs/replay.md)

Errors are one line naming the fix; the exit code is 2 for bad input, 1 for failures.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from harness.errors import HarnessError


def _cmd_tools(args: argparse.Namespace) -> int:
    from harness.cluster.toolchain import PROGRAMS, Toolchain

    toolchain = Toolchain()
    if args.list:
        for program in PROGRAMS:
            path = toolchain.path(program.name)
            state = "built" if path.is_file() else "missing"
            print(f"{program.name:<24} {program.version():<10} {state:<8} {path}")
        return 0
    paths = toolchain.ensure()
    print(f"toolchain ready: {len(paths)} programs in {next(iter(paths.values())).parent.parent}")
    return 0


def _cmd_cluster(args: argparse.Namespace) -> int:
    from harness.cluster import local
    from harness.cluster.cluster_lock import local_cluster_lock

    cluster = local.LocalCluster.from_options(name=args.name, coschedule=args.coschedule)
    if args.action in ("up", "down"):
        # Never change the cluster under a running suite: wait for it.
        with local_cluster_lock(timeouts=cluster.timeouts, purpose=f"rescon cluster {args.action}"):
            if args.action == "up":
                cluster.up()
                print(f"cluster {cluster.name} is up; kubeconfig: {cluster.kubeconfig}")
                print(f"  export KUBECONFIG={cluster.kubeconfig}")
            else:
                cluster.down()
                print(f"cluster {cluster.name} is down")
    elif args.action == "status":
        for line in cluster.status_lines():
            print(line)
    elif args.action == "nodes":
        for line in cluster.node_lines():
            print(line)
    return 0


def _cmd_kind(args: argparse.Namespace) -> int:
    from harness.cluster.kind import KindProvider
    from harness.cluster.node_image import NodeImageBuilder

    if args.action == "node-image":
        KindProvider().require_container_runtime()
        print(NodeImageBuilder().ensure())
        return 0
    from harness.cluster import scheduler_image

    provider = KindProvider(name=args.name, keep=True)
    kube = provider.up()
    scheduler_image.build()
    scheduler_image.deploy(kube, kind_bin=provider.kind_binary(), cluster=provider.name, timeouts=provider.timeouts)
    print(f"kind cluster {provider.name} runs the reference from {scheduler_image.DEPLOY_DIR}; run the suite against it with:")
    print(
        f"  pytest tests/conformance --cluster kind --kind-name {provider.name} --keep-cluster "
        f"--scheduler external --scheduler-pod-selector {scheduler_image.POD_SELECTOR}"
    )
    return 0


def _cmd_conformance(pytest_args: Sequence[str]) -> int:
    from harness.suite import command

    return command.run(pytest_args)


def _cmd_audit(args: argparse.Namespace) -> int:
    from harness.audit.cli import run_audit

    return run_audit(args)


def _cmd_replay(args: argparse.Namespace) -> int:
    from harness.replay.cli import run_replay

    return run_replay(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rescon", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    tools = commands.add_parser("tools", help="build the local cluster's programs from pinned Go modules")
    tools.add_argument("--list", action="store_true", help="list the programs and their cache paths")
    tools.set_defaults(func=_cmd_tools)

    cluster = commands.add_parser("cluster", help="manage the local cluster")
    cluster.add_argument("action", choices=["up", "down", "status", "nodes"])
    cluster.add_argument("--name", default="rescon", help="cluster name (default: rescon)")
    cluster.add_argument(
        "--coschedule",
        default="disabled",
        choices=["disabled", "workspaces", "pipelineruns", "isolate-pipelinerun"],
        help="Tekton's feature-flags coschedule mode (default: disabled)",
    )
    cluster.set_defaults(func=_cmd_cluster)

    kind = commands.add_parser("kind", help="the kind provider's images")
    kind.add_argument(
        "action",
        choices=["node-image", "deploy-reference"],
        help="node-image: build the offline node image (no registry needed); deploy-reference: a kept cluster running the reference in-cluster",
    )
    kind.add_argument("--name", default="rescon-ref", help="deploy-reference: the kind cluster's name (default: rescon-ref)")
    kind.set_defaults(func=_cmd_kind)

    # Listed for --help only: main() hands everything after `conformance` to pytest untouched.
    commands.add_parser("conformance", help="run the installed conformance scenarios here; the rest of the line is pytest's (rescon conformance --help)")

    from harness.audit.cli import add_arguments as add_audit_arguments

    audit = commands.add_parser("audit", help="watch a live cluster and report every broken contract rule (read-only)")
    add_audit_arguments(audit)
    audit.set_defaults(func=_cmd_audit)

    from harness.replay.options import add_arguments as add_replay_arguments

    replay = commands.add_parser(
        "replay", help="run your own Tekton YAML (steps simulated) against the scheduler under test and judge every run",
        description="rescon replay: your Tasks, Pipelines and PipelineRuns, steps simulated, run against the scheduler under test on "
        "nodes like yours, each run judged by the contract monitor and against the suite's own groups and peaks (docs/replay.md). "
        "Exit code 0 when every run passed, 1 otherwise, 2 for bad input.",
    )
    add_replay_arguments(replay)
    replay.set_defaults(func=_cmd_replay)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    try:
        if given[:1] == ["conformance"]:
            # pytest's options, not ours: argparse would reject `-k colocation` or swallow --help.
            return _cmd_conformance(given[1:])
        args = build_parser().parse_args(given)
        return int(args.func(args))
    except HarnessError as err:
        print(f"rescon: error: {err}", file=sys.stderr)
        if err.detail:
            print(err.detail, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rescon: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
