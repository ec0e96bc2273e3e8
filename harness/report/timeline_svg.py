"""timeline_svg: a TimelineLayout (harness.report.timeline) written as SVG text.

Plain string building, no drawing library: a picture costs a few
milliseconds of CPU, where matplotlib took a tenth of a second and more than
half a second for a process's first. The picture is the one matplotlib drew:
the title and a legend above the plot, one lane per node with its label in
the left margin, bands, bars, load strips, red marks, and the x axis below.

Coordinates are pixels of a ``WIDTH_PX``-wide picture: x from seconds
(``seconds_per_px``), y from row units (``ROW_PX``), offset by the margins.
Font sizes and line widths are matplotlib's, in points, drawn at ``DPI``
(``_pt``), so ``CHAR_PX``'s estimate of a label's width still holds.

    svg = timeline_svg(timeline_layout(pods, bands, nodes, until=31.0), title="retry-same-node")
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import ClassVar
from xml.sax.saxutils import escape

from harness.report.timeline import (
    BAND_COLOURS,
    BAR_UNITS,
    CHAR_PX,
    DPI,
    FONT_SIZE,
    LEFT_PX,
    OVER_COLOUR,
    PHASE_COLOURS,
    RIGHT_PX,
    ROW_PX,
    STRIP_COLOUR,
    TOP_PX,
    VIOLATION_COLOUR,
    WIDTH_PX,
    BandBox,
    LoadStrip,
    PodBar,
    TimelineLayout,
)

#: The id of the plot area's clipPath: labels running past the plot are cut there, as matplotlib's clip_on did.
CLIP_ID = "timeline-plot"
FONT_FAMILY = "DejaVu Sans, Arial, sans-serif"  # DejaVu first: CHAR_PX is its average width
TITLE_SIZE = 12
TITLE_TOP_PX = 12
TICK_SIZE = FONT_SIZE + 1
EMPTY_SIZE = 10
OUTLINE = "#404040"
LIGHT_LINE = "#b0b0b0"
GRID_COLOUR = "#e6e6e6"
ODD_LANE = "#f5f5f5"
TICK_PT = 3.5  # a tick's length, and the gap from it to its label
LABEL_NUDGE_PX = 4  # labels start this far right of their bar's, band's or line's start
# The legend's rows: the last one centred this far above the plot, the others stacked above it.
LEGEND_GAP_PX = 10
LEGEND_ROW_PX = 16

# A text's baseline from where it should sit, in ems: "va=center" and "va=top" without relying on dominant-baseline.
CENTRE_EM = 0.35
TOP_EM = 0.76
LINE_EM = 1.2

# Characters XML 1.0 cannot carry at all, escaped or not: dropped from labels (the picture is for humans).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def timeline_svg(layout: TimelineLayout, *, title: str) -> str:
    """timeline_svg is the whole picture as SVG text, ``title`` at its top left."""
    plot = _Plot(layout)
    ticks = _ticks(layout.t_start, layout.x_max)
    height = layout.height_px
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH_PX}" height="{_n(height)}" viewBox="0 0 {WIDTH_PX} {_n(height)}"'
        f' font-family="{FONT_FAMILY}" font-size="{_n(_pt(FONT_SIZE))}">\n',
        f"<title>{_esc(title)}</title>\n",
        f'<rect width="{WIDTH_PX}" height="{_n(height)}" fill="white"/>\n',
        f'<defs><clipPath id="{CLIP_ID}">{_rect(plot.left, plot.top, plot.width, plot.height)}</clipPath></defs>\n',
        _text(LEFT_PX, TITLE_TOP_PX + TOP_EM * _pt(TITLE_SIZE), title, size=TITLE_SIZE),
        *_legend(layout),
        f'<g clip-path="url(#{CLIP_ID})">\n',
        *_plot_body(layout, plot, ticks),
        "</g>\n",
        _rect(plot.left, plot.top, plot.width, plot.height, fill="none", stroke="black", stroke_width=_pt(0.8)),
        *_lane_labels(layout, plot),
        *_x_axis(plot, ticks),
    ]
    if not layout.lanes:
        parts.append(_text(plot.left + plot.width / 2, plot.top + plot.height / 2 + CENTRE_EM * _pt(EMPTY_SIZE),
                           "no pods or nodes observed", size=EMPTY_SIZE, anchor="middle"))
    parts.append("</svg>\n")
    return "".join(parts)


@dataclass(frozen=True)
class _Plot:
    """_Plot maps the layout's seconds and row units to the picture's pixels."""

    layout: TimelineLayout
    left: ClassVar[float] = LEFT_PX
    top: ClassVar[float] = TOP_PX
    width: ClassVar[float] = WIDTH_PX - LEFT_PX - RIGHT_PX

    @property
    def height(self) -> float:
        return self.layout.total_units * ROW_PX

    @property
    def bottom(self) -> float:
        return TOP_PX + self.height

    def x(self, seconds: float) -> float:
        return LEFT_PX + (seconds - self.layout.t_start) / self.layout.seconds_per_px

    def dx(self, seconds: float) -> float:
        return seconds / self.layout.seconds_per_px

    @staticmethod
    def y(units: float) -> float:
        return TOP_PX + units * ROW_PX


def _plot_body(layout: TimelineLayout, plot: _Plot, ticks: list[tuple[float, str]]) -> list[str]:
    """_plot_body is everything inside the plot area, back to front as matplotlib's zorders stacked them."""
    back, grid, shapes, strips, band_labels, labels, marks = [], [], [], [], [], [], []
    for index, lane in enumerate(layout.lanes):
        if index % 2:
            back.append(_rect(plot.left, plot.y(lane.top), plot.width, lane.units * ROW_PX, fill=ODD_LANE))
        if index:
            back.append(_line(plot.left, plot.y(lane.top), plot.left + plot.width, plot.y(lane.top), LIGHT_LINE, _pt(0.8)))
    for tick, _ in ticks:
        grid.append(_line(plot.x(tick), plot.top, plot.x(tick), plot.bottom, GRID_COLOUR, _pt(0.8)))
    for band in layout.bands:
        shapes.append(_band(band, plot))
        band_labels += _band_label(band, plot)
    for bar in layout.pods:
        shapes.append(_bar(bar, plot))
        labels.append(_text(plot.x(bar.start) + LABEL_NUDGE_PX, plot.y(bar.centre) + CENTRE_EM * _pt(FONT_SIZE), bar.interval.label))
    for strip in layout.strips:
        strips += _strip(strip, layout, plot)
        if strip.text:
            labels.append(_text(plot.x(layout.t_start) + LABEL_NUDGE_PX, plot.y(strip.top + 0.05) + TOP_EM * _pt(FONT_SIZE - 1), strip.text,
                                size=FONT_SIZE - 1, fill=OVER_COLOUR if strip.over else None))
    for at, _ in layout.marks:
        marks.append(_line(plot.x(at), plot.top, plot.x(at), plot.bottom, VIOLATION_COLOUR, _pt(1.6)))
    for at, label in layout.marks:
        marks.append(_text(plot.x(at) + LABEL_NUDGE_PX, plot.y(0.2) + TOP_EM * _pt(TICK_SIZE), f"violated: {label}",
                           size=TICK_SIZE, fill=VIOLATION_COLOUR))
    return back + grid + shapes + strips + band_labels + labels + marks


