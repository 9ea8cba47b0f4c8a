"""The one figure renderer: pyqtgraph draws an engine :class:`~optrr_engine.compare.figures.FigureSpec`.

- :func:`draw_figure` lays a spec out in a pyqtgraph ``GraphicsLayout`` (the Compare tab's plots), and
  :func:`clear_figure` empties it again; :func:`figure_steps` does it one panel at a time (the tab lets the
  event loop turn between panels), and :func:`update_figure` shows a spec of the same shape in the items already
  drawn (new data, titles and ticks; no axes built again);
- :func:`export_png` / :func:`export_svg` save a drawn layout (the tab's Export buttons);
- :func:`render` writes a spec as a PNG or SVG file from any process, drawing into a never-shown widget. It is
  the engine's figure renderer (entry point ``optrr.figure_renderers`` in pyproject.toml), so ``optrr compare``
  writes the same pictures as the tab, with the same colours and labels. From a plain command-line process a
  QApplication is created on first use; on Linux with ``QT_QPA_PLATFORM`` unset it uses the offscreen platform,
  so no display is needed or touched.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from dataclasses import dataclass

import numpy as np

from optrr_engine.compare.figures import LEGEND_PLACES, FigureSpec, PanelSpec, SeriesSpec, legend_place

TEXT = "#000000"
AXIS = "#000000"
FRAME = "#cccccc"
GRID_ALPHA = 60  # of 255: light grid lines, drawn by the bottom and left axes only
LEGEND_MARGIN = 8  # px between the legend and the plot's edge
_APP: list = []  # keeps the QApplication this module created alive


def ensure_app():
    """The running QApplication, or a new one (offscreen on Linux unless QT_QPA_PLATFORM says otherwise)."""
    from PySide6.QtCore import QThread
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("figures through Qt: create the QApplication on the main thread first")
        if sys.platform.startswith("linux") and not os.environ.get("QT_QPA_PLATFORM"):
            # nothing is ever shown: do not depend on (or fail at) a DISPLAY / WAYLAND_DISPLAY connection
            os.environ["QT_QPA_PLATFORM"] = "offscreen"
        app = QApplication([sys.argv[0] if sys.argv and sys.argv[0] else "optrr"])
        _APP.append(app)
    elif not isinstance(app, QApplication):
        raise RuntimeError("figures through Qt need a QApplication (a QGuiApplication cannot host pyqtgraph)")
    if QThread.currentThread() != app.thread():
        raise RuntimeError("figures through Qt must be drawn on the Qt application's thread")
    return app


def render(spec: FigureSpec, path: str, fmt: str = "png") -> None:
    """Write ``spec`` to ``path`` (any suffix) as ``fmt`` ("png": ``spec.width_px`` x ``spec.height_px``
    pixels; "svg": a vector drawing of that size)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"figures are written as png or svg, not {fmt!r}")
    ensure_app()
    import pyqtgraph as pg
    from PySide6.QtCore import Qt

    widget = pg.GraphicsLayoutWidget()
    try:
        widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        widget.setBackground("w")
        widget.resize(spec.width_px, spec.height_px)
        widget.show()  # lays the items out at the widget's size; WA_DontShowOnScreen keeps it off screen
        draw_figure(widget.ci, spec, (spec.width_px, spec.height_px))
        if fmt == "png":
            export_png(widget.ci, path, spec.width_px, spec.height_px)
        else:
            export_svg(widget.ci, path, _title(spec))
    finally:
        widget.close()
        widget.deleteLater()


def _title(spec: FigureSpec) -> str:
    return "; ".join(p.title for p in spec.panels if p.title) or "OptRR figure"


@dataclass
class DrawnFigure:
    """What :func:`figure_steps` put into a layout: per panel its PlotItem and, per series, the curve item and its
    error bars (None without); ``shape`` is :func:`figure_shape` of the spec drawn."""

    plots: list
    series: list
    shape: tuple


def figure_shape(spec: FigureSpec) -> tuple:
    """A spec without its data, titles and tick texts: two specs of one shape differ only in what
    :func:`update_figure` changes in place (panels with a legend of their own are placed by their data: never
    updated)."""

    def series(p: PanelSpec) -> tuple:
        return tuple(
            (s.kind, s.label, s.color, s.dash, s.width, s.marker, s.marker_size, s.has_errors, s.err_color, s.bar_width)
            for s in p.series
        )

    panels = tuple(
        (p.xlabel, p.ylabel, p.ylog, p.xticks is None, p.grid, p.legend, p.legend_size, series(p)) for p in spec.panels
    )
    return (spec.columns, spec.legend, spec.legend_size, panels)


