"""Timeline: observations become pod intervals and reservation bands, and the picture is drawn."""

from __future__ import annotations

import math
import re
import threading
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness.quantities import Amount
from harness.report import timeline
from harness.report.timeline import (
    LANE_MIN_PX,
    OVER_COLOUR,
    PHASE_COLOURS,
    UNSCHEDULED_LANE,
    VIOLATION_COLOUR,
    WIDTH_PX,
    NodeCapacity,
    PodInterval,
    ReservationBand,
    TimelineRecorder,
    _pack,
    cpu_millis,
    load_steps,
    memory_text,
    render_timeline,
)

Gi = 2**30
Mi = 2**20

pytestmark = pytest.mark.unit


def pod(name: str, node: str | None, phase: str, uid: str = "uid-1") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "uid": uid},
        "spec": {"nodeName": node} if node else {},
        "status": {"phase": phase},
    }


def record(name: str, *groups: tuple[str, str, str, str | None]) -> dict[str, Any]:
    """record(name, (group, peak cpu, state, node), ...) is ReservationRecord JSON."""
    return {
        "metadata": {"name": name},
        "spec": {"groups": [{"name": g, "peak": {"cpu": cpu, "memory": "1Gi"}} for g, cpu, _, _ in groups]},
        "status": {"groups": [{"name": g, "state": state, **({"node": n} if n else {})} for g, _, state, n in groups]},
    }


@pytest.mark.parametrize(
    ("quantity", "millis"),
    [
        pytest.param("3800m", 3800, id="millicores"),
        pytest.param("2", 2000, id="whole-cores"),
        pytest.param("1.5", 1500, id="fractional-cores"),
        pytest.param("1500001u", 1501, id="rounds-up"),
        pytest.param("", 0, id="empty"),
        pytest.param(None, 0, id="missing"),
    ],
)
def test_cpu_millis(quantity: str | None, millis: int) -> None:
    assert cpu_millis(quantity) == millis


def test_pod_bound_then_succeeded_is_one_interval_on_its_node() -> None:
    recorder = TimelineRecorder()
    recorder.observe_pods(1.0, [pod("run-1-build-pod", "node-a", "Running")])
    recorder.observe_pods(2.5, [pod("run-1-build-pod", "node-a", "Running")])
    recorder.observe_pods(4.0, [pod("run-1-build-pod", "node-a", "Succeeded")])
    recorder.observe_pods(5.0, [pod("run-1-build-pod", "node-a", "Succeeded")])
    assert recorder.intervals() == [PodInterval("run-1-build-pod", "node-a", 1.0, 4.0, "Succeeded")]


def test_waiting_for_a_node_is_its_own_interval() -> None:
    recorder = TimelineRecorder()
    recorder.observe_pods(0.0, [pod("p", None, "Pending")])
    recorder.observe_pods(1.0, [pod("p", "node-a", "Pending")])
    recorder.observe_pods(2.0, [pod("p", "node-a", "Running")])
    assert recorder.intervals() == [
        PodInterval("p", None, 0.0, 1.0, "Pending"),
        PodInterval("p", "node-a", 1.0, None, "Running"),
    ]


def test_a_pod_missing_from_a_snapshot_is_gone() -> None:
    recorder = TimelineRecorder()
    recorder.observe_pods(1.0, [pod("p", "node-a", "Running"), pod("q", "node-b", "Running")])
    recorder.observe_pods(3.0, [pod("q", "node-b", "Running")])
    assert recorder.intervals() == [
        PodInterval("p", "node-a", 1.0, 3.0, "Running"),
        PodInterval("q", "node-b", 1.0, None, "Running"),
    ]


def test_a_pod_recreated_under_the_same_name_is_a_new_interval() -> None:
    recorder = TimelineRecorder()
    recorder.observe_pods(1.0, [pod("p", "node-a", "Failed", uid="first")])
    recorder.observe_pods(2.0, [pod("p", "node-a", "Failed", uid="first")])
    recorder.observe_pods(3.0, [pod("p", "node-a", "Running", uid="second")])
    recorder.observe_pods(4.0, [pod("p", "node-b", "Running", uid="third")])
    assert recorder.intervals() == [
        PodInterval("p", "node-a", 1.0, 1.0, "Failed"),
        PodInterval("p", "node-a", 3.0, 4.0, "Running"),
        PodInterval("p", "node-b", 4.0, None, "Running"),
    ]


