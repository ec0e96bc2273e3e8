"""The plugin starts in every load order: entry point, PYTHONPATH, with and without pytest-kind.

pytest-kind defines --kubeconfig and --keep-cluster as we do and cannot share
them, so whichever loads first owns them; either way both options work.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cluster.paths import REPO_ROOT

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "extra_args, extra_env",
    [
        pytest.param([], {}, id="entry-point"),
        pytest.param([], {"PYTHONPATH": str(REPO_ROOT)}, id="pythonpath"),
        pytest.param(["-p", "no:pytest-kind"], {}, id="without-pytest-kind"),
        pytest.param(["-p", "no:rescon", "-p", "harness.plugin"], {}, id="ours-first-by-module-name"),
    ],
)
def test_the_shared_options_work_in_every_load_order(tmp_path: Path, extra_args: list[str], extra_env: dict[str, str]) -> None:
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    env = {**os.environ, **extra_env}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *extra_args, "--collect-only", "-q", "-p", "no:cacheprovider",
         "--keep-cluster", "--kubeconfig", "/nowhere", "--rescon-timeout", "pod_scheduled=5", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 test collected" in done.stdout
