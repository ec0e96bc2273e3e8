"""`rescon conformance`: the pytest command line it builds, where it finds the suite, and what it passes through."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli
from harness.cluster import cluster_lock
from harness.cluster.paths import BUNDLE_NAME, suite_root
from harness.errors import HarnessError
from harness.suite import command
from harness.suite.command import has_option, pytest_args, scenarios_dir

pytestmark = pytest.mark.unit


def _suite(root: Path) -> Path:
    (root / "tests" / "conformance").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    return root


def test_the_command_line_is_make_e2e_around_the_users_options(tmp_path: Path) -> None:
    suite, cwd = _suite(tmp_path / "suite"), tmp_path / "here"
    args = pytest_args(["-k", "colocation", "--scheduler-cmd", "x {kubeconfig}"], suite_root=suite, cwd=cwd)
    assert args == [
        "-c", str(suite / "pyproject.toml"), "--rootdir", str(suite), "-o", f"cache_dir={cwd / '.pytest_cache'}",
        "--timeout=900",
        "--report-output", str(cwd / "reports" / "conformance-report.yaml"),
        "--junitxml", str(cwd / "reports" / "junit.xml"),
        "-k", "colocation", "--scheduler-cmd", "x {kubeconfig}",
        str(suite / "tests" / "conformance"),
    ]


@pytest.mark.parametrize(
    "given, absent",
    [
        pytest.param(["--timeout", "60"], "--timeout=900", id="timeout"),
        pytest.param(["--timeout=60"], "--timeout=900", id="timeout-equals"),
        pytest.param(["--report-output=mine.yaml"], "--report-output", id="report-output"),
        pytest.param(["--junit-xml", "j.xml"], "--junitxml", id="junit-xml"),
    ],
)
def test_the_users_own_choice_is_never_doubled(tmp_path: Path, given: list[str], absent: str) -> None:
    args = pytest_args(given, suite_root=_suite(tmp_path), cwd=tmp_path)
    assert absent not in args[: -len(given) - 1]
    assert args[-len(given) - 1 : -1] == given


def test_without_pytest_timeout_no_bound_is_added(tmp_path: Path) -> None:
    assert not any(a.startswith("--timeout") for a in pytest_args([], suite_root=_suite(tmp_path), cwd=tmp_path, bounded=False))


def test_has_option_tells_a_value_from_an_option() -> None:
    assert has_option(["--timeout", "1"], "--timeout")
    assert has_option(["--timeout=1"], "--timeout")
    assert not has_option(["-k", "--timeout-override"], "--timeout")


def test_an_install_without_the_scenarios_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="wheel built from the repository"):
        scenarios_dir(tmp_path)


def test_the_wheels_bundle_is_the_suite_root_and_a_clone_is_otherwise(tmp_path: Path) -> None:
    package = tmp_path / "harness"
    package.mkdir()
    assert suite_root(package) == tmp_path
    (package / BUNDLE_NAME).mkdir()
    assert suite_root(package) == package / BUNDLE_NAME


def test_everything_after_conformance_reaches_pytest_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    monkeypatch.setattr(command, "run", lambda args: seen.append(list(args)) or 3)
    assert cli.main(["conformance", "--help", "-k", "not restart", "-n", "2"]) == 3
    assert seen == [["--help", "-k", "not restart", "-n", "2"]]


def test_collect_only_never_waits_for_the_cluster(tmp_path: Path) -> None:
    """Another session holds the local cluster's lock; `rescon conformance --collect-only` lists the scenarios anyway."""
    env = {**os.environ, "RESCON_CACHE_DIR": str(tmp_path / "cache")}
    env.pop(cluster_lock.HELD_ENV, None)
    (tmp_path / "cache").mkdir()
    (tmp_path / "empty").mkdir()
    with open(tmp_path / "cache" / "local-cluster.lock", "a+", encoding="utf-8") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        done = subprocess.run(
            [sys.executable, "-m", "harness.cli", "conformance", "--collect-only", "-q", "--rescon-timeout", "cluster_lock=1"],
            env=env, cwd=tmp_path / "empty", capture_output=True, text=True, timeout=120,
        )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "tests collected" in done.stdout
    assert (tmp_path / "empty" / "reports" / "junit.xml").is_file()
