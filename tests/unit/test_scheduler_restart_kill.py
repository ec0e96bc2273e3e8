"""SchedulerUnderTest.kill(): how the Restart scenario crashes each kind of scheduler under test."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.errors import HarnessError
from harness.suite.scheduler_under_test import SchedulerUnderTest

pytestmark = pytest.mark.unit


def external(selector: str | None) -> SchedulerUnderTest:
    return SchedulerUnderTest(mode="external", scheduler_name="s", kubeconfig=Path("k"), workdir=Path("w"), pod_selector=selector)


class FakeCore:
    def __init__(self, pods: list[Any]) -> None:
        self.pods = pods
        self.deleted: list[tuple[str, str, int]] = []

    def list_pod_for_all_namespaces(self, *, label_selector: str) -> Any:
        assert label_selector == "app=sched"
        return SimpleNamespace(items=self.pods)

    def delete_namespaced_pod(self, name: str, namespace: str, *, grace_period_seconds: int) -> None:
        self.deleted.append((name, namespace, grace_period_seconds))


def pod(name: str, uid: str) -> Any:
    return SimpleNamespace(metadata=SimpleNamespace(name=name, namespace="sched-system", uid=uid))


def test_an_external_scheduler_without_a_selector_names_the_fix() -> None:
    with pytest.raises(HarnessError, match="--scheduler-pod-selector"):
        external(None).kill(None)


def test_an_external_scheduler_loses_its_pods_without_grace() -> None:
    core = FakeCore([pod("sched-1", "u1"), pod("sched-2", "u2")])
    assert external("app=sched").kill(SimpleNamespace(core=core)) == ["u1", "u2"]  # type: ignore[arg-type]
    assert core.deleted == [("sched-1", "sched-system", 0), ("sched-2", "sched-system", 0)]


def test_a_selector_that_matches_nothing_names_the_fix() -> None:
    with pytest.raises(HarnessError, match="fix the selector"):
        external("app=sched").kill(SimpleNamespace(core=FakeCore([])))  # type: ignore[arg-type]