def test_times_are_from_the_origin_and_late_snapshots_are_dropped() -> None:
    recorder = TimelineRecorder(origin=100.0)
    assert recorder.latest is None
    assert recorder.observe_pods(101.0, [pod("p", "node-a", "Running")])
    assert not recorder.observe_pods(100.5, [])  # older than the last: would end p in the past
    assert recorder.observe_records(100.5, [])  # the records' clock is separate
    assert recorder.latest == 1.0
    assert recorder.intervals() == [PodInterval("p", "node-a", 1.0, None, "Running")]


def test_reserved_then_released_is_one_band() -> None:
    recorder = TimelineRecorder()
    recorder.observe_records(0.0, [record("run-1", ("source", "3800m", "Pending", None))])
    recorder.observe_records(0.5, [record("run-1", ("source", "3800m", "Reserved", "node-a"))])
    recorder.observe_records(3.0, [record("run-1", ("source", "3800m", "Reserved", "node-a"))])
    recorder.observe_records(5.0, [record("run-1", ("source", "3800m", "Released", "node-a"))])
    recorder.observe_records(6.0, [record("run-1", ("source", "3800m", "Released", "node-a"))])
    assert recorder.bands() == [ReservationBand("run-1", "source", "node-a", 0.5, 5.0, "Released", 3800)]
    assert recorder.bands()[0].label == "run-1/source peak=3800m"


def test_bands_end_on_rollback_move_and_disappearance() -> None:
    recorder = TimelineRecorder()
    recorder.observe_records(
        1.0,
        [
            record("run-1", ("a", "1", "Reserved", "node-a"), ("b", "1.5", "Reserved", "node-b")),
            record("run-2", ("c", "500m", "Reserved", "node-c")),
        ],
    )
    recorder.observe_records(
        2.0,
        [record("run-1", ("a", "1", "Pending", None), ("b", "1.5", "Reserved", "node-c"))],
    )
    assert recorder.bands() == [
        ReservationBand("run-1", "a", "node-a", 1.0, 2.0, "Pending", 1000),
        ReservationBand("run-1", "b", "node-b", 1.0, 2.0, "Reserved", 1500),
        ReservationBand("run-2", "c", "node-c", 1.0, 2.0, "Reserved", 500),
        ReservationBand("run-1", "b", "node-c", 2.0, None, "Reserved", 1500),
    ]


