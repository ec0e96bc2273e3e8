"""Scenario: a conformance test's metadata, declared as data beside its test body.

    SCENARIO = Scenario(
        name="peak_blocks_b",
        description="B fits next to A's running pod but not next to A's reserved peak",
        features=(Feature.PEAK_RESERVATION,),
        fixtures=("peak_blocks_b-a", "peak_blocks_b-b"),
    )

The runner reads SCENARIO from the test's module: it skips, applies and cleans
up; the test body only asserts. Each fixture is `fixtures/pipelines/<name>.yaml.j2`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from harness.cluster.node_pools import NodeShape
from harness.cluster.storage import DEFAULT_CLASS_ANNOTATION
from harness.cluster.storage import PROVISIONER as LOCAL_PATH_PROVISIONER
from harness.cluster.volumes import HOSTNAME_LABEL
from harness.suite.features import Feature


@dataclass(frozen=True)
class PoolSpec:
    """PoolSpec is the scenario's node pool: `count` nodes of cpu/memory each (made to measure on `local`)."""

    count: int = 2
    cpu: str = "4800m"
    memory: str = "8Gi"
    pods: int = 110
    #: Nodes that differ from the rest (cordoned, tainted, labelled, given GPUs or other resources); none by default.
    #: The runner applies them once the pool exists, before the test, and undoes them afterwards.
    shapes: tuple[NodeShape, ...] = ()


@dataclass(frozen=True)
class Scenario:
    """Scenario is one conformance scenario's declaration."""

    name: str
    description: str
    features: tuple[Feature, ...]
    fixtures: tuple[str, ...]
    pool: PoolSpec = PoolSpec()
    #: PVCs the runner creates before the test (names as the fixtures refer to them via `pvcs`): claims of the
    #: cluster's default class, as users make them, provisioned on the node the first pod that mounts one is given.
    #: Groups form only around workspaces bound to a PVC or a volumeClaimTemplate (docs/contract.md section 4).
    volumes: tuple[str, ...] = ()
    #: Why the scenario's `volumes` are volumes any node can attach (pre-bound PVs with no node affinity, as a
    #: network file share is) rather than claims of the default class; empty: claims of the default class. On a
    #: cluster with no default class every scenario gets such volumes.
    volumes_attach_anywhere: str = ""
    #: On a cluster with no default class: how many PVCs Tekton makes from the fixtures' `volumeClaimTemplate`
    #: workspaces in each of its namespaces (one per run and workspace). The runner then makes that many spare PVs of
    #: the scenario's own class, `{{ storage_class }}` (harness.cluster.volumes); the generative grammar names it.
    claim_templates: int = 0
    #: PVCs the runner creates, bound, on volumes with a `nodeAffinity`: claim name -> where the volume is. An int is
    #: the index of the pool node whose `kubernetes.io/hostname` it admits (a local PV, as a shared cache is kept); a
    #: (label, value) pair admits the nodes with that label (a zonal disk: ('topology.kubernetes.io/zone', 'zone-b')).
    pinned_volumes: Mapping[str, int | tuple[str, str]] = field(default_factory=dict)
    #: The fixtures leave a claim's class to the cluster's default (a volumeClaimTemplate with no storageClassName):
    #: the runner skips the scenario, saying why, on a cluster without a default StorageClass.
    default_storage_class: bool = False
    #: The scenario injects its fault into the local-path provisioner (kind's, the local cluster's): skipped, saying
    #: why, where the default class is provisioned by anything else.
    local_path_faults: bool = False
    #: Named values every fixture of the scenario may use (`{{ pipeline_timeout }}`), declared here as data.
    values: Mapping[str, str] = field(default_factory=dict)
    #: It acts on the whole cluster (restarts the API server, etcd, Tekton): under `pytest -n N` it runs
    #: alone, no other scenario beside it (harness.suite.workers).
    exclusive: bool = False
    #: Cluster components the scenario restarts (`run.restart_component(name)`): kube-apiserver, etcd, tekton-controller.
    #: The runner skips the scenario, saying why, on a cluster provider that cannot restart one of them.
    restarts: tuple[str, ...] = ()
    #: Leader-electing replicas of the scheduler the test runs (`with run.replicas() as replicas:`); 1 is the
    #: session's one process. The runner skips, saying why, where the suite cannot launch replicas (external).
    replicas: int = 1
    #: Why the scenario runs on the local cluster only (empty: on every cluster). The runner skips it elsewhere,
    #: saying this reason: for a known gap of the scenario on real kubelets, never to hide a verdict.
    local_only: str = ""
    #: The settings of Tekton's ConfigMaps it changes for its runs (harness.suite.tekton_defaults), each
    #: "<config map>/<key>": `("feature-flags/enable-api-fields",)`. They are the whole cluster's: it runs in the Tekton
    #: settings window, beside the other scenarios that change settings and no other (harness.suite.workers), and
    #: never on a cluster the suite does not own (existing). No two scenarios change one key, and none has a run that
    #: another's settings change (tests/unit/test_scenario_catalogue.py).
    tekton_settings: tuple[str, ...] = ()
    #: Its fixtures fetch Tasks or Pipelines through Tekton's cluster resolver (`taskRef: {resolver: cluster}`). The runner
    #: first asks that resolver for an absent Task in the scenario's namespace: one that does not answer is a setup error
    #: naming the fix (harness.cluster.tekton_resolvers), never a verdict.
    uses_cluster_resolver: bool = False
    #: Namespaces the scenario gets besides its own, by the names the test knows them by (`run.in_namespace("other")`).
    #: The runner creates each (with the scenario's volumes), the contract monitor watches them too, and all go at the end.
    extra_namespaces: tuple[str, ...] = ()


