"""A scheduler that exits at launch is a setup error naming its own last words; one that dies later is a verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.suite.scheduler_under_test import SchedulerDied, SchedulerFailedToStart, SchedulerUnderTest
from harness.timeouts import DEFAULT_TIMEOUTS
from harness.waits import NotYet, wait_for

pytestmark = pytest.mark.unit


def _exited(scheduler: SchedulerUnderTest) -> None:
    def poll() -> None:
        if scheduler.process.alive():
            raise NotYet("still running")

    wait_for(poll, what="the scheduler to exit", timeout="process_stop", timeouts=DEFAULT_TIMEOUTS)


def test_an_exit_at_launch_is_a_setup_error_with_the_schedulers_message(tmp_path: Path) -> None:
    scheduler = SchedulerUnderTest(
        mode="command", scheduler_name="s", kubeconfig=tmp_path / "kubeconfig", workdir=tmp_path,
        command_template="sh -c 'echo my-scheduler: unknown flag --frobnicate >&2; exit 3'",
    )
    scheduler.start()
    _exited(scheduler)
    with pytest.raises(SchedulerFailedToStart, match=r"exited .*s after its start, saying 'my-scheduler: unknown flag --frobnicate'"):
        scheduler.check_alive()


def test_a_death_long_after_the_start_is_a_verdict(tmp_path: Path) -> None:
    scheduler = SchedulerUnderTest(
        mode="command", scheduler_name="s", kubeconfig=tmp_path / "kubeconfig", workdir=tmp_path,
        command_template="sh -c 'echo panic: nil map >&2; exit 2'",
    )
    scheduler.start()
    _exited(scheduler)
    assert scheduler.started_at is not None
    scheduler.started_at -= 60
    with pytest.raises(SchedulerDied, match="died while being tested; its last line was 'panic: nil map'"):
        scheduler.check_alive()
