"""Concurrent scenarios: per-worker scheduler names, which sessions need the cluster, and the scenario slots."""

from __future__ import annotations

import pytest

import threading
from collections.abc import Sequence
from pathlib import Path

from harness.plugin import Outcome
from harness.suite.features import Feature
from harness.suite.scenario import Scenario
from harness.suite.workers import (
    SLOTS_ENV,
    ScenarioSlots,
    Slot,
    earlier_nodeids,
    largest_pool_first,
    note_started,
    runs_scenarios,
    scheduler_name_for,
    slot_of,
    slots_last,
)
from harness.timeouts import TimeoutConfig

pytestmark = pytest.mark.unit

#: Bounds every wait of these tests; none comes near it unless the lock is wrong.
WAIT = 10.0


def test_each_worker_starts_its_own_scheduler_but_an_external_one_keeps_its_name() -> None:
    assert scheduler_name_for("tkn-scheduler", mode="reference", worker="gw1") == "tkn-scheduler-gw1"
    assert scheduler_name_for("mine", mode="command", worker="gw0") == "mine-gw0"
    assert scheduler_name_for("mine", mode="external", worker="gw0") == "mine"
    assert scheduler_name_for("tkn-scheduler", mode="reference", worker=None) == "tkn-scheduler"


def test_the_settings_window_is_handed_out_after_the_shared_scenarios_and_those_alone_last() -> None:
    kinds = {"a": Slot.SHARED, "b": Slot.SHARED, "c": Slot.SHARED, "RESTART": Slot.ALONE, "defaults": Slot.TEKTON_SETTINGS, "flags": Slot.TEKTON_SETTINGS}
    names = ["a", "RESTART", "defaults", "b", "flags", "c"]
    assert slots_last(names, slot_of=kinds.__getitem__) == ["a", "b", "c", "defaults", "flags", "RESTART"]
    assert slots_last([], slot_of=kinds.__getitem__) == []


def test_the_largest_pool_is_handed_out_first_and_the_rest_keep_their_order() -> None:
    pools = {"a": 2, "b": 7, "c": 7, "d": 1}
    assert largest_pool_first(["a", "b", "c", "d"], pool_count_of=pools.__getitem__) == ["b", "a", "c", "d"]
    assert largest_pool_first(["c", "a", "b"], pool_count_of=pools.__getitem__) == ["c", "a", "b"]
    assert largest_pool_first(["d"], pool_count_of=pools.__getitem__) == ["d"]
    assert largest_pool_first([], pool_count_of=pools.__getitem__) == []


def test_a_scenario_runs_alone_when_it_restarts_a_component_and_in_the_window_when_it_changes_settings() -> None:
    base = {"description": "d", "features": (Feature.COLOCATION,), "fixtures": ("f",)}
    assert slot_of(Scenario(name="a", **base)) is Slot.SHARED
    assert slot_of(Scenario(name="b", tekton_settings=("feature-flags/enable-api-fields",), **base)) is Slot.TEKTON_SETTINGS
    assert slot_of(Scenario(name="c", restarts=("etcd",), **base)) is Slot.ALONE
    assert slot_of(Scenario(name="d", exclusive=True, tekton_settings=("feature-flags/x",), **base)) is Slot.ALONE


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


def test_shared_scenarios_run_side_by_side_and_so_do_the_windows(tmp_path: Path) -> None:
    slots = ScenarioSlots(tmp_path)
    for slot in (Slot.SHARED, Slot.TEKTON_SETTINGS):
        inside = threading.Event()
        with slots.hold(slot):
            other = threading.Thread(target=lambda: _enter(slots, slot, inside=inside))
            other.start()
            assert inside.wait(WAIT), f"a second {slot.name} scenario waited for the first"
        other.join(WAIT)


@pytest.mark.parametrize("first, second", [(Slot.SHARED, Slot.ALONE), (Slot.SHARED, Slot.TEKTON_SETTINGS), (Slot.TEKTON_SETTINGS, Slot.SHARED),
                                           (Slot.TEKTON_SETTINGS, Slot.ALONE)])
