"""Each launch of the scheduler under test, its part of the shared log copied next to the reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.suite.launch_logs import Launch, LaunchLogs, Segment, segments
from harness.suite.scheduler_under_test import SchedulerUnderTest
from harness.timeouts import DEFAULT_TIMEOUTS
from harness.waits import NotYet, wait_for

pytestmark = pytest.mark.unit


def test_a_launch_ends_where_the_next_launch_into_the_same_log_begins(tmp_path: Path) -> None:
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    launches = [Launch(a, 0, "s", 1), Launch(b, 40, "s-replica-0", 1), Launch(a, 900, "s", 2)]
    assert segments(launches) == [Segment(launches[0], 0, 900), Segment(launches[1], 40, None), Segment(launches[2], 900, None)]
    assert [launch.copy_name for launch in launches] == ["s-1.log", "s-replica-0-1.log", "s-2.log"]


def test_each_launch_is_copied_alone_and_a_running_one_again_as_it_grows(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "scheduler-under-test-s-gw0.log"
    log.parent.mkdir()
    log.write_text("an earlier session's launch\n")
    logs = LaunchLogs(tmp_path / "reports" / "scheduler-logs")
    logs.starting(log, "s-gw0")
    with log.open("a") as out:
        out.write("first launch\nkilled\n")
    logs.starting(log, "s-gw0")
    with log.open("a") as out:
        out.write("second launch\n")
    copies = logs.directory
    assert copies is not None
    assert logs.copy() == [copies / "s-gw0-1.log", copies / "s-gw0-2.log"]
    assert (copies / "s-gw0-1.log").read_text() == "first launch\nkilled\n"
    assert (copies / "s-gw0-2.log").read_text() == "second launch\n"
    with log.open("a") as out:
        out.write("still running\n")
    assert logs.copy() == [copies / "s-gw0-2.log"]
    assert (copies / "s-gw0-2.log").read_text() == "second launch\nstill running\n"


def test_without_a_report_nothing_is_copied_and_a_wiped_log_gives_an_empty_copy(tmp_path: Path) -> None:
    log = tmp_path / "s.log"
    log.write_text("x" * 100)
    assert LaunchLogs(None).copy() == []
    logs = LaunchLogs(tmp_path / "copies")
    logs.starting(log, "s")
    log.unlink()  # the cluster was recreated under the session
    assert logs.copy() == [tmp_path / "copies" / "s-1.log"]
    assert (tmp_path / "copies" / "s-1.log").read_bytes() == b""


def test_every_start_of_the_scheduler_under_test_lands_next_to_the_reports(tmp_path: Path) -> None:
    """The session's launch and a restart's (SchedulerUnderTest.start again), copied at stop()."""
    copies = tmp_path / "reports" / "scheduler-logs"
    scheduler = SchedulerUnderTest(
        mode="command", scheduler_name="s-gw0", kubeconfig=tmp_path / "kubeconfig", workdir=tmp_path / "cluster",
        command_template="/bin/echo launched as {scheduler_name}", launch_logs=LaunchLogs(copies),
    )

    def exited() -> None:
        if scheduler.process.alive():
            raise NotYet("echo still running")

    for _ in range(2):
        scheduler.start()
        wait_for(exited, what="the scheduler's echo to exit", timeout="process_stop", timeouts=DEFAULT_TIMEOUTS)
    scheduler.stop()
    assert sorted(p.name for p in copies.iterdir()) == ["s-gw0-1.log", "s-gw0-2.log"]
    assert (copies / "s-gw0-2.log").read_text() == "launched as s-gw0\n"
