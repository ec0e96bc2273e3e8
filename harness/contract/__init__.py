"""contract: the ReservationRecord contract (docs/contract.md) as the suite reads it.

``Record.from_json`` turns a record from the API into checked, typed values;
``crd_manifest`` is the CustomResourceDefinition the harness installs.
"""

from harness.contract.record import (
    ACTIVE_LABEL,
    ACTIVE_SELECTOR,
    ACTIVE_VALUE,
    API_VERSION,
    CRD_NAME,
    GROUP,
    KIND,
    PLURAL,
    VERSION,
    Condition,
    ConditionStatus,
    ContractViolation,
    GroupSpec,
    GroupSpecJSON,
    GroupStatus,
    GroupStatusJSON,
    Record,
    RecordJSON,
    ReleaseReason,
    State,
    StatusJSON,
    crd_manifest,
    parse_quantity,
)

__all__ = [
    "ACTIVE_LABEL",
    "ACTIVE_SELECTOR",
    "ACTIVE_VALUE",
    "API_VERSION",
    "CRD_NAME",
    "GROUP",
    "KIND",
    "PLURAL",
    "VERSION",
    "Condition",
    "ConditionStatus",
    "ContractViolation",
    "GroupSpec",
    "GroupSpecJSON",
    "GroupStatus",
    "GroupStatusJSON",
    "Record",
    "RecordJSON",
    "ReleaseReason",
    "State",
    "StatusJSON",
    "crd_manifest",
    "parse_quantity",
]