def test_the_recorder_can_be_fed_from_many_threads() -> None:
    recorder = TimelineRecorder()
    snapshot = [pod("p", "node-a", "Running")]
    records = [record("run-1", ("source", "2", "Reserved", "node-a"))]
    clock = iter(range(1, 100_000))
    clock_lock = threading.Lock()

    def feed() -> None:
        for _ in range(200):
            with clock_lock:
                t = float(next(clock))
            recorder.observe_pods(t, snapshot)
            recorder.observe_records(t, records)
            recorder.intervals()

    threads = [threading.Thread(target=feed) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert recorder.intervals() == [PodInterval("p", "node-a", 1.0, None, "Running")]
    assert recorder.bands() == [ReservationBand("run-1", "source", "node-a", 1.0, None, "Reserved", 2000)]


@pytest.mark.parametrize(
    ("extents", "rows"),
    [
        pytest.param([], [], id="nothing"),
        pytest.param([(0, 2), (1, 3), (2, 4)], [0, 1, 0], id="reuses-a-freed-row"),
        pytest.param([(2, 4), (0, 2)], [0, 0], id="input-order-kept"),
        pytest.param([(0, 5), (1, 2), (3, 4)], [0, 1, 1], id="nested"),
    ],
)
def test_pack(extents: list[tuple[float, float]], rows: list[int]) -> None:
    assert _pack(extents) == rows


SVG = "{http://www.w3.org/2000/svg}"


def svg_root(path: Path) -> ET.Element:
    """svg_root parses the picture: a file that is not well-formed XML fails here."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return root


def texts(root: ET.Element) -> list[str]:
    """texts is every text of the picture, a lane label's lines (its tspans) each on its own."""
    return [t.text or "" for t in root.iter() if t.tag in (f"{SVG}text", f"{SVG}tspan") and t.text]


def plot_area(root: ET.Element) -> ET.Element:
    """plot_area is the group clipped to the plot (labels running past it are cut, as matplotlib's clip_on did)."""
    (clip,) = root.iter(f"{SVG}clipPath")
    (group,) = [g for g in root.iter(f"{SVG}g") if g.get("clip-path") == f"url(#{clip.get('id')})"]
    return group


def bar_fill(root: ET.Element, label: str) -> str | None:
    """bar_fill is the fill of the bar that ``label`` is written on: the outlined rect it starts on, at its height."""
    plot = plot_area(root)
    (text,) = [t for t in plot.iter(f"{SVG}text") if t.text == label]
    x, y = float(text.get("x", "nan")), float(text.get("y", "nan"))
    for rect in plot.iter(f"{SVG}rect"):
        left, top, height = (float(rect.get(a, "nan")) for a in ("x", "y", "height"))
        if rect.get("stroke") == "#404040" and abs(left + 4 - x) < 0.02 and top < y < top + height:
            return rect.get("fill")
    return None


def over_fills(root: ET.Element) -> list[ET.Element]:
    """over_fills are the load strips' red stretches: the pods' requests over the node's allocatable."""
    return [r for r in plot_area(root).iter(f"{SVG}rect") if r.get("fill") == OVER_COLOUR and r.get("fill-opacity") == "0.45"]


def test_render_timeline_writes_an_svg_of_every_lane_bar_band_and_mark(tmp_path: Path) -> None:
    pods = [
        PodInterval("run-1-clone-pod", None, 0.2, 1.0, "Pending"),
        PodInterval("run-1-clone-pod", "node-a", 1.0, 3.0, "Succeeded", Amount(500, Gi)),
        PodInterval("run-1-build-pod", "node-a", 3.0, 6.0, "Failed"),
        PodInterval("run-2-lint-pod", "node-b", 2.0, None, "Running"),
        PodInterval("run-3-odd-pod", "node-x", 2.0, 2.0, "Unknown"),
    ]
    bands = [
        ReservationBand("run-1", "source", "node-a", 0.5, 6.5, "Released", 3800),
        ReservationBand("run-2", "cache", "node-b", 1.5, None, "Reserved", 1500),
    ]
    nodes = [NodeCapacity("node-a", 4000, 8 * Gi), NodeCapacity("node-b", 4000), NodeCapacity("node-c", 2000)]
    path = render_timeline(pods, bands, nodes, tmp_path / "out" / "timeline.svg", title="sample", until=8.0, marks=[(2.5, "node-overcommitted")])
    assert path == tmp_path / "out" / "timeline.svg"
    root = svg_root(path)
    lanes = ["node-a", "node-b", "node-c", "node-x", UNSCHEDULED_LANE]
    assert root.get("width") == str(WIDTH_PX) and root.get("viewBox", "").startswith(f"0 0 {WIDTH_PX} ")
    assert len(lanes) * LANE_MIN_PX <= float(root.get("height", "0")) <= len(lanes) * LANE_MIN_PX + 300
    written = texts(root)
    for wanted in ("sample", *lanes, "allocatable", "4000m cpu, 8Gi", "seconds from scenario start", "reservation band", "contract violated"):
        assert wanted in written, f"{wanted!r} is not a text of the SVG"
    plot_texts = [t.text for t in plot_area(root).iter(f"{SVG}text")]
    for label in [i.label for i in pods] + [b.label for b in bands]:
        assert label in plot_texts, f"{label!r} is not written in the plot"
    for i in pods:
        assert bar_fill(root, i.label) == PHASE_COLOURS[i.phase], i
    (mark,) = [line for line in plot_area(root).iter(f"{SVG}line") if line.get("stroke") == VIOLATION_COLOUR]
    (area,) = root.iter(f"{SVG}clipPath")
    (plot_rect,) = area
    assert mark.get("x1") == mark.get("x2")  # vertical, across the whole plot
    assert float(mark.get("y1", "nan")) == float(plot_rect.get("y", "0"))
    assert float(mark.get("y2", "nan")) == float(plot_rect.get("y", "0")) + float(plot_rect.get("height", "0"))
    (mark_text,) = [t for t in plot_area(root).iter(f"{SVG}text") if t.text == "violated: node-overcommitted"]
    assert mark_text.get("fill") == VIOLATION_COLOUR
    assert float(mark_text.get("x", "0")) > float(mark.get("x1", "0"))


def test_a_lane_label_is_the_wrapped_node_name_then_its_allocatable(tmp_path: Path) -> None:
    name = "replay-run-1a2b3c-worker-pool-0"
    root = svg_root(render_timeline([], [], [NodeCapacity(name, 4800, 8 * Gi)], tmp_path / "t.svg", title="lanes"))
    (label,) = [t for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "end"]
    lines = [span.text for span in label.iter(f"{SVG}tspan")]
    assert lines == [*timeline._wrapped(name).split("\n"), "allocatable", "4800m cpu, 8Gi"] and len(lines) > 3


def test_render_timeline_with_nothing_observed(tmp_path: Path) -> None:
    root = svg_root(render_timeline([], [], [], tmp_path / "empty.svg", title="nothing"))
    assert "no pods or nodes observed" in texts(root)
    assert "pods' requests / allocatable" not in texts(root) and "contract violated" not in texts(root)


def test_labels_are_escaped_and_read_back(tmp_path: Path) -> None:
    odd = 'run-<1>&"q"-pod'
    pods = [PodInterval(odd, "node-<a>", 0.0, 2.0, "Running")]
    bands = [ReservationBand("ns/<r>&", 'g"1"', "node-<a>", 0.0, None, "Reserved", 100)]
    path = render_timeline(pods, bands, [], tmp_path / "odd.svg", title='a & b <c> "d"', marks=[(1.0, "<rule>&")])
    written = texts(svg_root(path))
    for wanted in (odd, bands[0].label, 'a & b <c> "d"', "violated: <rule>&", "node-<a>"):
        assert wanted in written
    assert "<rule>" not in path.read_text()  # escaped, not markup


def test_a_picture_that_is_not_svg_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"timeline pictures are SVG: give a path ending in \.svg, not .*x\.png"):
        render_timeline([], [], [], tmp_path / "x.png", title="png")
    assert not (tmp_path / "x.png").exists()


