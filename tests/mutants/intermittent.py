"""Intermittent faults: mutants that break the contract on some attempts only, to exercise flaky verdicts.

A catalogue mutant (tests/mutants/faults.py) is wrong every time, so its
scenario fails every time. `--rerun-failures N` (issue #36) has to tell a
scheduler that is wrong on some attempts from one that is always wrong, and
these mutants are what it is shown against. They stay out of MUTANTS: the kill
table asks each mutant to be killed on every run, which an intermittent fault
is built not to be.

Each fault alternates by namespace, in the order the scheduler first plans a
run in it: the first, third, ... namespace gets the fault, the second, fourth,
... do not. A scenario runs each attempt in a namespace of its own and the
suite keeps one scheduler process for the session, so its first attempt meets
the fault and its rerun does not, on every run: a flaky verdict that does not
depend on a race.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

from .faults import Mutant, largest_task_peak


class NamespaceAlternation:
    """NamespaceAlternation answers, per namespace, whether its ordinal (1-based, by first sight) is odd."""

    def __init__(self) -> None:
        self._ordinals: dict[str, int] = {}
        self._lock = threading.Lock()

    def faulty(self, namespace: str) -> bool:
        with self._lock:
            ordinal = self._ordinals.setdefault(namespace, len(self._ordinals) + 1)
        return ordinal % 2 == 1


def _namespace_of(pipeline_run: Any) -> str:
    return str(((pipeline_run or {}).get("metadata") or {}).get("namespace") or "")


def max_peak_in_alternate_namespaces(plan: Callable[..., Any], alternation: NamespaceAlternation) -> Callable[..., Any]:
    """max_peak_in_alternate_namespaces wraps plan_pipeline_run: in a faulty namespace a group's peak is its largest task."""
    from reference_scheduler.core import partition

    true_peak = partition.group_peak

    @functools.wraps(plan)
    def planned(pipeline_run: Any, *args: Any, **kwargs: Any) -> Any:
        # The cycle plans on one thread; the swap is undone before the next plan reads it.
        partition.group_peak = largest_task_peak if alternation.faulty(_namespace_of(pipeline_run)) else true_peak
        try:
            return plan(pipeline_run, *args, **kwargs)
        finally:
            partition.group_peak = true_peak

    return planned


def apply_max_peak_every_other_namespace() -> None:
    from reference_scheduler.runtime import cycle

    cycle.plan_pipeline_run = max_peak_in_alternate_namespaces(cycle.plan_pipeline_run, NamespaceAlternation())


INTERMITTENT: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant(
            "max_peak_every_other_namespace",
            "in the first, third, ... namespace it plans a run in, a group's peak is its largest task (max_peak); elsewhere it is right",
            "parallel_peak",
            apply_max_peak_every_other_namespace,
            "6.concurrent_sum",
        ),
    )
}
