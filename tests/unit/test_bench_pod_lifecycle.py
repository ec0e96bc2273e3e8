"""bench.pod_lifecycle: a task pod's life, from recorded watch events, in steps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import pod_lifecycle

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
T0 = 1_800_000_000.0


def _stamp(offset: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(T0 + offset, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _terminated(started: float, finished: float) -> Obj:
    return {"terminated": {"startedAt": _stamp(started), "finishedAt": _stamp(finished)}}


def _line(t: float, *, node: str | None = "w1", kind: str = "MODIFIED", deleting: bool = False, namespace: str = "conf-a", name: str = "run-a-build-pod", **status: Any) -> Obj:
    return {"t": T0 + t, "type": kind, "namespace": namespace, "name": name, "uid": f"{namespace}/{name}", "node": node,
            "deleting": _stamp(t) if deleting else None, "status": status}


def _task_pod() -> list[Obj]:
    """A Tekton pod: made at 0, bound at 2, init containers 3-3 and 5-5, its step 6-9, Succeeded seen at 11, deleted at 20."""
    inits = [{"name": "prepare", "state": _terminated(3, 3)}, {"name": "place-scripts", "state": _terminated(5, 5)}]
    return [
        _line(0, node=None, kind="ADDED", phase="Pending"),
        _line(2, phase="Pending", conditions=[{"type": "PodScheduled", "status": "True"}]),
        _line(6.5, phase="Running", initContainerStatuses=inits, containerStatuses=[{"name": "step-work", "state": {"running": {"startedAt": _stamp(6)}}}]),
        _line(11, phase="Succeeded", initContainerStatuses=inits, containerStatuses=[{"name": "step-work", "state": _terminated(6, 9)}]),
        _line(20, phase="Succeeded", deleting=True, initContainerStatuses=inits),
        _line(20.1, kind="DELETED", phase="Succeeded", deleting=True, initContainerStatuses=inits),
    ]


def test_a_task_pods_life_is_told_in_steps() -> None:
    (life,) = pod_lifecycle.lives(_task_pod())
    assert pod_lifecycle.task_pod_spans(life) == {
        "created -> bound": 2.0,
        "bound -> first init container started (kubelet)": 1.0,
        "init container ended -> the next started (kubelet)": 2.0,
        "last init container ended -> first step started (kubelet)": 1.0,
        "bound -> Running seen": 4.5,
        "last step ended (kubelet) -> Succeeded seen": 2.0,
        "Succeeded seen -> deletion asked": 9.0,
    }


def test_a_native_sidecar_that_ends_after_the_steps_is_not_the_last_init_container_before_them() -> None:
    lines = _task_pod()
    sidecar = {"name": "sidecar-helper", "state": _terminated(5, 40)}
    lines.append(_line(41, phase="Succeeded", initContainerStatuses=[*lines[2]["status"]["initContainerStatuses"], sidecar]))
    (life,) = pod_lifecycle.lives(lines)
    assert pod_lifecycle.task_pod_spans(life)["last init container ended -> first step started (kubelet)"] == 1.0


def test_a_pod_that_never_ran_has_no_figure_for_what_it_never_reached() -> None:
    (life,) = pod_lifecycle.lives(_task_pod()[:2])
    spans = pod_lifecycle.task_pod_spans(life)
    assert spans["created -> bound"] == 2.0
    assert spans["bound -> Running seen"] is None and spans["last step ended (kubelet) -> Succeeded seen"] is None


def test_the_report_counts_task_pods_and_helper_pods_apart_and_leaves_the_system_out(tmp_path: Path) -> None:
    helper = [
        _line(0, kind="ADDED", namespace="local-path-storage", name="helper-pod-create-pvc-1", phase="Pending"),
        _line(3, namespace="local-path-storage", name="helper-pod-create-pvc-1", phase="Succeeded"),
        _line(5, kind="DELETED", deleting=True, namespace="local-path-storage", name="helper-pod-create-pvc-1", phase="Succeeded"),
    ]
    system = [_line(0, kind="ADDED", namespace="kube-system", name="coredns", phase="Running",
                    initContainerStatuses=[{"name": "x", "state": _terminated(0, 1)}])]
    text = pod_lifecycle.report([*_task_pod(), *helper, *system])
    assert "| created -> bound | 1 | 2.00 | 2.00 | 2.00 | 2 |" in text
    assert "| created -> deleted | 1 | 5.00 | 5.00 | 5.00 | 5 |" in text
    recorded = tmp_path / "pods.jsonl"
    recorded.write_text("".join(json.dumps(line) + "\n" for line in [*_task_pod(), *helper]))
    assert pod_lifecycle.main(["report", str(recorded)]) == 0


def test_an_unreadable_file_is_one_line_that_names_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "pods.jsonl"
    broken.write_text("not json\n")
    assert pod_lifecycle.main(["report", str(broken)]) == 2
    assert capsys.readouterr().err.strip().endswith("give a file `record` wrote")


def test_an_event_line_keeps_what_the_report_reads() -> None:
    event = {"type": "ADDED", "object": {"metadata": {"namespace": "n", "name": "p", "uid": "u", "deletionTimestamp": None},
                                         "spec": {"nodeName": "w1"}, "status": {"phase": "Pending"}}}
    assert pod_lifecycle.event_line(event, 12.5) == {
        "t": 12.5, "type": "ADDED", "namespace": "n", "name": "p", "uid": "u", "node": "w1", "deleting": None, "status": {"phase": "Pending"},
    }
