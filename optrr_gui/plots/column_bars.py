"""One bar per column, readable for any number of columns: horizontal bars, the column names on the left
(elided in the middle to at most NAME_SHARE of the chart's width), rows that share the height but are never
lower than a line of text (``row_px``), and a vertical scroll bar when they do not fit (77 columns of a
survey scroll; ten columns fill the space). The value axis is drawn above the bars.

:class:`EpsilonBars` is the mechanism panel's chart: requested ε (grey) and achieved ε (blue; red when
higher than asked, orange when lower) per perturbed column.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QScrollArea

from optrr_engine.tolerance import eps_above

REQUESTED_COLOR = (170, 170, 170)
ACHIEVED_COLOR = (52, 101, 164)
HIGHER_COLOR = (204, 0, 0)
LOWER_COLOR = (230, 145, 56)
#: Room of the value axis and the margins, in pixels.
AXES_PX = 34
#: The names take at most this share of the chart's width.
NAME_SHARE = 0.45


class ColumnBars(QScrollArea):
    """Horizontal bars, one row per column, ``len(series)`` bars per row (``set_bars``)."""

    def __init__(self, series: int, value_label: str, parent=None):
        super().__init__(parent)
        import pyqtgraph as pg

        self.pg = pg
        self.plot = pg.PlotWidget(background="w")
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.invertY(True)  # the first column on top, as in the tables
        self.plot.showGrid(x=True, alpha=0.3)
        self.plot.hideAxis("bottom")
        self.plot.showAxis("top")
        self.plot.getAxis("top").enableAutoSIPrefix(False)
        self.plot.getAxis("top").setToolTip(value_label)
        #: the lowest a row may be: one line of the names' font and a pixel
        self.row_px = QFontMetrics(self.font()).height() + 1
        self.thickness = 0.8 / series
        self.bars = [pg.BarGraphItem(x0=[], y=[], height=self.thickness, width=[]) for _ in range(series)]
        for item in self.bars:
            self.plot.addItem(item)
        self.setWidget(self.plot)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.names: list[str] = []
        self._shown_names: tuple = ()

    def set_bars(self, names, values, brushes) -> None:
        """``values[s][i]``: bar s of column i; ``brushes[s]``: one brush, or one per column."""
        n = len(names)
        y = np.arange(n, dtype=float)
        for s, item in enumerate(self.bars):
            offset = (s - (len(self.bars) - 1) / 2) * self.thickness
            opts = {"x0": 0.0, "y": y + offset, "height": self.thickness * 0.95,
                    "width": np.asarray(values[s], dtype=float)}
            if isinstance(brushes[s], list):
                opts["brushes"] = brushes[s]
            else:
                opts["brush"] = brushes[s]
            item.setOpts(**opts)
        self.names = [str(v) for v in names]
        for side in ("left", "top"):  # no columns (no design yet, or none possible): no empty axes either
            self.plot.showAxis(side, n > 0)
        top = max([float(v) for vs in values for v in vs] + [1e-3])
        self.plot.setXRange(0, top * 1.1, padding=0)
        self.plot.setYRange(-0.5, max(n - 0.5, 0.5), padding=0)
        self.plot.setMinimumHeight(n * self.row_px + AXES_PX)
        self._set_names()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._set_names()

    def _set_names(self) -> None:
        """The names on the left axis, elided to the room they have; the axis as wide as the longest."""
        axis = self.plot.getAxis("left")
        metrics = QFontMetrics(self.font())
        room = max(60, int(self.viewport().width() * NAME_SHARE))
        key = (tuple(self.names), room, self.font().key())
        if key == self._shown_names:
            return
        self._shown_names = key
        shown = [metrics.elidedText(n, Qt.TextElideMode.ElideMiddle, room) for n in self.names]
        axis.setTicks([list(enumerate(shown))])
        widest = max([metrics.horizontalAdvance(t) for t in shown] + [20])
        axis.setWidth(widest + 14)


class EpsilonBars(ColumnBars):
    """Requested (grey) vs achieved (blue; red = higher than asked, orange = lower) ε per column."""

    def __init__(self, parent=None):
        super().__init__(2, "ε (lower = more private)", parent)
        pg = self.pg
        self._brushes = {
            "requested": pg.mkBrush(*REQUESTED_COLOR),
            "higher": pg.mkBrush(*HIGHER_COLOR),
            "lower": pg.mkBrush(*LOWER_COLOR),
            "achieved": pg.mkBrush(*ACHIEVED_COLOR),
        }
        self.setToolTip(
            "Grey: the ε you asked for. Blue: the ε the mechanism really gives each column (recomputed). "
            "Red: higher than asked (less private); orange: lower than asked (more private, less accurate). "
            "One row per column; scroll for more."
        )
        self.values: tuple[list, list] = ([], [])

    def set_data(self, names: list[str], requested: list[float], achieved: list[float]) -> None:
        if len(requested) != len(achieved):
            raise ValueError("one requested and one achieved ε per column")
        higher = eps_above(np.asarray(achieved, dtype=float), np.asarray(requested, dtype=float))  # elementwise
        lower = eps_above(np.asarray(requested, dtype=float), np.asarray(achieved, dtype=float))
        kinds = np.where(higher, "higher", np.where(lower, "lower", "achieved"))
        colours = [self._brushes[str(kind)] for kind in kinds]
        self.set_bars(names, [requested, achieved], [self._brushes["requested"], colours])
        self.values = (list(requested), list(achieved))
