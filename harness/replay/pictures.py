"""pictures: each replayed run's timeline, drawn as the scenarios' are (harness.report.timeline).

A round is sampled as a whole (its namespace's pods and records, every
SAMPLE_SECONDS, on a thread of its own); each run is drawn from its own pods
and its record's bands, on every node of the pool, with the contract
monitor's violations that name it as red lines.

    with RoundPictures(kube, namespace, nodes) as pictures:
        ...                                       # the round runs
    paths = pictures.render(["go-ci-main-c1", ...], out_dir, marks={"go-ci-main-c1": [(12.4, "node-overcommitted")]})
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Mapping, Sequence

from harness.contract import record as contract
from harness.kube import Kube, decoded, json_object
from harness.monitor.invariants import PIPELINE_RUN_LABEL
from harness.replay.nodes import NodeSpec
from harness.report.timeline import NodeCapacity, render_timeline
from harness.report.timeline_sampler import Obj, TimelineSampler

log = logging.getLogger("rescon.replay")

#: How often the round's pods and records are read for the pictures.
SAMPLE_SECONDS = 1.0


class RoundPictures(TimelineSampler):
    """RoundPictures samples one round's pods and records into a timeline, and draws each run's part of it."""

    def __init__(self, kube: Kube, namespace: str, nodes: Sequence[NodeCapacity]) -> None:
        super().__init__(seconds=SAMPLE_SECONDS, name="replay-pictures")
        self.kube = kube
        self.namespace = namespace
        self.nodes = list(nodes)
        #: Each pod's run, from its tekton.dev/pipelineRun label: the recorder keeps pod names only.
        self.run_of_pod: dict[str, str] = {}

    def read(self) -> tuple[list[Obj], list[Obj]]:
        pods = decoded(self.kube.core.list_namespaced_pod(self.namespace, _preload_content=False)).get("items") or []
        records = json_object(self.kube.custom.list_namespaced_custom_object(
            contract.GROUP, contract.VERSION, self.namespace, contract.PLURAL,
        )).get("items") or []
        return list(pods), list(records)

    def observed(self, pods: Sequence[Obj]) -> None:
        for pod in pods:
            meta = pod.get("metadata") or {}
            run = (meta.get("labels") or {}).get(PIPELINE_RUN_LABEL)
            if run:
                self.run_of_pod[str(meta.get("name"))] = str(run)

    def render(self, runs: Sequence[str], out_dir: Path, *, marks: Mapping[str, Sequence[tuple[float, str]]]) -> dict[str, Path]:
        """render() draws each run's timeline into out_dir/<run>.svg; a run whose picture fails is left out, with a warning."""
        intervals, bands = self.recorder.intervals(), self.recorder.bands()
        drawn: dict[str, Path] = {}
        for run in runs:
            own = [i for i in intervals if self.run_of_pod.get(i.pod) == run]
            own_bands = [b for b in bands if _record_name(b.record) == run]
            if not own and not own_bands:
                continue
            try:
                drawn[run] = render_timeline(
                    own, own_bands, self.nodes, out_dir / f"{run}.svg",
                    title=f"{run} ({self.namespace})", until=self.recorder.ended, marks=list(marks.get(run, ())),
                )
            except Exception as err:  # noqa: BLE001 - the picture is for reading only; the verdict stands without it
                log.warning("timeline of %s not drawn: %s", run, err)
        return drawn


def _record_name(record: str) -> str:
    """_record_name('ns/run') is 'run': a band names its record as namespace/name or by name alone."""
    return record.rpartition("/")[2]


def node_capacities(nodes: Sequence[NodeSpec]) -> list[NodeCapacity]:
    """node_capacities() is each pool node's allocatable, as its lane is labelled and its load strips are scaled."""
    return [NodeCapacity(node.name, size.cpu, size.memory, size.others) for node in nodes for size in (node.size(),)]