def _band(band: BandBox, plot: _Plot) -> str:
    """_band is the band's translucent fill and its outline, dashed while it is still open."""
    width = _pt(1.4)
    return _rect(plot.x(band.start), plot.y(band.top), plot.dx(band.width), band.height * ROW_PX, fill=band.colour, fill_opacity=0.16,
                 stroke=band.colour, stroke_width=width, dash=_dash(width) if band.band.end is None else None)


def _band_label(band: BandBox, plot: _Plot) -> list[str]:
    """_band_label is the band's label on a light box of its colour."""
    size, pad = _pt(FONT_SIZE), _pt(0.15 * FONT_SIZE)
    x, centre = plot.x(band.start) + LABEL_NUDGE_PX, plot.y(band.label_y)
    box = _rect(x - pad, centre - size * LINE_EM / 2 - pad, len(band.band.label) * CHAR_PX + 2 * pad, size * LINE_EM + 2 * pad,
                fill=band.colour, fill_opacity=0.3)
    return [box, _text(x, centre + CENTRE_EM * size, band.band.label)]


def _bar(bar: PodBar, plot: _Plot) -> str:
    """_bar is the pod's bar, filled by its final phase, its outline dashed while it is still open."""
    width = _pt(0.7)
    return _rect(plot.x(bar.start), plot.y(bar.centre - BAR_UNITS / 2), plot.dx(bar.width), BAR_UNITS * ROW_PX, fill=bar.colour,
                 stroke=OUTLINE, stroke_width=width, dash=_dash(width) if bar.interval.end is None else None)


