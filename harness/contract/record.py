"""record: the typed, validated view of a ReservationRecord, as the suite reads it.

A ReservationRecord (``reservationrecords.rescon.dev``, docs/contract.md) is
what a reservation scheduler publishes about one PipelineRun: its workspace
groups with their peaks (spec), and each group's claim (status). The suite
never trusts raw JSON: ``Record.from_json`` checks every rule of the contract
that one object can show and raises ``ContractViolation`` naming the field and
the fix. Rules that need history (claimGeneration only grows, Released is
final) are the CRD's CEL rules and the scenarios' business.

Example::

    record = Record.from_json(api.get_namespaced_custom_object(GROUP, VERSION, "ci", PLURAL, "run-1"))
    record.status_of("source").state is State.RESERVED
    record.group_of_task("build").peak_cpu_millis == 2000
    record.group_of_task("build").peak.get("example.com/gpu") == 1

Quantities are read into integers (millicores for cpu; bytes for memory,
ephemeral-storage and hugepages; counts for extended resources), rounded up
as the API server does, so the suite compares amounts, not spellings: "2",
"2000m" and "2e0" all say two CPUs.
"""

from __future__ import annotations

import enum
import functools
import importlib.resources
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_CEILING, Decimal
from typing import Any, Required, TypedDict, cast

import yaml

from harness.quantities import Amount
from harness.resource_names import CPU, MEMORY, is_counted

GROUP = "rescon.dev"
"""GROUP is the API group of ReservationRecord."""

VERSION = "v1alpha1"
"""VERSION is the only served (and storage) version."""

API_VERSION = f"{GROUP}/{VERSION}"
"""API_VERSION is a record's ``apiVersion``."""

PLURAL = "reservationrecords"
"""PLURAL is the resource name in API paths."""

KIND = "ReservationRecord"
"""KIND is a record's ``kind``."""

CRD_NAME = f"{PLURAL}.{GROUP}"
"""CRD_NAME is the CustomResourceDefinition's ``metadata.name``."""

ACTIVE_LABEL = "rescon.dev/active"
"""ACTIVE_LABEL is "true" on a record while any of its groups is Reserved; select with ``ACTIVE_SELECTOR``."""

ACTIVE_VALUE = "true"
"""ACTIVE_VALUE is the value of ACTIVE_LABEL on an active record; any other value, or none, means inactive."""

ACTIVE_SELECTOR = f"{ACTIVE_LABEL}={ACTIVE_VALUE}"
"""ACTIVE_SELECTOR is the label selector that lists the active records."""

SCHEDULER_ANNOTATION = "rescon.dev/scheduler-name"
"""SCHEDULER_ANNOTATION names the schedulerName that created the record (section 2, Several schedulers)."""

PIPELINE_RUN_API_GROUP = "tekton.dev"
"""PIPELINE_RUN_API_GROUP is the API group of the PipelineRun a record's ownerReference names."""

CRD_FILE = "reservationrecord.crd.yaml"
"""CRD_FILE is the CRD manifest shipped in this package (see ``crd_manifest``)."""

QUANTITY_PATTERN = r"^([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][-+]?[0-9]+)?$"
"""QUANTITY_PATTERN is a non-negative Kubernetes quantity; the CRD's peak fields use the same pattern."""

DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
"""DNS_LABEL_PATTERN is an RFC 1123 label (at most 63 characters); group and task names follow it."""

DNS_LABEL_MAX = 63

_QUANTITY = re.compile(QUANTITY_PATTERN)
_DNS_LABEL = re.compile(DNS_LABEL_PATTERN)

_SUFFIXES: dict[str, Decimal] = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
}


class State(enum.StrEnum):
    """State is a group's reservation state, ``status.groups[].state``.

    Pending: no claim (never claimed, rolled back, or its node was lost).
    Reserved: the group's peak is held on ``node``. Released: final; nothing
    is held any more.

    Example: ``State("Reserved") is State.RESERVED``.
    """

    PENDING = "Pending"
    RESERVED = "Reserved"
    RELEASED = "Released"