def draw_figure(layout, spec: FigureSpec, size_px: tuple[float, float] | None = None) -> list:
    """Draw ``spec`` into the (empty) pyqtgraph GraphicsLayout ``layout``, which is ``size_px`` (default: the
    spec's size) on screen; returns the PlotItems. Legends are placed once the layout has its size."""
    steps = figure_steps(layout, spec, size_px)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value.plots


def figure_steps(layout, spec: FigureSpec, size_px: tuple[float, float] | None = None):
    """:func:`draw_figure` one panel at a time: a generator that draws a panel per ``next`` (a caller may let the
    event loop turn in between: building a panel's axes is the costly part), then the legends; it returns the
    :class:`DrawnFigure` (``StopIteration.value``)."""
    width, height = size_px or (spec.width_px, spec.height_px)
    layout.setSpacing(6)
    panel_px = (width / spec.columns, height / spec.rows)
    drawn = []  # (plot, panel, [(curve item, error bars, series)])
    for i, panel in enumerate(spec.panels):
        row, col = divmod(i, spec.columns)
        plot = layout.addPlot(row=row, col=col)
        drawn.append((plot, panel, _draw_panel(plot, panel, panel_px)))
        yield
    right = 10
    if spec.legend == "right":
        firsts = {id(s) for s in spec.legend_series()}
        entries = [(item, s.label) for _p, _panel, items in drawn for item, _bars, s in items if id(s) in firsts]
        if entries:
            legend = _legend(entries, spec.legend_size)
            legend.setParentItem(layout)
            legend.anchor(itemPos=(1, 0), parentPos=(1, 0), offset=(-6, 6))
            right = int(legend.boundingRect().width()) + 16
    layout.setContentsMargins(4, 4, right, 4)
    layout.layout.activate()
    for plot, panel, items in drawn:  # the panels' legends, now that the plots have their final size
        entries = [(item, s.label) for item, _bars, s in items if s.label]
        if panel.legend is not None and entries:
            _place_legend(plot, panel, _legend(entries, panel.legend_size))
    return DrawnFigure(
        [plot for plot, _panel, _items in drawn],
        [[(item, bars) for item, bars, _s in items] for _plot, _panel, items in drawn],
        figure_shape(spec),
    )


def update_figure(drawn: DrawnFigure, spec: FigureSpec, size_px: tuple[float, float]) -> bool:
    """Show ``spec`` in the items of ``drawn`` (titles, tick texts, curves, bars and error bars get the new
    values; no axis or plot is built again). False, and nothing changed, when the spec's shape differs."""
    if figure_shape(spec) != drawn.shape or any(p.legend is not None for p in spec.panels):
        return False
    width, height = size_px
    panel_px = (width / spec.columns, height / spec.rows)
    data = [[_series_data(s, p.ylog) for s in p.series] for p in spec.panels]
    for items, values in zip(drawn.series, data, strict=True):
        if any((bars is None) != (v[2] is None) for (_item, bars), v in zip(items, values, strict=True)):
            return False  # error bars appear or vanish: built anew
    for plot, items, panel, values in zip(drawn.plots, drawn.series, spec.panels, data, strict=True):
        if plot.titleLabel.text != panel.title:
            plot.setTitle(panel.title or None, color=TEXT, size="11pt")
        _set_ticks(plot, panel)
        beam = _beam(panel, panel_px)
        for (item, bars), (x, y, errors) in zip(items, values, strict=True):
            if isinstance(item, _bar_item_type()):
                item.setOpts(x=x, height=np.nan_to_num(y))
            else:
                item.setData(x, y)
            if bars is not None:
                bars.setData(**errors, beam=beam)
        plot.enableAutoRange()
    return True


def clear_figure(layout) -> None:
    """Empty a layout drawn by :func:`draw_figure`: its panels and the figure's own legend (a child of the
    layout itself, which ``layout.clear()`` leaves behind with its samples of the deleted curves)."""
    import pyqtgraph as pg

    layout.clear()
    for item in list(layout.childItems()):
        if isinstance(item, pg.LegendItem):
            item.setParentItem(None)
            if item.scene() is not None:
                item.scene().removeItem(item)


