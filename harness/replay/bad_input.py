"""bad_input: what `rescon replay` refuses before it touches a cluster, each in one line that names the fix.

The messages are functions here, so that tests import them rather than copy
their words. The command prints `rescon replay: error: <message>` and exits 2.
"""

from __future__ import annotations

from harness.errors import HarnessError

#: Where a user reads how to turn tekton.dev/v1beta1 YAML into v1.
V1_MIGRATION = "https://tekton.dev/docs/pipelines/migrating-v1beta1-to-v1/"
#: The objects replay applies besides Tekton's, because a run's workspaces name them.
SUPPORTING_KINDS = ("PersistentVolumeClaim", "ConfigMap", "Secret")


class ReplayInputError(HarnessError):
    """ReplayInputError is input `rescon replay` cannot use; its message is one line that names the fix (exit code 2, not 1)."""


def no_such_path(path: str) -> str:
    """no_such_path('tekton/') == "tekton/ does not exist: give the files or folders that hold your Tekton YAML"."""
    return f"{path} does not exist: give the files or folders that hold your Tekton YAML"


def no_yaml_found(paths: str) -> str:
    """no_yaml_found('tekton/') names the paths that held no .yaml, .yml or .json file."""
    return f"no .yaml, .yml or .json file under {paths}: give the files or folders that hold your Tekton YAML"


def unreadable_yaml(origin: str, problem: str) -> str:
    """unreadable_yaml('ci.yaml', 'mapping values are not allowed here (line 3)') says the file is not YAML."""
    return f"{origin} is not valid YAML ({problem}): fix the file, or leave it out of the paths given"


def not_an_object(origin: str) -> str:
    """not_an_object('ci.yaml#2') is a document that is no Kubernetes object (no apiVersion and kind)."""
    return f"{origin} has no apiVersion and kind, so it is no Kubernetes object: leave it out of the paths given"


def not_tekton(origin: str, api_version: str, kind: str) -> str:
    """not_tekton('deploy.yaml#1', 'apps/v1', 'Deployment') names what replay takes instead."""
    return (
        f"{origin} is a {kind} ({api_version}), not Tekton: give replay Tasks, Pipelines and PipelineRuns "
        f"(and the {', '.join(SUPPORTING_KINDS)} their workspaces name); leave the rest out of the paths given"
    )


def old_tekton_version(origin: str, kind: str, api_version: str) -> str:
    """old_tekton_version('ci.yaml#1', 'Task', 'tekton.dev/v1beta1') asks for v1, which replay reads."""
    return f"{origin} is a {kind} of {api_version}: replay reads tekton.dev/v1; convert it ({V1_MIGRATION})"


def no_name(origin: str, kind: str) -> str:
    """no_name('ci.yaml#1', 'Task') is a Task, Pipeline or supporting object without metadata.name."""
    return f"{origin}: the {kind} has no metadata.name: name it (only a PipelineRun may use generateName)"


def defined_twice(kind: str, name: str, first: str, second: str) -> str:
    """defined_twice('Task', 'build', 'a.yaml#1', 'b.yaml#3') names both places."""
    return f"{kind} {name} is defined twice ({first} and {second}): keep one of them"


def nothing_to_run(paths: str) -> str:
    """nothing_to_run('tekton/') is input with neither a PipelineRun nor a Pipeline."""
    return f"{paths} holds no PipelineRun and no Pipeline: replay runs PipelineRuns (a Pipeline alone gets one with its default params)"


def task_unresolved(where: str, task: str, ref: str) -> str:
    """task_unresolved('PipelineRun build (ci.yaml#3)', 'test', 'Task unit-test') says which Task to add."""
    return f"{where}: pipeline task {task} refers to {ref}, which none of the given files defines: add that Task's YAML to the paths given"


def task_without_spec(where: str, task: str) -> str:
    """task_without_spec('Pipeline ci (ci.yaml#2)', 'lint') is a pipeline task with neither taskRef nor taskSpec."""
    return f"{where}: pipeline task {task} has neither a taskRef nor a taskSpec: give it one"


def pipeline_unresolved(where: str, ref: str) -> str:
    """pipeline_unresolved('PipelineRun nightly (ci.yaml#4)', 'Pipeline release') says which Pipeline to add."""
    return f"{where} refers to {ref}, which none of the given files defines: add that Pipeline's YAML to the paths given"


def run_without_pipeline(where: str) -> str:
    """run_without_pipeline('PipelineRun x (ci.yaml#1)') is a run with neither pipelineRef nor pipelineSpec."""
    return f"{where} has neither a pipelineRef nor a pipelineSpec: give it one"


def claim_missing(where: str, workspace: str, claim: str) -> str:
    """claim_missing('PipelineRun build (ci.yaml#3)', 'source', 'shared-src') names the two fixes."""
    return (
        f"{where} binds workspace {workspace} to PersistentVolumeClaim {claim}, which none of the given files defines: "
        "add the claim's YAML to the paths given, or bind the workspace to a volumeClaimTemplate"
    )


def no_nodes(path: str) -> str:
    """no_nodes('nodes.yaml') is a nodes file without a single Node."""
    return f"{path} holds no Node: give the output of `kubectl get nodes -o yaml` from your cluster"


def node_without_size(origin: str, node: str) -> str:
    """node_without_size('nodes.yaml', 'worker-1') is a Node with neither allocatable nor capacity."""
    return f"{origin}: node {node} has no status.allocatable or status.capacity: export the nodes with `kubectl get nodes -o yaml`"


def node_defined_twice(origin: str, node: str) -> str:
    """node_defined_twice('nodes.yaml', 'worker-1')."""
    return f"{origin}: node {node} is listed twice: keep one of them"


def bad_pool(text: str) -> str:
    """bad_pool('4x4') shows the form --pool takes."""
    return f"--pool {text!r} is not a pool: write COUNTxCPUcpuMEMORY, e.g. 4x4cpu8Gi or 2x500mcpu1Gi, several joined by '+'"


def nodes_and_pool() -> str:
    """nodes_and_pool() refuses --nodes together with --pool."""
    return "--nodes and --pool both say what the nodes are: give one of them"


def bad_count(option: str, value: int) -> str:
    """bad_count('--copies', 0)."""
    return f"{option} {value}: give 1 or more"


def names_collide(name: str) -> str:
    """names_collide('nightly-...-c1') is two runs that would be created under one name: two long names alike up to where they are cut."""
    return f"two of the runs replay would create are both named {name}: rename one of the given runs"


def not_a_node(origin: str, kind: str) -> str:
    """not_a_node('nodes.yaml#1', 'Pod') is a nodes file document that is no Node."""
    return f"{origin} is a {kind}, not a Node: give the output of `kubectl get nodes -o yaml` from your cluster"


def unplaceable(where: str, problem: str) -> str:
    """unplaceable('PipelineRun build (ci.yaml#1)', 'task compile asks 6000m CPU, ...') says the nodes given do not fit it."""
    return f"{where}: {problem}: give --nodes or --pool with nodes that take it"


def bad_duration(text: str) -> str:
    """bad_duration('2 seconds') shows the form --run-for takes."""
    return f"--run-for {text!r} is not a duration: write whole milliseconds, seconds, minutes or hours, e.g. 500ms, 2s, 1m"
