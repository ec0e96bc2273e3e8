"""dedup: a violation that lasts is one line when it starts, one when it changes and one when it clears.

The auditor asks the state rules (room, split groups, claims, records against
their runs, the active label) again and again; what it prints is the
difference between two answers. A finding is identified by its rule and its
first object (the node of node-overcommitted, the first pod of a split group,
the record of groups-differ): the same rule on the same object is the same
violation. It *changes* when the set of objects involved changes (another pod
on the over-committed node, another pod off its claim's node); a message that
differs only in figures is not a change. It *clears* when the rule no longer
finds it. Transition rules (a claim that moved, a Released group that came
back) are events: one line each, never cleared.

    tracker = ViolationTracker()
    tracker.update([finding], at=t)   -> [AuditLine(change='started', ...)]
    tracker.update([finding], at=t)   -> []
    tracker.update([], at=t)          -> [AuditLine(change='cleared', ...)]
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable

from harness.monitor.invariants import Finding
from harness.monitor.room import NodeRoom


class Change(enum.StrEnum):
    """Change is what an audit line says about its violation."""

    STARTED = "started"
    CHANGED = "changed"
    CLEARED = "cleared"
    #: A transition rule broken once (a claim moved): nothing to clear.
    HAPPENED = "happened"


@dataclass(frozen=True)
class AuditLine:
    """AuditLine is one line of `rescon audit`'s output: when, which rule, what happened to the violation, what and which objects."""

    at: datetime
    rule: str
    change: Change
    message: str
    objects: tuple[str, ...] = ()
    #: The node's arithmetic of a room rule as it was judged for this line; None for other rules and for a cleared one.
    room: NodeRoom | None = None


def violation_key(finding: Finding) -> tuple[str, str]:
    """violation_key() is (rule, first object): violation_key(Finding('node-overcommitted', '...', ('node a', 'pod x/y'))) == ('node-overcommitted', 'node a')."""
    return finding.rule, finding.objects[0] if finding.objects else finding.message


@dataclass
class ViolationTracker:
    """ViolationTracker remembers the violations in force and turns each new answer of the rules into lines."""

    active: dict[tuple[str, str], Finding] = field(default_factory=dict)
    #: Lines printed per rule (started and happened): the summary's and the metrics' count.
    counts: dict[str, int] = field(default_factory=dict)

    def is_active(self, finding: Finding) -> bool:
        return violation_key(finding) in self.active

    def update(self, findings: Iterable[Finding], *, at: datetime) -> list[AuditLine]:
        """update() takes every state finding in force now and returns the lines: started, changed, then cleared."""
        current: dict[tuple[str, str], Finding] = {}
        for finding in findings:
            current.setdefault(violation_key(finding), finding)
        lines = []
        for key, finding in current.items():
            before = self.active.get(key)
            if before is None:
                lines.append(AuditLine(at, finding.rule, Change.STARTED, finding.message, finding.objects, finding.room))
                self.counts[finding.rule] = self.counts.get(finding.rule, 0) + 1
            elif set(before.objects) != set(finding.objects):
                lines.append(AuditLine(at, finding.rule, Change.CHANGED, finding.message, finding.objects, finding.room))
        for key, finding in self.active.items():
            if key not in current:
                lines.append(AuditLine(at, finding.rule, Change.CLEARED, f"no longer found: {finding.message}", finding.objects))
        self.active = current
        return lines

    def happened(self, findings: Iterable[Finding], *, at: datetime) -> list[AuditLine]:
        """happened() is one line per transition finding (each is an event of its own)."""
        lines = []
        for finding in findings:
            lines.append(AuditLine(at, finding.rule, Change.HAPPENED, finding.message, finding.objects, finding.room))
            self.counts[finding.rule] = self.counts.get(finding.rule, 0) + 1
        return lines

    def active_by_rule(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for rule, _ in self.active:
            found[rule] = found.get(rule, 0) + 1
        return found