#: The kinds a scenario names its objects of after itself (object_name_prefix): a scheduler may match them by
#: name across namespaces (a PipelineRun's pods by the `tekton.dev/pipelineRun` label, say), so two scenarios
#: running at once must never both create one of the same name.
OWN_NAMED_KINDS = ("PipelineRun", "TaskRun", "Pod")


def object_name_prefix(scenario: str) -> str:
    """object_name_prefix('task_ref') is 'task-ref': the scenario's PipelineRuns, TaskRuns and pods are named it or `task-ref-...`.

    Scenario names are unique, and none is another's followed by `_...`
    (tests/unit/test_scenario_catalogue.py), so no two scenarios share such a name.
    """
    return scenario.replace("_", "-")


def names_outside_prefix(scenario: str, manifests: Iterable[Mapping[str, Any]]) -> list[str]:
    """names_outside_prefix() lists `Kind/name` of each manifest of OWN_NAMED_KINDS not named after the scenario.

    Example: for scenario task_ref, a PipelineRun `a` is listed ("PipelineRun/a"); `task-ref-a` is not, nor is
    one with `generateName: task-ref-a-` (a generateName `a-` is listed as "PipelineRun/a-*").
    """
    prefix = object_name_prefix(scenario)
    found = []
    for manifest in manifests:
        meta = manifest.get("metadata") or {}
        name = str(meta.get("name") or "")
        if not name and meta.get("generateName"):
            # The server appends five characters to a generateName: it must itself start with the prefix.
            name = str(meta["generateName"])
            if manifest.get("kind") in OWN_NAMED_KINDS and not name.startswith(f"{prefix}-"):
                found.append(f"{manifest.get('kind')}/{name}*")
            continue
        if manifest.get("kind") in OWN_NAMED_KINDS and name != prefix and not name.startswith(f"{prefix}-"):
            found.append(f"{manifest.get('kind')}/{name}")
    return found


def provider_skip_reason(scenario: Scenario, *, provider: str, restartable: frozenset[str]) -> str | None:
    """provider_skip_reason() says why a scenario cannot run on this provider, or None when it can.

    Example: a scenario with restarts=('etcd',) on kind gets
    "the kind cluster cannot restart etcd (only the local cluster restarts its components)".
    """
    unfit = provider_rules_out(scenario, provider=provider)
    if unfit is not None:
        return unfit
    missing = [name for name in scenario.restarts if name not in restartable]
    if not missing:
        return None
    return f"the {provider} cluster cannot restart {', '.join(missing)} (only the local cluster restarts its components)"


def provider_rules_out(scenario: Scenario, *, provider: str) -> str | None:
    """provider_rules_out() is the part of provider_skip_reason() the provider's name alone decides, known before a cluster is up.

    Example: a scenario with local_only="..." on kind gets "it runs on the local cluster only, not on kind: ...".
    """
    if scenario.local_only and provider != "local":
        return f"it runs on the local cluster only, not on {provider}: {scenario.local_only}"
    if scenario.tekton_settings and provider == "existing":
        return "it changes Tekton's ConfigMaps (config-defaults, feature-flags), which the suite never does on a cluster it does not own"
    return None


def storage_skip_reason(scenario: Scenario, provider: str, default_class: tuple[str, str] | None) -> str | None:
    """storage_skip_reason() says why the cluster's storage cannot serve the scenario, or None when it can.

    `default_class` is the cluster's default StorageClass and its provisioner
    (harness.cluster.storage.default_storage_class_of). Example: a scenario with
    default_storage_class=True on a cluster with no default class gets "the kind
    cluster has no default StorageClass (...)".
    """
    if default_class is None:
        if scenario.default_storage_class or scenario.local_path_faults:
            return (
                f"the {provider} cluster has no default StorageClass (annotation {DEFAULT_CLASS_ANNOTATION}=true), "
                "and the scenario's claims take the default class, as most users' do"
            )
        return None
    name, provisioner = default_class
    if scenario.local_path_faults and provisioner != LOCAL_PATH_PROVISIONER:
        return (
            f"the scenario injects its fault into the {LOCAL_PATH_PROVISIONER} provisioner, "
            f"and the {provider} cluster's default class {name} is provisioned by {provisioner}"
        )
    return None


def volume_admits(where: int | tuple[str, str], nodes: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """volume_admits() is the (label, values) a pinned volume's node affinity names (Scenario.pinned_volumes).

    Example: volume_admits(1, ('p-0', 'p-1')) == ('kubernetes.io/hostname', ('p-1',));
    volume_admits(('topology.kubernetes.io/zone', 'b'), nodes) == ('topology.kubernetes.io/zone', ('b',)).
    """
    if isinstance(where, int):
        return HOSTNAME_LABEL, (nodes[where],)
    return where[0], (where[1],)