class ReleaseReason(enum.StrEnum):
    """ReleaseReason is why a group was Released, ``status.groups[].releaseReason``.

    When several hold at the moment of release, any of them is conformant.

    Example: ``ReleaseReason.TASKS_DONE == "TasksDone"``.
    """

    TASKS_DONE = "TasksDone"
    """Every task of the group is done: succeeded, failed with no retry to come, or skipped."""
    PIPELINE_RUN_DONE = "PipelineRunDone"
    """The PipelineRun's Succeeded condition is True or False (for a reason not listed below)."""
    PIPELINE_RUN_CANCELLED = "PipelineRunCancelled"
    """The PipelineRun was cancelled (spec.status Cancelled, or CancelledRunFinally once no group task can run)."""
    PIPELINE_RUN_STOPPED = "PipelineRunStopped"
    """The PipelineRun was gracefully stopped (StoppedRunFinally) and no group task can run any more."""
    PIPELINE_RUN_TIMED_OUT = "PipelineRunTimedOut"
    """The PipelineRun ran out of time (timeouts.pipeline, or timeouts.tasks once no group task can run)."""
    PIPELINE_RUN_DELETED = "PipelineRunDeleted"
    """The PipelineRun is gone or being deleted."""


class ConditionStatus(enum.StrEnum):
    """ConditionStatus is a metav1.Condition's ``status``."""

    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


# Raw JSON, as the API returns it.


#: PeakJSON is ``spec.groups[].peak``: resource name -> Kubernetes quantity string; cpu and memory
#: always, any other resource only when its peak is non-zero.
PeakJSON = dict[str, str]


class GroupSpecJSON(TypedDict):
    """GroupSpecJSON is one ``spec.groups[]`` entry."""

    name: str
    tasks: list[str]
    workspaces: list[str]
    peak: PeakJSON


class PipelineRunRefJSON(TypedDict):
    """PipelineRunRefJSON is ``spec.pipelineRun``."""

    name: str
    uid: str


class SpecJSON(TypedDict):
    """SpecJSON is a record's ``spec``."""

    pipelineRun: PipelineRunRefJSON
    groups: list[GroupSpecJSON]


class GroupStatusJSON(TypedDict, total=False):
    """GroupStatusJSON is one ``status.groups[]`` entry."""

    name: Required[str]
    state: Required[str]
    node: str
    holders: list[str]
    claimGeneration: int
    reservedAt: str
    releasedAt: str
    releaseReason: str


class ConditionJSON(TypedDict, total=False):
    """ConditionJSON is a metav1.Condition."""

    type: Required[str]
    status: Required[str]
    reason: Required[str]
    message: Required[str]
    lastTransitionTime: Required[str]
    observedGeneration: int


class StatusJSON(TypedDict, total=False):
    """StatusJSON is a record's ``status``; every field is optional."""

    observedGeneration: int
    reservedGroups: int
    groups: list[GroupStatusJSON]
    conditions: list[ConditionJSON]


class OwnerReferenceJSON(TypedDict, total=False):
    """OwnerReferenceJSON is one ``metadata.ownerReferences[]`` entry."""

    apiVersion: Required[str]
    kind: Required[str]
    name: Required[str]
    uid: Required[str]
    controller: bool
    blockOwnerDeletion: bool


class MetadataJSON(TypedDict, total=False):
    """MetadataJSON is the part of ``metadata`` the contract speaks about."""

    name: Required[str]
    namespace: str
    uid: str
    resourceVersion: str
    generation: int
    creationTimestamp: str
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[OwnerReferenceJSON]


class RecordJSON(TypedDict, total=False):
    """RecordJSON is a whole ReservationRecord."""

    apiVersion: Required[str]
    kind: Required[str]
    metadata: Required[MetadataJSON]
    spec: Required[SpecJSON]
    status: StatusJSON


class ContractViolation(ValueError):
    """ContractViolation is a record that breaks the contract: one line naming the field and the fix.

    Example: ``ReservationRecord ci/run-1: status.groups[source].node: a Reserved
    group must name its node; fix: set node to the node the claim holds``.
    """

    def __init__(self, field: str, problem: str, fix: str, *, record: str = "") -> None:
        self.field = field
        self.problem = problem
        self.fix = fix
        self.record = record
        where = f"ReservationRecord {record}: " if record else ""
        message = f"{where}{field}: {problem}; fix: {fix}"
        super().__init__(" ".join(message.split()))


