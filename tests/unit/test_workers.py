"""Concurrent scenarios: per-worker scheduler names, which sessions need the cluster, and the scenario slots."""

from __future__ import annotations

import pytest

import threading
from pathlib import Path

from harness.plugin import Outcome
from harness.suite.features import Feature
from harness.suite.scenario import Scenario
from harness.suite.workers import ScenarioSlots, alone_last, runs_scenarios, scheduler_name_for

pytestmark = pytest.mark.unit

#: Bounds every wait of these tests; none comes near it unless the lock is wrong.
WAIT = 10.0


def test_each_worker_starts_its_own_scheduler_but_an_external_one_keeps_its_name() -> None:
    assert scheduler_name_for("tkn-scheduler", mode="reference", worker="gw1") == "tkn-scheduler-gw1"
    assert scheduler_name_for("mine", mode="command", worker="gw0") == "mine-gw0"
    assert scheduler_name_for("mine", mode="external", worker="gw0") == "mine"
    assert scheduler_name_for("tkn-scheduler", mode="reference", worker=None) == "tkn-scheduler"


def test_scenarios_that_run_alone_are_handed_out_last_and_the_rest_keep_their_order() -> None:
    names = ["a", "RESTART", "b", "DEFAULTS", "c"]
    assert alone_last(names, runs_alone=str.isupper) == ["a", "b", "c", "RESTART", "DEFAULTS"]
    assert alone_last(["a", "b"], runs_alone=str.isupper) == ["a", "b"]
    assert alone_last([], runs_alone=str.isupper) == []


def test_only_paths_with_a_scenario_need_the_cluster(tmp_path: Path) -> None:
    (tmp_path / "conformance").mkdir()
    (tmp_path / "conformance" / "test_a.py").write_text('SCENARIO = Scenario(name="a")\n')
    (tmp_path / "unit").mkdir()
    (tmp_path / "unit" / "test_b.py").write_text("def test_b() -> None: ...\n")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "test_c.py").write_text('SCENARIO = Scenario(name="c")\n')
    assert runs_scenarios(["conformance"], tmp_path)
    assert runs_scenarios(["conformance/test_a.py::test_a"], tmp_path)
    assert not runs_scenarios(["unit"], tmp_path)
    assert not runs_scenarios([], tmp_path / "unit")


def test_a_unit_test_that_writes_a_scenario_module_needs_no_cluster(tmp_path: Path) -> None:
    (tmp_path / "test_writer.py").write_text('TEMPLATE = """\nSCENARIO = Scenario(name="x")\n"""\n\ndef test_w() -> None: ...\n')
    (tmp_path / "test_real.py").write_text('from harness.suite.scenario import Scenario\n\nSCENARIO = Scenario(name="y", description="d")\n')
    assert not runs_scenarios(["test_writer.py"], tmp_path)
    assert runs_scenarios(["test_real.py"], tmp_path)


def test_shared_scenarios_run_side_by_side(tmp_path: Path) -> None:
    slots = ScenarioSlots(tmp_path)
    inside = threading.Event()
    with slots.hold(exclusive=False):
        other = threading.Thread(target=lambda: _enter(slots, exclusive=False, inside=inside))
        other.start()
        assert inside.wait(WAIT), "a second shared scenario waited for the first"
    other.join(WAIT)


def test_an_exclusive_scenario_waits_for_the_running_one_and_keeps_the_next_out(tmp_path: Path) -> None:
    slots = ScenarioSlots(tmp_path)
    exclusive_in, shared_in, release_exclusive = threading.Event(), threading.Event(), threading.Event()
    with slots.hold(exclusive=False):
        exclusive = threading.Thread(target=lambda: _enter(slots, exclusive=True, inside=exclusive_in, until=release_exclusive))
        exclusive.start()
        assert not exclusive_in.wait(0.5), "the exclusive scenario started beside a running one"
    assert exclusive_in.wait(WAIT), "the exclusive scenario never started once the other ended"
    shared = threading.Thread(target=lambda: _enter(slots, exclusive=False, inside=shared_in))
    shared.start()
    assert not shared_in.wait(0.5), "a shared scenario started beside the exclusive one"
    release_exclusive.set()
    assert shared_in.wait(WAIT), "the shared scenario never started once the exclusive one ended"
    exclusive.join(WAIT)
    shared.join(WAIT)


def _enter(slots: ScenarioSlots, *, exclusive: bool, inside: threading.Event, until: threading.Event | None = None) -> None:
    with slots.hold(exclusive=exclusive):
        inside.set()
        if until is not None:
            until.wait(WAIT)


def test_an_outcome_crosses_to_the_controller_as_plain_data() -> None:
    scenario = Scenario(name="colocation", description="a group shares one node", features=(Feature.COLOCATION,), fixtures=("colocation",))
    sent = Outcome(scenario, "failed", 4.5, "B landed on n0", "colocation[2-10]")
    arrived = Outcome.from_wire(sent.to_wire())
    assert (arrived.name, arrived.outcome, arrived.duration, arrived.message) == ("colocation[2-10]", "failed", 4.5, "B landed on n0")
    assert (arrived.scenario.name, arrived.scenario.description, arrived.scenario.features) == ("colocation", "a group shares one node", (Feature.COLOCATION,))


def test_a_scenario_under_a_hidden_directory_is_not_a_scenario_of_the_session(tmp_path: Path) -> None:
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "test_c.py").write_text('SCENARIO = Scenario(name="c")\n')
    assert not runs_scenarios(["."], tmp_path)


def test_installed_scenarios_outside_the_working_directory_need_the_cluster(tmp_path: Path) -> None:
    installed = tmp_path / "venv" / "lib" / "site-packages" / "harness" / "_suite" / "tests" / "conformance"
    installed.mkdir(parents=True)
    (installed / "test_a.py").write_text('SCENARIO = Scenario(name="a")\n')
    (tmp_path / "empty").mkdir()
    assert runs_scenarios([str(installed)], tmp_path / "empty")
