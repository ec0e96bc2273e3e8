"""Tasks fetched through a resolver: their specs, read from the PipelineRun's ResolutionRequests.

A pipeline task whose ``taskRef`` names a ``resolver`` refers to no Task the
scheduler can read by name. Tekton's PipelineRun reconciler asks for it with a
``resolution.tekton.dev/v1beta1`` ResolutionRequest in the run's namespace,
owned by the run, labelled ``resolution.tekton.dev/type: <resolver>``, whose
``spec.params`` are the task's ``taskRef.params`` as they stand in
``status.pipelineSpec``; the resolver answers with the Task's YAML, base64, in
``status.data`` (docs/contract.md section 6, "Tasks fetched through a resolver").
Tekton resolves every task this way before it creates the first TaskRun. The
request's name is a hash, so a task is matched to its request by resolver and
params; two tasks asking the same resolver the same thing get the same Task.

Example: for ``taskRef: {resolver: cluster, params: [{name: name, value: scan}, ...]}``
and the run's answered request with those params, ``resolved_task_spec(ref, requests)``
is the fetched Task's ``spec``; before the answer it is None.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import yaml

Obj = Mapping[str, Any]

#: The label by which a resolver picks the requests it answers (Tekton's resolution/common.LabelKeyResolverType).
RESOLVER_TYPE_LABEL = "resolution.tekton.dev/type"

#: The one-line error of a resolution that failed; format it with the task's resolver and the resolver's message.
RESOLUTION_FAILED_MESSAGE = "the {resolver} resolver failed to fetch its Task: {message}"
#: The one-line error of an answer that is not a Task; format it with the resolver, the request
#: ("ResolutionRequest namespace/name"), what was found and what fixes it (one of the FIX_ constants).
NOT_A_TASK_MESSAGE = "the {resolver} resolver answered {request} with {found}: {fix}"
#: What fixes status.data that is not base64, or decodes to no YAML or JSON.
FIX_ENCODING = "status.data must be the Task's YAML or JSON, base64-encoded; read the resolver's log"
#: What fixes an answer that decodes to something other than a Task.
FIX_NOT_A_TASK = "the taskRef's params must name a Task; read the resolver's log"
#: What fixes a Task whose spec is no mapping.
FIX_TASK_SPEC = "fix the Task the resolver serves"
#: The one-line error of a request marked Succeeded with no data; format it with the resolver, namespace and name.
NO_ANSWER_MESSAGE = (
    "the {resolver} resolver marked ResolutionRequest {namespace}/{name} Succeeded with no status.data: "
    "read the resolver's log and the request's status.conditions (kubectl get resolutionrequest -n {namespace} {name} -o yaml)"
)

#: How a YAML value that is no mapping is called in an error: "a YAML list", "a YAML string".
_YAML_TYPES = {list: "list", str: "string", int: "number", float: "number", bool: "boolean", bytes: "binary value"}

#: Fields of a step, sidecar or stepTemplate that tekton.dev/v1beta1 names otherwise than v1.
_V1BETA1_RENAMED = {"resources": "computeResources"}


class ResolutionFailed(ValueError):
    """ResolutionFailed: the request for a task's Task failed, or its answer is no Task; the message says which."""


def requests_owned_by(requests: Iterable[Obj], run_uid: str) -> list[Obj]:
    """requests_owned_by(requests, uid) are the ResolutionRequests with an ownerReference to that PipelineRun.

    Example: a request owned by ``{kind: PipelineRun, uid: u1}`` is kept for ``u1``, dropped for ``u2``.
    """
    owned = []
    for request in requests:
        refs = (request.get("metadata") or {}).get("ownerReferences") or []
        if any(ref.get("kind") == "PipelineRun" and ref.get("uid") == run_uid for ref in refs):
            owned.append(request)
    return owned


def _params(params: Sequence[Obj] | None) -> dict[str, Any]:
    return {str(p.get("name")): p.get("value") for p in params or ()}


def _succeeded(request: Obj) -> Obj | None:
    conditions = (request.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == "Succeeded"), None)


def request_for(task_ref: Obj, requests: Iterable[Obj]) -> Obj | None:
    """request_for(taskRef, a run's requests) is the request asking the ref's resolver for the ref's params, answered ones first.

    Params match as a name to value mapping, in any order; values compare as
    Tekton stores them (a string, a list or an object).

    Example: ``{resolver: cluster, params: [{name: name, value: scan}]}`` matches a request
    labelled ``resolution.tekton.dev/type: cluster`` with ``spec.params: [{name: name, value: scan}]``.
    """
    resolver = task_ref.get("resolver")
    wanted = _params(task_ref.get("params"))
    matching = [
        r
        for r in requests
        if ((r.get("metadata") or {}).get("labels") or {}).get(RESOLVER_TYPE_LABEL) == resolver
        and _params((r.get("spec") or {}).get("params")) == wanted
    ]
    answered = [r for r in matching if (_succeeded(r) or {}).get("status") in ("True", "False")]
    found = answered or matching
    return found[0] if found else None


