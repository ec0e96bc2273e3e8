"""Attachments: what a human needs to understand a scenario, added to the allure report.

The timeline picture, the contract monitor's violations with the arithmetic
of each node found over-committed, the rendered manifests, the objects' final
YAML, and the log tails of the scheduler under test and of Tekton. These are for reading
only: no check ever looks at them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Sequence

import allure

from harness import yaml_docs
from harness.cluster.processes import tail
from harness.kube import json_object, present
from harness.quantities import Amount, amount_of
from harness.report.timeline import NodeCapacity, TimelineRecorder
from harness.suite.room_notes import attach_room
from harness.suite.run import ScenarioRun

#: Lines of each log attached.
LOG_TAIL_LINES = 300


def _final_objects(scenario_run: ScenarioRun) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    custom = scenario_run.kube.custom
    for run in scenario_run.every_namespace():
        for plural in ("pipelineruns", "taskruns"):
            objects += json_object(custom.list_namespaced_custom_object("tekton.dev", "v1", run.namespace, plural)).get("items") or []
        objects += run.records()
        objects += run.pods()
    for obj in objects:
        (obj.get("metadata") or {}).pop("managedFields", None)
    return objects


def attach_scenario_artifacts(
    run: ScenarioRun, recorder: TimelineRecorder, cluster: Any, scheduler: Any, *, include_logs: bool, failed: bool,
    marks: Sequence[tuple[float, str]] = (),
) -> None:
    """attach_scenario_artifacts() never raises: a missing picture must not fail a scenario.

    `marks` are the contract monitor's violations (time on the timeline, rule), drawn as red lines.
    """
    try:
        _attach_timeline(run, recorder, marks)
    except Exception as err:  # noqa: BLE001
        allure.attach(f"timeline not rendered: {err}", "timeline (error)", allure.attachment_type.TEXT)
    if run.monitor is not None:
        lines = [v.describe() + (f"\n  objects: {', '.join(v.objects)}" if v.objects else "") for v in run.monitor.violations]
        summary = f"{run.monitor.events_seen} events observed, {run.monitor.confirmations} fresh reads to confirm a finding"
        allure.attach("\n".join(lines + [summary]) if lines else f"no violation; {summary}", "contract monitor", allure.attachment_type.TEXT)
        for violation in run.monitor.violations:
            if violation.room is not None:
                attach_room(violation.room, violation.when())
    for name, text in run.rendered.items():
        allure.attach(text, f"manifest {name}", allure.attachment_type.YAML)
    try:
        allure.attach(yaml_docs.dump_all(_final_objects(run)), "final objects", allure.attachment_type.YAML)
    except Exception as err:  # noqa: BLE001
        allure.attach(f"cannot read final objects: {err}", "final objects (error)", allure.attachment_type.TEXT)
    if include_logs:
        allure.attach(scheduler.log_tail(LOG_TAIL_LINES) or "(not started by the suite)", "scheduler log tail", allure.attachment_type.TEXT)
        if run.ran_replicas is not None:
            allure.attach(run.ran_replicas.log_tails(LOG_TAIL_LINES), "scheduler replicas' log tails", allure.attachment_type.TEXT)
        logs = cluster.logs_dir()
        if logs is not None:
            tekton_log = Path(logs) / "tekton-controller.log"
            allure.attach(tail(tekton_log, LOG_TAIL_LINES) or "(no log)", "tekton controller log tail", allure.attachment_type.TEXT)


def timeline_nodes(run: ScenarioRun) -> list[NodeCapacity]:
    """timeline_nodes() is each pool node's allocatable as the API reports it now, else the pool's size.

    A node the scenario deleted (NodeLoss) or that cannot be read is drawn
    with the size the pool was made with.
    """
    nodes = []
    for name in run.node_names:
        try:
            allocatable = amount_of(present(run.kube.core.read_node(name).status).allocatable)
        except Exception:  # noqa: BLE001 - the picture is for humans; a missing node is drawn at the pool's size
            allocatable = Amount(run.node_cpu_millis(), run.node_memory_bytes())
        nodes.append(NodeCapacity(name, allocatable.cpu, allocatable.memory, allocatable.others))
    return nodes


def _attach_timeline(run: ScenarioRun, recorder: TimelineRecorder, marks: Sequence[tuple[float, str]]) -> None:
    from harness.report.timeline import render_timeline

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "timeline.svg"
        render_timeline(
            recorder.intervals(), recorder.bands(), timeline_nodes(run), path,
            title=f"{run.scenario.name} ({run.namespace})", until=recorder.ended, marks=marks,
        )
        allure.attach.file(str(path), "timeline", allure.attachment_type.SVG)  # type: ignore[no-untyped-call]