@dataclass(frozen=True)
class GroupSpec:
    """GroupSpec is one workspace group as the scheduler declared it: tasks, workspaces and peak.

    Example: ``GroupSpec("source", ("build", "clone"), ("source",), 2000, 2684354560)``
    is a group whose tasks may together request at most 2 CPUs and 2560Mi at
    once; ``peak_others=(("example.com/gpu", 1),)`` adds one GPU. ``peak`` is
    all of it as one Amount.
    """

    name: str
    tasks: tuple[str, ...]
    workspaces: tuple[str, ...]
    peak_cpu_millis: int
    peak_memory_bytes: int
    #: Every other resource of the peak, non-zero, sorted as Amount sorts them (harness.quantities.Amount.others).
    peak_others: tuple[tuple[str, int], ...] = ()

    @property
    def peak(self) -> Amount:
        """peak is the whole peak: peak.get('example.com/gpu') is the GPUs the group holds, 0 for a resource it does not name."""
        return Amount(self.peak_cpu_millis, self.peak_memory_bytes, self.peak_others)


@dataclass(frozen=True)
class GroupStatus:
    """GroupStatus is one group's claim, from ``status.groups[]``.

    A group the status does not mention yet reads as Pending with
    claim_generation 0 (``published`` False), as the contract says.

    Example: ``GroupStatus("source", State.RESERVED, node="n1", holders=("uid-1",),
    claim_generation=1, reserved_at=...)``.
    """

    name: str
    state: State
    node: str | None = None
    holders: tuple[str, ...] = ()
    claim_generation: int = 0
    reserved_at: datetime | None = None
    released_at: datetime | None = None
    release_reason: ReleaseReason | None = None
    published: bool = True


@dataclass(frozen=True)
class Condition:
    """Condition is one ``status.conditions[]`` entry (metav1.Condition)."""

    type: str
    status: ConditionStatus
    reason: str
    message: str
    last_transition_time: datetime
    observed_generation: int | None = None


