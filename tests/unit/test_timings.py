"""The report's timings block: nearest-rank percentiles, worked by hand, and the block's shape."""

from __future__ import annotations

import pytest

from harness.report.timings import LatencySummary, Timings, nearest_rank

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("samples", "percent", "expected"),
    [
        # n=4: p50 is rank ceil(0.5*4)=2, p99 rank ceil(3.96)=4, p25 rank 1, p26 rank ceil(1.04)=2.
        pytest.param([0.4, 0.1, 0.3, 0.2], 50, 0.2, id="p50-of-four-is-the-second-not-a-mean"),
        pytest.param([0.4, 0.1, 0.3, 0.2], 99, 0.4, id="p99-of-four-is-the-largest"),
        pytest.param([0.4, 0.1, 0.3, 0.2], 25, 0.1, id="p25-of-four-is-the-first"),
        pytest.param([0.4, 0.1, 0.3, 0.2], 26, 0.2, id="just-past-a-rank-takes-the-next"),
        # n=5: p50 rank ceil(2.5)=3.
        pytest.param([5.0, 1.0, 4.0, 2.0, 3.0], 50, 3.0, id="p50-of-five-is-the-median"),
        pytest.param([7.0], 50, 7.0, id="one-sample-is-every-percentile"),
        pytest.param([7.0], 99, 7.0, id="one-sample-p99"),
        pytest.param([1.0, 1.0, 9.0], 50, 1.0, id="ties-count-each"),
        # n=200: p99 rank ceil(198)=198, so the two largest (199, 200) lie above it.
        pytest.param([float(i) for i in range(1, 201)], 99, 198.0, id="p99-of-two-hundred-leaves-two-above"),
        pytest.param([float(i) for i in range(1, 201)], 100, 200.0, id="p100-is-the-largest"),
    ],
)
def test_nearest_rank_is_the_sample_at_rank_ceil_p_n(samples: list[float], percent: float, expected: float) -> None:
    assert nearest_rank(samples, percent) == expected


@pytest.mark.parametrize("percent", [0, -1, 100.5])
def test_nearest_rank_refuses_a_percent_outside_0_to_100(percent: float) -> None:
    with pytest.raises(ValueError, match="not in"):
        nearest_rank([1.0], percent)


def test_nearest_rank_refuses_no_samples() -> None:
    with pytest.raises(ValueError, match="at least one sample"):
        nearest_rank([], 50)


def test_a_summary_counts_and_rounds_to_the_millisecond() -> None:
    summary = LatencySummary.of([0.30049, 0.1, 0.2])
    assert summary == LatencySummary(3, 0.2, 0.3, 0.3)
    assert summary.describe() == "p50 0.200s, p99 0.300s, max 0.300s (3 samples)"


def test_no_sample_is_no_figure_never_zero() -> None:
    summary = LatencySummary.of([])
    assert summary == LatencySummary(0, None, None, None)
    assert summary.to_dict() == {"count": 0, "p50": None, "p99": None, "max": None}
    assert summary.describe() == "no sample"


def test_the_block_has_one_entry_per_latency_and_reads_back_equal() -> None:
    timings = Timings.of(claim=[0.5, 0.1], release=[], requeue=[2.0])
    assert timings.to_dict() == {
        "claimSeconds": {"count": 2, "p50": 0.1, "p99": 0.5, "max": 0.5},
        "releaseSeconds": {"count": 0, "p50": None, "p99": None, "max": None},
        "requeueSeconds": {"count": 1, "p50": 2.0, "p99": 2.0, "max": 2.0},
    }
    assert Timings.from_dict(timings.to_dict()) == timings
    assert list(timings.by_name()) == ["claim", "release", "requeue"]
