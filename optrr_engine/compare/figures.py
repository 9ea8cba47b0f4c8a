"""Figures of the comparisons as plain data (no plotting library), and the PNG backend registry.

A :class:`FigureSpec` is a grid of :class:`PanelSpec` (filled row by row), each with
:class:`SeriesSpec` curves. Backends turn a spec into a PNG file: ``render_png(spec, path)`` uses the
backend given to :func:`register_png_backend` (the desktop build registers a Qt one,
``optrr_gui.plots.figure_png.install()``), else matplotlib when it can be imported, else raises ``InputError``.
Sizes are in pixels (line widths and marker diameters too); fonts in points. Colours are ``#rrggbb``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import InputError
from ..io.atomic import write_atomic

KINDS = ("line", "points")
DASHES = ("solid", "dash", "dashdot", "dot")
#: Legend places (matplotlib's names, in its order for "best") -> anchor (x, y) as fractions of the plot from
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
NO_BACKEND = (
    "PNG figures need matplotlib (pip install matplotlib) or the OptRR desktop build; --csv writes the CSV files only"
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
    ``marker`` ("o") at each point if set; "points" draws markers only. ``err_low`` / ``err_high`` (lengths
    below / above y, both or neither; NaN = no bar) add vertical error bars."""

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
        if self.marker not in (None, "o"):
            raise ValueError(f"marker must be None or 'o', not {self.marker!r}")
        if self.kind == "points" and self.marker is None:
            self.marker = "o"
        if not _COLOR.match(self.color):
            raise ValueError(f"color must be '#rrggbb', not {self.color!r}")

    @property
    def has_errors(self) -> bool:
        return self.err_low is not None


@dataclass
class PanelSpec:
    """One plot. ``legend``: None (no legend), "best" (the place covering the fewest data; see
    :func:`legend_place`) or one of :data:`LEGEND_PLACES`; only series with a label are listed.
    ``xticks``: explicit tick positions (e.g. whole numbers), else automatic. ``ylog``: logarithmic y axis
    (y values must be positive)."""

    series: Sequence[SeriesSpec]
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    ylog: bool = False
    xticks: Sequence[float] | None = None
    grid: bool = True
    legend: str | None = "best"
    legend_size: float = 8.0

    def __post_init__(self):
        self.series = tuple(self.series)
        self.xticks = _floats(self.xticks, "xticks")
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


def legend_place(panel: PanelSpec, box: tuple[float, float] = (0.35, 0.3)) -> str:
    """The panel's legend place; "best" becomes the place of :data:`LEGEND_PLACES` where a legend box of
    ``box`` (width, height as fractions of the plot) covers the fewest points of the curves (sampled along
    the lines too), ties in the order of :data:`LEGEND_PLACES` (matplotlib's choice for its own "best")."""
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


PngBackend = Callable[[FigureSpec, str], None]
_REGISTERED: list[PngBackend] = []


def register_png_backend(backend: PngBackend | None) -> PngBackend | None:
    """Use ``backend(spec, path)`` (writes a PNG file at ``path``, whatever its suffix) for every PNG from
    now on; None goes back to matplotlib. Returns the backend registered before (None if none)."""
    previous = _REGISTERED[0] if _REGISTERED else None
    _REGISTERED.clear()
    if backend is not None:
        _REGISTERED.append(backend)
    return previous


def png_backend() -> PngBackend | None:
    """The backend :func:`render_png` would use: the registered one, else matplotlib's, else None."""
    if _REGISTERED:
        return _REGISTERED[0]
    try:
        from .figure_matplotlib import render_png_matplotlib
    except ImportError:
        return None
    return render_png_matplotlib


def render_png(spec: FigureSpec, path: str) -> str:
    """Draw ``spec`` into the PNG file ``path`` (atomically: nothing appears under ``path`` on failure)."""
    backend = png_backend()
    if backend is None:
        raise InputError(NO_BACKEND)
    return write_atomic(path, lambda tmp: backend(spec, tmp))
