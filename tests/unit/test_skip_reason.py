"""Why a scenario is skipped: an opt-in feature nobody asked for is not a gap of the implementation."""

from __future__ import annotations

import pytest

from harness.plugin import skip_reason
from harness.suite.features import Feature, resolve_supported

pytestmark = pytest.mark.unit


def test_an_opt_in_feature_not_requested_says_how_to_ask_for_it() -> None:
    reason = skip_reason([Feature.RESILIENCE])
    assert reason.startswith("opt-in feature Resilience not requested")
    assert "--all-features" in reason and "--supported-features" in reason and "--with-features" in reason


def test_a_feature_the_implementation_does_not_support_blames_the_implementation_not_the_suite() -> None:
    assert skip_reason([Feature.RESIZE]) == "implementation does not support Resize"


def test_an_unsupported_core_feature_beside_an_opt_in_one_is_named_as_unsupported() -> None:
    assert skip_reason([Feature.RESERVATION_RECORDS, Feature.RESILIENCE]) == "implementation does not support ReservationRecords, Resilience"


def test_with_features_adds_an_opt_in_feature_to_the_defaults_and_exempt_still_wins() -> None:
    default = frozenset({Feature.COLOCATION, Feature.RESIZE})
    supported = resolve_supported(
        declared=frozenset(), exempt=frozenset({Feature.RESIZE}), all_features=False, default=default, also=frozenset({Feature.GENERATIVE})
    )
    assert supported == {Feature.COLOCATION, Feature.GENERATIVE}


def test_with_features_adds_to_a_declared_set_too() -> None:
    supported = resolve_supported(
        declared=frozenset({Feature.RELEASE}), exempt=frozenset(), all_features=False, default=frozenset(), also=frozenset({Feature.GENERATIVE})
    )
    assert supported == {Feature.RELEASE, Feature.GENERATIVE}