@dataclass(frozen=True)
class Record:
    """Record is a validated ReservationRecord: one PipelineRun's groups and their claims.

    ``statuses`` has one entry per spec group, in spec order.

    Example: ``Record.from_json(obj).status_of("reports").node == "kwok-node-2"``.
    """

    namespace: str
    name: str
    pipeline_run: str
    pipeline_run_uid: str
    groups: tuple[GroupSpec, ...]
    statuses: tuple[GroupStatus, ...]
    active_label: bool
    resource_version: str | None = None
    generation: int | None = None
    observed_generation: int | None = None
    conditions: tuple[Condition, ...] = ()
    #: The value of SCHEDULER_ANNOTATION, None when the record carries none.
    scheduler_name: str | None = None

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Record:
        """from_json validates a record read from the API and returns its typed view.

        Raises ContractViolation for the first rule the object breaks.
        """
        return _parse_record(obj)

    @property
    def key(self) -> str:
        """key is "namespace/name", as messages name the record."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def group(self, name: str) -> GroupSpec:
        """group returns the spec group called name; KeyError if there is none."""
        for group in self.groups:
            if group.name == name:
                return group
        raise KeyError(
            f"ReservationRecord {self.key} has no group {name!r}; its groups are {[g.name for g in self.groups]}"
        )

    def status_of(self, name: str) -> GroupStatus:
        """status_of returns the claim of the group called name (Pending if unpublished); KeyError if no such group."""
        for status in self.statuses:
            if status.name == name:
                return status
        raise KeyError(
            f"ReservationRecord {self.key} has no group {name!r}; its groups are {[g.name for g in self.groups]}"
        )

    def group_of_task(self, task: str) -> GroupSpec | None:
        """group_of_task returns the group a pipeline task belongs to, None for a task in no group."""
        for group in self.groups:
            if task in group.tasks:
                return group
        return None

    @property
    def reserved(self) -> tuple[GroupStatus, ...]:
        """reserved is the claims in state Reserved."""
        return tuple(status for status in self.statuses if status.state is State.RESERVED)

    @property
    def is_active(self) -> bool:
        """is_active: some group is Reserved, so ACTIVE_LABEL should be "true"."""
        return bool(self.reserved)

    @property
    def label_agrees(self) -> bool:
        """label_agrees: ACTIVE_LABEL says what the status says.

        The label is written apart from the status, so the two may disagree
        for a moment; the suite waits for them to agree, never fails at once.
        """
        return self.active_label == self.is_active


def crd_manifest() -> dict[str, Any]:
    """crd_manifest is the ReservationRecord CustomResourceDefinition shipped with the harness, as a fresh dict.

    Example: ``crd_manifest()["metadata"]["name"] == CRD_NAME``.
    """
    return cast(dict[str, Any], yaml.safe_load(_crd_text()))


@functools.cache
def _crd_text() -> str:
    return importlib.resources.files("harness.contract").joinpath(CRD_FILE).read_text(encoding="utf-8")


def parse_quantity(value: str) -> Decimal:
    """parse_quantity reads a non-negative Kubernetes quantity; ValueError if it is not one.

    Example: ``parse_quantity("1.5") == Decimal("1.5")``, ``parse_quantity("2Ki") == 2048``.
    """
    match = _QUANTITY.fullmatch(value)
    if match is None:
        raise ValueError(f"{value!r} is not a non-negative Kubernetes quantity")
    number, suffix = match.group(1), match.group(3) or ""
    try:
        if suffix in _SUFFIXES:  # "E" alone is exa and "Ei" exbi; "E3" is an exponent
            return Decimal(number) * _SUFFIXES[suffix]
        return Decimal(number) * Decimal(10) ** int(suffix[1:])
    except ArithmeticError:
        raise ValueError(f"{value!r} is out of range for a Kubernetes quantity") from None


def _ceil(amount: Decimal) -> int:
    return int(amount.to_integral_value(rounding=ROUND_CEILING))


# Validation. Each helper raises ContractViolation with the record's key.


class _Checker:
    def __init__(self, record: str) -> None:
        self.record = record

    def fail(self, field: str, problem: str, fix: str) -> ContractViolation:
        return ContractViolation(field, problem, fix, record=self.record)

    def mapping(
        self, obj: Mapping[str, Any], key: str, field: str, *, required: bool = True
    ) -> Mapping[str, Any] | None:
        value = obj.get(key)
        if value is None:
            if required:
                raise self.fail(field, "is missing", f"set {field}")
            return None
        if not isinstance(value, Mapping):
            raise self.fail(field, f"must be an object, got {type(value).__name__}", f"write {field} as an object")
        return value

    def string(self, obj: Mapping[str, Any], key: str, field: str, *, required: bool = True) -> str | None:
        value = obj.get(key)
        if value is None or value == "":
            if required:
                raise self.fail(field, "is missing or empty", f"set {field}")
            return None
        if not isinstance(value, str):
            raise self.fail(field, f"must be a string, got {value!r}", f"write {field} as a string")
        return value

    def integer(self, obj: Mapping[str, Any], key: str, field: str) -> int | None:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(field, f"must be an integer, got {value!r}", f"write {field} as a JSON integer")
        if value < 0:
            raise self.fail(field, f"must not be negative, got {value}", f"write {field} as 0 or more")
        return value

    def strings(self, obj: Mapping[str, Any], key: str, field: str, *, min_items: int, label: bool) -> tuple[str, ...]:
        value = obj.get(key)
        if value is None:
            value = []
        if not isinstance(value, Sequence) or isinstance(value, str):
            raise self.fail(field, f"must be a list of strings, got {value!r}", f"write {field} as a list")
        items: list[str] = []
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item:
                raise self.fail(
                    f"{field}[{index}]", f"must be a non-empty string, got {item!r}", "remove it or name it"
                )
            if label:
                self.label(item, f"{field}[{index}]")
            if item in items:
                raise self.fail(field, f"lists {item!r} twice", "list each entry once")
            items.append(item)
        if len(items) < min_items:
            raise self.fail(field, f"needs at least {min_items} entries, has {len(items)}", f"fill in {field}")
        return tuple(items)

    def label(self, value: str, field: str) -> None:
        if len(value) > DNS_LABEL_MAX or not _DNS_LABEL.fullmatch(value):
            raise self.fail(
                field,
                f"{value!r} is not a DNS-1123 label",
                "use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit",
            )

    def quantity(self, obj: Mapping[str, Any], key: str, field: str) -> Decimal:
        value = self.string(obj, key, field)
        assert value is not None
        try:
            return parse_quantity(value)
        except ValueError as err:
            raise self.fail(
                field,
                str(err),
                "write a quantity string such as '500m', '2', '1Gi' or '268435456'",
            ) from None

    def timestamp(self, obj: Mapping[str, Any], key: str, field: str) -> datetime | None:
        value = self.string(obj, key, field, required=False)
        if value is None:
            return None
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None or "T" not in value:
            raise self.fail(
                field, f"{value!r} is not an RFC 3339 date-time", "write a UTC time such as '2026-11-30T10:00:04Z'"
            )
        return moment

    def items(self, obj: Mapping[str, Any], key: str, field: str) -> list[Mapping[str, Any]]:
        value = obj.get(key)
        if value is None:
            return []
        if not isinstance(value, Sequence) or isinstance(value, str):
            raise self.fail(field, f"must be a list, got {type(value).__name__}", f"write {field} as a list of objects")
        for index, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise self.fail(
                    f"{field}[{index}]", f"must be an object, got {item!r}", "write each entry as an object"
                )
        return list(value)


def _parse_record(obj: Mapping[str, Any]) -> Record:
    if not isinstance(obj, Mapping):
        raise ContractViolation(
            "(record)", f"must be a JSON object, got {type(obj).__name__}", "pass the object the API returned"
        )
    metadata = obj.get("metadata")
    meta: Mapping[str, Any] = metadata if isinstance(metadata, Mapping) else {}
    name_value, namespace_value = meta.get("name"), meta.get("namespace")
    key = "/".join(str(part) for part in (namespace_value, name_value) if part)
    check = _Checker(key or "(unnamed)")

    if obj.get("apiVersion") != API_VERSION or obj.get("kind") != KIND:
        raise check.fail(
            "apiVersion/kind",
            f"is {obj.get('apiVersion')!r}/{obj.get('kind')!r}",
            f"use apiVersion {API_VERSION} and kind {KIND}",
        )
    metadata_checked = check.mapping(obj, "metadata", "metadata")
    assert metadata_checked is not None
    name = check.string(metadata_checked, "name", "metadata.name")
    assert name is not None
    namespace = check.string(metadata_checked, "namespace", "metadata.namespace", required=False) or ""

    spec = check.mapping(obj, "spec", "spec")
    assert spec is not None
    run = check.mapping(spec, "pipelineRun", "spec.pipelineRun")
    assert run is not None
    run_name = check.string(run, "name", "spec.pipelineRun.name")
    run_uid = check.string(run, "uid", "spec.pipelineRun.uid")
    assert run_name is not None and run_uid is not None
    if name != run_name:
        raise check.fail(
            "metadata.name",
            f"is {name!r} but spec.pipelineRun.name is {run_name!r}",
            "name the record after its PipelineRun (one record per PipelineRun)",
        )
    _check_owner(check, metadata_checked, run_name, run_uid)
    labels = check.mapping(metadata_checked, "labels", "metadata.labels", required=False) or {}
    active_label = labels.get(ACTIVE_LABEL) == ACTIVE_VALUE
    annotations = check.mapping(metadata_checked, "annotations", "metadata.annotations", required=False) or {}
    scheduler_name = annotations.get(SCHEDULER_ANNOTATION)

    if "groups" not in spec:
        raise check.fail(
            "spec.groups", "is missing", "list the PipelineRun's workspace groups (an empty list if it has none)"
        )
    groups = tuple(
        _parse_group_spec(check, item, index) for index, item in enumerate(check.items(spec, "groups", "spec.groups"))
    )
    _check_disjoint(check, groups)

    status = check.mapping(obj, "status", "status", required=False) or {}
    statuses = _parse_statuses(check, status, groups)
    reserved_groups = check.integer(status, "reservedGroups", "status.reservedGroups")
    reserved_now = sum(1 for entry in statuses if entry.state is State.RESERVED)
    if reserved_groups is not None and reserved_groups != reserved_now:
        raise check.fail(
            "status.reservedGroups",
            f"is {reserved_groups} but {reserved_now} groups are Reserved",
            "write it in the same status update as the groups, or leave it out",
        )
    conditions = tuple(
        _parse_condition(check, item, index)
        for index, item in enumerate(check.items(status, "conditions", "status.conditions"))
    )

    resource_version = meta.get("resourceVersion")
    return Record(
        namespace=namespace,
        name=name,
        pipeline_run=run_name,
        pipeline_run_uid=run_uid,
        groups=groups,
        statuses=statuses,
        active_label=active_label,
        resource_version=resource_version if isinstance(resource_version, str) else None,
        generation=check.integer(metadata_checked, "generation", "metadata.generation"),
        observed_generation=check.integer(status, "observedGeneration", "status.observedGeneration"),
        conditions=conditions,
        scheduler_name=scheduler_name if isinstance(scheduler_name, str) else None,
    )


def _check_owner(check: _Checker, metadata: Mapping[str, Any], run_name: str, run_uid: str) -> None:
    for ref in check.items(metadata, "ownerReferences", "metadata.ownerReferences"):
        api_version = ref.get("apiVersion")
        if (
            ref.get("kind") == "PipelineRun"
            and isinstance(api_version, str)
            and api_version.split("/")[0] == PIPELINE_RUN_API_GROUP
            and ref.get("uid") == run_uid
        ):
            if ref.get("controller") is not True or ref.get("name") != run_name:
                raise check.fail(
                    "metadata.ownerReferences",
                    f"the PipelineRun reference must have name {run_name!r} and controller: true",
                    "set name to the PipelineRun's name and controller: true",
                )
            return
    raise check.fail(
        "metadata.ownerReferences",
        f"has no reference to PipelineRun {run_name} (uid {run_uid})",
        "add an ownerReference {apiVersion: tekton.dev/v1, kind: PipelineRun, name, uid, controller: true}"
        " so the record is garbage-collected with its PipelineRun",
    )


def _parse_group_spec(check: _Checker, item: Mapping[str, Any], index: int) -> GroupSpec:
    name = check.string(item, "name", f"spec.groups[{index}].name")
    assert name is not None
    check.label(name, f"spec.groups[{index}].name")
    field = f"spec.groups[{name}]"
    tasks = check.strings(item, "tasks", f"{field}.tasks", min_items=1, label=True)
    workspaces = check.strings(item, "workspaces", f"{field}.workspaces", min_items=1, label=False)
    peak = check.mapping(item, "peak", f"{field}.peak")
    assert peak is not None
    amounts = {resource: _peak_amount(check, peak, resource, f"{field}.peak") for resource in (CPU, MEMORY, *peak)}
    whole = Amount.of(amounts)
    return GroupSpec(name, tasks, workspaces, whole.cpu, whole.memory, whole.others)


def _peak_amount(check: _Checker, peak: Mapping[str, Any], resource: str, field: str) -> int:
    """_peak_amount() reads one resource of a peak: millicores for cpu, else the value rounded up; it checks the name and that others are non-zero."""
    where = f"{field}[{resource}]" if "/" in resource or "." in resource else f"{field}.{resource}"
    if not is_counted(resource):
        raise check.fail(
            where,
            f"names {resource!r}, which is no resource a pod's request is held against",
            "use cpu, memory, ephemeral-storage, hugepages-<size> or an extended resource name containing '/'",
        )
    amount = check.quantity(peak, resource, where)
    units = _ceil(amount * 1000) if resource == CPU else _ceil(amount)
    if units == 0 and resource not in (CPU, MEMORY):
        raise check.fail(where, "is 0", f"leave {resource} out of the peak: only cpu and memory are written when zero")
    return units


def _check_disjoint(check: _Checker, groups: tuple[GroupSpec, ...]) -> None:
    group_of_name: set[str] = set()
    group_of_task: dict[str, str] = {}
    group_of_workspace: dict[str, str] = {}
    for group in groups:
        if group.name in group_of_name:
            raise check.fail("spec.groups", f"names group {group.name!r} twice", "give each group its own name")
        group_of_name.add(group.name)
        for task in group.tasks:
            other = group_of_task.setdefault(task, group.name)
            if other != group.name:
                raise check.fail(
                    f"spec.groups[{group.name}].tasks",
                    f"task {task!r} is also in group {other!r}",
                    "merge the groups: tasks linked by a workspace are one group",
                )
        for workspace in group.workspaces:
            other = group_of_workspace.setdefault(workspace, group.name)
            if other != group.name:
                raise check.fail(
                    f"spec.groups[{group.name}].workspaces",
                    f"workspace {workspace!r} is also in group {other!r}",
                    "merge the groups: tasks that share a workspace are one group",
                )


def _parse_statuses(
    check: _Checker, status: Mapping[str, Any], groups: tuple[GroupSpec, ...]
) -> tuple[GroupStatus, ...]:
    spec_names = [group.name for group in groups]
    published: dict[str, GroupStatus] = {}
    for index, item in enumerate(check.items(status, "groups", "status.groups")):
        entry = _parse_group_status(check, item, index)
        if entry.name not in spec_names:
            raise check.fail(
                f"status.groups[{entry.name}]",
                f"names no group of spec.groups {spec_names}",
                "write status only for the groups declared in spec",
            )
        if entry.name in published:
            raise check.fail("status.groups", f"has group {entry.name!r} twice", "keep one entry per group")
        published[entry.name] = entry
    return tuple(published.get(name) or GroupStatus(name, State.PENDING, published=False) for name in spec_names)


def _parse_group_status(check: _Checker, item: Mapping[str, Any], index: int) -> GroupStatus:
    name = check.string(item, "name", f"status.groups[{index}].name")
    assert name is not None
    field = f"status.groups[{name}]"
    raw_state = item.get("state")
    try:
        state = State(raw_state if isinstance(raw_state, str) else "")
    except ValueError:
        raise check.fail(
            f"{field}.state", f"is {raw_state!r}", f"use one of {', '.join(s.value for s in State)}"
        ) from None
    node = check.string(item, "node", f"{field}.node", required=False)
    holders = check.strings(item, "holders", f"{field}.holders", min_items=0, label=False)
    generation = check.integer(item, "claimGeneration", f"{field}.claimGeneration") or 0
    reserved_at = check.timestamp(item, "reservedAt", f"{field}.reservedAt")
    released_at = check.timestamp(item, "releasedAt", f"{field}.releasedAt")
    raw_reason = item.get("releaseReason")
    reason: ReleaseReason | None = None
    if raw_reason is not None:
        try:
            reason = ReleaseReason(raw_reason if isinstance(raw_reason, str) else "")
        except ValueError:
            raise check.fail(
                f"{field}.releaseReason",
                f"is {raw_reason!r}",
                f"use one of {', '.join(r.value for r in ReleaseReason)}",
            ) from None

    if state is State.RESERVED:
        if node is None:
            raise check.fail(
                f"{field}.node", "a Reserved group must name its node", "set node to the node the claim holds"
            )
        if generation < 1:
            raise check.fail(
                f"{field}.claimGeneration",
                "a Reserved group has claimGeneration 1 or more",
                "add one to claimGeneration when making a claim",
            )
        if reserved_at is None:
            raise check.fail(
                f"{field}.reservedAt",
                "a Reserved group must say when it was claimed",
                "set reservedAt when making the claim",
            )
    if state is State.PENDING:
        for present, what in (
            (node is not None, "node"),
            (bool(holders), "holders"),
            (reserved_at is not None, "reservedAt"),
        ):
            if present:
                raise check.fail(
                    f"{field}.{what}",
                    f"a Pending group has no {what}",
                    "clear node, holders and reservedAt when a claim is rolled back or its node is lost",
                )
    if state is State.RELEASED:
        if released_at is None or reason is None:
            missing = "releasedAt" if released_at is None else "releaseReason"
            raise check.fail(
                f"{field}.{missing}",
                "a Released group says when and why",
                "set releasedAt and releaseReason when releasing",
            )
    else:
        for present, what in ((released_at is not None, "releasedAt"), (reason is not None, "releaseReason")):
            if present:
                raise check.fail(
                    f"{field}.{what}",
                    f"only a Released group has {what}, this one is {state}",
                    f"remove {what} (a rollback or a lost node is not a release)",
                )
    return GroupStatus(name, state, node, holders, generation, reserved_at, released_at, reason)


def _parse_condition(check: _Checker, item: Mapping[str, Any], index: int) -> Condition:
    kind = check.string(item, "type", f"status.conditions[{index}].type")
    assert kind is not None
    field = f"status.conditions[{kind}]"
    raw_status = item.get("status")
    try:
        status = ConditionStatus(raw_status if isinstance(raw_status, str) else "")
    except ValueError:
        raise check.fail(f"{field}.status", f"is {raw_status!r}", "use True, False or Unknown") from None
    reason = check.string(item, "reason", f"{field}.reason")
    message = item.get("message", "")
    moment = check.timestamp(item, "lastTransitionTime", f"{field}.lastTransitionTime")
    if moment is None:
        raise check.fail(f"{field}.lastTransitionTime", "is missing", "set it when the condition's status changes")
    assert reason is not None
    return Condition(
        kind,
        status,
        reason,
        message if isinstance(message, str) else str(message),
        moment,
        check.integer(item, "observedGeneration", f"{field}.observedGeneration"),
    )
