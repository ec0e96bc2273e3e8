"""The suite without a clone: the wheel built from this repository, installed into a fresh venv, run from an empty directory.

A scheduler's team adds reservation-conformance to its own repository's venv
and runs `rescon conformance` there. This proves that path: the wheel carries
every scenario and fixture (the same scenarios the checkout collects), the
installed copy is the one that runs, and a scenario passes against the
reference on the local cluster, its reports and scheduler log under the
working directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cluster.paths import REPO_ROOT
from harness.kube import Kube

pytestmark = pytest.mark.integration

#: Building the wheel and installing it with its dependencies (from pip's cache when warm: about a minute).
INSTALL_TIMEOUT_SECONDS = 900
#: One scenario, with the scheduler's start: far below the suite's own 900 s per scenario.
SCENARIO_TIMEOUT_SECONDS = 1200


def _run(argv: list[str], *, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    # The environment passes through: the held cluster lock (RESCON_LOCAL_CLUSTER_LOCK) lets the installed suite in.
    return subprocess.run(argv, cwd=cwd, env=dict(os.environ), capture_output=True, text=True, timeout=timeout)


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args}: exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """venv is a fresh virtual environment outside the checkout with only the wheel (and its dependencies) installed."""
    work = tmp_path_factory.mktemp("installed-suite")
    assert REPO_ROOT not in work.parents
    started = time.monotonic()
    _ok(_run([sys.executable, "-m", "pip", "wheel", str(REPO_ROOT), "--no-deps", "--quiet", "--wheel-dir", str(work / "wheel")],
             cwd=work, timeout=INSTALL_TIMEOUT_SECONDS))
    wheels = list((work / "wheel").glob("reservation_conformance-*.whl"))
    assert len(wheels) == 1, wheels
    _ok(_run([sys.executable, "-m", "venv", str(work / "venv")], cwd=work, timeout=INSTALL_TIMEOUT_SECONDS))
    _ok(_run([str(work / "venv" / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheels[0])], cwd=work, timeout=INSTALL_TIMEOUT_SECONDS))
    print(f"installed-suite: wheel built and installed in {time.monotonic() - started:.0f}s")
    return work / "venv"


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "my-scheduler-repo"
    directory.mkdir()
    return directory


def test_the_installed_copy_is_the_one_that_runs(venv: Path, empty_dir: Path) -> None:
    where = _ok(_run([str(venv / "bin" / "python"), "-c", "import harness.cluster.paths as p; print(p.__file__); print(p.SUITE_ROOT)"],
                     cwd=empty_dir, timeout=60)).split()
    assert Path(where[0]).is_relative_to(venv) and Path(where[1]).is_relative_to(venv), where


def test_collect_only_lists_every_scenario_of_the_checkout(venv: Path, empty_dir: Path) -> None:
    installed = _ok(_run([str(venv / "bin" / "rescon"), "conformance", "--collect-only", "-q"], cwd=empty_dir, timeout=300))
    checkout = _ok(_run([sys.executable, "-m", "pytest", "tests/conformance", "--collect-only", "-q", "-p", "no:cacheprovider"], cwd=REPO_ROOT, timeout=300))
    installed_ids = {line for line in installed.splitlines() if "::" in line}
    checkout_ids = {line for line in checkout.splitlines() if "::" in line}
    assert len(checkout_ids) > 0
    assert installed_ids == checkout_ids
    print(f"installed-suite: {len(installed_ids)} scenarios collected")


def test_colocation_passes_against_the_reference_from_an_empty_directory(venv: Path, empty_dir: Path, it_kube: Kube) -> None:
    """it_kube: the local cluster is up and this session holds its lock, which the installed suite inherits."""
    started = time.monotonic()
    _ok(_run([str(venv / "bin" / "rescon"), "conformance", "-k", "colocation", "--keep-cluster"], cwd=empty_dir, timeout=SCENARIO_TIMEOUT_SECONDS))
    print(f"installed-suite: -k colocation passed in {time.monotonic() - started:.0f}s")
    report = yaml.safe_load((empty_dir / "reports" / "conformance-report.yaml").read_text())
    counts = _statistics(report)
    assert counts["Passed"] >= 1 and counts["Failed"] == counts["Errors"] == 0, counts
    assert (empty_dir / "reports" / "junit.xml").is_file()
    assert sorted(p.name for p in (empty_dir / "reports" / "scheduler-logs").iterdir()) == ["tkn-scheduler-1.log"]


def _statistics(report: dict[str, Any]) -> dict[str, int]:
    """_statistics() adds up the report's Passed/Failed/Skipped/Errors over its profiles' core and extended sections."""
    counts = {"Passed": 0, "Failed": 0, "Skipped": 0, "Errors": 0}
    for profile in report["profiles"]:
        for section in ("core", "extended"):
            for name, value in (profile.get(section) or {}).get("statistics", {}).items():
                counts[name] = counts.get(name, 0) + int(value)
    return counts
