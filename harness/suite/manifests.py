"""Fixture rendering: `fixtures/pipelines/<name>.yaml.j2` -> the manifests a scenario applies.

Templates see the scenario's namespace, the schedulerName under test, the
pool's nodeSelector, its PVC names, the storage class of its spare volumes
(for `volumeClaimTemplate` workspaces), and `cpu(f)` / `memory(f)`: a fraction of
one pool node's allocatable, so one fixture holds on KWOK nodes made to measure
and on kind workers as they are. `sim_task_spec(...)` builds a simulated task and
`compute_resources(cpu=..., memory=..., others={...})` a plain container's
`resources` (GPUs and hugepages with their equal limits). Undefined names fail
loudly (StrictUndefined).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import jinja2
import yaml

from harness import yaml_docs
from harness.cluster.compute_resources import compute_resources
from harness.cluster.paths import SUITE_ROOT
from harness.cluster.simulation import sim_task_spec
from harness.errors import HarnessError
from harness.quantities import share_of

FIXTURES_DIR = SUITE_ROOT / "fixtures" / "pipelines"


@dataclass(frozen=True)
class RenderContext:
    """RenderContext is everything a fixture template may refer to."""

    namespace: str
    scheduler_name: str
    pool_selector: Mapping[str, str]
    node_cpu_millis: int
    node_memory_bytes: int
    pvcs: Mapping[str, str] = field(default_factory=dict)
    #: On a cluster with no default StorageClass, the class a generated `volumeClaimTemplate` names so that Tekton's
    #: claim binds to the scenario's spare PVs; None where the default class serves it (fixtures name no class).
    storage_class: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def cpu(self, fraction: float) -> str:
        """cpu(0.25) on a 4800m node is '1200m'; cpu(2600 / 4800) on an 1800m one '975m' (share_of)."""
        return f"{share_of(self.node_cpu_millis, fraction)}m"

    def memory(self, fraction: float) -> str:
        """memory(0.5) on an 8Gi node is '4294967296' (share_of)."""
        return str(share_of(self.node_memory_bytes, fraction))


def _environment(directory: Path) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(directory)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def fixture_path(name: str, directory: Path = FIXTURES_DIR) -> Path:
    return directory / f"{name}.yaml.j2"


def render_text(name: str, context: RenderContext, directory: Path = FIXTURES_DIR) -> str:
    """render_text() renders one fixture; a missing fixture or variable fails naming it."""
    path = fixture_path(name, directory)
    if not path.is_file():
        raise HarnessError(f"fixture {path} does not exist: add it or fix the scenario's fixtures list")
    try:
        template = _environment(directory).get_template(path.name)
        return template.render(
            namespace=context.namespace,
            scheduler_name=context.scheduler_name,
            pool_selector=dict(context.pool_selector),
            pvcs=dict(context.pvcs),
            storage_class=context.storage_class,
            cpu=context.cpu,
            memory=context.memory,
            sim_task_spec=sim_task_spec,
            compute_resources=compute_resources,
            **dict(context.extra),
        )
    except jinja2.TemplateError as err:
        raise HarnessError(f"fixture {path.name}: {err.__class__.__name__}: {err}") from err


def render(name: str, context: RenderContext, directory: Path = FIXTURES_DIR) -> list[dict[str, Any]]:
    """render() returns the fixture's manifests, each forced into the scenario's namespace."""
    return render_with_text(name, context, directory)[1]


def render_with_text(name: str, context: RenderContext, directory: Path = FIXTURES_DIR) -> tuple[str, list[dict[str, Any]]]:
    """render_with_text() is the fixture rendered once: its text, for the report, and its manifests in the scenario's namespace."""
    text = render_text(name, context, directory)
    return text, manifests_of(name, text, context.namespace)


def manifests_of(name: str, text: str, namespace: str) -> list[dict[str, Any]]:
    try:
        docs = [d for d in yaml_docs.load_all(text) if d]
    except yaml.YAMLError as err:
        raise HarnessError(f"fixture {name} renders invalid YAML: {err}") from err
    for doc in docs:
        if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
            raise HarnessError(f"fixture {name} has a document without apiVersion/kind: fix the template")
        doc.setdefault("metadata", {})["namespace"] = namespace
    return docs
