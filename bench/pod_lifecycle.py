"""Where a pod's seconds go on a cluster with real kubelets: each pod's states as a watch sees them, then a table.

    .venv/bin/python -m bench.pod_lifecycle record --kubeconfig KUBECONFIG --output pods.jsonl &   # while the suite runs
    .venv/bin/python -m bench.pod_lifecycle report pods.jsonl

`record` watches every namespace's pods and writes one JSON line per event: when it arrived
(this machine's clock), the pod's name, node, deletion and status. It reconnects from the last
resourceVersion it saw, and lists afresh when that is too old. `report` turns the lines into
each pod's first sighting of every state (bound, each container running and terminated, each
condition True, each phase, deletion) and prints, for the task pods (those with init
containers: Tekton's prepare and place-scripts), how long each step of their life took:
the kubelet's own timestamps (startedAt, finishedAt: whole seconds) where the step is inside
the node, the arrival times where the API server is told.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

Obj = dict[str, Any]

#: The cluster's own pods: not the scenarios' (the provisioner's helper pods are reported apart).
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease", "tekton-pipelines", "tekton-pipelines-resolvers"})
PROVISIONER_NAMESPACE = "local-path-storage"
RECONNECT_SECONDS = 1.0


def event_line(event: Obj, arrived: float) -> Obj:
    """event_line() is what `record` keeps of one watch event: its arrival time, the pod's identity, node, deletion and status."""
    pod = event["object"]
    meta = pod["metadata"]
    return {
        "t": arrived, "type": event["type"], "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"],
        "node": (pod.get("spec") or {}).get("nodeName"), "deleting": meta.get("deletionTimestamp"), "status": pod.get("status") or {},
    }


def _seconds(stamp: str | None) -> float | None:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() if stamp else None


def _container_marks(status: Obj) -> Iterator[tuple[str, float | None, str]]:
    """Each container's state as (mark, kubelet timestamp, kind): init containers by position, the others by name."""
    for field, prefix in (("initContainerStatuses", "init"), ("containerStatuses", "")):
        for index, container in enumerate(status.get(field) or []):
            key = f"init{index}" if prefix else container["name"]
            state = container.get("state") or {}
            if "running" in state:
                yield f"{key}:running", _seconds(state["running"].get("startedAt")), "started"
            if "terminated" in state:
                yield f"{key}:terminated", _seconds(state["terminated"].get("startedAt")), "started"
                yield f"{key}:terminated", _seconds(state["terminated"].get("finishedAt")), "finished"


@dataclass
class PodLife:
    """PodLife is one pod's first sighting of each state (`seen`, arrival times) and its containers' kubelet times."""

    namespace: str
    name: str
    seen: dict[str, float]
    started: dict[str, float]  # container key -> startedAt
    finished: dict[str, float]  # container key -> finishedAt

    @property
    def init_containers(self) -> int:
        return sum(1 for key in self.started if key.startswith("init"))

    def steps(self) -> list[str]:
        return [key for key in self.started if key.startswith("step-")]


def lives(lines: Iterable[Obj]) -> list[PodLife]:
    """lives() folds the recorded lines into one PodLife per pod (by uid), in the order pods first appeared."""
    found: dict[str, PodLife] = {}
    for line in lines:
        life = found.setdefault(line["uid"], PodLife(line["namespace"], line["name"], {}, {}, {}))
        seen, at = life.seen, line["t"]
        seen.setdefault("created", at)
        if line["node"]:
            seen.setdefault("bound", at)
        if line["deleting"]:
            seen.setdefault("deleting", at)
        if line["type"] == "DELETED":
            seen.setdefault("deleted", at)
        status = line["status"]
        if status.get("phase"):
            seen.setdefault(f"phase:{status['phase']}", at)
        for condition in status.get("conditions") or []:
            if condition.get("status") == "True":
                seen.setdefault(f"condition:{condition['type']}", at)
        for mark, stamp, kind in _container_marks(status):
            seen.setdefault(mark, at)
            key = mark.split(":")[0]
            if stamp is not None:
                (life.started if kind == "started" else life.finished).setdefault(key, stamp)
    return list(found.values())


def _after(life: PodLife, start: str, end: str) -> float | None:
    if start in life.seen and end in life.seen:
        return life.seen[end] - life.seen[start]
    return None