def export_png(layout, path: str, width: int, height: int | None = None) -> None:
    """Save a drawn layout as a PNG ``width`` pixels wide (and ``height`` high if given) on white."""
    import pyqtgraph.exporters as exporters
    from PySide6.QtGui import QColor

    exporter = exporters.ImageExporter(layout)
    exporter.parameters()["background"] = QColor("white")
    exporter.parameters()["width"] = int(width)
    image = exporter.export(toBytes=True)
    if height is not None and image.height() != height:
        image = image.scaled(int(width), int(height))
    if not image.save(path, "PNG"):
        raise OSError(f"could not write the PNG file {path}")


def export_svg(layout, path: str, title: str) -> None:
    """Save a drawn layout as SVG through Qt's own SVG generator (pyqtgraph's SVG exporter cannot parse the
    paths Qt 6 writes: pyqtgraph issue #3485; see docs/decisions.md)."""
    from PySide6.QtCore import QRectF, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    rect = layout.sceneBoundingRect()
    gen = QSvgGenerator()
    gen.setFileName(path)
    gen.setSize(QSize(int(rect.width()), int(rect.height())))
    gen.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
    gen.setTitle(title)
    gen.setDescription("OptRR figure")
    painter = QPainter(gen)
    try:
        layout.scene().render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
    finally:
        painter.end()
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        raise OSError(f"could not write the SVG file {path}")


def points_font(points: float):
    """The figures' font at ``points`` (tick labels: 9 pt)."""
    from PySide6.QtGui import QFont

    font = QFont()
    font.setPointSizeF(points)
    return font


def _draw_panel(plot, panel: PanelSpec, panel_px: tuple[float, float]) -> list:
    """Axes, labels, grid and curves of one panel (no legend yet); returns [(curve item, series)]."""
    import pyqtgraph as pg

    for side in ("left", "bottom", "top", "right"):
        plot.showAxis(side)
        axis = plot.getAxis(side)
        axis.setPen(pg.mkPen(AXIS, width=1))
        axis.setTextPen(pg.mkPen(TEXT))
        axis.enableAutoSIPrefix(False)
        if side in ("top", "right"):
            axis.setStyle(showValues=False, tickLength=0)
            continue
        # major ticks and one level of minor ticks (pyqtgraph's finest level only crowds the grid)
        axis.setStyle(tickFont=points_font(9), tickLength=-5, maxTickLevel=1, maxTextLevel=1)
        if panel.grid:
            axis.setGrid(GRID_ALPHA)
    if panel.title:
        plot.setTitle(panel.title, color=TEXT, size="11pt")
    label_style = {"color": TEXT, "font-size": "10pt"}
    if panel.xlabel:
        plot.setLabel("bottom", panel.xlabel, **label_style)
    if panel.ylabel:
        plot.setLabel("left", panel.ylabel, **label_style)
    if panel.ylog:
        plot.setLogMode(y=True)
    _set_ticks(plot, panel)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    beam = _beam(panel, panel_px)
    return [(*_draw_series(plot, s, panel.ylog, beam), s) for s in panel.series]


def _set_ticks(plot, panel: PanelSpec) -> None:
    """The log axis's decades and the explicit x ticks of a panel (their texts)."""
    if panel.ylog:
        ticks = _log_ticks([v for s in panel.series for v in s.y])
        if ticks:
            plot.getAxis("left").setTicks(ticks)
    if panel.xticks is not None:
        texts = panel.xtick_labels or [f"{v:g}" for v in panel.xticks]
        plot.getAxis("bottom").setTicks([list(zip(panel.xticks, texts, strict=True))])


def _beam(panel: PanelSpec, panel_px: tuple[float, float]) -> float:
    """Width of the error bars' caps in x units: about 6 px."""
    x_span = _span([v for s in panel.series for v in s.x])
    return 6.0 * x_span / max(panel_px[0] - 90.0, 50.0)


def _legend(entries, size: float):
    """A framed legend (not yet placed) listing ``entries`` [(curve item, label)]."""
    import pyqtgraph as pg

    legend = pg.LegendItem(
        offset=None,
        labelTextSize=f"{size:g}pt",
        labelTextColor=TEXT,
        brush=(255, 255, 255, 220),
        pen=pg.mkPen(FRAME),
        verSpacing=-4,
    )
    for item, label in entries:
        legend.addItem(item, label)
    return legend


