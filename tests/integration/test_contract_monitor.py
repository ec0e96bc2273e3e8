"""The contract monitor against a real API server: it fires on the state that breaks a rule, and only then.

No scheduler runs here: the tests make the states themselves (pods bound by
`nodeName`, records written as a scheduler would), so each rule meets exactly
the fault it exists for.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import pytest

from harness.cluster.namespaces import create_test_namespace, delete_test_namespace, unique_name, wait_pods_gone
from harness.cluster.node_pools import NodePool
from harness.contract import record as contract
from harness.contract.install import install_crd
from harness.kube import Kube
from harness.monitor import invariants as rules
from harness.monitor.watcher import ContractBroken, ContractMonitor
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, hold_for, wait_for

pytestmark = pytest.mark.integration

Obj = dict[str, Any]


def _pinned_pod(name: str, node: str, cpu: str) -> Obj:
    """A plain pod bound by the test itself, as a filler: no scheduler decides anything."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": {"sim.rescon.dev/hold": "true"}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "rescon.invalid/c", "resources": {"requests": {"cpu": cpu}}}]},
    }


def _violation(monitor: ContractMonitor, rule: str, timeouts: TimeoutConfig) -> str:
    def poll() -> str:
        found = [v for v in monitor.violations if v.rule == rule]
        if not found:
            raise NotYet(f"violations so far: {[v.rule for v in monitor.violations]}")
        return found[0].describe()

    return wait_for(poll, what=f"the monitor to report {rule}", timeout="record_state", timeouts=timeouts)


@pytest.fixture
def monitor_timeouts(it_timeouts: TimeoutConfig) -> TimeoutConfig:
    return dataclasses.replace(it_timeouts, label_converges=1.0, group_stays=3.0)


def test_an_overcommitted_node_is_reported_at_once_naming_node_and_pods(
    it_kube: Kube, namespace: str, node_pool: NodePool, monitor_timeouts: TimeoutConfig
) -> None:
    node = node_pool.nodes[0]
    with ContractMonitor(it_kube, namespace, node_pool.selector, timeouts=monitor_timeouts, checks_records=False) as monitor:
        it_kube.core.create_namespaced_pod(namespace, _pinned_pod("first", node, "3"))
        it_kube.core.create_namespaced_pod(namespace, _pinned_pod("second", node, "2"))
        message = _violation(monitor, rules.NODE_OVERCOMMITTED, monitor_timeouts)
    assert f"node {node} holds 5000m CPU" in message
    with pytest.raises(ContractBroken, match="node-overcommitted"):
        monitor.raise_if_violated()
    assert {f"pod {namespace}/first", f"pod {namespace}/second"} <= set(monitor.violations[0].objects)


def test_pods_within_allocatable_are_never_reported(it_kube: Kube, namespace: str, node_pool: NodePool, monitor_timeouts: TimeoutConfig) -> None:
    node = node_pool.nodes[0]
    with ContractMonitor(it_kube, namespace, node_pool.selector, timeouts=monitor_timeouts, checks_records=False) as monitor:
        it_kube.core.create_namespaced_pod(namespace, _pinned_pod("first", node, "2"))
        it_kube.core.create_namespaced_pod(namespace, _pinned_pod("second", node, "2"))

        def quiet() -> None:
            if monitor.violations:
                raise NotYet(monitor.violations[0].describe())

        hold_for(quiet, what="the monitor staying quiet", duration="group_stays", timeouts=monitor_timeouts)
    assert monitor.events_seen >= 2


