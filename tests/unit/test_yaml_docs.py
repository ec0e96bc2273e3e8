"""harness.yaml_docs reads and writes the documents PyYAML's safe functions do."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import yaml_docs

pytestmark = pytest.mark.unit

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20), st.floats(allow_nan=False))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.text(min_size=1, max_size=8), values, min_size=1, max_size=4), min_size=1, max_size=3))
def test_what_is_written_reads_back_the_same_both_ways(docs: list[dict[str, Any]]) -> None:
    text = yaml_docs.dump_all(docs)
    assert yaml_docs.load_all(text) == docs
    assert list(yaml.safe_load_all(text)) == docs
    assert yaml_docs.load_all(yaml.safe_dump_all(docs, sort_keys=False)) == docs


def test_keys_keep_their_order_and_unsafe_tags_are_refused() -> None:
    assert yaml_docs.dump_all([{"kind": "Pod", "apiVersion": "v1"}]).splitlines()[:2] == ["kind: Pod", "apiVersion: v1"]
    with pytest.raises(yaml.YAMLError):
        yaml_docs.load_all("!!python/object/apply:os.system ['true']")
