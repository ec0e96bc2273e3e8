"""Cluster I/O for the benchmark: a fast client, big node pools, PVCs, bulk create and cleanup.

The harness's helpers are made for a handful of objects; a benchmark makes
thousands, so creation runs on a thread pool with raw JSON bodies and
`_preload_content=False` (no model deserialization), and readiness is read
with one list instead of one GET per node.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import kubernetes
import urllib3

from bench import api_writes, workload
from harness.cluster import node_pools, volumes
from harness.cluster.namespaces import create_test_namespace
from harness.kube import Kube
from harness.timeouts import DEFAULT_TIMEOUTS

RECORDS = ("rescon.dev", "v1alpha1", "reservationrecords")
PIPELINE_RUNS = ("tekton.dev", "v1", "pipelineruns")

#: Threads that create objects in parallel (the API server, not the client, is meant to be the limit).
CREATE_THREADS = 8


def connect(kubeconfig: Path) -> Kube:
    """connect() is a Kube whose connection pool serves CREATE_THREADS threads without discarding connections."""
    configuration = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    configuration.connection_pool_maxsize = CREATE_THREADS * 4
    configuration.retries = urllib3.Retry(total=3, connect=3, read=0, backoff_factor=0.2)
    return Kube(kubernetes.client.ApiClient(configuration), kubeconfig)


def parallel(fn: Callable[[Any], Any], items: Sequence[Any], *, threads: int = CREATE_THREADS) -> list[Any]:
    """parallel(create, manifests) calls fn on every item on a thread pool and re-raises the first error."""
    if not items:
        return []
    with ThreadPoolExecutor(max_workers=min(threads, len(items))) as pool:
        return list(pool.map(fn, items))


def add_pool(kube: Kube, name: str, *, count: int, cpu: str, memory: str, pods: int = 110, say: Callable[[str], None] = print) -> node_pools.NodePool:
    """add_pool(kube, 'bench-n1000-ab12', count=1000, ...) creates KWOK nodes in parallel and waits until all are Ready."""
    started = time.monotonic()
    manifests = [
        node_pools.node_manifest(f"{name}-{i}", pool=name, cpu=cpu, memory=memory, pods=pods, labels={}, taints=())
        for i in range(count)
    ]
    parallel(lambda m: kube.core.create_node(m, _preload_content=False), manifests)
    say(f"pool {name}: {count} nodes created in {time.monotonic() - started:.1f}s; waiting for Ready")
    deadline = time.monotonic() + 120 + count / 10
    while True:
        listing = json.loads(
            kube.core.list_node(label_selector=f"{node_pools.POOL_LABEL}={name}", _preload_content=False).data
        )
        ready = sum(
            1
            for node in listing["items"]
            if any(c.get("type") == "Ready" and c.get("status") == "True" for c in (node.get("status") or {}).get("conditions") or [])
        )
        if ready >= count:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"pool {name}: only {ready}/{count} nodes Ready; is the kwok-controller running?")
        time.sleep(1.0)
    say(f"pool {name}: {count} nodes Ready after {time.monotonic() - started:.1f}s")
    return node_pools.NodePool(name, tuple(m["metadata"]["name"] for m in manifests), cpu, memory, pods, {})


def remove_pool(kube: Kube, name: str, *, timeout: float = 600.0) -> None:
    """remove_pool() deletes the pool's nodes and waits until they are gone.

    One collection delete of 5000 nodes outlives the API server's request
    timeout (the connection is dropped while it goes on), so it is repeated
    until no node of the pool is left.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            node_pools.remove_node_pool(kube, name)
        except (kubernetes.client.ApiException, urllib3.exceptions.HTTPError) as err:
            if time.monotonic() > deadline:
                raise
            print(f"pool {name}: collection delete interrupted ({err.__class__.__name__}); repeating", flush=True)
        left = json.loads(
            kube.core.list_node(label_selector=f"{node_pools.POOL_LABEL}={name}", limit=1, _preload_content=False).data
        )["items"]
        if not left:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"pool {name}: nodes still exist after {timeout:.0f}s")
        time.sleep(2.0)


