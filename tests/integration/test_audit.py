"""`rescon audit` beside real scheduling on the local cluster: silent on the reference, prompt on an over-committing mutant.

The auditor runs as users run it, a process of its own (`python -m
harness.cli audit --output json`), watching the whole cluster while the
test's scheduler (the reference, or the mutant `ignores_reservations` of
tests/mutants/) serves PipelineRuns on the test's pool. The figures the
issue asks for (violations under load, time to the line, RSS) are printed
(`-s` shows them).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Iterator

import pytest

from harness.cluster.local import LocalCluster
from harness.cluster.node_pools import NodePool
from harness.cluster.volumes import make_bound_pvc
from harness.contract.install import install_crd
from harness.kube import Kube, json_object
from harness.monitor import invariants as rules
from harness.suite.scheduler_under_test import SchedulerUnderTest
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for
from it_pipelines import pipeline_run, task
from it_pods import task_pod_name, wait_bound
from tests.mutants.kill_table import Subject

pytestmark = pytest.mark.integration

Obj = dict[str, Any]
#: How many PipelineRuns the reference serves under the auditor's eyes (a short load, not `make load`'s).
LOAD_RUNS = 16


@dataclass
class AuditProcess:
    """AuditProcess is `rescon audit` running beside the test; `lines` are its stdout JSON lines as they came, with their arrival time."""

    process: subprocess.Popen[str]
    lines: list[tuple[float, Obj]] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)

    def read(self) -> None:
        assert self.process.stdout is not None and self.process.stderr is not None
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for text in self.process.stdout:
            self.lines.append((time.time(), json.loads(text)))

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for text in self.process.stderr:
            self.stderr.append(text.rstrip("\n"))

    def rss_kib(self) -> int:
        for text in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if text.startswith("VmRSS:"):
                return int(text.split()[1])
        raise AssertionError("no VmRSS in /proc/<pid>/status")

    def terminate(self, timeouts: TimeoutConfig) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeouts.process_stop)


@pytest.fixture
def auditor_for(it_cluster: LocalCluster, it_timeouts: TimeoutConfig) -> Iterator[Any]:
    """auditor_for(name) starts `rescon audit --scheduler-name name` and returns once it has listed everything."""
    started: list[AuditProcess] = []

    def start(scheduler_name: str) -> AuditProcess:
        command = [sys.executable, "-m", "harness.cli", "audit", "--kubeconfig", str(it_cluster.kubeconfig),
                   "--scheduler-name", scheduler_name, "--output", "json"]
        audit = AuditProcess(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}))
        started.append(audit)
        audit.read()

        def listed() -> None:
            if audit.process.poll() is not None:
                raise AssertionError(f"rescon audit exited {audit.process.returncode}: {audit.stderr}")
            if not any("judging from now on" in text for text in audit.stderr):
                raise NotYet(f"stderr so far: {audit.stderr}")

        wait_for(listed, what="rescon audit to list the cluster", timeout="monitor_synced", timeouts=it_timeouts)
        return audit

    yield start
    for audit in started:
        if audit.process.poll() is None:
            audit.process.kill()
            audit.process.wait()


def _scheduler(cluster: LocalCluster, kube: Kube, timeouts: TimeoutConfig, name: str, command: str | None) -> SchedulerUnderTest:
    install_crd(kube, timeouts=timeouts)
    mode = "command" if command else "reference"
    scheduler = SchedulerUnderTest(mode=mode, scheduler_name=name, kubeconfig=cluster.kubeconfig, workdir=cluster.workdir, command_template=command)
    scheduler.start()
    return scheduler


def _done(kube: Kube, namespace: str, names: list[str], scheduler: SchedulerUnderTest, timeouts: TimeoutConfig) -> None:
    def poll() -> None:
        scheduler.check_alive()
        listing = json_object(kube.custom.list_namespaced_custom_object("tekton.dev", "v1", namespace, "pipelineruns"))
        states = {
            item["metadata"]["name"]: next((c.get("status") for c in (item.get("status") or {}).get("conditions") or [] if c.get("type") == "Succeeded"), None)
            for item in listing.get("items") or []
        }
        unfinished = sorted(n for n in names if states.get(n) not in ("True", "False"))
        if unfinished:
            raise NotYet(f"{len(unfinished)} of {len(names)} PipelineRuns not done: {unfinished[:4]}")

    wait_for(poll, what=f"{len(names)} PipelineRuns to finish", timeout="pipelinerun_done", timeouts=timeouts)


def test_the_audit_is_silent_beside_the_reference_under_a_short_load(
    it_cluster: LocalCluster, it_kube: Kube, namespace: str, node_pool: NodePool, it_timeouts: TimeoutConfig, auditor_for: Any
) -> None:
    name = f"tkn-scheduler-audit-{namespace[-6:]}"
    scheduler = _scheduler(it_cluster, it_kube, it_timeouts, name, None)
    try:
        audit: AuditProcess = auditor_for(name)
        rss_listed = audit.rss_kib()
        runs = []
        for i in range(LOAD_RUNS):
            claim = make_bound_pvc(it_kube, namespace, f"source-{i}", timeouts=it_timeouts)
            # A group of two tasks at a time and a finally-free tail: peaks of 1.5 to 2.5 CPU on nodes of 4.
            tasks = [
                task("build", cpu=f"{500 + 250 * (i % 3)}m", workspace="source", run_for="1s"),
                task("test", cpu="1", workspace="source", run_for="1s"),
                task("lint", cpu="1", workspace="source", run_for="1s", run_after=["build"]),
                task("notify", cpu="250m", run_after=["test", "lint"], run_for="1s"),
            ]
            created = it_kube.custom.create_namespaced_custom_object(
                "tekton.dev", "v1", namespace, "pipelineruns", pipeline_run(f"load-{i}", tasks, pool=node_pool, claims={"source": claim}, scheduler_name=name, fixed_name=True),
            )
            runs.append(json_object(created)["metadata"]["name"])
        _done(it_kube, namespace, runs, scheduler, it_timeouts)
        rss = audit.rss_kib()
    finally:
        scheduler.stop()
    code = audit.terminate(it_timeouts)
    print(f"\naudit beside the reference: {LOAD_RUNS} PipelineRuns, {len(audit.lines)} violation line(s), RSS {rss_listed} KiB once listed, {rss} KiB after the load")
    assert audit.lines == [], f"rescon audit reported on the reference: {[line for _, line in audit.lines]}"
    assert code == 0, audit.stderr
    assert audit.stderr[-1].startswith("rescon audit: stopped after") and "0 violation(s)" in audit.stderr[-1], audit.stderr


def test_the_audit_reports_node_overcommitted_within_seconds_against_a_mutant_that_ignores_reservations(
    it_cluster: LocalCluster, it_kube: Kube, namespace: str, node_pool: NodePool, it_timeouts: TimeoutConfig, auditor_for: Any
) -> None:
    subject = Subject("ignores_reservations", run_id=namespace[-6:])
    scheduler = _scheduler(it_cluster, it_kube, it_timeouts, subject.scheduler_name, subject.command())
    near, far = node_pool.nodes
    try:
        audit: AuditProcess = auditor_for(subject.scheduler_name)
        # peak_blocks_b's shape: A holds 3 CPU for its big task while its small one runs; a filler makes the other node look fuller.
        filler = {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "filler", "annotations": {"sim.rescon.dev/hold": "true"}},
            "spec": {"nodeName": far, "containers": [{"name": "c", "image": "rescon.invalid/c", "resources": {"requests": {"cpu": "1"}}}]},
        }
        it_kube.core.create_namespaced_pod(namespace, filler)
        a_tasks = [task("small", cpu="500m", workspace="source", hold=True), task("big", cpu="3", workspace="source", run_after=["small"], run_for="1s")]
        it_kube.custom.create_namespaced_custom_object("tekton.dev", "v1", namespace, "pipelineruns", pipeline_run(
            "a", a_tasks, pool=node_pool, claims={"source": make_bound_pvc(it_kube, namespace, "a-source", timeouts=it_timeouts)},
            scheduler_name=subject.scheduler_name, fixed_name=True))
        small = task_pod_name(it_kube, namespace, "a", "small", it_timeouts)
        assert wait_bound(it_kube, namespace, small, it_timeouts, check_alive=scheduler.check_alive) == near
        it_kube.custom.create_namespaced_custom_object("tekton.dev", "v1", namespace, "pipelineruns", pipeline_run(
            "b", [task("only", cpu="2", workspace="source", hold=True)], pool=node_pool,
            claims={"source": make_bound_pvc(it_kube, namespace, "b-source", timeouts=it_timeouts)}, scheduler_name=subject.scheduler_name, fixed_name=True))
        only = task_pod_name(it_kube, namespace, "b", "only", it_timeouts)
        assert wait_bound(it_kube, namespace, only, it_timeouts, check_alive=scheduler.check_alive) == near, "the mutant put B on the far node: no over-commit"
        bound_seen = time.time()

        def reported() -> tuple[float, Obj]:
            # The audit may see B's claim (a residual) before B's bound pod: then it starts on the claim and names the pod in a changed line.
            found = [
                (at, line) for at, line in audit.lines
                if line["rule"] == rules.NODE_OVERCOMMITTED and f"pod {namespace}/{only}" in line["objects"]
            ]
            if not found:
                raise NotYet(f"lines so far: {[line for _, line in audit.lines]}")
            return found[0]

        at, line = wait_for(reported, what="rescon audit to report node-overcommitted", timeout="record_state", timeouts=it_timeouts)
        scheduled = _scheduled_at(it_kube, namespace, only)
    finally:
        scheduler.stop()
    code = audit.terminate(it_timeouts)
    line_time = datetime.strptime(line["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()
    print(
        f"\naudit against {subject.name}: node-overcommitted {line_time - scheduled:.2f}s after the PodScheduled condition's time "
        f"(whole seconds), {at - bound_seen:.2f}s after the test saw the bind; line: {line['message']}"
    )
    first = next(line for _, line in audit.lines if line["rule"] == rules.NODE_OVERCOMMITTED)
    assert first["change"] == "started" and first["objects"][0] == f"node {near}", first
    assert line["objects"][0] == f"node {near}" and line["change"] in ("started", "changed"), line
    assert at - bound_seen < 5.0, f"the line came {at - bound_seen:.1f}s after the bind was seen"
    assert code == 0, audit.stderr
    assert "node-overcommitted 1" in audit.stderr[-1], audit.stderr


def _scheduled_at(kube: Kube, namespace: str, name: str) -> float:
    pod = kube.core.read_namespaced_pod(name, namespace)
    for condition in (pod.status.conditions if pod.status else None) or []:
        if condition.type == "PodScheduled" and condition.last_transition_time is not None:
            return float(condition.last_transition_time.timestamp())
    raise AssertionError(f"{name} has no PodScheduled condition")
