"""rescon replay's names for copies and rounds: distinct, recognisable, within a label value's 63 characters."""

from __future__ import annotations

import pytest

from harness.replay import bad_input
from harness.replay.bad_input import ReplayInputError
from harness.replay.names import MAX_RUN_NAME, base_names, instance_name, instance_names, written_name

pytestmark = pytest.mark.unit


def test_a_run_goes_by_its_name_or_its_generate_name_prefix() -> None:
    assert written_name({"name": "build-7", "generateName": "x-"}) == "build-7"
    assert written_name({"generateName": "pr-build-"}) == "pr-build"
    assert written_name({}) == "run"


def test_repeated_bases_are_numbered_without_taking_a_written_name() -> None:
    assert base_names(["build", "build", "build-2", "build"]) == ["build", "build-3", "build-2", "build-4"]


def test_one_copy_one_round_keeps_the_name() -> None:
    assert instance_name("build", copy=1, round=1, copies=1, rounds=1) == "build"


def test_copies_and_rounds_are_suffixed_round_first() -> None:
    assert instance_names(["build", "lint"], copies=2, round=3, rounds=4) == ["build-r3-c1", "build-r3-c2", "lint-r3-c1", "lint-r3-c2"]
    assert instance_names(["build"], copies=1, round=2, rounds=2) == ["build-r2"]


def test_a_long_base_is_cut_never_the_suffix() -> None:
    base = "a-very-long-pipeline-run-name-written-by-a-trigger-template-abcdef"  # 66 characters
    name = instance_name(base, copy=12, round=3, copies=20, rounds=3)
    assert len(name) == MAX_RUN_NAME and name.endswith("-r3-c12")
    assert name == "a-very-long-pipeline-run-name-written-by-a-trigger-templ-r3-c12"  # 56 + 7


def test_the_cut_leaves_no_dash_before_the_suffix() -> None:
    # 63 characters, 60 of them kept for "-c2": the 60th is the dash, which goes.
    cut = instance_name("y" * 59 + "-abc", copy=2, round=1, copies=2, rounds=1)
    assert cut == "y" * 59 + "-c2"


def test_two_long_names_that_the_cut_makes_one_are_refused() -> None:
    first, second = "nightly-" + "x" * 60 + "-amd64", "nightly-" + "x" * 60 + "-arm64"
    with pytest.raises(ReplayInputError) as err:
        instance_names([first, second], copies=2, round=1, rounds=1)
    assert str(err.value) == bad_input.names_collide("nightly-" + "x" * 52 + "-c1")