def test_a_scenario_waits_for_running_ones_of_another_slot_and_keeps_the_next_out(tmp_path: Path, first: Slot, second: Slot) -> None:
    slots = ScenarioSlots(tmp_path)
    second_in, third_in, release_second = threading.Event(), threading.Event(), threading.Event()
    with slots.hold(first):
        waiting = threading.Thread(target=lambda: _enter(slots, second, inside=second_in, until=release_second))
        waiting.start()
        assert not second_in.wait(0.5), f"the {second.name} scenario started beside a running {first.name} one"
    assert second_in.wait(WAIT), f"the {second.name} scenario never started once the {first.name} one ended"
    third = threading.Thread(target=lambda: _enter(slots, first, inside=third_in))
    third.start()
    assert not third_in.wait(0.5), f"a {first.name} scenario started beside the {second.name} one"
    release_second.set()
    assert third_in.wait(WAIT), f"the {first.name} scenario never started once the {second.name} one ended"
    waiting.join(WAIT)
    third.join(WAIT)


def test_a_shared_scenario_waiting_for_the_window_lets_the_windows_later_scenarios_in(tmp_path: Path) -> None:
    """Handed out last, the window's scenarios go in beside the open window rather than behind a late shared one."""
    slots = ScenarioSlots(tmp_path)
    shared_in, late_in, release_late = threading.Event(), threading.Event(), threading.Event()
    with slots.hold(Slot.TEKTON_SETTINGS):
        shared = threading.Thread(target=lambda: _enter(slots, Slot.SHARED, inside=shared_in))
        shared.start()
        assert not shared_in.wait(0.5), "the shared scenario started beside the window"
        late = threading.Thread(target=lambda: _enter(slots, Slot.TEKTON_SETTINGS, inside=late_in, until=release_late))
        late.start()
        assert late_in.wait(WAIT), "a window scenario waited behind the shared one waiting for the window"
    assert not shared_in.wait(0.5), "the shared scenario started beside the window's later scenario"
    release_late.set()
    assert shared_in.wait(WAIT), "the shared scenario never started once the window closed"
    shared.join(WAIT)
    late.join(WAIT)


def test_a_window_scenario_waiting_for_the_shared_ones_keeps_new_shared_ones_out(tmp_path: Path) -> None:
    slots = ScenarioSlots(tmp_path)
    window_in, late_in = threading.Event(), threading.Event()
    with slots.hold(Slot.SHARED):
        window = threading.Thread(target=lambda: _enter(slots, Slot.TEKTON_SETTINGS, inside=window_in))
        window.start()
        assert not window_in.wait(0.5), "the window opened beside a shared scenario"
        late = threading.Thread(target=lambda: _enter(slots, Slot.SHARED, inside=late_in))
        late.start()
        assert not late_in.wait(0.5), "a shared scenario slipped in ahead of the window waiting"
    assert window_in.wait(WAIT) and late_in.wait(WAIT)
    window.join(WAIT)
    late.join(WAIT)


def test_two_copies_of_one_window_scenario_take_turns_at_its_setting_and_others_go_in(tmp_path: Path) -> None:
    slots = ScenarioSlots(tmp_path)
    copy_in, other_in = threading.Event(), threading.Event()
    with slots.hold(Slot.TEKTON_SETTINGS, ["feature-flags/enable-api-fields"]):
        copy = threading.Thread(target=lambda: _enter(slots, Slot.TEKTON_SETTINGS, inside=copy_in, settings=["feature-flags/enable-api-fields"]))
        copy.start()
        other = threading.Thread(target=lambda: _enter(slots, Slot.TEKTON_SETTINGS, inside=other_in, settings=["config-defaults/default-pod-template"]))
        other.start()
        assert other_in.wait(WAIT), "a window scenario changing another setting waited"
        assert not copy_in.wait(0.5), "a second copy changed the setting the first still holds"
    assert copy_in.wait(WAIT), "the second copy never went in once the first put its setting back"
    copy.join(WAIT)
    other.join(WAIT)