def _strip(strip: LoadStrip, layout: TimelineLayout, plot: _Plot) -> list[str]:
    """_strip is a load strip's two lines (its allocatable at the top) and its fill, red where over the allocatable."""
    left, right = plot.x(layout.t_start), plot.x(layout.t_end)
    parts = [
        _line(left, plot.y(strip.top), right, plot.y(strip.top), "black", _pt(0.6)),
        _line(left, plot.y(strip.base), right, plot.y(strip.base), LIGHT_LINE, _pt(0.6)),
    ]
    full = strip.base - strip.top
    for step in strip.steps:
        parts.append(_rect(plot.x(step.start), plot.y(strip.base - step.share * full), plot.dx(step.end - step.start), step.share * full * ROW_PX,
                           fill=OVER_COLOUR if step.over else STRIP_COLOUR, fill_opacity=0.45))
    return parts


def _lane_labels(layout: TimelineLayout, plot: _Plot) -> list[str]:
    """_lane_labels writes each lane's lines right-aligned in the left margin, centred on the lane, with a tick."""
    size = _pt(TICK_SIZE)
    x = plot.left - 2 * _pt(TICK_PT)
    parts = []
    for lane in layout.lanes:
        centre = plot.y(lane.top + lane.units / 2)
        parts.append(_line(plot.left - _pt(TICK_PT), centre, plot.left, centre, "black", _pt(0.8)))
        first = centre - (len(lane.label) - 1) * LINE_EM * size / 2 + CENTRE_EM * size
        spans = "".join(f'<tspan x="{_n(x)}" y="{_n(first + k * LINE_EM * size)}">{_esc(line)}</tspan>' for k, line in enumerate(lane.label))
        parts.append(f'<text text-anchor="end" font-size="{_n(size)}">{spans}</text>\n')
    return parts


def _x_axis(plot: _Plot, ticks: list[tuple[float, str]]) -> list[str]:
    """_x_axis is the ticks under the plot, their labels, and the axis's label."""
    size = _pt(TICK_SIZE)
    label_top = plot.bottom + 2 * _pt(TICK_PT)
    parts = []
    for tick, text in ticks:
        parts.append(_line(plot.x(tick), plot.bottom, plot.x(tick), plot.bottom + _pt(TICK_PT), "black", _pt(0.8)))
        parts.append(_text(plot.x(tick), label_top + TOP_EM * size, text, size=TICK_SIZE, anchor="middle"))
    parts.append(_text(plot.left + plot.width / 2, label_top + size + _pt(4) + TOP_EM * size, "seconds from scenario start",
                       size=TICK_SIZE, anchor="middle"))
    return parts


def _ticks(low: float, high: float) -> list[tuple[float, str]]:
    """_ticks is the x axis's ticks over [low, high] and their labels: a step of 1, 2 or 5 times a power of ten, at most 12 ticks.

    Example: ``_ticks(0, 41.6)`` is 0, 5, ..., 40; ``_ticks(0, 1.04)`` is 0.0, 0.1, ..., 1.0.
    """
    span = high - low
    if not (span > 0 and math.isfinite(span)):
        return []
    base = 10.0 ** math.floor(math.log10(span / 12))  # at least 12 steps of it fit: one of the next five steps gives 12 ticks or fewer
    step = next(base * factor for factor in (1, 2, 5, 10, 20) if len(_multiples(low, high, base * factor)) <= 12)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    ticks = []
    for k in _multiples(low, high, step):
        value = k * step
        text = f"{value:.{decimals}f}"
        ticks.append((value, text.lstrip("-") if float(text) == 0 else text))  # no "-0.0" left of zero
    return ticks


def _multiples(low: float, high: float, step: float) -> range:
    """_multiples is k for each multiple k * step in [low, high], a rounding error at either end let in."""
    return range(math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9) + 1)


