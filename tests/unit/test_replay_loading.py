"""rescon replay's reading of the given files: documents, their origins, and what is run, skipped or refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.replay import bad_input
from harness.replay.bad_input import ReplayInputError
from harness.replay.classify import classify
from harness.replay.loading import Document, documents_of_text, load_documents, yaml_files

pytestmark = pytest.mark.unit

TASK = "apiVersion: tekton.dev/v1\nkind: Task\nmetadata: {name: build}\nspec: {steps: [{name: s, image: x}]}\n"
PIPELINE = "apiVersion: tekton.dev/v1\nkind: Pipeline\nmetadata: {name: ci}\nspec: {tasks: [{name: b, taskRef: {name: build}}]}\n"
RUN = "apiVersion: tekton.dev/v1\nkind: PipelineRun\nmetadata: {generateName: ci-}\nspec: {pipelineRef: {name: ci}}\n"


def _doc(origin: str, api_version: str, kind: str, name: str = "x") -> Document:
    return Document(origin, {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}})


def test_a_folder_is_read_recursively_in_path_order_without_hidden_folders(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "b" / "run.yml").write_text(RUN)
    (tmp_path / "a.yaml").write_text(TASK)
    (tmp_path / ".git" / "x.yaml").write_text("not: tekton\n")
    (tmp_path / "README.md").write_text("# not yaml")
    assert yaml_files([tmp_path]) == [tmp_path / "a.yaml", tmp_path / "b" / "run.yml"]


def test_the_nodes_file_beside_the_pipelines_is_left_out_of_a_folder(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text(RUN)
    (tmp_path / "nodes.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n")
    assert yaml_files([tmp_path], leave_out=[tmp_path / "nodes.yaml"]) == [tmp_path / "run.yaml"]


def test_a_file_given_by_name_is_read_whatever_its_suffix(tmp_path: Path) -> None:
    file = tmp_path / "pipeline.json"
    file.write_text('{"apiVersion": "tekton.dev/v1", "kind": "Pipeline", "metadata": {"name": "ci"}}')
    assert [d.name for d in load_documents([file])] == ["ci"]


def test_multi_document_files_count_documents_from_one_and_skip_empty_ones() -> None:
    documents = documents_of_text(f"{TASK}---\n---\n{PIPELINE}---\n{RUN}", "ci.yaml")
    assert [(d.origin, d.kind) for d in documents] == [("ci.yaml#1", "Task"), ("ci.yaml#3", "Pipeline"), ("ci.yaml#4", "PipelineRun")]


def test_a_list_counts_item_by_item() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- " + TASK.replace("\n", "\n  ").rstrip() + "\n"
    assert [(d.origin, d.name) for d in documents_of_text(text, "all.yaml")] == [("all.yaml#1.items[0]", "build")]


def test_a_missing_path_and_a_folder_without_yaml_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ReplayInputError) as missing:
        yaml_files([tmp_path / "tekton"])
    assert str(missing.value) == bad_input.no_such_path(str(tmp_path / "tekton"))
    with pytest.raises(ReplayInputError) as empty:
        yaml_files([tmp_path])
    assert str(empty.value) == bad_input.no_yaml_found(str(tmp_path))


def test_text_that_is_not_yaml_names_the_file_and_the_line() -> None:
    with pytest.raises(ReplayInputError) as err:
        documents_of_text("kind: Task\nmetadata: {name: x\n", "broken.yaml")
    assert str(err.value).startswith("broken.yaml is not valid YAML (")
    assert "(line 3)" in str(err.value)
    assert str(err.value).endswith("fix the file, or leave it out of the paths given")


def test_a_document_without_kind_is_no_object() -> None:
    with pytest.raises(ReplayInputError) as err:
        documents_of_text("just: a mapping\n", "notes.yaml")
    assert str(err.value) == bad_input.not_an_object("notes.yaml#1")


def test_tasks_pipelines_runs_and_supporting_objects_are_sorted_out() -> None:
    inputs = classify([
        _doc("a#1", "tekton.dev/v1", "Task", "build"),
        _doc("a#2", "tekton.dev/v1", "Pipeline", "ci"),
        _doc("a#3", "tekton.dev/v1", "PipelineRun", "ci-1"),
        _doc("a#4", "v1", "PersistentVolumeClaim", "cache"),
        _doc("a#5", "v1", "ConfigMap", "cache"),
        _doc("a#6", "v1", "Secret", "git-auth"),
    ])
    assert list(inputs.tasks) == ["build"] and list(inputs.pipelines) == ["ci"]
    assert [d.name for d in inputs.pipeline_runs] == ["ci-1"]
    assert [(d.kind, d.name) for d in inputs.supporting] == [("PersistentVolumeClaim", "cache"), ("ConfigMap", "cache"), ("Secret", "git-auth")]
    assert inputs.claims() == {"cache"}


def test_tekton_tooling_and_runs_of_other_kinds_are_skipped_with_a_line_each() -> None:
    inputs = classify([
        _doc("t#1", "triggers.tekton.dev/v1beta1", "TriggerTemplate", "tt"),
        _doc("t#2", "kustomize.config.k8s.io/v1beta1", "Kustomization", "k"),
        _doc("t#3", "tekton.dev/v1", "TaskRun", "debug"),
        _doc("t#4", "tekton.dev/v1beta1", "StepAction", "sa"),
    ])
    assert inputs.skipped == (
        "skipped t#1, TriggerTemplate tt: Tekton Triggers start runs from events; replay applies the runs itself",
        "skipped t#2, Kustomization k: a kustomization; replay reads the YAML as written",
        "skipped t#3, TaskRun debug: replay runs PipelineRuns; put its Task in a Pipeline to replay it",
        "skipped t#4, StepAction sa: the steps that use it are simulated",
    )


def test_yaml_that_is_not_tekton_is_refused_naming_what_replay_takes() -> None:
    with pytest.raises(ReplayInputError) as err:
        classify([_doc("deploy.yaml#1", "apps/v1", "Deployment", "web")])
    assert str(err.value) == bad_input.not_tekton("deploy.yaml#1", "apps/v1", "Deployment")
    assert "give replay Tasks, Pipelines and PipelineRuns" in str(err.value)


def test_v1beta1_is_refused_with_the_migration_guide() -> None:
    with pytest.raises(ReplayInputError) as err:
        classify([_doc("old.yaml#1", "tekton.dev/v1beta1", "Pipeline", "ci")])
    assert str(err.value) == "old.yaml#1 is a Pipeline of tekton.dev/v1beta1: replay reads tekton.dev/v1; convert it (https://tekton.dev/docs/pipelines/migrating-v1beta1-to-v1/)"


def test_a_task_defined_twice_names_both_places_and_a_nameless_one_is_refused() -> None:
    with pytest.raises(ReplayInputError) as twice:
        classify([_doc("a#1", "tekton.dev/v1", "Task", "build"), _doc("b#2", "tekton.dev/v1", "Task", "build")])
    assert str(twice.value) == "Task build is defined twice (a#1 and b#2): keep one of them"
    with pytest.raises(ReplayInputError) as nameless:
        classify([Document("a#1", {"apiVersion": "tekton.dev/v1", "kind": "Pipeline", "metadata": {"generateName": "ci-"}})])
    assert str(nameless.value) == bad_input.no_name("a#1", "Pipeline")
