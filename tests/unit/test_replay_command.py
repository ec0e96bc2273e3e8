"""`rescon replay` end to end with the cluster faked: bad input exits 2 before any cluster, a replay prints its lines and writes its reports,
a round's wait ends in time with the runs still going named, and the pieces that talk to a cluster do what they say."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from xml.etree import ElementTree

import kubernetes
import pytest
import yaml

from harness.cli import build_parser, main
from harness.cluster.node_pools import POOL_LABEL
from harness.errors import HarnessError
from harness.replay import cli as replay_cli
from harness.replay.cluster_nodes import make_pool
from harness.replay.follow import follow_round
from harness.replay.judging import RunResult
from harness.replay.nodes import pool_nodes
from harness.replay.options import suite_config
from harness.replay.prepare import Prepared
from harness.replay.routing import pods_routed_to
from harness.replay.session import Replayed
from harness.report.conformance_report import read_report
from harness.report.outcomes import Outcome
from harness.suite.features import Feature
from harness.timeouts import DEFAULT_TIMEOUTS

pytestmark = pytest.mark.unit

RUN = """\
apiVersion: tekton.dev/v1
kind: PipelineRun
metadata: {name: build}
spec:
  workspaces:
  - name: source
    volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}
  pipelineSpec:
    workspaces: [{name: source}]
    tasks:
    - name: compile
      workspaces: [{name: src, workspace: source}]
      taskSpec:
        workspaces: [{name: src}]
        steps: [{name: make, image: gcc, computeResources: {requests: {cpu: "1", memory: 1Gi}}}]
"""


@pytest.fixture
def no_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test here may reach a cluster: the replay's cluster side fails the test if called."""

    def refuse(*args: Any, **kwargs: Any) -> Replayed:
        raise AssertionError("bad input must be refused before any cluster is touched")

    monkeypatch.setattr(replay_cli, "replay_on_cluster", refuse)


@pytest.mark.parametrize(
    ("files", "extra", "message"),
    [
        ({"run.yaml": RUN.replace("tekton.dev/v1", "tekton.dev/v1beta1")}, [], "run.yaml#1 is a PipelineRun of tekton.dev/v1beta1: replay reads tekton.dev/v1"),
        ({"run.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"}, [], "run.yaml#1 is a Deployment (apps/v1), not Tekton"),
        ({"run.yaml": RUN.split("      taskSpec:")[0] + "      taskRef: {name: make}\n"}, [],
         "PipelineRun build (run.yaml#1): pipeline task compile refers to Task make, which none of the given files defines"),
        ({"run.yaml": RUN.replace("volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}",
                                  "persistentVolumeClaim: {claimName: shared}")}, [],
         "PipelineRun build (run.yaml#1) binds workspace source to PersistentVolumeClaim shared, which none of the given files defines"),
        ({"run.yaml": RUN, "nodes.yaml": "apiVersion: v1\nkind: List\nitems: []\n"}, ["--nodes", "NODES"],
         "nodes.yaml holds no Node: give the output of `kubectl get nodes -o yaml` from your cluster"),
        ({"run.yaml": RUN}, ["--pool", "1x500mcpu4Gi"],
         "PipelineRun build (run.yaml#1): task compile asks 1000m CPU, 1024Mi, more than any node that admits it allocates"),
        ({"run.yaml": RUN}, ["--copies", "0"], "--copies 0: give 1 or more"),
    ],
    ids=["v1beta1", "not-tekton", "task-unresolved", "claim-missing", "no-nodes", "fits-no-node", "no-copies"],
)
def test_bad_input_is_one_line_and_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_cluster: None, files: dict[str, str], extra: list[str], message: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    argv = ["replay", str(tmp_path / "run.yaml"), *[a.replace("NODES", str(tmp_path / "nodes.yaml")) for a in extra]]
    assert main(argv) == 2
    err = capsys.readouterr().err.replace(str(tmp_path) + "/", "")
    assert err.count("\n") == 1 and err.startswith(f"rescon replay: error: {message}")