def _place_legend(plot, panel: PanelSpec, legend) -> None:
    """Put ``legend`` in the plot at the panel's place ("best": where it covers the fewest data points)."""
    view = plot.getViewBox()
    size, area = legend.boundingRect().size(), view.size()  # (LegendItem.size is an attribute)
    margin = 2 * LEGEND_MARGIN
    box = ((size.width() + margin) / max(area.width(), 1.0), (size.height() + margin) / max(area.height(), 1.0))
    fx, fy = LEGEND_PLACES[legend_place(panel, box)]
    legend.setParentItem(view)
    offset = (LEGEND_MARGIN * (1 - 2 * fx), LEGEND_MARGIN * (1 - 2 * fy))
    legend.anchor(itemPos=(fx, fy), parentPos=(fx, fy), offset=offset)


def _log_ticks(values) -> list | None:
    """Ticks of a log axis in its log10 coordinates: labelled decades, unlabelled 2..9 between them
    (pyqtgraph's own ticks label every minor tick of a two-decade range). The minor ticks are
    labelled too when fewer than two decades fall inside the data's range."""
    positive = [v for v in values if math.isfinite(v) and v > 0]
    if not positive:
        return None
    lo, hi = math.log10(min(positive)), math.log10(max(positive))
    first, last = math.floor(lo) - 1, math.ceil(hi) + 1  # the view's padding may show a little more
    majors = [(float(d), f"{10.0**d:g}") for d in range(first, last + 1)]
    minors = [(d + math.log10(m), f"{m * 10.0**d:g}") for d in range(first, last) for m in range(2, 10)]
    if sum(1 for d, _t in majors if lo <= d <= hi) >= 2:
        minors = [(v, "") for v, _t in minors]
    return [majors, minors]


def _span(values) -> float:
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 2 or max(finite) == min(finite):
        return 1.0
    return max(finite) - min(finite)


def _pen(s: SeriesSpec, width: float):
    import pyqtgraph as pg
    from PySide6.QtCore import Qt

    style = {
        "solid": Qt.PenStyle.SolidLine,
        "dash": Qt.PenStyle.DashLine,
        "dashdot": Qt.PenStyle.DashDotLine,
        "dot": Qt.PenStyle.DotLine,
    }[s.dash]
    return pg.mkPen(color=s.color, width=width, style=style)


def _bar_item_type():
    import pyqtgraph as pg

    return pg.BarGraphItem


def _series_data(s: SeriesSpec, ylog: bool) -> tuple[np.ndarray, np.ndarray, dict | None]:
    """(x, y, the error bars' x / y / top / bottom in the axis's coordinates, or None) of a series."""
    x = np.asarray(s.x, dtype=float)
    y = np.asarray(s.y, dtype=float)
    if ylog:
        y = np.where(y > 0, y, np.nan)  # a log axis cannot show y <= 0
    if not s.has_errors:
        return x, y, None
    low, high = np.asarray(s.err_low, dtype=float), np.asarray(s.err_high, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    if not ok.any():
        return x, y, None
    y_bars = y
    if ylog:
        # the bars are drawn in the axis's log10 coordinates; a lower end <= 0 gets no lower bar
        with np.errstate(divide="ignore", invalid="ignore"):
            top = np.log10(y + high) - np.log10(y)
            bottom = np.where(y - low > 0, np.log10(y) - np.log10(y - low), np.nan)
        y_bars = np.log10(y)
    else:
        top, bottom = high, low
    top, bottom = np.nan_to_num(top[ok], nan=0.0), np.nan_to_num(bottom[ok], nan=0.0)
    return x, y, {"x": x[ok], "y": y_bars[ok], "top": np.maximum(top, 0), "bottom": np.maximum(bottom, 0)}


def _draw_series(plot, s: SeriesSpec, ylog: bool, beam: float):
    """(the curve, for the legend; its error bars or None)."""
    import pyqtgraph as pg

    x, y, errors = _series_data(s, ylog)
    symbol = {}
    if s.marker:
        symbol = {"symbol": s.marker, "symbolSize": s.marker_size, "symbolBrush": s.color, "symbolPen": s.color}
    if s.kind == "bars":
        curve = pg.BarGraphItem(x=x, height=np.nan_to_num(y), width=s.bar_width, brush=s.color, pen=None)
        plot.addItem(curve)
    else:
        pen = None if s.kind == "points" else _pen(s, s.width)
        curve = plot.plot(x, y, pen=pen, connect="finite", antialias=True, **symbol)
    if errors is None:
        return curve, None
    bars = pg.ErrorBarItem(**errors, beam=beam, pen=pg.mkPen(s.err_color or s.color, width=1.2))  # solid bars
    plot.addItem(bars)
    return curve, bars
