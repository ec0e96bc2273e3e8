"""The simulated task behaviour: KWOK Stages that play a Tekton task pod's life.

KWOK v0.8 ships no default Stages, so the local cluster passes these. A task
pod's behaviour is chosen by annotations, which a fixture puts on the embedded
taskSpec's `metadata.annotations` (Tekton copies them to the TaskRun and the pod):

    sim.rescon.dev/run-for      "3s"      steps end this long after the pod runs (default 1s)
    sim.rescon.dev/run-until    "5s"      steps end at a random moment between run-for and this, drawn
                                          per pod (KWOK's jitter; on kind the step script draws it), so
                                          the pods of one matrixed task end in any order
    sim.rescon.dev/hold         "true"    steps run until the test sets sim.rescon.dev/release
    sim.rescon.dev/release      "true"    set by the test on the pod to end a held pod's steps
    sim.rescon.dev/exit-codes   "1,0"     the steps' exit code per attempt: the first pod exits 1,
                                          `<taskrun>-pod-retry1` exits 0; the last entry repeats
    sim.rescon.dev/linger       "true"    sidecars keep running after the steps end, so the pod
                                          stays Running while its TaskRun is already terminal
    sim.rescon.dev/linger-for   "30s"     how long a lingering sidecar runs (default 1h)
    sim.rescon.dev/linger-held  "true"    a lingering sidecar runs until the test sets
                                          sim.rescon.dev/stop-sidecars (linger-for is not read)
    sim.rescon.dev/stop-sidecars "true"   set by the test on the pod to stop a held lingering sidecar
    sim.rescon.dev/result.NAME  '["a","b"]'  the value the steps write to the Task's result NAME (an
                                          array result's as JSON), as a step writes /tekton/results/NAME

Tekton's affinity-assistant pods (coschedule modes other than `disabled`) run
until they are deleted, as the StatefulSet pods they are: a MutatingAdmissionPolicy
marks each one `sim.rescon.dev/hold` at creation, and nothing ever releases it
(see affinity_assistant_policy()).

The same vocabulary drives real containers on kind (see fixtures/pipelines/_sim.j2),
so one fixture serves both providers. Terminated step containers carry no
termination message (Tekton parses a non-empty one as JSON) unless the pod
asks for results: then each step's message is the JSON Tekton's entrypoint
writes, `[{"key": NAME, "value": VALUE, "type": 1}]`. Running containers
report their `resources`, as a kubelet that supports in-place resize does
(the API server refuses `pods/resize` for pods whose node does not).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.cluster.compute_resources import compute_resources

PREFIX = "sim.rescon.dev/"
RUN_FOR = PREFIX + "run-for"
RUN_UNTIL = PREFIX + "run-until"
HOLD = PREFIX + "hold"
RELEASE = PREFIX + "release"
EXIT_CODES = PREFIX + "exit-codes"
LINGER = PREFIX + "linger"
LINGER_FOR = PREFIX + "linger-for"
LINGER_HELD = PREFIX + "linger-held"
STOP_SIDECARS = PREFIX + "stop-sidecars"
#: The prefix of the annotations that give the steps' results: RESULT + "shards" is result `shards`.
RESULT = PREFIX + "result."

#: How long a simulated step runs when the fixture does not say.
DEFAULT_RUN_FOR_MS = 1000
#: A lingering sidecar outlives any scenario unless the fixture says otherwise.
DEFAULT_LINGER_FOR_MS = 3_600_000
#: The pause between binding and Running: short, but long enough that a test sees Pending first.
START_DELAY_MS = 200

STAGE_API_VERSION = "kwok.x-k8s.io/v1alpha1"

#: The label Tekton puts on every affinity-assistant StatefulSet and its pod, and its value
#: (tektoncd/pipeline v1.15.0: workspace.LabelComponent and ComponentNameAffinityAssistant in
#: pkg/workspace/affinity_assistant_names.go, set by getStatefulSetLabels in
#: pkg/reconciler/pipelinerun/affinity_assistant.go for every coschedule mode).
AFFINITY_ASSISTANT_LABEL = "app.kubernetes.io/component"
AFFINITY_ASSISTANT_COMPONENT = "affinity-assistant"
#: The name of the policy (and of its binding) that keeps affinity-assistant pods Running.
AFFINITY_ASSISTANT_POLICY = "rescon-affinity-assistant-runs"
ADMISSION_API_VERSION = "admissionregistration.k8s.io/v1"

#: Where a real step (kind) reads its own pod's annotations: a downward-API volume.
PODINFO_DIR = "/etc/podinfo"

#: The step script that plays the same vocabulary with real containers (kind, existing clusters).
#: On KWOK nothing runs and the Stages below play it instead.
STEP_SCRIPT = r"""#!/bin/sh
# ann NAME: the value of this pod's annotation NAME. Annotation names contain '/', so the sed
# delimiter is '|', which neither a name nor the downward API's key="value" lines use.
ann() { sed -n "s|^$1=\"\(.*\)\"$|\1|p" /etc/podinfo/annotations; }
# seconds DURATION: "3s" -> 3, "2m" -> 120, "1500ms" -> 1.500 (busybox sleep takes fractions); default 1.
seconds() { case "$1" in "") echo "${2:-1}";; *ms) v=${1%ms}; printf '%d.%03d\n' $((v / 1000)) $((v % 1000));; *s) echo "${1%s}";; *m) echo $(( ${1%m} * 60 ));; *h) echo $(( ${1%h} * 3600 ));; *) echo "${2:-1}";; esac; }
if [ "$(ann sim.rescon.dev/hold)" = "true" ]; then
  until [ "$(ann sim.rescon.dev/release)" = "true" ]; do sleep 1; done