def test_a_replay_prints_its_plan_and_run_lines_and_writes_both_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Prepared] = []

    def fake_cluster(prepared: Prepared, config: Any, *, say: Any, **_: Any) -> Replayed:
        seen.append(prepared)
        say("replay: round 1 of 1: 2 runs created")
        (_, first), (_, second) = prepared.instances[0]
        return Replayed([RunResult(first, "run.yaml#1", Outcome.PASSED, 4.0, groups=1),
                         RunResult(second, "run.yaml#1", Outcome.FAILED, 6.5, groups=1, problems=("release-late at 21.0s: group source ...",))],
                        kubernetes_version="v1.37.2")

    monkeypatch.setattr(replay_cli, "replay_on_cluster", fake_cluster)
    (tmp_path / "run.yaml").write_text(RUN)
    report, junit = tmp_path / "out" / "report.yaml", tmp_path / "out" / "junit.xml"
    allure_dir = tmp_path / "out" / "allure"
    (allure_dir).mkdir(parents=True)
    (allure_dir / "stale-result.json").write_text("{}")
    code = main(["replay", str(tmp_path / "run.yaml"), "--copies", "2", "--report-output", str(report), "--junit-xml", str(junit),
                 "--alluredir", str(allure_dir)])
    assert code == 1
    out, err = capsys.readouterr()
    lines = out.replace(str(tmp_path) + "/", "").splitlines()
    assert lines[0] == "build (run.yaml#1): simulated as written"
    assert lines[1] == "PASSED     4.0s  build-c1  1 group held to their peaks, no violation"
    assert lines[2] == "FAILED     6.5s  build-c2  release-late at 21.0s: group source ..."
    assert lines[3].startswith("replay: 2 runs: 1 passed, 1 failed, 0 errors in ")
    assert lines[4:] == [
        f"ConformanceReport: {report}".replace(str(tmp_path) + "/", ""), f"JUnit XML: {junit}".replace(str(tmp_path) + "/", ""),
        "Allure results: out/allure (make report ALLURE_RESULTS=out/allure)",
    ]
    results = sorted((json.loads(p.read_text()) for p in allure_dir.glob("*-result.json")), key=lambda r: r["name"])
    assert [(r["name"], r["status"]) for r in results] == [("build-c1", "passed"), ("build-c2", "failed")]
    assert results[1]["statusDetails"]["message"] == "release-late at 21.0s: group source ..."
    assert "replay: 1 runs x 2 copies x 1 rounds = 2 PipelineRuns on 2 nodes (local)" in err
    assert [n.name for n in seen[0].nodes] == [f"{seen[0].plan.namespace}-0", f"{seen[0].plan.namespace}-1"]
    written = read_report(report)
    assert [(t.name, t.outcome) for t in written.tests] == [("build-c1", Outcome.PASSED), ("build-c2", Outcome.FAILED)]
    assert written.suite.kubernetes_version == "v1.37.2" and written.implementation.project == "reference-scheduler"
    assert ElementTree.parse(junit).getroot().get("failures") == "1"


def test_every_run_passing_exits_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def fake_cluster(prepared: Prepared, config: Any, *, say: Any, **_: Any) -> Replayed:
        return Replayed([RunResult(name, run.origin, Outcome.PASSED, 1.0) for run, name in prepared.instances[0]])

    monkeypatch.setattr(replay_cli, "replay_on_cluster", fake_cluster)
    (tmp_path / "run.yaml").write_text(RUN)
    assert main(["replay", str(tmp_path / "run.yaml"), "--report-output", str(tmp_path / "r.yaml"), "--junit-xml", str(tmp_path / "j.xml"),
                 "--alluredir", str(tmp_path / "allure")]) == 0


def test_a_nodes_file_kept_beside_the_pipelines_is_read_as_nodes_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Prepared] = []

    def fake_cluster(prepared: Prepared, config: Any, *, say: Any, **_: Any) -> Replayed:
        seen.append(prepared)
        return Replayed([RunResult(name, run.origin, Outcome.PASSED, 1.0) for run, name in prepared.instances[0]])

    monkeypatch.setattr(replay_cli, "replay_on_cluster", fake_cluster)
    (tmp_path / "run.yaml").write_text(RUN)
    (tmp_path / "nodes.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: ci-1, labels: {zone: a}}\nstatus: {allocatable: {cpu: '8', memory: 16Gi}}\n")
    argv = ["replay", str(tmp_path), "--nodes", str(tmp_path / "nodes.yaml"), "--report-output", str(tmp_path / "r.yaml"), "--junit-xml", str(tmp_path / "j.xml"),
            "--alluredir", str(tmp_path / "allure")]
    assert main(argv) == 0
    assert [(n.name, n.labels) for n in seen[0].nodes] == [("ci-1", {"zone": "a"})]


def test_the_scheduler_options_are_the_suites() -> None:
    args = build_parser().parse_args(["replay", "tekton", "--scheduler", "command", "--scheduler-cmd", "s --kubeconfig {kubeconfig}",
                                      "--exempt-features", "ReservationRecords", "--rescon-timeout", "replay_run_done=30"])
    config = suite_config(args)
    assert (config.scheduler_mode, config.scheduler_cmd, config.cluster, config.scheduler_name) == ("command", "s --kubeconfig {kubeconfig}", "local", "tkn-scheduler")
    assert Feature.RESERVATION_RECORDS not in config.supported and Feature.COLOCATION in config.supported
    assert config.timeouts.replay_run_done == 30 and config.contract_keep_going
    assert config.implementation["project"] == "tkn-scheduler"


# --- a round's wait, with the API faked ---


class FakeRuns:
    """FakeRuns answers list_namespaced_custom_object with the PipelineRuns as they stand after each poll."""

    def __init__(self, states: list[dict[str, str]]) -> None:
        self.states = iter(states)
        self.last: dict[str, str] = {}

    def list_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str) -> dict[str, Any]:
        self.last = next(self.states, self.last)
        return {"items": [{"metadata": {"name": name}, "status": {"conditions": [{"type": "Succeeded", "status": status, "reason": status}]}}
                          for name, status in self.last.items()]}