def make_namespace(kube: Kube, name: str) -> str:
    return create_test_namespace(kube, name, timeouts=DEFAULT_TIMEOUTS)


def make_pvcs(kube: Kube, namespace: str, count: int) -> list[str]:
    """make_pvcs(kube, ns, 50) makes 50 Bound claims ws-0..ws-49 with harness.cluster.volumes.make_bound_pvc."""
    return parallel(lambda i: volumes.make_bound_pvc(kube, namespace, f"ws-{i}"), list(range(count)))


def create_claims(kube: Kube, namespace: str, claims: Iterable[dict[str, Any]]) -> None:
    """create_claims() creates the claims as given (the volumes mix's: no storageClassName, so the default class)."""
    parallel(lambda c: kube.core.create_namespaced_persistent_volume_claim(namespace, c, _preload_content=False), list(claims))


def remove_provisioned_claims(kube: Kube, namespace: str, label_selector: str, *, timeout: float = 180.0) -> None:
    """remove_provisioned_claims() deletes the pods and claims `label_selector` selects and waits until their volumes are gone.

    The pods first (a claim in use is kept until its pods are gone), then the
    claims; the local-path provisioner deletes each volume (reclaim policy
    Delete) with a helper pod on the volume's node, which never runs once the
    node is gone: so this returns before the pool may go. Claims of the
    namespace that select is not (the shared, pre-bound `ws-*`) stay.
    """
    kube.core.delete_collection_namespaced_pod(namespace, label_selector=label_selector, grace_period_seconds=0)
    deadline = time.monotonic() + timeout
    while list_raw(kube.core.list_namespaced_pod, namespace, label_selector=label_selector):
        if time.monotonic() > deadline:
            raise RuntimeError(f"pods of {namespace} ({label_selector}) not gone after {timeout:.0f}s")
        time.sleep(1.0)
    kube.core.delete_collection_namespaced_persistent_volume_claim(namespace, label_selector=label_selector)
    volumes.wait_provisioned_volumes_gone(kube, namespace, timeouts=replace(DEFAULT_TIMEOUTS, volume_bound=max(1.0, deadline - time.monotonic())))


def create_pods(kube: Kube, namespace: str, pods: Iterable[dict[str, Any]]) -> None:
    parallel(lambda p: kube.core.create_namespaced_pod(namespace, p, _preload_content=False), list(pods))


def create_pipeline_runs(kube: Kube, namespace: str, runs: Iterable[dict[str, Any]]) -> None:
    group, version, plural = PIPELINE_RUNS
    parallel(
        lambda r: kube.custom.create_namespaced_custom_object(group, version, namespace, plural, r, _preload_content=False),
        list(runs),
    )