def task_pod_spans(life: PodLife) -> dict[str, float | None]:
    """task_pod_spans() is a task pod's life in steps, seconds each (None where the pod never got there)."""
    started, finished = life.started, life.finished
    steps = life.steps()
    first_step = min((started[s] for s in steps), default=None)
    # A native sidecar is an init container that ends after the steps: the last one to end before them.
    inits_ended = [at for key, at in finished.items() if key.startswith("init") and (first_step is None or at <= first_step)]
    last_step_end = max((finished[s] for s in steps if s in finished), default=None)
    bound = life.seen.get("bound")
    succeeded = life.seen.get("phase:Succeeded")
    return {
        "created -> bound": _after(life, "created", "bound"),
        "bound -> first init container started (kubelet)": started["init0"] - bound if bound and "init0" in started else None,
        "init container ended -> the next started (kubelet)": started["init1"] - finished["init0"] if "init1" in started and "init0" in finished else None,
        "last init container ended -> first step started (kubelet)": first_step - max(inits_ended) if first_step and inits_ended else None,
        "bound -> Running seen": _after(life, "bound", "phase:Running"),
        "last step ended (kubelet) -> Succeeded seen": succeeded - last_step_end if succeeded and last_step_end else None,
        "Succeeded seen -> deletion asked": _after(life, "phase:Succeeded", "deleting"),
    }


def helper_pod_spans(life: PodLife) -> dict[str, float | None]:
    """helper_pod_spans() is a provisioner helper pod's life: made, ran, succeeded and deleted."""
    return {
        "created -> Running seen": _after(life, "created", "phase:Running"),
        "created -> Succeeded seen": _after(life, "created", "phase:Succeeded"),
        "created -> deleted": _after(life, "created", "deleted"),
    }


def _row(label: str, values: Sequence[float]) -> str:
    if not values:
        return f"| {label} | 0 | | | | |"
    ordered = sorted(values)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return f"| {label} | {len(ordered)} | {statistics.median(ordered):.2f} | {p90:.2f} | {ordered[-1]:.2f} | {sum(ordered):.0f} |"


def table(title: str, spans: Sequence[dict[str, float | None]]) -> list[str]:
    """table() is a Markdown table of each span's count, p50, p90, max and sum in seconds, over the pods that reached it."""
    rows = [f"| {title} | pods | p50 s | p90 s | max s | sum s |", "|---|---|---|---|---|---|"]
    for label in spans[0] if spans else ():
        rows.append(_row(label, [value for span in spans if (value := span[label]) is not None]))
    return rows


def report(lines: Iterable[Obj]) -> str:
    """report() is the tables of the task pods and of the provisioner's helper pods."""
    everything = lives(lines)
    tasks = [life for life in everything if life.namespace not in SYSTEM_NAMESPACES | {PROVISIONER_NAMESPACE} and life.init_containers]
    helpers = [life for life in everything if life.namespace == PROVISIONER_NAMESPACE and life.name.startswith("helper-pod")]
    return "\n".join([*table("task pod (Tekton's init containers, then its steps)", [task_pod_spans(t) for t in tasks]), "",
                      *table("local-path provisioner's helper pod", [helper_pod_spans(h) for h in helpers])])


def record(kubeconfig: str, output: Path, seconds: float | None) -> None:
    """record() appends every pod event of the cluster to `output` until `seconds` have passed (or it is stopped)."""
    import kubernetes
    import kubernetes.watch

    api = kubernetes.config.new_client_from_config(config_file=kubeconfig)  # type: ignore[no-untyped-call]
    core = kubernetes.client.CoreV1Api(api)
    ends = time.monotonic() + seconds if seconds else None
    version: str | None = None
    with output.open("a", encoding="utf-8", buffering=1) as out:
        while ends is None or time.monotonic() < ends:
            left = int(ends - time.monotonic()) + 1 if ends else 300
            try:
                response = core.list_pod_for_all_namespaces(
                    watch=True, resource_version=version, timeout_seconds=min(left, 300), _preload_content=False
                )
                for raw in kubernetes.watch.watch.iter_resp_lines(response):  # type: ignore[no-untyped-call]
                    event = json.loads(raw)
                    if event["type"] == "ERROR":  # too old a resourceVersion: start again from now
                        version = None
                        break
                    version = event["object"]["metadata"].get("resourceVersion")
                    out.write(json.dumps(event_line(event, time.time())) + "\n")
            except (kubernetes.client.ApiException, OSError, ValueError) as err:
                print(f"pod_lifecycle: watch ended ({err}); watching again", file=sys.stderr)
                time.sleep(RECONNECT_SECONDS)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pod_lifecycle", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="watch every pod and write its events as JSON lines")
    rec.add_argument("--kubeconfig", required=True)
    rec.add_argument("--output", type=Path, required=True)
    rec.add_argument("--seconds", type=float, default=None, help="stop after this long (default: until stopped)")
    rep = sub.add_parser("report", help="the tables of a recorded file")
    rep.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    if args.command == "record":
        record(args.kubeconfig, args.output, args.seconds)
        return 0
    try:
        with args.file.open(encoding="utf-8") as lines:
            print(report(json.loads(line) for line in lines if line.strip()))
    except (OSError, ValueError, KeyError) as err:
        print(f"pod_lifecycle: cannot read {args.file} ({err}): give a file `record` wrote", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
