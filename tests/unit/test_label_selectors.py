"""Label selectors as metav1.LabelSelectorAsSelector reads them: null selects nothing, {} everything."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_scheduler.core.label_selectors import EVERYTHING, NOTHING, LabelSelector, labels_of, parse_label_selector

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        pytest.param(None, {}, False, id="null-selects-nothing"),
        pytest.param(None, {"app": "web"}, False, id="null-selects-nothing-labelled"),
        pytest.param({}, {}, True, id="empty-selects-everything"),
        pytest.param({"matchLabels": {}}, {"x": "y"}, True, id="empty-match-labels-selects-everything"),
        pytest.param({"matchLabels": {"app": "web"}}, {"app": "web", "tier": "1"}, True, id="match-labels-subset"),
        pytest.param({"matchLabels": {"app": "web"}}, {"app": "db"}, False, id="match-labels-other-value"),
        pytest.param({"matchLabels": {"app": "web"}}, {}, False, id="match-labels-absent"),
        pytest.param({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}, {"app": "api"}, True, id="in"),
        pytest.param({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}, {}, False, id="in-absent"),
        pytest.param({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}, {}, True, id="notin-absent-matches"),
        pytest.param({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}, {"app": "web"}, False, id="notin-present"),
        pytest.param({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, {"app": ""}, True, id="exists-empty-value"),
        pytest.param({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, {}, False, id="exists-absent"),
        pytest.param({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, {}, True, id="does-not-exist"),
        pytest.param({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, {"app": "x"}, False, id="does-not-exist-present"),
        pytest.param(
            {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]},
            {"app": "web", "tier": "db"},
            False,
            id="labels-and-expressions-anded",
        ),
        pytest.param({"matchExpressions": [{"key": "app", "operator": "In", "values": []}]}, {"app": "x"}, False, id="invalid-in-without-values"),
        pytest.param({"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]}, {"app": "x"}, False, id="invalid-exists-with-values"),
        pytest.param({"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]}, {"app": "2"}, False, id="invalid-operator"),
        pytest.param({"matchExpressions": [{"operator": "Exists"}]}, {"app": "2"}, False, id="invalid-no-key"),
    ],
)
def test_parse_and_match(selector: Any, labels: dict[str, str], matches: bool) -> None:
    assert parse_label_selector(selector).matches(labels) is matches


def test_empty_is_everything_and_not_nothing() -> None:
    assert parse_label_selector({}) == EVERYTHING and EVERYTHING.empty
    assert parse_label_selector(None) == NOTHING and not NOTHING.empty
    assert not parse_label_selector({"matchLabels": {"a": "b"}}).empty


def test_more_requirements_narrow_a_selector_but_never_revive_nothing() -> None:
    extra = (("rev", "In", frozenset({"7"})),)
    assert EVERYTHING.with_requirements(extra).matches({"rev": "7"})
    assert not EVERYTHING.with_requirements(extra).matches({"rev": "8"})
    assert NOTHING.with_requirements(extra) is NOTHING


def test_labels_of_tolerates_missing_metadata() -> None:
    assert labels_of({"metadata": {"labels": {"a": "b"}}}) == {"a": "b"}
    assert labels_of({}) == {} and labels_of(None) == {} and labels_of({"metadata": {"labels": None}}) == {}


_KEYS = st.sampled_from(["app", "tier", "zone"])
_VALUES = st.sampled_from(["a", "b", "c"])


@given(
    labels=st.dictionaries(_KEYS, _VALUES),
    expressions=st.lists(
        st.tuples(_KEYS, st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]), st.frozensets(_VALUES, min_size=1)), max_size=3
    ),
)
def test_a_selector_matches_exactly_when_every_requirement_holds(labels: dict[str, str], expressions: list[tuple[str, str, frozenset[str]]]) -> None:
    raw = [
        {"key": key, "operator": op, **({"values": sorted(values)} if op in ("In", "NotIn") else {})} for key, op, values in expressions
    ]

    def holds(key: str, op: str, values: frozenset[str]) -> bool:
        return {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]

    selector: LabelSelector = parse_label_selector({"matchExpressions": raw})
    assert selector.matches(labels) == all(holds(*e) for e in expressions)