def list_raw(call: Callable[..., Any], *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """list_raw(kube.core.list_namespaced_pod, ns) is the items as plain JSON dicts."""
    return list(json.loads(call(*args, **kwargs, _preload_content=False).data).get("items") or [])


def list_records(kube: Kube, namespace: str) -> list[dict[str, Any]]:
    group, version, plural = RECORDS
    return list_raw(kube.custom.list_namespaced_custom_object, group, version, namespace, plural)


def list_pipeline_runs(kube: Kube, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
    group, version, plural = PIPELINE_RUNS
    return list_raw(kube.custom.list_namespaced_custom_object, group, version, namespace, plural, label_selector=label_selector)


def clear_namespace(kube: Kube, namespace: str, *, timeout: float = 300.0) -> None:
    """clear_namespace() deletes the namespace's PipelineRuns, records and pods (no grace) and waits for the pods.

    The namespace and its PVCs stay, for the next run on the same pool.
    """
    for group, version, plural in (PIPELINE_RUNS, RECORDS):
        try:
            kube.custom.delete_collection_namespaced_custom_object(group, version, namespace, plural)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
    kube.core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
    deadline = time.monotonic() + timeout
    while True:
        pods = list_raw(kube.core.list_namespaced_pod, namespace)
        records = list_records(kube, namespace)
        if not pods and not records:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"namespace {namespace} still has {len(pods)} pods and {len(records)} records after {timeout:.0f}s")
        if pods:
            # Pods Tekton made again for runs being deleted, or pods whose deletion raced: delete again.
            kube.core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
        time.sleep(1.0)


def delete_namespace(kube: Kube, namespace: str) -> None:
    """delete_namespace() removes the namespace (pods first, no grace) and its PersistentVolumes; does not wait."""
    try:
        kube.core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
        kube.core.delete_namespace(namespace)
    except kubernetes.client.ApiException as err:
        if err.status != 404:
            raise
    volumes.delete_test_volumes(kube, namespace)


def wait_pods_gone(kube: Kube, namespace: str, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while list_raw(kube.core.list_namespaced_pod, namespace):
        if time.monotonic() > deadline:
            raise RuntimeError(f"pods of {namespace} not gone after {timeout:.0f}s")
        time.sleep(1.0)


def remove_namespace(kube: Kube, namespace: str, say: Callable[[str], None]) -> None:
    """remove_namespace() deletes a run's namespace at its end and waits up to 2 min for its pods; a wait that runs out is said, not raised."""
    delete_namespace(kube, namespace)
    try:
        wait_pods_gone(kube, namespace, timeout=120)
    except RuntimeError as err:
        say(f" cleanup: {err}")


# --- the scheduler's identity and its request counter (bench/api_writes.py) ---------


FLOW_SCHEMAS = ("flowcontrol.apiserver.k8s.io", "v1", "flowschemas")


def set_up_identity(kube: Kube, *, admin_kubeconfig: Path, path: Path, timeout: float = 60.0) -> Path:
    """set_up_identity() applies the scheduler identity and its FlowSchemas and writes its kubeconfig to `path`.

    Returns once the API server routes by every FlowSchema, and checks the
    counter on one write of its own (a ConfigMap made and deleted as the
    identity must show as two `other-writes`), so a counter that counts nothing
    fails here rather than reporting 0 writes per pod.
    """
    kube.apply_all(api_writes.identity_manifests())
    answer = kube.core.create_namespaced_service_account_token(
        api_writes.SERVICE_ACCOUNT, api_writes.NAMESPACE, {"spec": {"audiences": [], "expirationSeconds": 6 * 3600}}
    )
    written = api_writes.write_kubeconfig(path, admin_kubeconfig, str(answer.status.token))
    group, version, plural = FLOW_SCHEMAS
    deadline = time.monotonic() + timeout
    names = [api_writes.flow_schema_name(c) for c in api_writes.CATEGORIES]
    while True:
        pending = [n for n in names if not api_writes.flow_schema_active(json.loads(kube.custom.get_cluster_custom_object(group, version, plural, n, _preload_content=False).data))]
        if not pending:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"the API server did not take up FlowSchemas {pending} within {timeout:.0f}s")
        time.sleep(0.5)
    _calibrate(kube, written, timeout=timeout)
    return written


def _calibrate(kube: Kube, kubeconfig: Path, *, timeout: float) -> None:
    as_scheduler = connect(kubeconfig)
    try:
        before = scrape_requests(kube)
        name = f"bench-calibrate-{int(time.time())}"
        as_scheduler.core.create_namespaced_config_map(api_writes.NAMESPACE, {"metadata": {"name": name}}, _preload_content=False)
        as_scheduler.core.delete_namespaced_config_map(name, api_writes.NAMESPACE, _preload_content=False)
        deadline = time.monotonic() + timeout
        while True:
            seen = api_writes.requests_between(before, scrape_requests(kube), pods=0).by_category.get("other-writes", 0)
            if seen >= 2:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the API server counted {seen} of the identity's 2 calibration writes: the write counter does not work here")
            time.sleep(0.5)
    finally:
        as_scheduler.close()


def scrape_requests(kube: Kube) -> dict[str, float]:
    """scrape_requests() is the API server's count, so far, of the scheduler identity's requests by category."""
    method, url, headers, _body, _ = kube.api.param_serialize("GET", "/metrics", auth_settings=["BearerToken"])
    response = kube.api.call_api(method, url, header_params=headers, _request_timeout=60)
    response.read()
    if response.status != 200:
        raise RuntimeError(f"the API server's /metrics answered {response.status}")
    return api_writes.parse_dispatched(response.data.decode())


def tear_down_identity(kube: Kube) -> None:
    """tear_down_identity() deletes the FlowSchemas, the priority level and the cluster-admin binding.

    The namespace and its ServiceAccount stay (they grant nothing without the
    binding): a namespace being deleted would refuse the next run's
    ServiceAccount for as long as its deletion takes.
    """
    for manifest in reversed(api_writes.identity_manifests()):
        if manifest["kind"] not in ("Namespace", "ServiceAccount"):
            kube.delete(manifest)


# --- PipelineRuns resolved as Tekton resolves a started one ---------------------------


def resolve_pipeline_runs(kube: Kube, namespace: str, run_label: str, expected: int, *, timeout: float = 300.0) -> None:
    """resolve_pipeline_runs() writes every pending run's `status.pipelineSpec` through the status subresource.

    Tekton writes the resolved plan there when it starts a run; a pending run
    never gets it, and a scheduler that plans from it (contract section 4)
    would park every pod. The write waits until Tekton has marked the run
    Pending: Tekton's status update replaces the whole status, so a plan
    written before Tekton's first reconcile of the run could be overwritten
    by it. Even after it, a reconcile that began from a copy without the
    plan can still write its status over the patch (seen once in 10 runs at
    5000 nodes), so plans found missing are written again until every run
    has one, within the same timeout (verify_plans checks again after the run).
    """
    group, version, plural = PIPELINE_RUNS
    done: set[str] = set()
    deadline = time.monotonic() + timeout
    while True:
        runs = list_pipeline_runs(kube, namespace, f"{workload.RUN_LABEL}={run_label}")
        ready = [r for r in runs if r["metadata"]["name"] not in done and workload.tekton_marked_pending(r)]
        _write_plans(kube, namespace, ready)
        done.update(r["metadata"]["name"] for r in ready)
        if len(done) >= expected:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"Tekton marked only {len(done)} of {expected} PipelineRuns Pending within {timeout:.0f}s: is its controller running?")
        time.sleep(0.5)
    while True:
        lost = plans_to_write_again(list_pipeline_runs(kube, namespace, f"{workload.RUN_LABEL}={run_label}"))
        if not lost:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{len(lost)} PipelineRuns lost their status.pipelineSpec again after it was written again, for {timeout:.0f}s "
                f"(e.g. {lost[0]['metadata']['name']}): Tekton's controller keeps rewriting their status"
            )
        _write_plans(kube, namespace, lost)
        time.sleep(0.5)


def _write_plans(kube: Kube, namespace: str, runs: list[dict[str, Any]]) -> None:
    group, version, plural = PIPELINE_RUNS
    parallel(
        lambda r: kube.custom.patch_namespaced_custom_object_status(
            group, version, namespace, plural, r["metadata"]["name"], workload.resolved_status_patch(r),
            _content_type="application/merge-patch+json", _preload_content=False,
        ),
        runs,
    )


def plans_to_write_again(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """plans_to_write_again(runs) is the pending runs whose plan Tekton's status write replaced (a started run is left alone)."""
    return [r for r in runs if workload.tekton_marked_pending(r) and not workload.has_resolved_plan(r)]


def verify_plans(kube: Kube, namespace: str, run_label: str) -> list[str]:
    """verify_plans() names the run's PipelineRuns that have no status.pipelineSpec (none, if Tekton left the plans alone)."""
    runs = list_pipeline_runs(kube, namespace, f"{workload.RUN_LABEL}={run_label}")
    return sorted(r["metadata"]["name"] for r in runs if not workload.has_resolved_plan(r))