def task_spec_v1(task: Obj) -> dict[str, Any]:
    """task_spec_v1(a fetched Task) is its spec in v1's words: v1beta1's `resources` of steps, sidecars and stepTemplate become `computeResources`.

    Example: a ``tekton.dev/v1beta1`` Task whose step has ``resources: {requests: {cpu: 1}}``
    gives a spec whose step has ``computeResources: {requests: {cpu: 1}}``; a v1 Task's spec is returned as it is.
    """
    spec = dict(task.get("spec") or {})
    if task.get("apiVersion") != "tekton.dev/v1beta1":
        return spec

    def renamed(container: Obj) -> dict[str, Any]:
        return {_V1BETA1_RENAMED.get(k, k): v for k, v in container.items()}

    for key in ("steps", "sidecars"):
        if isinstance(spec.get(key), list):
            spec[key] = [renamed(c) if isinstance(c, Mapping) else c for c in spec[key]]
    if isinstance(spec.get("stepTemplate"), Mapping):
        spec["stepTemplate"] = renamed(spec["stepTemplate"])
    return spec


def _one_line(text: object) -> str:
    """_one_line(an error or message) is its text with every run of whitespace, newlines too, made one space."""
    return " ".join(str(text).split())


def _yaml_problem(err: Exception) -> str:
    """_yaml_problem(a YAML error) is what is wrong and where, in one line: "expected ',' or ']' at line 1, column 6"."""
    problem, mark = getattr(err, "problem", None), getattr(err, "problem_mark", None)
    if not problem:
        return _one_line(err)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return _one_line(f"{problem}{where}")


def _yaml_type(value: object) -> str:
    return f"a YAML {_YAML_TYPES.get(type(value), type(value).__name__)}"


def decoded_task(data: str, resolver: str, request: str = "its ResolutionRequest") -> dict[str, Any]:
    """decoded_task(status.data, resolver, request) is the Task the resolver answered with; anything else raises ResolutionFailed.

    The error is one line naming the resolver, the request (``ResolutionRequest ns/name``),
    what was found (data that is not base64, or not YAML or JSON once decoded; a YAML
    value that is no mapping; a mapping that is no Task; a Task whose spec is no mapping)
    and what fixes it.

    Example: ``decoded_task(base64("apiVersion: tekton.dev/v1\\nkind: Task\\n..."), "cluster")["kind"] == "Task"``.
    """

    def refused(found: str, fix: str) -> ResolutionFailed:
        return ResolutionFailed(NOT_A_TASK_MESSAGE.format(resolver=resolver, request=request, found=found, fix=fix))

    try:
        decoded = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as err:
        raise refused(f"status.data that is not base64 ({_one_line(err)})", FIX_ENCODING) from err
    try:
        document = yaml.safe_load(decoded)
    except (yaml.YAMLError, ValueError, RecursionError) as err:  # ValueError: a timestamp like 2024-13-01
        raise refused(f"status.data that is not YAML or JSON once decoded ({_yaml_problem(err)})", FIX_ENCODING) from err
    if document is None:
        raise refused("an empty document, not a Task", FIX_NOT_A_TASK)
    if not isinstance(document, Mapping):
        raise refused(f"{_yaml_type(document)}, not a Task (a mapping with kind: Task)", FIX_NOT_A_TASK)
    if document.get("kind") != "Task":
        kind = document.get("kind")
        if not kind:
            raise refused("a document without a kind, not a Task", FIX_NOT_A_TASK)
        raise refused(f"a {_one_line(kind)}, not a Task" if isinstance(kind, str) else f"a document whose kind is {_yaml_type(kind)}, not a Task", FIX_NOT_A_TASK)
    spec = document.get("spec")
    if spec is not None and not isinstance(spec, Mapping):
        raise refused(f"a Task whose spec is {_yaml_type(spec)}, not a mapping", FIX_TASK_SPEC)
    return dict(document)


def resolved_task_spec(task_ref: Obj, requests: Iterable[Obj]) -> dict[str, Any] | None:
    """resolved_task_spec(taskRef, the run's requests) is the fetched Task's spec (v1), or None while it is not answered.

    Raises ResolutionFailed when the resolver failed, or answered with something
    that is not a Task. None also when no request matches yet: the scheduler's
    caches may deliver the run's pod before its requests.
    """
    request = request_for(task_ref, requests)
    if request is None:
        return None
    resolver = str(task_ref.get("resolver"))
    condition = _succeeded(request) or {}
    if condition.get("status") == "False":
        message = _one_line(condition.get("message") or condition.get("reason") or "no message")
        raise ResolutionFailed(RESOLUTION_FAILED_MESSAGE.format(resolver=resolver, message=message))
    if condition.get("status") != "True":
        return None
    meta = request.get("metadata") or {}
    namespace, name = meta.get("namespace"), meta.get("name")
    data = (request.get("status") or {}).get("data")
    if not data or not str(data).strip():  # absent, null, empty or blank
        raise ResolutionFailed(NO_ANSWER_MESSAGE.format(resolver=resolver, namespace=namespace, name=name))
    return task_spec_v1(decoded_task(str(data), resolver, f"ResolutionRequest {namespace}/{name}"))
