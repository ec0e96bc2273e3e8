"""A scenario the provider alone rules out (local_only off the local cluster) is skipped at collection, and handed out first.

Skipped at collection, not in its setup: xdist hands out a worker's next test as the
worker finishes one, and a scenario skipped in its setup finished at once near the
session's end, handing its worker the settings window's next scenario while the window's
first still ran there (on kind, `hugepages_decide`: the window took 42 s instead of 35).
No cluster: the scenarios here need none.
"""

from __future__ import annotations

import pytest

from harness.plugin import _longest_first

pytest_plugins = ("pytester",)
pytestmark = pytest.mark.unit

SCENARIO_MODULE = '''
from harness.suite.features import Feature
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(name="{name}", description="d", features=(Feature.COLOCATION,), fixtures=(){extra})


def test_{name}():
    pass
'''


def _modules(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_anywhere=SCENARIO_MODULE.format(name="anywhere", extra=""),
        test_local_pages=SCENARIO_MODULE.format(name="local_pages", extra=', local_only="kind nodes have no hugepages"'),
    )


def test_off_the_local_cluster_a_local_only_scenario_is_skipped_with_its_reason(pytester: pytest.Pytester) -> None:
    _modules(pytester)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "--cluster=kind", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*it runs on the local cluster only, not on kind: kind nodes have no hugepages*"])


def test_on_the_local_cluster_it_runs(pytester: pytest.Pytester) -> None:
    _modules(pytester)
    pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "--cluster=local").assert_outcomes(passed=2)


def test_skipped_scenarios_are_handed_out_before_the_rest(pytester: pytest.Pytester) -> None:
    _modules(pytester)
    items = pytester.getitems(pytester.path)
    assert [item.name for item in items] == ["test_anywhere", "test_local_pages"]
    items[1].add_marker(pytest.mark.skip(reason="ruled out"))
    assert [item.name for item in _longest_first(items)] == ["test_local_pages", "test_anywhere"]


def test_on_shared_slot_nodes_the_largest_pool_goes_first_after_the_skipped(pytester: pytest.Pytester) -> None:
    _modules(pytester)
    pytester.makepyfile(test_seven_nodes=SCENARIO_MODULE.format(name="seven_nodes", extra=", pool=PoolSpec(count=7)"))
    items = pytester.getitems(pytester.path)
    assert [item.name for item in items] == ["test_anywhere", "test_local_pages", "test_seven_nodes"]
    items[1].add_marker(pytest.mark.skip(reason="ruled out"))
    assert [item.name for item in _longest_first(items, shared_nodes=True)] == ["test_local_pages", "test_seven_nodes", "test_anywhere"]
    assert [item.name for item in _longest_first(items)] == ["test_local_pages", "test_anywhere", "test_seven_nodes"]


def test_a_skipped_scenario_claims_no_pool_and_so_does_not_go_first(pytester: pytest.Pytester) -> None:
    _modules(pytester)
    pytester.makepyfile(test_seven_nodes=SCENARIO_MODULE.format(name="seven_nodes", extra=", pool=PoolSpec(count=7)"))
    pytester.makepyfile(test_three_nodes=SCENARIO_MODULE.format(name="three_nodes", extra=", pool=PoolSpec(count=3)"))
    items = pytester.getitems(pytester.path)
    assert [item.name for item in items] == ["test_anywhere", "test_local_pages", "test_seven_nodes", "test_three_nodes"]
    items[2].add_marker(pytest.mark.skip(reason="ruled out"))
    assert [item.name for item in _longest_first(items, shared_nodes=True)] == ["test_seven_nodes", "test_three_nodes", "test_anywhere", "test_local_pages"]

