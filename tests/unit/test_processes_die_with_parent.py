"""ManagedProcess(dies_with_parent=True): a process the harness starts for one session dies with it, however it ends."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cluster.processes import ManagedProcess, pid_alive

pytestmark = pytest.mark.unit

STARTER = """
import sys
from pathlib import Path
from harness.cluster.processes import ManagedProcess
process = ManagedProcess.in_dir("sleeper", Path(sys.argv[1]))
process.start(["/bin/sleep", "60"], env={}, cwd=Path(sys.argv[1]), dies_with_parent=sys.argv[2] == "yes")
"""


def _sleeper_after_its_starter_exits(tmp_path: Path, dies_with_parent: bool) -> int:
    subprocess.run([sys.executable, "-c", STARTER, str(tmp_path), "yes" if dies_with_parent else "no"], check=True, timeout=30)
    pid = ManagedProcess.in_dir("sleeper", tmp_path).pid()
    assert pid is not None
    return pid


def test_a_process_started_to_die_with_its_parent_is_gone_once_the_parent_exits(tmp_path: Path) -> None:
    pid = _sleeper_after_its_starter_exits(tmp_path, dies_with_parent=True)
    deadline = time.monotonic() + 5
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(pid), "the session's process outlived the session that started it"


def test_a_cluster_process_outlives_its_starter(tmp_path: Path) -> None:
    process = ManagedProcess.in_dir("sleeper", tmp_path)
    pid = _sleeper_after_its_starter_exits(tmp_path, dies_with_parent=False)
    try:
        assert pid_alive(pid)
    finally:
        process.stop(grace_seconds=1)