def _enter(
    slots: ScenarioSlots,
    slot: Slot,
    *,
    inside: threading.Event,
    until: threading.Event | None = None,
    settings: Sequence[str] = (),
    after: Sequence[str] = (),
    timeouts: TimeoutConfig = TimeoutConfig(earlier_slots_started=WAIT),
) -> None:
    with slots.hold(slot, settings, after=after, timeouts=timeouts):
        inside.set()
        if until is not None:
            until.wait(WAIT)


def test_the_window_waits_for_the_shared_tests_and_a_scenario_alone_for_the_window_too() -> None:
    kinds = {"a": Slot.SHARED, "W": Slot.TEKTON_SETTINGS, "b": Slot.SHARED, "X": Slot.ALONE, "V": Slot.TEKTON_SETTINGS}
    items = ["a", "W", "b", "X", "V"]
    assert earlier_nodeids(items, Slot.TEKTON_SETTINGS, slot_of=kinds.__getitem__, nodeid_of=str) == ["a", "b"]
    assert earlier_nodeids(items, Slot.ALONE, slot_of=kinds.__getitem__, nodeid_of=str) == ["a", "W", "b", "V"]
    assert earlier_nodeids(items, Slot.SHARED, slot_of=kinds.__getitem__, nodeid_of=str) == []


def test_a_window_scenario_goes_in_only_once_every_earlier_test_has_started(tmp_path: Path) -> None:
    slots = ScenarioSlots(tmp_path)
    inside = threading.Event()
    window = threading.Thread(target=lambda: _enter(slots, Slot.TEKTON_SETTINGS, inside=inside, after=["t::late_shared", "t::other"]))
    window.start()
    slots.note_started("t::other")
    assert not inside.wait(1.0)  # the late shared test is still queued behind another one: the turnstile stays free
    assert slots.not_started(["t::late_shared", "t::other"]) == ["t::late_shared"]
    slots.note_started("t::late_shared")
    assert inside.wait(WAIT)
    window.join(WAIT)


def test_a_late_shared_test_that_started_runs_before_the_window_opens(tmp_path: Path) -> None:
    slots = ScenarioSlots(tmp_path)
    shared_in, release_shared, window_in = threading.Event(), threading.Event(), threading.Event()
    window = threading.Thread(target=lambda: _enter(slots, Slot.TEKTON_SETTINGS, inside=window_in, after=["t::late"]))
    window.start()
    assert not window_in.wait(0.5)
    slots.note_started("t::late")
    shared = threading.Thread(target=lambda: _enter(slots, Slot.SHARED, inside=shared_in, until=release_shared))
    shared.start()
    assert shared_in.wait(WAIT)
    assert not window_in.wait(0.5)  # now the window waits for the shared test to end, as before
    release_shared.set()
    assert window_in.wait(WAIT)
    for thread in (shared, window):
        thread.join(WAIT)


def test_a_test_that_never_starts_holds_the_window_back_only_until_its_timeout(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    slots = ScenarioSlots(tmp_path)
    inside = threading.Event()
    _enter(slots, Slot.TEKTON_SETTINGS, inside=inside, after=["t::lost"], timeouts=TimeoutConfig(earlier_slots_started=0.3))
    assert inside.is_set()
    assert "t::lost first" in caplog.text and "going in anyway" in caplog.text


def test_a_shared_scenario_never_waits_for_others_to_start(tmp_path: Path) -> None:
    slots = ScenarioSlots(tmp_path)
    inside = threading.Event()
    _enter(slots, Slot.SHARED, inside=inside, after=["t::never"], timeouts=TimeoutConfig(earlier_slots_started=60.0))
    assert inside.is_set()


def test_a_worker_notes_its_tests_where_the_controller_put_the_slots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SLOTS_ENV, str(tmp_path))
    note_started("tests/conformance/test_a.py::test_a")
    assert ScenarioSlots(tmp_path).not_started(["tests/conformance/test_a.py::test_a", "tests/conformance/test_b.py::test_b"]) == [
        "tests/conformance/test_b.py::test_b"
    ]
    monkeypatch.delenv(SLOTS_ENV)
    note_started("anything")  # a plain session: nowhere to note it, and nothing waits for it


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