def _legend(layout: TimelineLayout) -> list[str]:
    """_legend is one swatch per phase colour and per kind of mark, in rows above the plot that wrap before the right edge."""
    entries = [(f'fill="{colour}" stroke="{OUTLINE}"', phase) for phase, colour in PHASE_COLOURS.items()]
    band = BAND_COLOURS[0]
    entries.append((f'fill="{band}" stroke="{band}" fill-opacity="0.25" stroke-opacity="0.25"', "reservation band"))
    entries.append((f'fill="white" stroke="{OUTLINE}" stroke-dasharray="{_dash(_pt(1))}"', "still open at end"))
    if layout.has_capacity:
        entries.append((f'fill="{STRIP_COLOUR}" stroke="black" fill-opacity="0.5" stroke-opacity="0.5"', "pods' requests / allocatable"))
    if layout.marks:
        entries.append((f'fill="{VIOLATION_COLOUR}" stroke="{VIOLATION_COLOUR}"', "contract violated"))
    swatch_w, swatch_h = _pt(2 * FONT_SIZE), _pt(0.7 * FONT_SIZE)
    text_gap, column_gap = _pt(0.8 * FONT_SIZE), _pt(2 * FONT_SIZE)
    rows: list[list[tuple[float, str, str]]] = [[]]
    x: float = LEFT_PX
    for style, label in entries:
        width = swatch_w + text_gap + len(label) * CHAR_PX
        if rows[-1] and x + width > WIDTH_PX - RIGHT_PX:
            rows.append([])
            x = LEFT_PX
        rows[-1].append((x, style, label))
        x += width + column_gap
    parts = []
    for index, row in enumerate(rows):
        centre = TOP_PX - LEGEND_GAP_PX - (len(rows) - 1 - index) * LEGEND_ROW_PX
        for x, style, label in row:
            parts.append(f'<rect x="{_n(x)}" y="{_n(centre - swatch_h / 2)}" width="{_n(swatch_w)}" height="{_n(swatch_h)}" {style}'
                         f' stroke-width="{_n(_pt(1))}"/>\n')
            parts.append(_text(x + swatch_w + text_gap, centre + CENTRE_EM * _pt(FONT_SIZE), label))
    return parts


def _pt(points: float) -> float:
    """_pt is a matplotlib size in points as pixels at DPI."""
    return points * DPI / 72


def _dash(width: float) -> str:
    """_dash is matplotlib's "--" for a line ``width`` px wide: dashes 3.7 widths long, 1.6 apart."""
    return f"{_n(3.7 * width)},{_n(1.6 * width)}"


def _n(value: float) -> str:
    """_n writes a coordinate with at most two decimals: ``_n(12.0) == "12"``, ``_n(3.14159) == "3.14"``."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _esc(text: str) -> str:
    """_esc is ``text`` as XML character data: &, < and > escaped, characters XML cannot hold dropped, a CR kept as one."""
    return escape(_NOT_XML.sub("", text), {"\r": "&#13;"})


def _text(x: float, y: float, text: str, *, size: float = FONT_SIZE, fill: str | None = None, anchor: str | None = None) -> str:
    """_text is a <text> whose baseline starts at (x, y); ``size`` in points."""
    attrs = f' font-size="{_n(_pt(size))}"' if size != FONT_SIZE else ""
    attrs += f' fill="{fill}"' if fill else ""
    attrs += f' text-anchor="{anchor}"' if anchor else ""
    return f'<text x="{_n(x)}" y="{_n(y)}"{attrs}>{_esc(text)}</text>\n'


def _rect(
    x: float, y: float, width: float, height: float, *, fill: str | None = None, fill_opacity: float | None = None,
    stroke: str | None = None, stroke_width: float | None = None, dash: str | None = None,
) -> str:
    """_rect is a <rect>; a negative size (a bar ending before it starts) is drawn as none."""
    attrs = _attrs(("fill", fill), ("fill-opacity", fill_opacity), ("stroke", stroke), ("stroke-width", stroke_width), ("stroke-dasharray", dash))
    return f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(max(width, 0.0))}" height="{_n(max(height, 0.0))}"{attrs}/>\n'


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str, width: float) -> str:
    return f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" stroke="{stroke}" stroke-width="{_n(width)}"/>\n'


def _attrs(*pairs: tuple[str, str | float | None]) -> str:
    return "".join(f' {name}="{_n(value) if isinstance(value, float) else value}"' for name, value in pairs if value is not None)
