"""Small shared widgets: a busy spinner and helpers for number formatting."""

from __future__ import annotations

import html
import math

from PySide6.QtCore import QEvent, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QApplication, QLabel, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QToolTip, QWidget


class WrappedLabel(QLabel):
    """A word-wrapped label whose minimum height is the height its text needs at its current width. Splitters
    and scroll areas ask widgets for their minimum size but not for height-for-width, so a plain wrapped label
    can be squeezed under its text and drawn over its neighbours; this one makes the panel scroll instead."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setWordWrap(True)

    def setText(self, text: str) -> None:
        super().setText(text)
        self._fit()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        need = 0
        if self.text():
            # QLabel's height-for-width is never below its minimum height: measure without the one set for an
            # earlier, longer text (else a label once three lines high stays so, its one line centred in blank
            # space: a GUI review saw 60 px of nothing above the Design tab's status line).
            kept = self.minimumHeight()
            if kept:
                self.setMinimumHeight(0)
            need = self.heightForWidth(max(1, self.width()))
            if kept and need == kept:
                self.setMinimumHeight(kept)
        if need != self.minimumHeight():
            self.setMinimumHeight(max(0, need))


class Spinner(QWidget):
    """A rotating arc shown while background work runs (hidden when idle)."""

    def __init__(self, parent=None, size: int = 16):
        super().__init__(parent)
        self._size = size
        self._angle = 0
        self._timer = QTimer(self)
        self._timer.setInterval(80)
        self._timer.timeout.connect(self._step)
        self.setFixedSize(size, size)
        self.setToolTip("Working in the background; the window stays usable.")
        self.hide()

    def sizeHint(self) -> QSize:
        return QSize(self._size, self._size)

    def start(self) -> None:
        if not self._timer.isActive():
            self._timer.start()
        self.show()

    def stop(self) -> None:
        self._timer.stop()
        self.hide()

    def is_spinning(self) -> bool:
        return self._timer.isActive()

    def _step(self) -> None:
        self._angle = (self._angle + 30) % 360
        self.update()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(QColor(self.palette().highlight().color()), max(2, self._size // 8))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(pen)
        m = pen.width()
        p.drawArc(QRectF(m, m, self._size - 2 * m, self._size - 2 * m), -self._angle * 16, 270 * 16)


def text_column_width(view, column: int, texts) -> int:
    """The width a table ``view``'s ``column`` needs for ``texts`` and for its header: the widest text by the
    view's font metrics plus the cell's margins, or the header's own size hint if wider.

    Used instead of ``resizeColumnToContents``: Qt's ``sizeHintForColumn`` lays every visible cell out through
    the delegate, ~4 ms a column here (0.3 s for a 77-column file); this takes microseconds a text."""
    metrics = view.fontMetrics()
    pad = 2 * view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 8
    widest = max((metrics.horizontalAdvance(str(t)) for t in texts), default=0) + pad
    return max(widest, view.horizontalHeader().sectionSizeHint(column))


def full_text_tip(text: str) -> str:
    """A cell's full text as a tooltip: rich text, so that a long one wraps at a readable width (as plain text a
    tooltip is one line as wide as the screen), the text escaped (a value such as "<b>" is shown as it is)."""
    return f"<p>{html.escape(text)}</p>"


class ElidedTipDelegate(QStyledItemDelegate):
    """The default cell drawing, plus: a cell whose text does not fit (elided "…") shows its full text as a
    tooltip when the model gives it none (the model's own tooltip wins). Measured only when a tooltip is asked
    for, one cell: nothing is added to painting or to the columns' sizing (the Data tab holds 70,000 rows)."""

    def elided_text(self, option, index) -> str | None:
        """The display text of ``index`` when it does not fit its cell (``option.rect``), else None."""
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        if not text:
            return None
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1
        rect = rect.adjusted(margin, 0, -margin, 0)
        wrap = bool(opt.features & QStyleOptionViewItem.ViewItemFeature.WrapText)
        flags = int(opt.displayAlignment) | (int(Qt.TextFlag.TextWordWrap) if wrap else 0)
        need = opt.fontMetrics.boundingRect(rect, flags, text)
        fits = "\n" not in text and need.width() <= rect.width() and need.height() <= max(rect.height(), 1)
        return None if fits else text

    def helpEvent(self, event, view, option, index) -> bool:
        if event.type() == QEvent.Type.ToolTip and index.isValid() and not index.data(Qt.ItemDataRole.ToolTipRole):
            text = self.elided_text(option, index)
            if text is not None:
                QToolTip.showText(event.globalPos(), full_text_tip(text), view, view.visualRect(index))
                return True
        return super().helpEvent(event, view, option, index)


def fmt_eps(value) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{value:.3f}" if value < 100 else f"{value:.1f}"


def fmt_pp(value) -> str:
    """A standard error of a share, in percentage points."""
    if value is None or not math.isfinite(value):
        return "—"
    return f"± {100 * value:.1f} pp"


def fmt_seconds(seconds: float) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "—"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 90:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(int(round(seconds)), 60)
    if minutes < 90:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