else
  run_for=$(seconds "$(ann sim.rescon.dev/run-for)"); run_until=$(ann sim.rescon.dev/run-until)
  if [ -n "$run_until" ]; then
    # A uniform draw between run-for and run-until, from the kernel's randomness (pods that start together differ).
    run_for=$(awk -v a="$run_for" -v b="$(seconds "$run_until")" -v r="$(od -An -N2 -tu2 /dev/urandom)" \
      'BEGIN { if (b > a) a += (b - a) * r / 65536; printf "%.3f\n", a }')
  fi
  sleep "$run_for"
fi
# Each result the pod's annotations give (sim.rescon.dev/result.NAME="VALUE", quoted as the downward API quotes),
# written where Tekton's entrypoint reads it.
sed -n 's|^sim\.rescon\.dev/result\.\([^=]*\)="\(.*\)"$|\1 \2|p' /etc/podinfo/annotations |
  while read -r name value; do printf '%s' "$value" | sed 's|\\"|"|g' > "/tekton/results/$name"; done
attempt=$(hostname | sed -n 's/.*-retry\([0-9]*\)$/\1/p'); attempt=${attempt:-0}
codes=$(ann sim.rescon.dev/exit-codes); codes=${codes:-0}
code=$(echo "$codes" | tr ',' '\n' | sed -n "$((attempt + 1))p")
[ -n "$code" ] || code=$(echo "$codes" | tr ',' '\n' | tail -n 1)
exit "$code"
"""

#: The lingering sidecar's script on real containers: it runs until sim.rescon.dev/stop-sidecars when
#: sim.rescon.dev/linger-held says so, else for sim.rescon.dev/linger-for (default 1h).
LINGER_SCRIPT = "\n".join(line for line in STEP_SCRIPT.splitlines() if line.startswith(("#!", "ann()", "seconds()"))) + (
    '\nif [ "$(ann sim.rescon.dev/linger-held)" = "true" ]; then\n'
    '  until [ "$(ann sim.rescon.dev/stop-sidecars)" = "true" ]; do sleep 1; done\n'
    "  exit 0\n"
    "fi\n"
    'exec sleep "$(seconds "$(ann sim.rescon.dev/linger-for)" 3600)"\n'
)

#: The image real steps run in; any image with a POSIX shell, sed and tr.
STEP_IMAGE = "busybox:1.37"

#: What an idle sidecar runs on real containers: a service that stops on SIGTERM, as a registry or a
#: database does. A container's first process has no default action for SIGTERM, so a bare `sleep 3600`
#: ignored the kubelet's stop and ran until the pod's 30 s grace period ended: with Tekton's
#: enable-kubernetes-sidecar on, a native sidecar is stopped that way once the steps end, and
#: native_sidecars' pod stayed Running 31 s after its step on kind.
IDLE_SIDECAR_COMMAND = ("sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait")


def _runs(script: str, *, as_script: bool) -> dict[str, Any]:
    """_runs() is how a container runs `script`: Tekton's `script` field, or the shell's command line."""
    return {"script": script} if as_script else {"command": ["sh", "-c", script]}


def _requests(cpu: str | None, memory: str | None) -> dict[str, str]:
    return {**({"cpu": cpu} if cpu else {}), **({"memory": memory} if memory else {})}


def sim_task_spec(
    *,
    cpu: str | None,
    memory: str | None = None,
    run_for: str | None = None,
    run_until: str | None = None,
    hold: bool = False,
    exit_codes: str | None = None,
    linger: bool = False,
    linger_for: str | None = None,
    linger_held: bool = False,
    sidecar_cpu: str | None = None,
    sidecar_memory: str | None = None,
    sidecar_host_port: int | None = None,
    extra_steps: Sequence[Mapping[str, str]] = (),
    step_template: Mapping[str, str] | None = None,
    params: Sequence[str] = (),
    results: Sequence[str] = (),
    writes: Mapping[str, str | Sequence[str]] | None = None,
    env: Mapping[str, str] | None = None,
    workspaces: tuple[str, ...] = ("w",),
    resources: Mapping[str, str] | None = None,
    as_script: bool = False,
) -> dict[str, Any]:
    """sim_task_spec(cpu='480m', run_for='2s') is an embedded taskSpec that plays the vocabulary.

    Fixtures use it as `taskSpec: {{ sim_task_spec(cpu=cpu(0.1), hold=True) | tojson }}`.

    The first step, `work`, requests `cpu` and `memory`; with neither (cpu=None)
    it has no computeResources, so a stepTemplate, a task-level request or a
    LimitRange decides. `resources` adds other resources to `work`'s requests,
    with equal limits for extended resources and hugepages as the API server
    requires (compute_resources): `resources={"example.com/gpu": "1",
    "ephemeral-storage": "6Gi"}` asks for a GPU and 6Gi of scratch disk.
    Optional shapes, each absent unless asked for:

    * extra_steps: one more step per requests map (`{}`: no computeResources),
      named `work-2`, `work-3`...; each runs `true`, so on kind only `work` plays
      the timing;
    * step_template: the requests of `stepTemplate.computeResources`;
    * sidecar_cpu / sidecar_memory: a sidecar `helper` with those requests that
      ends with the steps (with linger=True the sidecar is `linger` instead, which
      runs on after the steps for linger_for, or with linger_held=True until the
      test stops it: ScenarioRun.stop_sidecars());
    * sidecar_host_port: `helper` also binds that host port (a service a task's
      tests reach on the node, as a sidecar registry on :5000 is);
    * params, results: string params and results declared by the Task (a matrix
      needs its params declared; a result nobody writes is simply missing);
    * writes: results declared and written by the steps, a string or an array
      each (`writes={"shards": ["a", "b", "c"]}` makes an array result that a
      later task's matrix can fan out over);
    * env: environment variables of the first step (`env={"SRC": "$(workspaces.source.path)"}`
      makes Tekton propagate the pipeline workspace `source` to a task that binds none);
    * as_script: `work` (and a lingering sidecar) is Tekton's `script`, so Tekton adds its
      `place-scripts` init container to the pod, as it does for most catalogue Tasks.

    By default `work` runs its script as `command: [sh, -c, ...]`, as a step whose
    image carries its tool does: the pod's init container is Tekton's `prepare` alone.
    On real kubelets each init container costs a container start and about a second
    of the kubelet's relist before the next one starts (docs/clusters.md, "A task pod on
    a real kubelet"); the scenarios that hand-compute Tekton's init containers say
    as_script=True.
    """
    annotations: dict[str, str] = {}
    if run_for:
        annotations[RUN_FOR] = run_for
    if run_until:
        annotations[RUN_UNTIL] = run_until
    if hold:
        annotations[HOLD] = "true"
    if exit_codes:
        annotations[EXIT_CODES] = exit_codes
    if linger:
        annotations[LINGER] = "true"
    if linger_for:
        annotations[LINGER_FOR] = linger_for
    if linger_held:
        if not linger or linger_for:
            raise ValueError("sim_task_spec(linger_held=True) needs linger=True and no linger_for: a held sidecar runs until the test stops it")
        annotations[LINGER_HELD] = "true"
    for name, value in (writes or {}).items():
        annotations[RESULT + name] = value if isinstance(value, str) else json.dumps(list(value), separators=(",", ":"))
    work: dict[str, Any] = {"name": "work", "image": STEP_IMAGE, **_runs(STEP_SCRIPT, as_script=as_script)}
    compute = compute_resources(cpu=cpu, memory=memory, others=resources)
    if compute:
        work["computeResources"] = compute
    if env:
        work["env"] = [{"name": name, "value": value} for name, value in env.items()]
    work["volumeMounts"] = [{"name": "podinfo", "mountPath": PODINFO_DIR}]
    steps = [work]
    for index, step_requests in enumerate(extra_steps, start=2):
        step: dict[str, Any] = {"name": f"work-{index}", "image": STEP_IMAGE, "command": ["true"]}
        if step_requests:
            step["computeResources"] = {"requests": dict(step_requests)}
        steps.append(step)
    spec: dict[str, Any] = {
        "metadata": {"annotations": annotations},
        "workspaces": [{"name": w} for w in workspaces],
        "volumes": [
            {"name": "podinfo", "downwardAPI": {"items": [{"path": "annotations", "fieldRef": {"fieldPath": "metadata.annotations"}}]}}
        ],
    }
    if params:
        spec["params"] = [{"name": name, "type": "string"} for name in params]
    declared = [{"name": name, "type": "string"} for name in results]
    declared += [{"name": name, "type": "string" if isinstance(value, str) else "array"} for name, value in (writes or {}).items()]
    if declared:
        spec["results"] = declared
    if step_template:
        spec["stepTemplate"] = {"computeResources": {"requests": dict(step_template)}}
    spec["steps"] = steps
    if linger:
        spec["sidecars"] = [
            {
                "name": "linger",
                "image": STEP_IMAGE,
                **_runs(LINGER_SCRIPT, as_script=as_script),
                "computeResources": {"requests": {"cpu": sidecar_cpu or "10m"}},
                "volumeMounts": [{"name": "podinfo", "mountPath": PODINFO_DIR}],
            }
        ]
    elif sidecar_cpu or sidecar_memory or sidecar_host_port:
        helper: dict[str, Any] = {
            "name": "helper",
            "image": STEP_IMAGE,
            "command": list(IDLE_SIDECAR_COMMAND),
            "computeResources": {"requests": _requests(sidecar_cpu, sidecar_memory)},
        }
        if sidecar_host_port:
            helper["ports"] = [{"containerPort": sidecar_host_port, "hostPort": sidecar_host_port, "protocol": "TCP"}]
        spec["sidecars"] = [helper]
    return spec

_NOT_DELETING = {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"}
_RUNNING = {"key": ".status.phase", "operator": "In", "values": ["Running"]}
_NO_TERMINATED_CONTAINER = {"key": ".status.containerStatuses.[].state.terminated", "operator": "DoesNotExist"}
_SOME_TERMINATED_CONTAINER = {"key": ".status.containerStatuses.[].state.terminated", "operator": "Exists"}


def _annotation(name: str) -> str:
    return f'.metadata.annotations["{name}"]'


def _has(annotation: str) -> dict[str, Any]:
    return {"key": _annotation(annotation), "operator": "Exists"}


def _lacks(annotation: str) -> dict[str, Any]:
    return {"key": _annotation(annotation), "operator": "DoesNotExist"}


# Go templates rendered by KWOK against the pod (as JSON); sprig functions are available.

_POD_RUNNING = """\
{{ $now := Now }}
conditions:
- {type: PodScheduled, status: "True", lastTransitionTime: {{ $now | Quote }}}
- {type: Initialized, status: "True", lastTransitionTime: {{ $now | Quote }}}
- {type: ContainersReady, status: "True", lastTransitionTime: {{ $now | Quote }}}
- {type: Ready, status: "True", lastTransitionTime: {{ $now | Quote }}}
{{ if .spec.initContainers }}
initContainerStatuses:
{{ range .spec.initContainers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: true
  restartCount: 0
  started: false
  state: {terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}}
{{ end }}
{{ end }}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: true
  restartCount: 0
  started: true
  state: {running: {startedAt: {{ $now | Quote }}}}
  resources: {{ toJson (or .resources dict) }}
{{ end }}
hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
podIP: {{ PodIPWith .spec.nodeName false ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
phase: Running
startTime: {{ $now | Quote }}
"""

# The attempt number comes from Tekton's retry pod name, `<taskrun>-pod-retryN`.
_STEPS_FINISHED = """\
{{ $now := Now }}
{{ $ann := or .metadata.annotations dict }}
{{ $codes := splitList "," (or (get $ann "sim.rescon.dev/exit-codes") "0") }}
{{ $attempt := 0 }}
{{ if regexMatch "-retry[0-9]+$" .metadata.name }}{{ $attempt = regexFind "[0-9]+$" .metadata.name | atoi }}{{ end }}
{{ $code := last $codes | trim | atoi }}
{{ if lt $attempt (len $codes) }}{{ $code = index $codes $attempt | trim | atoi }}{{ end }}
{{ $linger := eq (get $ann "sim.rescon.dev/linger") "true" }}
{{ $results := list }}
{{ range $key, $value := $ann }}{{ if hasPrefix "sim.rescon.dev/result." $key }}{{ $results = append $results (dict "key" (trimPrefix "sim.rescon.dev/result." $key) "value" $value "type" 1) }}{{ end }}{{ end }}
{{ $lingering := false }}
{{ range .spec.containers }}{{ if and $linger (hasPrefix "sidecar-" .name) }}{{ $lingering = true }}{{ end }}{{ end }}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  restartCount: 0
{{ if and $lingering (hasPrefix "sidecar-" .name) }}
  ready: true
  started: true
  state: {running: {startedAt: {{ $now | Quote }}}}
  resources: {{ toJson (or .resources dict) }}
{{ else }}
{{ $exit := 0 }}{{ if hasPrefix "step-" .name }}{{ $exit = $code }}{{ end }}
  ready: false
  started: false
  state: {terminated: {exitCode: {{ $exit }}, reason: {{ if eq $exit 0 }}Completed{{ else }}Error{{ end }}, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}{{ if and $results (hasPrefix "step-" .name) }}, message: {{ toJson $results | Quote }}{{ end }}}}
{{ end }}
{{ end }}
{{ if $lingering }}
phase: Running
{{ else }}
conditions:
- {type: ContainersReady, status: "False", reason: PodCompleted, lastTransitionTime: {{ $now | Quote }}}
- {type: Ready, status: "False", reason: PodCompleted, lastTransitionTime: {{ $now | Quote }}}
phase: {{ if eq $code 0 }}Succeeded{{ else }}Failed{{ end }}
{{ end }}
"""

_SIDECARS_STOPPED = """\
{{ $now := Now }}
containerStatuses:
{{ range .status.containerStatuses }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  restartCount: 0
  ready: false
  started: false
{{ if .state.terminated }}
  state: {terminated: {{ toJson .state.terminated }}}
{{ else }}
  state: {terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}}
{{ end }}
{{ end }}
conditions:
- {type: ContainersReady, status: "False", reason: PodCompleted, lastTransitionTime: {{ $now | Quote }}}
- {type: Ready, status: "False", reason: PodCompleted, lastTransitionTime: {{ $now | Quote }}}
phase: Succeeded
"""

_NODE_READY = """\
{{ $now := Now }}
conditions:
{{ range NodeConditions }}
- lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $now | Quote }}
  message: {{ .message | Quote }}
  reason: {{ .reason | Quote }}
  status: {{ .status | Quote }}
  type: {{ .type | Quote }}
{{ end }}
addresses:
- {type: InternalIP, address: {{ NodeIP | Quote }}}
- {type: Hostname, address: {{ NodeName | Quote }}}
{{ with NodePort }}
daemonEndpoints:
  kubeletEndpoint:
    Port: {{ . }}
{{ end }}
allocatable: {{ toJson .status.allocatable }}
capacity: {{ toJson .status.capacity }}
nodeInfo:
  architecture: amd64
  operatingSystem: linux
  kubeletVersion: fake
  kubeProxyVersion: fake
  containerRuntimeVersion: kwok
  kernelVersion: kwok
  osImage: kwok
  bootID: ""
  machineID: ""
  systemUUID: ""
phase: Running
"""


def _stage(name: str, kind: str, selector: list[dict[str, Any]], next_: dict[str, Any], delay: dict[str, Any] | None = None) -> dict[str, Any]:
    api_group = "v1"
    spec: dict[str, Any] = {
        "resourceRef": {"apiGroup": api_group, "kind": kind},
        "selector": {"matchExpressions": selector},
        "next": next_,
    }
    if delay:
        spec["delay"] = delay
    return {"apiVersion": STAGE_API_VERSION, "kind": "Stage", "metadata": {"name": name}, "spec": spec}


def _steps_finished(name: str, extra_selector: list[dict[str, Any]], delay: dict[str, Any]) -> dict[str, Any]:
    selector: list[dict[str, Any]] = [_NOT_DELETING, _RUNNING, _NO_TERMINATED_CONTAINER, *extra_selector]
    return _stage(name, "Pod", selector, {"statusTemplate": _STEPS_FINISHED}, delay)


def node_stages() -> list[dict[str, Any]]:
    """node_stages() make a KWOK node Ready with the allocatable it was created with, and keep it so."""
    initialize = _stage(
        "rescon-node-initialize",
        "Node",
        [{"key": '.status.conditions.[] | select( .type == "Ready" ) | .status', "operator": "NotIn", "values": ["True"]}],
        {"statusTemplate": _NODE_READY},
    )
    # The lease controller keeps nodes alive; the heartbeat only refreshes conditions now and then.
    heartbeat = _stage(
        "rescon-node-heartbeat",
        "Node",
        [
            {"key": ".status.phase", "operator": "In", "values": ["Running"]},
            {"key": '.status.conditions.[] | select( .type == "Ready" ) | .status', "operator": "In", "values": ["True"]},
        ],
        {"statusTemplate": _NODE_READY},
        {"durationMilliseconds": 20_000, "jitterDurationMilliseconds": 25_000},
    )
    return [initialize, heartbeat]


def pod_stages() -> list[dict[str, Any]]:
    """pod_stages() play a task pod: Running, steps end (by time or on release), sidecars stop (by time or when told), deletion."""
    running = _stage(
        "rescon-pod-running",
        "Pod",
        [_NOT_DELETING, {"key": ".status.podIP", "operator": "DoesNotExist"}],
        {"statusTemplate": _POD_RUNNING},
        {"durationMilliseconds": START_DELAY_MS},
    )
    finish_after = _steps_finished(
        "rescon-pod-steps-finish-after",
        [_lacks(HOLD)],
        {
            "durationMilliseconds": DEFAULT_RUN_FOR_MS,
            "durationFrom": {"expressionFrom": _annotation(RUN_FOR)},
            # KWOK draws the delay uniformly between the two; with no run-until it is run-for exactly.
            "jitterDurationFrom": {"expressionFrom": _annotation(RUN_UNTIL)},
        },
    )
    finish_on_release = _steps_finished(
        "rescon-pod-steps-finish-on-release", [_has(HOLD), _has(RELEASE)], {"durationMilliseconds": 0}
    )
    sidecars_stop = _stage(
        "rescon-pod-sidecars-stop",
        "Pod",
        [_NOT_DELETING, _RUNNING, _SOME_TERMINATED_CONTAINER, _lacks(LINGER_HELD)],
        {"statusTemplate": _SIDECARS_STOPPED},
        {"durationMilliseconds": DEFAULT_LINGER_FOR_MS, "durationFrom": {"expressionFrom": _annotation(LINGER_FOR)}},
    )
    # A held lingering sidecar matches no stage until the test stops it, as a held step does until release.
    sidecars_stop_when_told = _stage(
        "rescon-pod-sidecars-stop-when-told",
        "Pod",
        [_NOT_DELETING, _RUNNING, _SOME_TERMINATED_CONTAINER, _has(LINGER_HELD), _has(STOP_SIDECARS)],
        {"statusTemplate": _SIDECARS_STOPPED},
        {"durationMilliseconds": 0},
    )
    # No kubelet confirms deletion, so the simulator finishes it once finalizers are gone.
    delete = _stage(
        "rescon-pod-delete",
        "Pod",
        [
            {"key": ".metadata.deletionTimestamp", "operator": "Exists"},
            {"key": ".metadata.finalizers", "operator": "DoesNotExist"},
        ],
        {"delete": True},
    )
    return [running, finish_after, finish_on_release, sidecars_stop, sidecars_stop_when_told, delete]


def affinity_assistant_policy() -> list[dict[str, Any]]:
    """affinity_assistant_policy() keeps Tekton's affinity-assistant pods Running until they are deleted.

    An affinity assistant is a one-replica StatefulSet whose container runs
    `tekton_run_indefinitely`; task pods follow it by required pod affinity. On
    KWOK it carries no sim annotation, so rescon-pod-steps-finish-after would end
    it after DEFAULT_RUN_FOR_MS; the StatefulSet controller would then replace the
    Succeeded pod, the replacement could land on another node, and a group would
    split by accident. This MutatingAdmissionPolicy, bound cluster-wide, annotates
    each pod with Tekton's label `app.kubernetes.io/component: affinity-assistant`
    `sim.rescon.dev/hold: "true"` at creation. Nothing sets `sim.rescon.dev/release`
    on it, so no stage but rescon-pod-delete ever matches it again: it runs until
    Tekton deletes its StatefulSet.

    A policy rather than one more Stage because KWOK reads Stages only when its
    controller starts, while the harness applies these manifests at every
    `rescon cluster up`: a cluster kept up across harness versions gets them too.
    failurePolicy Fail: a policy that cannot run refuses the pod (the StatefulSet
    retries) instead of letting a finishing assistant through unnoticed.
    """
    policy = {
        "apiVersion": ADMISSION_API_VERSION,
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": AFFINITY_ASSISTANT_POLICY},
        "spec": {
            "matchConstraints": {
                "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
                "objectSelector": {"matchLabels": {AFFINITY_ASSISTANT_LABEL: AFFINITY_ASSISTANT_COMPONENT}},
            },
            "failurePolicy": "Fail",
            "reinvocationPolicy": "Never",
            "mutations": [
                {
                    "patchType": "ApplyConfiguration",
                    "applyConfiguration": {"expression": f'Object{{metadata: Object.metadata{{annotations: {{"{HOLD}": "true"}}}}}}'},
                }
            ],
        },
    }
    binding = {
        "apiVersion": ADMISSION_API_VERSION,
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": AFFINITY_ASSISTANT_POLICY},
        "spec": {"policyName": AFFINITY_ASSISTANT_POLICY},
    }
    return [policy, binding]


def affinity_assistant_probe_pod(namespace: str) -> dict[str, Any]:
    """affinity_assistant_probe_pod(ns) is a pod the policy must mark, for a server-side dry-run create.

    The API server loads a new policy a moment after it is written; the harness
    dry-runs this pod until it comes back marked, so no assistant is created first.
    """
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "rescon-affinity-assistant-probe", "namespace": namespace, "labels": {AFFINITY_ASSISTANT_LABEL: AFFINITY_ASSISTANT_COMPONENT}},
        "spec": {"containers": [{"name": "probe", "image": STEP_IMAGE}]},
    }


def all_stages() -> list[dict[str, Any]]:
    return node_stages() + pod_stages()