def _kube(custom: Any = None, core: Any = None) -> Any:
    """_kube() is a stand-in for harness.kube.Kube with only the API groups a test fakes."""
    return SimpleNamespace(custom=custom, core=core)


def test_a_round_is_followed_until_every_run_has_ended_with_a_line_for_each() -> None:
    custom = FakeRuns([{"a": "Unknown", "b": "Unknown"}, {"a": "True", "b": "Unknown"}, {"a": "True", "b": "False"}])
    said: list[str] = []
    ticks = itertools.count(10.0, 0.5)
    followed = follow_round(_kube(custom), "ns", {"a": 10.0, "b": 10.0}, timeouts=DEFAULT_TIMEOUTS, on_poll=lambda: None, say=said.append,
                            clock=lambda: next(ticks))
    assert [(name, f.ended is not None, f.unfinished) for name, f in followed.items()] == [("a", True, ""), ("b", True, "")]
    assert [line.split(" after ")[0] for line in said] == ["replay:   1/2 runs ended", "replay:   2/2 runs ended"]
    assert said[1].endswith("(b False)")


def test_a_round_whose_run_never_ends_returns_in_time_naming_it() -> None:
    custom = FakeRuns([{"a": "True", "stuck": "Unknown"}])
    timeouts = DEFAULT_TIMEOUTS.with_overrides({"replay_run_done": 0.3})
    followed = follow_round(_kube(custom), "ns", {"a": 0.0, "stuck": 0.0}, timeouts=timeouts, on_poll=lambda: None, say=lambda line: None)
    assert followed["a"].ended is not None
    assert followed["stuck"].ended is None
    assert followed["stuck"].unfinished == "did not end within 0.3s (replay_run_done): Unknown/Unknown: "


def test_a_scheduler_that_dies_ends_the_wait_at_once() -> None:
    def died() -> None:
        raise HarnessError("the scheduler under test (reference) died while being tested")

    with pytest.raises(HarnessError, match="died while being tested"):
        follow_round(_kube(FakeRuns([{"a": "Unknown"}])), "ns", {"a": 0.0}, timeouts=DEFAULT_TIMEOUTS, on_poll=died, say=lambda line: None)


# --- the cluster's side, faked where it is one call ---


class FakeCore:
    def __init__(self, *, conflict: str = "", config_defaults: dict[str, str] | None = None) -> None:
        self.conflict = conflict
        self.created: list[str] = []
        self.deleted: list[str] = []
        self.patched: list[Any] = []
        self.config_defaults = config_defaults or {}

    def create_node(self, node: Any) -> None:
        if node.metadata.name == self.conflict:
            raise kubernetes.client.ApiException(status=409, reason="AlreadyExists")
        self.created.append(node.metadata.name)

    def delete_collection_node(self, label_selector: str) -> None:
        self.deleted.append(label_selector)

    def read_namespaced_config_map(self, name: str, namespace: str) -> Any:
        return SimpleNamespace(data=self.config_defaults)

    def patch_namespaced_config_map(self, name: str, namespace: str, body: Any) -> None:
        self.patched.append(body)


def test_a_node_that_already_exists_names_the_fix_and_the_nodes_made_go() -> None:
    core = FakeCore(conflict="p-1")
    cluster = SimpleNamespace(exclusive_pools=True)
    with pytest.raises(HarnessError) as err:
        make_pool(cluster, _kube(core=core), "p", pool_nodes("3x1cpu1Gi", "p"), timeouts=DEFAULT_TIMEOUTS)
    assert str(err.value) == "node p-1 already exists on this cluster: delete it (kubectl delete node p-1) or rename it in the nodes file"
    assert core.created == ["p-0"] and core.deleted == [f"{POOL_LABEL}=p"]


def test_config_defaults_that_already_route_to_the_scheduler_are_left_alone() -> None:
    core = FakeCore(config_defaults={"default-pod-template": yaml.safe_dump({"schedulerName": "tkn-scheduler"})})
    said: list[str] = []
    with pods_routed_to(_kube(core=core), "ns", "tkn-scheduler", timeouts=DEFAULT_TIMEOUTS, say=said.append):
        pass
    assert core.patched == [] and said == ["replay: Tekton's config-defaults already sends task pods to tkn-scheduler"]


def test_the_monitors_own_line_for_a_violation_is_dropped_and_its_other_warnings_kept() -> None:
    import logging

    from harness.replay.cli import _not_a_violation

    def record(message: str, *args: object, name: str = "rescon.monitor") -> logging.LogRecord:
        return logging.LogRecord(name, logging.WARNING, __file__, 0, message, args, None)

    assert not _not_a_violation(record("%s", "contract monitor: node-overcommitted at 4.2s: node n1 holds ..."))
    assert _not_a_violation(record("contract monitor could not evaluate a %s event: %s", "pods", "boom"))
    assert _not_a_violation(record("contract monitor: anything", name="rescon.other"))