def pod_with(name: str, node: str | None, phase: str, *containers: tuple[str, str], init: tuple[str, str] | None = None) -> dict[str, Any]:
    """pod_with(name, node, phase, (cpu, memory), ...) is pod JSON whose containers request those amounts."""
    obj = pod(name, node, phase)
    obj["spec"]["containers"] = [{"name": f"step-{n}", "resources": {"requests": {"cpu": c, "memory": m}}} for n, (c, m) in enumerate(containers)]
    if init is not None:
        obj["spec"]["initContainers"] = [{"name": "prepare", "resources": {"requests": {"cpu": init[0], "memory": init[1]}}}]
    return obj


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        pytest.param(8 * Gi, "8Gi", id="whole-gi"),
        pytest.param(768 * Mi, "768Mi", id="whole-mi"),
        pytest.param(1536 * Mi, "1536Mi", id="mi-when-not-whole-gi"),
        pytest.param(1000, "0.0Mi", id="bytes"),
        pytest.param(0, "0Mi", id="nothing"),
    ],
)
def test_memory_text(amount: int, text: str) -> None:
    assert memory_text(amount) == text


def test_each_pod_is_labelled_with_its_request() -> None:
    recorder = TimelineRecorder()
    # Two steps, 300m + 200m and 512Mi + 512Mi; the init container (100m, 64Mi) runs before them, so the pod needs 500m, 1Gi.
    recorder.observe_pods(0.0, [pod_with("p", None, "Pending", ("300m", "512Mi"), ("200m", "512Mi"), init=("100m", "64Mi"))])
    # An init container larger than the steps' sum decides: max(1500m, 500m) = 1500m; memory max(64Mi, 1Gi) = 1Gi.
    recorder.observe_pods(1.0, [pod_with("p", "node-a", "Running", ("300m", "512Mi"), ("200m", "512Mi")),
                                pod_with("q", "node-a", "Running", ("300m", "512Mi"), ("200m", "512Mi"), init=("1500m", "64Mi"))])
    intervals = recorder.intervals()
    assert [(i.pod, i.node, i.request) for i in intervals] == [
        ("p", None, Amount(500, Gi)),
        ("p", "node-a", Amount(500, Gi)),
        ("q", "node-a", Amount(1500, Gi)),
    ]
    assert [i.label for i in intervals] == ["p 500m, 1Gi", "p 500m, 1Gi", "q 1500m, 1Gi"]
    assert PodInterval("r", "node-a", 0, 1, "Running").label == "r"  # no containers seen: no request written


