"""Figures of the comparisons as plain data (no plotting library), their colours, and the renderer lookup.

A :class:`FigureSpec` is a grid of :class:`PanelSpec` (filled row by row), each with :class:`SeriesSpec`
curves. The same spec is drawn by the Compare tab of the GUI and written to PNG / SVG by ``optrr compare``;
both go through one renderer, which the installed GUI package provides under the entry-point group
:data:`RENDERER_GROUP` (``optrr_gui.plots.figure_render:render``, pyqtgraph), so this package never imports Qt.
Sizes are in pixels (line widths and marker diameters too); fonts in points. Colours are ``#rrggbb``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import InputError
from ..io.atomic import write_atomic

KINDS = ("line", "points", "bars")
#: Marker shapes: circle, square, triangle, diamond, cross (x).
MARKERS = ("o", "s", "t", "d", "x")
DASHES = ("solid", "dash", "dashdot", "dot")
#: Legend places (in the order tried for "best") -> anchor (x, y) as fractions of the plot from
#: its top-left corner: the legend's own point at that fraction sits on the plot's point at that fraction.
LEGEND_PLACES = {
    "upper right": (1.0, 0.0),
    "upper left": (0.0, 0.0),
    "lower left": (0.0, 1.0),
    "lower right": (1.0, 1.0),
    "center left": (0.0, 0.5),
    "center right": (1.0, 0.5),
    "lower center": (0.5, 1.0),
    "upper center": (0.5, 0.0),
}
#: Entry-point group of the figure renderers: ``render(spec, path, fmt)`` writes ``spec`` as ``fmt`` at ``path``.
RENDERER_GROUP = "optrr.figure_renderers"
#: File formats a renderer writes, by file suffix.
FORMATS = ("png", "svg")
NO_RENDERER = "figures need the OptRR desktop package (optrr_gui, with PySide6 and pyqtgraph); --csv writes CSV only"

#: The papers' colours and line styles for their three designs, and fixed ones for the Bloom-filter schemes.
STYLE = {
    "kronecker": ("#000000", "solid"),
    "optimal": ("#d62728", "dashdot"),
    "heuristic": ("#1f77b4", "dash"),
    "auto": ("#9467bd", "solid"),
    # the Bloom-filter schemes, the same colour in every figure (LASSO and LOPUB dotted: LOPUB starts from LASSO)
    "lasso": ("#17becf", "dot"),
    "lopub": ("#3949ab", "dash"),
    "locop": ("#2e7d32", "dashdot"),
    "brr": ("#e6550d", "solid"),
}
#: Colours of the shares in the marginal comparison: what the sender has, what the receiver sees, what it recovers.
SHARE_COLORS = {"original": "#787878", "perturbed": "#e69138", "estimated": "#3465a4"}
#: Marker shapes of the papers' designs where each request is a point (a cross over a circle keeps both visible
#: when two designs reach the same value).
DESIGN_MARKERS = {"kronecker": "s", "optimal": "o", "heuristic": "x"}
#: Colours of the other designs, in this order (green, purple, orange, brown, pink, olive, cyan, grey).
PALETTE = ("#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#bcbd22", "#17becf", "#7f7f7f")
#: A ten-colour cycle for curves that are not designs (the "tab10" colours).
TAB10 = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")


def _floats(values, what: str) -> tuple[float, ...] | None:
    if values is None:
        return None
    try:
        return tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be numbers") from None


@dataclass
class SeriesSpec:
    """One curve. ``kind`` "line" joins the points in the given order (a NaN breaks the line) and draws
    ``marker`` (one of :data:`MARKERS`) at each point if set; "points" draws markers only; "bars" draws a bar
    from 0 to y, ``bar_width`` wide (in x units), at each x. ``err_low`` / ``err_high`` (lengths below / above
    y, both or neither; NaN = no bar) add vertical error bars, in ``err_color`` (default: the series' colour)."""

    x: Sequence[float]
    y: Sequence[float]
    label: str = ""
    color: str = "#000000"
    kind: str = "line"
    dash: str = "solid"
    width: float = 1.8
    marker: str | None = None
    marker_size: float = 5.0
    err_low: Sequence[float] | None = None
    err_high: Sequence[float] | None = None
    err_color: str | None = None
    bar_width: float = 0.8

    def __post_init__(self):
        self.x, self.y = _floats(self.x, "x"), _floats(self.y, "y")
        self.err_low, self.err_high = _floats(self.err_low, "err_low"), _floats(self.err_high, "err_high")
        if len(self.x) != len(self.y):
            raise ValueError(f"series {self.label!r}: {len(self.x)} x values but {len(self.y)} y values")
        if (self.err_low is None) != (self.err_high is None):
            raise ValueError(f"series {self.label!r}: give both err_low and err_high, or neither")
        if self.err_low is not None and not len(self.err_low) == len(self.err_high) == len(self.y):
            raise ValueError(f"series {self.label!r}: one error length per point")
        if self.kind not in KINDS:
            raise ValueError(f"series kind must be one of {KINDS}, not {self.kind!r}")
        if self.dash not in DASHES:
            raise ValueError(f"dash must be one of {DASHES}, not {self.dash!r}")
        if self.marker is not None and self.marker not in MARKERS:
            raise ValueError(f"marker must be None or one of {MARKERS}, not {self.marker!r}")
        if self.kind == "points" and self.marker is None:
            self.marker = "o"
        for color in (self.color, self.err_color or self.color):
            if not _COLOR.match(color):
                raise ValueError(f"color must be '#rrggbb', not {color!r}")
        if not self.bar_width > 0:
            raise ValueError("bar_width must be positive")

    @property
    def has_errors(self) -> bool:
        return self.err_low is not None


@dataclass
class PanelSpec:
    """One plot. ``legend``: None (no legend), "best" (the place covering the fewest data; see
    :func:`legend_place`) or one of :data:`LEGEND_PLACES`; only series with a label are listed.
    ``xticks``: explicit tick positions (e.g. whole numbers), else automatic; ``xtick_labels``: their texts
    (default: the numbers). ``ylog``: logarithmic y axis (y values must be positive)."""

    series: Sequence[SeriesSpec]
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    ylog: bool = False
    xticks: Sequence[float] | None = None
    xtick_labels: Sequence[str] | None = None
    grid: bool = True
    legend: str | None = "best"
    legend_size: float = 8.0

    def __post_init__(self):
        self.series = tuple(self.series)
        self.xticks = _floats(self.xticks, "xticks")
        if self.xtick_labels is not None:
            self.xtick_labels = tuple(str(t) for t in self.xtick_labels)
            if self.xticks is None or len(self.xtick_labels) != len(self.xticks):
                raise ValueError("xtick_labels need xticks, one label per tick")
        if self.legend is not None and self.legend != "best" and self.legend not in LEGEND_PLACES:
            raise ValueError(f"legend must be None, 'best' or one of {tuple(LEGEND_PLACES)}, not {self.legend!r}")


@dataclass
class FigureSpec:
    """Panels in a grid of ``columns`` columns, filled row by row (empty cells stay blank), drawn on a
    ``width_px`` x ``height_px`` white image. ``legend`` "right": one legend for the whole figure, right of
    the panels (each label once, with the style of its first series), for panels too small to hold one."""

    panels: Sequence[PanelSpec]
    columns: int = 1
    width_px: int = 770
    height_px: int = 495
    legend: str | None = None
    legend_size: float = 8.0

    def __post_init__(self):
        self.panels = tuple(self.panels)
        if not self.panels:
            raise ValueError("a figure needs at least one panel")
        if self.columns < 1 or self.width_px < 50 or self.height_px < 50:
            raise ValueError("a figure needs at least one column and 50 x 50 pixels")
        if self.legend not in (None, "right"):
            raise ValueError(f"a figure's legend must be None or 'right', not {self.legend!r}")

    def legend_series(self) -> list[SeriesSpec]:
        """The series the figure's legend lists: the first with each label, in order of appearance."""
        seen, out = set(), []
        for panel in self.panels:
            for s in panel.series:
                if s.label and s.label not in seen:
                    seen.add(s.label)
                    out.append(s)
        return out

    @property
    def rows(self) -> int:
        return -(-len(self.panels) // self.columns)


def legend_place(panel: PanelSpec, box: tuple[float, float] = (0.35, 0.3)) -> str | None:
    """The panel's legend place; "best" becomes the place of :data:`LEGEND_PLACES` where a legend box of
    ``box`` (width, height as fractions of the plot) covers the fewest points of the curves (sampled along
    the lines too), ties in the order of :data:`LEGEND_PLACES`."""
    if panel.legend != "best":
        return panel.legend
    samples = []
    for s in panel.series:
        pts = []
        for x, y in zip(s.x, s.y, strict=True):
            if panel.ylog:
                y = math.log10(y) if y > 0 else math.nan
            pts.append((x, y) if math.isfinite(x) and math.isfinite(y) else None)
        samples += [p for p in pts if p is not None]
        if s.kind == "bars":  # the bar's body, not only its top
            samples += [(p[0], p[1] * t / 8) for p in pts if p is not None for t in range(8)]
        if s.kind == "line":
            for a, b in zip(pts, pts[1:], strict=False):
                if a is not None and b is not None:
                    samples += [(a[0] + (b[0] - a[0]) * t / 8, a[1] + (b[1] - a[1]) * t / 8) for t in range(1, 8)]
    if not samples:
        return next(iter(LEGEND_PLACES))
    xs, ys = [p[0] for p in samples], [p[1] for p in samples]
    x0, y0 = min(xs), min(ys)
    wx, wy = max(max(xs) - x0, 1e-12), max(max(ys) - y0, 1e-12)
    pad = 0.05  # the axes leave a margin around the data
    fractions = [(pad + (1 - 2 * pad) * (x - x0) / wx, pad + (1 - 2 * pad) * (y - y0) / wy) for x, y in samples]
    w, h = min(box[0], 1.0), min(box[1], 1.0)

    def covered(place: str) -> int:
        ax, ay = LEGEND_PLACES[place]
        left, top = ax * (1 - w), 1 - ay * (1 - h)  # y fractions grow upwards
        return sum(1 for fx, fy in fractions if left <= fx <= left + w and top - h <= fy <= top)

    return min(LEGEND_PLACES, key=covered)


def colors_for(methods) -> dict:
    """One colour per method: the papers' colours for their designs, :data:`PALETTE` for the others in order."""
    methods = list(methods)
    taken = {STYLE[m][0] for m in methods if m in STYLE}  # never a design's own colour twice
    out, extra = {}, iter([c for c in PALETTE if c not in taken] * 4)
    for m in methods:
        out[m] = STYLE[m][0] if m in STYLE else next(extra)
    return out


def marker_for(method: str) -> str:
    """The marker shape of a design's points (a circle for designs without their own)."""
    return DESIGN_MARKERS.get(method, "o")


def dash_for(method: str) -> str:
    """The papers' line style of a design; solid for the others."""
    return STYLE.get(method, (None, "solid"))[1]


Renderer = Callable[[FigureSpec, str, str], None]


def renderer() -> Renderer | None:
    """The installed figure renderer (the first of :data:`RENDERER_GROUP` by name), or None without one."""
    from importlib.metadata import entry_points

    found = sorted(entry_points(group=RENDERER_GROUP), key=lambda ep: ep.name)
    return found[0].load() if found else None


def figure_format(path: str) -> str:
    """The file format named by ``path``'s suffix (one of :data:`FORMATS`)."""
    fmt = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if fmt not in FORMATS:
        raise InputError(f"a figure file must end in {' or '.join('.' + f for f in FORMATS)}: {path}")
    return fmt


def render(spec: FigureSpec, path: str) -> str:
    """Write ``spec`` to ``path`` as PNG or SVG (by its suffix), atomically: nothing appears under ``path`` on
    failure. Raises InputError when no renderer is installed."""
    fmt = figure_format(path)
    draw = renderer()
    if draw is None:
        raise InputError(NO_RENDERER)
    return write_atomic(path, lambda tmp: draw(spec, tmp, fmt))
