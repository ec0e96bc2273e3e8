"""Lease names from --scheduler-name: lowercased, checked, and a name no Lease can bear refused before any scenario."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.suite.lease_names import REPLICAS, UNDER_TEST, check_lease_names, lease_name
from harness.suite.replicas import Replicas
from harness.suite.scheduler_under_test import SchedulerUnderTest

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "scheduler_name, suffix, expected",
    [
        pytest.param("tkn-scheduler", UNDER_TEST, "tkn-scheduler-under-test", id="unchanged"),
        pytest.param("One-Node", UNDER_TEST, "one-node-under-test", id="capitals"),
        pytest.param("one-node-per-pipelineRun-gw0", REPLICAS, "one-node-per-pipelinerun-gw0-replicas", id="plugin-readme-name"),
        pytest.param("sched.example.com", UNDER_TEST, "sched.example.com-under-test", id="dots"),
    ],
)
def test_a_lease_name_is_the_scheduler_name_lowercased(scheduler_name: str, suffix: str, expected: str) -> None:
    assert lease_name(scheduler_name, suffix) == expected


@pytest.mark.parametrize(
    "scheduler_name",
    [
        pytest.param("my_scheduler", id="underscore"),
        pytest.param("-leading-dash", id="leading-dash"),
        pytest.param("a..b", id="empty-label"),
        pytest.param("has space", id="space"),
        pytest.param("x" * 250, id="too-long"),
        pytest.param("", id="empty"),
    ],
)
def test_a_name_no_lease_can_bear_is_refused_naming_the_fix(scheduler_name: str) -> None:
    with pytest.raises(HarnessError, match="choose a name of letters, digits, '-' and '.'"):
        check_lease_names(scheduler_name)


def test_the_config_template_and_the_replicas_get_the_lowercased_lease(tmp_path: Path) -> None:
    template = tmp_path / "config.yaml.j2"
    template.write_text("profiles: [{schedulerName: {{ scheduler_name }}}]\nleaderElection: {resourceName: {{ lease_name }}}\n", encoding="utf-8")
    scheduler = SchedulerUnderTest(
        mode="command", scheduler_name="One-Node-gw0", kubeconfig=tmp_path / "kubeconfig", workdir=tmp_path,
        command_template="/bin/s --config {config}", config_template=template,
    )
    text = Path(scheduler.argv()[2]).read_text(encoding="utf-8")
    assert "schedulerName: One-Node-gw0" in text and "resourceName: one-node-gw0-under-test" in text
    replicas = Replicas(scheduler=scheduler, kube=None, lease_namespace="conf-x", timeouts=None)  # type: ignore[arg-type]
    assert replicas.lease_name == "one-node-gw0-replicas"


def _collect(tmp_path: Path, scheduler_name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--scheduler-name", scheduler_name, *extra, str(tmp_path)],
        env=dict(os.environ), capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )


def test_the_suite_refuses_such_a_name_before_any_scenario_as_a_usage_error(tmp_path: Path) -> None:
    refused = _collect(tmp_path, "my_scheduler")
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR, refused.stdout + refused.stderr
    assert "--scheduler-name 'my_scheduler' cannot name the scheduler's Lease" in refused.stderr
    assert _collect(tmp_path, "One-Node").returncode == pytest.ExitCode.OK
    # An external scheduler's name is only a schedulerName: the suite makes no Lease for it.
    assert _collect(tmp_path, "my_scheduler", "--scheduler", "external").returncode == pytest.ExitCode.OK