def test_node_capacity_label() -> None:
    assert NodeCapacity("node-a", 4800, 8 * Gi).label == "4800m cpu, 8Gi"
    assert NodeCapacity("node-a", 4800).label == "4800m cpu"


def test_load_steps_sum_the_requests_bound_to_the_node() -> None:
    pods = [
        PodInterval("a", "node-a", 1.0, 4.0, "Succeeded", Amount(500, Gi)),
        PodInterval("b", "node-a", 2.0, 3.0, "Succeeded", Amount(1000, 2 * Gi)),
        PodInterval("c", "node-a", 5.0, None, "Running", Amount(200, Gi)),  # open: counts to `until`
        PodInterval("d", None, 0.0, 1.0, "Pending", Amount(900, Gi)),  # waiting for a node: counts nowhere
        PodInterval("e", "node-b", 1.0, 9.0, "Running", Amount(900, Gi)),
        PodInterval("f", "node-a", 6.0, 7.0, "Running"),  # request unknown: counts nothing
    ]
    # a alone 500m; a+b 1500m, 3Gi; a alone again; nothing; c 200m from 5 to the end at 10.
    assert load_steps(pods, "node-a", until=10.0) == [
        (1.0, Amount(500, Gi)),
        (2.0, Amount(1500, 3 * Gi)),
        (3.0, Amount(500, Gi)),
        (4.0, Amount(0, 0)),
        (5.0, Amount(200, Gi)),
        (10.0, Amount(0, 0)),
    ]
    assert load_steps(pods, "node-c", until=10.0) == []


def test_the_recorder_ends_at_the_scenarios_end_not_its_last_change() -> None:
    recorder = TimelineRecorder(origin=100.0)
    recorder.observe_pods(101.0, [pod("p", "node-a", "Running")])
    recorder.observe_pods(101.6, [pod("p", "node-a", "Succeeded")])
    assert recorder.ended == pytest.approx(1.6)  # before finish(): the latest snapshot
    recorder.finish(131.0)  # a 31 s scenario whose pods stopped changing at 1.6 s
    assert recorder.ended == 31.0


