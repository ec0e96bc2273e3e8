"""scenario_seconds: the past seconds of each scenario, read from JUnit and from the file beside the scenarios, and the order they give."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness.suite import scenario_seconds
from harness.suite.scenario_seconds import FILE_NAME, from_junit, longest_first, main, module_key, read, write

pytestmark = pytest.mark.unit

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.conformance.test_idle_group_restart" name="test_idle_group_restart" time="55.8" />
<testcase classname="tests.conformance.test_colocation" name="test_colocation[1-2]" time="5.4" />
<testcase classname="tests.conformance.test_colocation" name="test_colocation[2-2]" time="6.1" />
<testcase classname="tests.conformance.test_load" name="test_load" time="0.0"><skipped message="opt-in" /></testcase>
</testsuite></testsuites>"""


def test_junit_gives_each_scenario_its_longest_run_and_leaves_skipped_ones_out(tmp_path: Path) -> None:
    (tmp_path / "junit.xml").write_text(JUNIT)
    assert from_junit(tmp_path / "junit.xml") == {"idle_group_restart": 55.8, "colocation": 6.1}


def test_a_file_written_reads_back_and_a_missing_one_reads_as_no_figures(tmp_path: Path) -> None:
    assert read(tmp_path) == {}
    write(tmp_path, {"b": 2.04, "a": 10.0}, measured="make e2e at abc1234, 5 workers")
    assert read(tmp_path) == {"a": 10.0, "b": 2.0}


@pytest.mark.parametrize("text", ["not json", '{"seconds": [1, 2]}', '{"measured": "x"}', '{"seconds": {"a": "fast"}}'])
def test_a_malformed_file_is_one_line_naming_the_fix(tmp_path: Path, text: str) -> None:
    (tmp_path / FILE_NAME).write_text(text)
    with pytest.raises(HarnessError, match="make scenario-seconds"):
        read(tmp_path)


def test_an_unreadable_junit_file_names_make_e2e(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="run `make e2e` first"):
        from_junit(tmp_path / "missing.xml")


def test_the_longest_come_first_and_a_scenario_with_no_figure_before_them() -> None:
    assert longest_first(["a", "b", "new", "c"], key_of=str, seconds={"a": 5, "b": 9, "c": 5}) == ["new", "b", "a", "c"]
    assert module_key("test_idle_group_restart") == "idle_group_restart"


@given(st.lists(st.sampled_from("abcdefgh"), unique=True), st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0, 1000)))
def test_ordering_keeps_every_scenario_once_and_never_puts_a_shorter_one_first(names: list[str], seconds: dict[str, float]) -> None:
    ordered = longest_first(names, key_of=str, seconds=seconds)
    assert sorted(ordered) == sorted(names)
    expected = [seconds.get(n, float("inf")) for n in ordered]
    assert expected == sorted(expected, reverse=True)


def test_the_command_writes_the_file_and_refuses_a_junit_with_nothing_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "junit.xml").write_text(JUNIT)
    assert main([str(tmp_path / "junit.xml"), str(tmp_path), "make e2e at abc1234"]) == 0
    assert scenario_seconds.read(tmp_path)["idle_group_restart"] == 55.8
    (tmp_path / "empty.xml").write_text("<testsuites><testsuite /></testsuites>")
    assert main([str(tmp_path / "empty.xml"), str(tmp_path), "x"]) == 1
    assert "no scenario that ran" in capsys.readouterr().err
    assert main([]) == 2
