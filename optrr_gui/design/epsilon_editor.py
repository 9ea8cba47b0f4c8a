"""The epsilon editor: a spin box and a log-scale slider that move together, with the wording
"lower = more private" next to them. Emits ``valueEdited(value, final)``; ``final`` is False while the
slider is dragged (those edits merge into one undo step).
"""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QLabel, QSlider, QVBoxLayout, QWidget

from ..state.session import MAX_EPSILON, MIN_EPSILON

SLIDER_STEPS = 1000


def slider_to_value(pos: int, lo: float = MIN_EPSILON, hi: float = MAX_EPSILON) -> float:
    """Log scale: position 0 is ``lo`` and SLIDER_STEPS is ``hi``; rounded to 3 significant digits."""
    v = math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * pos / SLIDER_STEPS)
    return float(f"{v:.3g}")


def value_to_slider(value: float, lo: float = MIN_EPSILON, hi: float = MAX_EPSILON) -> int:
    value = min(max(float(value), lo), hi)
    return round((math.log(value) - math.log(lo)) / (math.log(hi) - math.log(lo)) * SLIDER_STEPS)


class EpsilonEditor(QWidget):
    """Spin box + log slider for one epsilon (or a weight when ``kind='weight'``)."""

    valueEdited = Signal(float, bool)

    def __init__(self, parent=None, kind: str = "epsilon", compact: bool = False):
        super().__init__(parent)
        self.kind = kind
        self._updating = False
        self._lo, self._hi = (MIN_EPSILON, MAX_EPSILON) if kind == "epsilon" else (0.01, 100.0)
        self.spin = QDoubleSpinBox(self)
        self.spin.setDecimals(3)
        self.spin.setRange(self._lo, self._hi)
        self.spin.setSingleStep(0.1)
        self.spin.setKeyboardTracking(False)
        self.spin.setAccelerated(True)
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setRange(0, SLIDER_STEPS)
        self.slider.setPageStep(SLIDER_STEPS // 20)
        if kind == "epsilon":
            tip = (
                "Privacy level ε of this column. Lower = more private (answers are randomized more), "
                "higher = more accurate. The slider is logarithmic: each step multiplies ε."
            )
            self.spin.setPrefix("ε ")
        else:
            tip = (
                "Share of the total budget for this column, relative to the others. A larger weight gives "
                "this column a larger ε: more accurate, less private."
            )
            self.spin.setPrefix("w ")
        self.spin.setToolTip(tip)
        self.slider.setToolTip(tip)
        self.spin.setAccessibleName(f"{kind} value")
        self.slider.setAccessibleName(f"{kind} slider (logarithmic)")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.spin)
        row.addWidget(self.slider, 1)
        if compact:
            self.setLayout(row)
            self.hint = None
        else:
            outer = QVBoxLayout(self)
            outer.setContentsMargins(0, 0, 0, 0)
            outer.addLayout(row)
            text = (
                "◀ more private · lower = more private · more accurate ▶"
                if kind == "epsilon"
                else "◀ smaller share of the budget · larger share ▶"
            )
            self.hint = QLabel(text, self)
            self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.hint.setStyleSheet("color: palette(mid); font-size: 9pt;")
            outer.addWidget(self.hint)
        self.spin.valueChanged.connect(self._spin_changed)
        self.slider.valueChanged.connect(self._slider_moved)
        self.slider.sliderReleased.connect(self._slider_released)

    def value(self) -> float:
        return float(self.spin.value())

    def setValue(self, value: float) -> None:
        """Show a value without emitting ``valueEdited``."""
        self._updating = True
        try:
            self.spin.setValue(float(value))
            self.slider.setValue(value_to_slider(value, self._lo, self._hi))
        finally:
            self._updating = False

    def _spin_changed(self, value: float) -> None:
        if self._updating:
            return
        self._updating = True
        self.slider.setValue(value_to_slider(value, self._lo, self._hi))
        self._updating = False
        self.valueEdited.emit(float(value), True)

    def _slider_moved(self, pos: int) -> None:
        if self._updating:
            return
        value = slider_to_value(pos, self._lo, self._hi)
        self._updating = True
        self.spin.setValue(value)
        self._updating = False
        self.valueEdited.emit(float(self.spin.value()), not self.slider.isSliderDown())

    def _slider_released(self) -> None:
        self.valueEdited.emit(float(self.spin.value()), True)