def test_the_attached_timeline_spans_the_scenario_and_draws_each_nodes_allocatable(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.suite import attachments

    drawn: dict[str, Any] = {}

    def fake_render(pods: Any, bands: Any, nodes: Any, path: Path, **kwargs: Any) -> Path:
        drawn.update(nodes=nodes, **kwargs)
        Path(path).write_text("<svg/>")
        return Path(path)

    def read_node(name: str) -> Any:
        if name == "gone":
            raise RuntimeError("404 node gone")
        return SimpleNamespace(status=SimpleNamespace(allocatable={"cpu": "4", "memory": "6Gi", "pods": "110"}))

    monkeypatch.setattr(timeline, "render_timeline", fake_render)
    monkeypatch.setattr(attachments.allure.attach, "file", lambda *a, **k: None)
    run = SimpleNamespace(
        node_names=("node-a", "gone"),
        kube=SimpleNamespace(core=SimpleNamespace(read_node=read_node)),
        node_cpu_millis=lambda: 4800,
        node_memory_bytes=lambda: 8 * Gi,
        scenario=SimpleNamespace(name="peak_blocks_b"),
        namespace="conf-x",
    )
    recorder = TimelineRecorder()
    recorder.observe_pods(0.6, [pod("p", "node-a", "Succeeded")])
    recorder.finish(31.0)
    attachments._attach_timeline(run, recorder, marks=())  # type: ignore[arg-type]
    assert drawn["until"] == 31.0
    # node-a as the API reports it; the deleted node at the pool's size.
    assert drawn["nodes"] == [NodeCapacity("node-a", 4000, 6 * Gi), NodeCapacity("gone", 4800, 8 * Gi)]


def test_a_node_over_its_allocatable_is_drawn_red_in_its_strip(tmp_path: Path) -> None:
    nodes = [NodeCapacity("node-a", 4800, 8 * Gi)]
    fits = [PodInterval("a", "node-a", 0.0, 5.0, "Running", Amount(4000, Gi)), PodInterval("b", "node-a", 1.0, 5.0, "Running", Amount(800, Gi))]
    # 4000m + 900m = 4900m > 4800m from 1 s to 5 s.
    over = [fits[0], PodInterval("b", "node-a", 1.0, 5.0, "Running", Amount(900, Gi))]
    fitting = svg_root(render_timeline(fits, [], nodes, tmp_path / "fits.svg", title="fits", until=6.0))
    assert over_fills(fitting) == []
    assert "cpu requested: at most 4800m of 4800m allocatable" in texts(fitting)
    overdrawn = svg_root(render_timeline(over, [], nodes, tmp_path / "over.svg", title="over", until=6.0))
    (red,) = over_fills(overdrawn)  # one stretch, 1 s to 5 s, of the cpu strip; memory (2Gi of 8Gi) fits
    assert float(red.get("width", "0")) > 100
    (cpu_text,) = [t for t in overdrawn.iter(f"{SVG}text") if t.text == "cpu requested: at most 4900m of 4800m allocatable"]
    assert cpu_text.get("fill") == OVER_COLOUR


def test_other_resources_show_on_bars_bands_and_lanes() -> None:
    from harness.report.timeline import peak_others_of

    gpu = "example.com/gpu"
    assert PodInterval("p", "node-a", 0, 1, "Running", Amount.of({"cpu": 500, "memory": Gi, gpu: 1})).label == "p 500m, 1Gi, example.com/gpu 1"
    assert ReservationBand("run-1", "source", "node-a", 0, None, "Reserved", 3800, ((gpu, 1),)).label == "run-1/source peak=3800m, example.com/gpu 1"
    assert NodeCapacity("node-a", 4800, 8 * Gi, (("ephemeral-storage", 90 * Gi),)).label == "4800m cpu, 8Gi, ephemeral-storage 90Gi"
    assert peak_others_of({"cpu": "1", "memory": "1Gi", gpu: "2", "hugepages-2Mi": "lots", "pods": "3"}) == ((gpu, 2),)


def test_a_band_carries_the_records_other_resources() -> None:
    recorder = TimelineRecorder(origin=0.0)
    obj = {"metadata": {"name": "run-1"},
           "spec": {"groups": [{"name": "source", "peak": {"cpu": "1", "memory": "1Gi", "example.com/gpu": "1"}}]},
           "status": {"groups": [{"name": "source", "state": "Reserved", "node": "node-a"}]}}
    recorder.observe_records(1.0, [obj])
    assert recorder.bands()[0].label == "run-1/source peak=1000m, example.com/gpu 1"


times = st.integers(min_value=0, max_value=2400).map(lambda n: n / 40)  # a sampler's times: quarter seconds and finer, up to a minute
names = st.text(alphabet="ab-<&\"'> \u00e9\u4e2d\x01", min_size=1, max_size=40)
node_names = st.sampled_from(["node-a", "node-b", "a-long-node-name-that-wraps-at-its-hyphens-0"])
requests = st.none() | st.builds(Amount, st.integers(0, 9000), st.integers(0, 20 * Gi))
intervals = st.builds(
    lambda pod, node, start, length, phase, request: PodInterval(pod, node, start, None if length is None else start + length, phase, request),
    names, st.none() | node_names, times, st.none() | st.sampled_from([0.0, 0.25, 3.0, 40.0]), st.sampled_from([*PHASE_COLOURS, "Odd"]), requests,
)
band_strategy = st.builds(
    lambda record, group, node, start, length, peak: ReservationBand(record, group, node, start, None if length is None else start + length, "Reserved", peak),
    names, names, node_names, times, st.none() | st.sampled_from([0.0, 1.0, 30.0]), st.integers(0, 9000),
)
capacities = st.lists(st.builds(NodeCapacity, node_names, st.integers(0, 9000), st.integers(0, 16 * Gi)), max_size=3, unique_by=lambda n: n.node)
NUMBER = re.compile(r"-?[0-9.]+(?:e[-+]?[0-9]+)?")
SIZES = ("width", "height", "stroke-width", "font-size")


@settings(max_examples=40, deadline=None)
@given(st.lists(intervals, max_size=8), st.lists(band_strategy, max_size=3), capacities, st.none() | times,
       st.lists(st.tuples(times, names), max_size=2))
def test_any_timeline_is_well_formed_svg_with_finite_coordinates(
    tmp_path_factory: pytest.TempPathFactory, pods: list[PodInterval], bands: list[ReservationBand], nodes: list[NodeCapacity],
    until: float | None, marks: list[tuple[float, str]],
) -> None:
    path = render_timeline(pods, bands, nodes, tmp_path_factory.getbasetemp() / "any.svg", title="any <&>", until=until, marks=marks)
    root = svg_root(path)
    for element in root.iter():
        for name in ("x", "y", "x1", "y1", "x2", "y2", *SIZES, "fill-opacity", "stroke-opacity"):
            if (value := element.get(name)) is not None:
                assert math.isfinite(float(value)), (element.tag, name, value)
                assert name not in SIZES or float(value) >= 0, (element.tag, name, value)
        for name in ("viewBox", "stroke-dasharray"):
            if (value := element.get(name)) is not None:
                assert all(math.isfinite(float(n)) for n in NUMBER.findall(value)), (element.tag, name, value)
    plot_texts = [t.text or "" for t in plot_area(root).iter(f"{SVG}text")]
    for label in {i.label.replace("\x01", "") for i in pods} | {b.label.replace("\x01", "") for b in bands}:
        assert label in plot_texts  # a control character XML cannot hold is dropped, the rest read back


@pytest.mark.parametrize(
    ("low", "high", "labels"),
    [
        pytest.param(0, 41.6, ["0", "5", "10", "15", "20", "25", "30", "35", "40"], id="fives"),
        pytest.param(0, 1.04, [f"{n / 10:.1f}" for n in range(11)], id="tenths"),
        pytest.param(-0.3, 1, ["-0.2", "0.0", "0.2", "0.4", "0.6", "0.8", "1.0"], id="no-minus-zero"),
    ],
)
def test_the_x_axis_ticks_are_round_numbers(low: float, high: float, labels: list[str]) -> None:
    from harness.report.timeline_svg import _ticks

    assert [text for _, text in _ticks(low, high)] == labels


@given(times, st.integers(min_value=1, max_value=10**7).map(lambda n: n / 1000))
def test_the_x_axis_has_four_to_twelve_ticks_a_round_step_apart(low: float, span: float) -> None:
    from harness.report.timeline_svg import _ticks

    ticks = [value for value, _ in _ticks(low, low + span)]
    assert 4 <= len(ticks) <= 12
    assert all(low - 1e-9 * span <= t <= low + span * (1 + 1e-9) for t in ticks)
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert min(abs(mantissa - m) for m in (1, 2, 5, 10)) < 1e-6