def test_another_namespaces_pod_counts_on_the_pool_and_is_skipped_off_it(
    request: pytest.FixtureRequest, it_kube: Kube, namespace: str, node_pool: NodePool, monitor_timeouts: TimeoutConfig
) -> None:
    node = node_pool.nodes[0]
    other = create_test_namespace(it_kube, unique_name("it-other", request.node.name), timeouts=monitor_timeouts)
    try:
        with ContractMonitor(it_kube, namespace, node_pool.selector, timeouts=monitor_timeouts, checks_records=False) as monitor:

            def pool_known() -> None:
                if not monitor.pod_filter.knows_pool:
                    raise NotYet("the monitor has not applied its pool's nodes yet")

            wait_for(pool_known, what="the monitor to know its pool", timeout="monitor_synced", timeouts=monitor_timeouts)
            it_kube.core.create_namespaced_pod(other, _pinned_pod("elsewhere", "rescon-no-such-node", "1"))
            it_kube.core.create_namespaced_pod(other, _pinned_pod("neighbour", node, "3"))
            it_kube.core.create_namespaced_pod(namespace, _pinned_pod("own", node, "2"))
            _violation(monitor, rules.NODE_OVERCOMMITTED, monitor_timeouts)
        assert f"pod {other}/neighbour" in monitor.violations[0].objects  # kept: bound to a pool node
        assert monitor.pod_filter.skipped >= 1
        assert "elsewhere" not in {p["metadata"]["name"] for p in monitor.world.pods.values()}  # skipped undecoded
    finally:
        delete_test_namespace(it_kube, other, timeouts=monitor_timeouts, wait=False)
        wait_pods_gone(it_kube, other, timeouts=monitor_timeouts)


#: A PipelineRun Tekton leaves alone (spec.status PipelineRunPending): it owns the test's record.
PENDING_RUN: Obj = {
    "apiVersion": "tekton.dev/v1",
    "kind": "PipelineRun",
    "metadata": {"name": "run"},
    "spec": {
        "status": "PipelineRunPending",
        "workspaces": [{"name": "source", "volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Mi"}}}}}],
        "pipelineSpec": {"workspaces": [{"name": "source"}], "tasks": [{"name": "build", "workspaces": [{"name": "w", "workspace": "source"}],
                         "taskSpec": {"workspaces": [{"name": "w"}], "steps": [{"name": "s", "image": "busybox:1.37", "script": "true"}]}}]},
    },
}


def _record(namespace: str, run_uid: str, node: str, *, active: bool) -> Obj:
    return {
        "apiVersion": contract.API_VERSION,
        "kind": contract.KIND,
        "metadata": {
            "name": "run",
            "labels": {contract.ACTIVE_LABEL: contract.ACTIVE_VALUE} if active else {},
            "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": "run", "uid": run_uid, "controller": True}],
        },
        "spec": {"pipelineRun": {"name": "run", "uid": run_uid},
                 "groups": [{"name": "source", "tasks": ["build"], "workspaces": ["source"], "peak": {"cpu": "1", "memory": "0"}}]},
    }


def test_a_reserved_record_without_its_active_label_is_reported_after_label_converges(
    it_kube: Kube, namespace: str, node_pool: NodePool, monitor_timeouts: TimeoutConfig
) -> None:
    install_crd(it_kube, timeouts=monitor_timeouts)
    api = (contract.GROUP, contract.VERSION, namespace, contract.PLURAL)
    # A real owner, held back from running: a record owned by no PipelineRun is garbage-collected at once.
    owner: Obj = it_kube.custom.create_namespaced_custom_object("tekton.dev", "v1", namespace, "pipelineruns", PENDING_RUN)  # type: ignore[assignment]
    with ContractMonitor(it_kube, namespace, node_pool.selector, timeouts=monitor_timeouts, checks_records=True) as monitor:
        created: Obj = it_kube.custom.create_namespaced_custom_object(*api, _record(namespace, owner["metadata"]["uid"], node_pool.nodes[0], active=False))  # type: ignore[assignment]
        created["status"] = {"groups": [{
            "name": "source", "state": "Reserved", "node": node_pool.nodes[0], "holders": [], "claimGeneration": 1,
            "reservedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }]}
        it_kube.custom.replace_namespaced_custom_object_status(*api, "run", created)
        message = _violation(monitor, rules.ACTIVE_LABEL_DIVERGED, monitor_timeouts)
    assert f"record {namespace}/run" in message and "label_converges 1s" in message
    # The record is otherwise right: its groups are the PipelineRun's, its uid is the run's.
    assert [v.rule for v in monitor.violations] == [rules.ACTIVE_LABEL_DIVERGED]
