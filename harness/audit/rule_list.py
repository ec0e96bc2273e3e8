"""rule_list: every rule of the contract monitor, and how `rescon audit` runs it without a scenario around it.

A scenario knows its namespace, its node pool, its scheduler and when it
started; a live cluster gives none of that. Each rule here says what the
auditor does instead: judged as in the suite, derived from the live objects,
or narrowed to what a live watch can see, and why. The names are the suite's (harness.monitor.invariants).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from harness.monitor import invariants as rules


class Mode(enum.StrEnum):
    """Mode is how the auditor runs a rule."""

    #: A state rule, asked again after every batch of events: reported when it starts, changes and clears.
    STATE = "state"
    #: A transition rule, asked on each change of a record: one line per break.
    TRANSITION = "transition"


@dataclass(frozen=True)
class AuditedRule:
    """AuditedRule is one rule as the auditor runs it: its name, its mode, and how it does without a scenario."""

    name: str
    mode: Mode
    without_scenario: str


AUDITED_RULES: tuple[AuditedRule, ...] = (
    AuditedRule(rules.NODE_OVERCOMMITTED, Mode.STATE,
                "judged on a node when a pod of --scheduler-name binds there or a group of its records is claimed there, and from then on "
                "until it clears; every pod on the node counts, and the residuals of every Reserved group (all schedulers' records)"),
    AuditedRule(rules.GROUP_SPLIT, Mode.STATE,
                "the groups are derived from each live PipelineRun whose pods use --scheduler-name (status.pipelineSpec, as in the suite)"),
    AuditedRule(rules.POD_VOLUME_NODE_CONFLICT, Mode.TRANSITION,
                "at each bind of --scheduler-name seen live (in --namespace, when given): the pod's claims and the PersistentVolumes of "
                "the Bound ones are read (get) right after, and their node affinity matched against the node's labels as watched"),
    AuditedRule(rules.POD_BOUND_BEFORE_CLAIM, Mode.TRANSITION,
                "at each bind of --scheduler-name seen live: the pod's claims are read (get) right after; a claim only ever becomes "
                "Bound, so one not Bound then was not at the bind; a claim gone (404) or Lost is not judged"),
    AuditedRule(rules.POD_OFF_CLAIM_NODE, Mode.STATE, "records of --scheduler-name's PipelineRuns (or annotated with its name)"),
    AuditedRule(rules.BOUND_POD_NOT_HOLDER, Mode.STATE, "records of --scheduler-name's PipelineRuns (or annotated with its name)"),
    AuditedRule(rules.GROUP_VOLUME_NODE_CONFLICT, Mode.TRANSITION,
                "when a group of a judged record is seen going Reserved, and at each bind of one of its pods: the group's claims (its "
                "PipelineRun's persistentVolumeClaim workspaces, its bound pods' non-ephemeral claims) and their volumes are read, then the record (get)"),
    AuditedRule(rules.RECORD_AFTER_BIND, Mode.TRANSITION,
                "by etcd's order only: a group pod whose bind the auditor saw is older than its record's creation, also seen; "
                "a record that never comes is not reported (the suite confirms that absence at the bind, in a scenario it controls)"),
    AuditedRule(rules.CLAIM_CHANGED_NODE, Mode.TRANSITION, "between two states of a record seen by one watch (not across a relist)"),
    AuditedRule(rules.CLAIM_GENERATION_STEP, Mode.TRANSITION, "between two states of a record seen by one watch (not across a relist)"),
    AuditedRule(rules.RELEASED_NOT_FINAL, Mode.TRANSITION, "between two states of a record seen by one watch (not across a relist)"),
    AuditedRule(rules.CLAIM_REWRITTEN, Mode.TRANSITION, "between two states of a record seen by one watch (not across a relist)"),
    AuditedRule(rules.SPEC_CHANGED, Mode.TRANSITION, "between two states of a record seen by one watch (not across a relist)"),
    AuditedRule(rules.RECORD_INVALID, Mode.STATE, "every record in scope, whoever wrote it: in force until it is valid or deleted"),
    AuditedRule(rules.GROUPS_DIFFER, Mode.STATE, "the expected groups are derived from the live PipelineRun, once Tekton has resolved its plan"),
    AuditedRule(rules.RECORD_WRONG_RUN, Mode.STATE, "a record against the live PipelineRun of its name"),
    AuditedRule(rules.SCHEDULER_NAME_MISSING, Mode.STATE, "records of PipelineRuns whose pods use --scheduler-name"),
    AuditedRule(rules.ACTIVE_LABEL_DIVERGED, Mode.STATE,
                "a label that disagrees with the status for longer than label_converges (5 s) since the auditor saw it disagree"),
    AuditedRule(rules.RELEASE_REASON_UNTRUE, Mode.TRANSITION,
                "on a group seen going Released, the PipelineRun and its TaskRuns are read (get/list) to learn which reasons were true"),
    AuditedRule(rules.RELEASE_LATE, Mode.STATE,
                "a judged record's group Reserved longer than release_late (15 s) after the auditor's read of its PipelineRun and TaskRuns "
                "(get/list; one run every 0.25 s at most, each every 2 s, only while its watched PipelineRun says a release may be due) "
                "first showed the release due, and still Reserved in a fresh read (get) of the record; a release due before the auditor "
                "started counts from its first read"),
)

#: The rule names, in the order above.
RULE_NAMES: tuple[str, ...] = tuple(r.name for r in AUDITED_RULES)


def describe_rules() -> list[str]:
    """describe_rules() is `rescon audit --list-rules`: one line per rule, name, mode, how it does without a scenario."""
    width = max(len(r.name) for r in AUDITED_RULES)
    return [f"{r.name:<{width}}  {r.mode.value:<10}  {r.without_scenario}" for r in AUDITED_RULES]
