"""The simulation vocabulary on kind, with real containers: the local cluster's pipeline tests, run again on kind.

KWOK plays hold/release, run-for, exit codes per attempt and linger from
annotations; on kind the step script (harness.cluster.simulation.STEP_SCRIPT)
reads the same annotations through a downward-API volume. These tests are the
local cluster's (test_local_pipelines), collected here once more with fixtures
that point them at a kind cluster of their own, plus checks only real
containers can show (a step's measured run time, an exit code as the kubelet
reports it).

Opt-in: RESCON_IT_KIND=1 (needs Docker; builds the offline node image if it is
missing). `make integration-kind` sets it. The cluster (rescon-it-kind) is deleted at the end.
The same cluster proves the reference's RBAC least-privilege with `kubectl auth can-i`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from harness import runs
from harness.cluster.kind import KindProvider
from harness.cluster.namespaces import create_test_namespace, delete_test_namespace, unique_name, wait_pods_gone
from harness.cluster.node_pools import NodePool
from harness.cluster.volumes import delete_test_volumes
from harness.kube import Kube
from harness.timeouts import TimeoutConfig
from harness.timestamps import kube_time
from it_pipelines import pipeline_run, task
from test_local_pipelines import (  # noqa: F401 - collected again here, on kind
    _status,
    test_a_held_task_runs_until_released,
    test_a_lingering_task_succeeds_while_its_pod_still_runs,
    test_a_matrix_fans_out_over_an_array_result,
    test_a_retried_task_fails_then_succeeds,
    test_two_sequential_tasks_share_a_pvc_workspace,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.environ.get("RESCON_IT_KIND") != "1", reason="kind integration tests are opt-in: RESCON_IT_KIND=1 (make integration-kind)"),
]


@pytest.fixture(scope="module")
def it_kind(it_timeouts: TimeoutConfig) -> Iterator[KindProvider]:
    provider = KindProvider(name="rescon-it-kind", timeouts=it_timeouts)
    try:
        yield provider
    finally:
        provider.down()


@pytest.fixture(scope="module")
def it_kube(it_kind: KindProvider) -> Iterator[Kube]:
    """it_kube is a client of the kind cluster (shadowing the local cluster's for this module)."""
    kube = it_kind.up()
    try:
        yield kube
    finally:
        kube.close()


@pytest.fixture
def namespace(request: pytest.FixtureRequest, it_kube: Kube, it_timeouts: TimeoutConfig) -> Iterator[str]:
    name = create_test_namespace(it_kube, unique_name("itkind", request.node.name), timeouts=it_timeouts)
    try:
        yield name
    finally:
        delete_test_namespace(it_kube, name, timeouts=it_timeouts, wait=False)
        delete_test_volumes(it_kube, name)
        wait_pods_gone(it_kube, name, timeouts=it_timeouts)


@pytest.fixture
def node_pool(request: pytest.FixtureRequest, it_kind: KindProvider, it_kube: Kube, namespace: str) -> Iterator[NodePool]:
    """node_pool is kind's two slot workers, claimed for this test."""
    pool = it_kind.add_node_pool(it_kube, unique_name("itpool", request.node.name, limit=30), count=2)
    try:
        yield pool
    finally:
        it_kind.remove_node_pool(it_kube, pool)


def _seconds(start: str, end: str) -> float:
    return (kube_time(end) - kube_time(start)).total_seconds()


def test_a_step_runs_for_its_run_for(it_kube: Kube, namespace: str, node_pool: NodePool, it_timeouts: TimeoutConfig) -> None:
    name = runs.create(it_kube, namespace, pipeline_run("runfor", [task("slow", run_for="4s")], pool=node_pool))
    done = runs.wait_for_done(it_kube, namespace, "PipelineRun", name, timeouts=it_timeouts)
    assert _status(done) == "True", runs.describe(done)
    taskrun = runs.taskruns_of(it_kube, namespace, name)["slow"]
    pod = it_kube.core.read_namespaced_pod(taskrun["status"]["podName"], namespace)
    step = next(c for c in pod.status.container_statuses if c.name == "step-work").state.terminated
    ran = (step.finished_at - step.started_at).total_seconds()
    # The container's own start and end (whole seconds): at least the 4 s asked for, well under
    # what a default 1 s step or a never-ending one would give.
    assert 3 <= ran <= 15, f"step-work ran {ran:.0f}s for run-for 4s"


def test_an_exit_code_fails_the_task_with_that_code(it_kube: Kube, namespace: str, node_pool: NodePool, it_timeouts: TimeoutConfig) -> None:
    name = runs.create(it_kube, namespace, pipeline_run("exit", [task("broken", exit_codes="3")], pool=node_pool))
    done = runs.wait_for_done(it_kube, namespace, "PipelineRun", name, timeouts=it_timeouts)
    assert _status(done) == "False", runs.describe(done)
    taskrun = runs.taskruns_of(it_kube, namespace, name)["broken"]
    pod = it_kube.core.read_namespaced_pod(taskrun["status"]["podName"], namespace)
    step = next(c for c in pod.status.container_statuses if c.name == "step-work").state.terminated
    assert step.exit_code == 3


# --- the reference's RBAC (reference_scheduler/deploy/rbac.yaml), proven with `kubectl auth can-i` ---

SERVICE_ACCOUNT = "system:serviceaccount:tkn-scheduler:tkn-scheduler"

#: (verb, resource, namespace or None for all/cluster-wide) the contract needs the scheduler to do.
NEEDED = [
    ("list", "pods", None), ("watch", "pods", None), ("create", "pods/binding", "ns-a"), ("patch", "pods/status", "ns-a"),
    ("patch", "pods/resize", "ns-a"), ("create", "events", "ns-a"), ("list", "nodes", None), ("watch", "nodes", None),
    ("list", "limitranges", None), ("list", "pipelineruns.tekton.dev", None), ("watch", "taskruns.tekton.dev", None),
    ("watch", "customruns.tekton.dev", None),
    ("list", "resolutionrequests.resolution.tekton.dev", None), ("watch", "resolutionrequests.resolution.tekton.dev", None),
    ("create", "reservationrecords.rescon.dev", "ns-a"), ("patch", "reservationrecords.rescon.dev", "ns-a"),
    ("update", "reservationrecords.rescon.dev/status", "ns-a"),
    ("watch", "persistentvolumeclaims", None), ("get", "persistentvolumeclaims", "ns-a"), ("patch", "persistentvolumeclaims", "ns-a"),
    ("watch", "persistentvolumes", None), ("list", "storageclasses.storage.k8s.io", None),
    ("create", "leases.coordination.k8s.io", "tkn-scheduler"), ("update", "leases.coordination.k8s.io/tkn-scheduler", "tkn-scheduler"),
]
#: What least privilege forbids: secrets, writing nodes or pods, deleting records, other schedulers' Leases.
FORBIDDEN = [
    ("get", "secrets", "ns-a"), ("list", "secrets", None), ("get", "secrets", "tkn-scheduler"), ("patch", "nodes", None),
    ("delete", "nodes", None), ("update", "nodes/status", None), ("delete", "pods", "ns-a"), ("update", "pods", "ns-a"),
    ("create", "pods", "ns-a"), ("delete", "reservationrecords.rescon.dev", "ns-a"),
    ("get", "leases.coordination.k8s.io/mutant-scheduler", "tkn-scheduler"), ("update", "leases.coordination.k8s.io/kube-scheduler", "kube-system"),
    ("create", "leases.coordination.k8s.io", "kube-system"), ("create", "clusterrolebindings.rbac.authorization.k8s.io", None),
    ("patch", "pipelineruns.tekton.dev", "ns-a"), ("get", "resolutionrequests.resolution.tekton.dev", "ns-a"),
    ("create", "resolutionrequests.resolution.tekton.dev", "ns-a"), ("delete", "resolutionrequests.resolution.tekton.dev", "ns-a"),
    ("delete", "persistentvolumeclaims", "ns-a"), ("patch", "persistentvolumes", None), ("create", "persistentvolumes", None),
    ("patch", "storageclasses.storage.k8s.io", None),
]


def _can_i(kubeconfig: Path, verb: str, resource: str, namespace: str | None) -> bool:
    from harness.cluster.toolchain import Toolchain

    kubectl = Toolchain().ensure(["kubectl"])["kubectl"]
    base, _, sub = resource.partition("/")
    if sub and not base.startswith("leases"):  # pods/binding is a subresource; leases/<name> names a Lease
        argv = [str(kubectl), "--kubeconfig", str(kubeconfig), "auth", "can-i", verb, base, "--subresource", sub, "--as", SERVICE_ACCOUNT]
    else:
        argv = [str(kubectl), "--kubeconfig", str(kubeconfig), "auth", "can-i", verb, resource, "--as", SERVICE_ACCOUNT]
    argv += ["-n", namespace] if namespace else ["--all-namespaces"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() in ("yes", "no"), f"{' '.join(argv)}: {result.stdout} {result.stderr}"
    return result.stdout.strip() == "yes"


@pytest.fixture(scope="module")
def reference_rbac(it_kind: KindProvider, it_kube: Kube) -> Path:
    from harness.cluster import scheduler_image
    from harness.contract.install import install_crd

    install_crd(it_kube, timeouts=it_kind.timeouts)  # can-i maps resource names through discovery
    it_kube.apply_all(m for m in scheduler_image.manifests() if m["kind"] != "Deployment" and m["kind"] != "Service")
    return it_kind.kubeconfig


@pytest.mark.parametrize(("verb", "resource", "namespace"), NEEDED, ids=[f"{v}-{r}-{n or 'all'}" for v, r, n in NEEDED])
def test_the_reference_may_do_what_the_contract_needs(reference_rbac: Path, verb: str, resource: str, namespace: str | None) -> None:
    assert _can_i(reference_rbac, verb, resource, namespace), f"{SERVICE_ACCOUNT} cannot {verb} {resource} in {namespace or 'all namespaces'}"


@pytest.mark.parametrize(("verb", "resource", "namespace"), FORBIDDEN, ids=[f"{v}-{r}-{n or 'all'}" for v, r, n in FORBIDDEN])
def test_the_reference_may_do_nothing_more(reference_rbac: Path, verb: str, resource: str, namespace: str | None) -> None:
    assert not _can_i(reference_rbac, verb, resource, namespace), f"{SERVICE_ACCOUNT} can {verb} {resource} in {namespace or 'all namespaces'}"
