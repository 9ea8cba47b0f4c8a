"""The epsilon editor: a spin box and a log-scale slider that move together, with the wording
"lower = more private" next to them. Emits ``valueEdited(value, final)``; ``final`` is False while the
slider is dragged (those edits merge into one undo step).

Typed text is committed exactly or not at all (:class:`ExactSpinBox`): a plain ``QDoubleSpinBox`` drops the
keystrokes it finds out of range, so "1e-5" became 15 and "1000" became 10 without a word. A decimal comma is read
as a decimal point ("2,5" is 2.5); text with both marks ("1,000.5") is refused. Only ASCII number text is read
(the engine's rule, :func:`optrr_engine.release.column_stats.is_number_text`): ``float`` alone also took "0_5" (5)
and other scripts' digits ("٣", "２,５").
"""

from __future__ import annotations

import math
import re

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QLabel, QSlider, QToolTip, QVBoxLayout, QWidget

from optrr_engine.release.column_stats import is_number_text

from ..state.session import MAX_EPSILON, MIN_EPSILON

SLIDER_STEPS = 1000


def slider_to_value(pos: int, lo: float = MIN_EPSILON, hi: float = MAX_EPSILON) -> float:
    """Log scale: position 0 is ``lo`` and SLIDER_STEPS is ``hi``; rounded to 3 significant digits."""
    v = math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * pos / SLIDER_STEPS)
    return float(f"{v:.3g}")


def value_to_slider(value: float, lo: float = MIN_EPSILON, hi: float = MAX_EPSILON) -> int:
    value = min(max(float(value), lo), hi)
    return round((math.log(value) - math.log(lo)) / (math.log(hi) - math.log(lo)) * SLIDER_STEPS)


#: Decimals the spin box keeps: typed values with at most this many decimals are committed exactly.
EXACT_DECIMALS = 10
#: Decimals always shown (more only when the value has them: 0.0125 shows as 0.0125, 1 as 1.000).
SHOWN_DECIMALS = 3
INVALID_STYLE = "QDoubleSpinBox { background-color: #ffd6d6; border: 1px solid #c00000; }"
#: What a disabled editor shows instead of a value (a column that is not perturbed has no ε: it is not randomized).
NO_VALUE = "—"
#: The hint under a full-size ε editor's slider (review 20: it read "◀ more private · lower = more private · more
#: accurate ▶").
EPSILON_HINT = "◀ lower = more private · higher = more accurate ▶"
WEIGHT_HINT = "◀ smaller share of the budget · larger share ▶"


def rounded_down(value: float) -> float:
    """``value`` (an ε a design gave) as an ε editor holds it: down to the SHOWN_DECIMALS decimals the editor shows
    (never above what the design gave: an exact design's whole-record ε is non-decreasing in every column's ε, so
    the columns stay within the budget that gave them), within [MIN_EPSILON, MAX_EPSILON]."""
    scale = 10**SHOWN_DECIMALS
    down = math.floor(float(value) * scale * (1 + 1e-12)) / scale  # (1.159 computed as 1.15899999... stays 1.159)
    return min(MAX_EPSILON, max(MIN_EPSILON, float(f"{down:.{SHOWN_DECIMALS}f}")))


def refusal_status(message: str) -> str:
    """The status bar's text for a refused typed number (cleared again by the box's next valid commit)."""
    return f"Not changed: {message}"


#: A comma that may group thousands: one to three digits (not a lone 0) before it and exactly three after it, at the
#: end or before an exponent ("1,000", "12,500e-3"; "0,125" and "2,50" are decimal commas).
THOUSANDS = re.compile(r"^[+-]?[1-9][0-9]{0,2},[0-9]{3}(?:[eE]|$)")


class MixedDecimalMarks(ValueError):
    """Typed text with more than one decimal mark (a comma and a point, or several commas), or a comma that may
    group thousands ("1,000")."""


def typed_number(text: str) -> float:
    """The number in ``text``, reading one decimal comma as a decimal point when there is no point ("2,5" is
    2.5). Only ASCII number text (optional sign, digits 0-9 with one decimal mark, optional exponent e/E; ASCII
    spaces around it) is a number: raises ``ValueError`` for anything else ("0_5", "٣", "1 000", "0x1", "inf");
    :class:`MixedDecimalMarks` for text with several marks ("1,000.5", "1,000,000") or a comma followed by exactly
    three digits ("1,000": a thousand or one?): which one is the decimal mark is not clear."""
    if "," in text:
        if "." in text or text.count(",") > 1 or THOUSANDS.search(text):
            raise MixedDecimalMarks(text)
        text = text.replace(",", ".")
    if not is_number_text(text):
        raise ValueError(f"not a number: {text!r}")
    return float(text)


class ExactSpinBox(QDoubleSpinBox):
    """A ``QDoubleSpinBox`` that never turns typed text into another value. While typing every keystroke is
    kept (partial or out-of-range text is *Intermediate*, never refused); on Enter or focus-out a number within
    the range (plain or scientific, e.g. ``5e-1``; a decimal comma as a point, ``2,5``) is committed exactly,
    anything else is refused: the previous value stays, and ``inputRefused(message)`` says why in words. Whoever
    shows the message in the window's status bar shows :func:`refusal_status`; the box's next valid commit (typed
    text committed, or a step) clears it there if it is still shown."""

    inputRefused = Signal(str)

    def __init__(self, parent=None, name: str = "ε"):
        super().__init__(parent)
        self._blank = False  # showing NO_VALUE instead of the value (set_blank)
        self._shown_prefix = ""  # the prefix while blank
        self.name = name
        self.setDecimals(EXACT_DECIMALS)
        self.setCorrectionMode(QDoubleSpinBox.CorrectionMode.CorrectToPreviousValue)
        self._refusal: str | None = None  # the last refusal's message, until a valid commit
        self._typed = False  # text typed since the last commit
        self._refused_now = False  # this commit's text was refused
        self.lineEdit().textEdited.connect(self._text_typed)
        self.editingFinished.connect(self._commit_ended)

    def _number_text(self, text: str) -> str:
        text = text.strip()
        prefix, suffix = self.prefix().strip(), self.suffix().strip()
        if prefix and text.startswith(prefix):
            text = text[len(prefix) :]
        if suffix and text.endswith(suffix):
            text = text[: -len(suffix)]
        return text.strip()

    def problem(self, text: str) -> str | None:
        """Why ``text`` (as shown, with the prefix) cannot be committed, or None when it can."""
        typed = self._number_text(text)
        lo, hi = self.minimum(), self.maximum()
        range_msg = f"{self.name} must be a number from {lo:g} to {hi:g}; got {typed!r}"
        try:
            value = typed_number(typed)
        except MixedDecimalMarks:
            hint = " (a comma before three digits may group thousands)" if THOUSANDS.search(typed) else ""
            return (
                f"{self.name} must be a number with one decimal mark, a point or a comma (e.g. 2.5); "
                f"got {typed!r}{hint}"
            )
        except ValueError:
            return range_msg
        if not math.isfinite(value) or not lo <= value <= hi:
            return range_msg
        if float(f"{value:.{self.decimals()}f}") != value:
            return f"{self.name} can have at most {self.decimals()} decimals; got {typed!r}"
        return None

    def validate(self, text: str, pos: int):
        # Never Invalid: a refused keystroke would silently change the number being typed.
        state = QValidator.State.Acceptable if self.problem(text) is None else QValidator.State.Intermediate
        return state, text, pos

    def fixup(self, text: str) -> str:
        # Called on Enter / focus-out when the text is not acceptable: the previous value is kept (correction
        # mode), and the user is told why.
        message = self.problem(text)
        if message is not None:
            self._refusal, self._refused_now = message, True
            self.inputRefused.emit(message)
        return text

    def _text_typed(self, _text: str) -> None:
        self._typed = True

    def _commit_ended(self) -> None:
        """Enter or focus-out: typed text that was not refused is a valid commit."""
        typed, refused = self._typed, self._refused_now
        self._typed = self._refused_now = False
        if typed and not refused:
            self.clear_refusal_status()

    def stepBy(self, steps: int) -> None:
        """Arrow keys, wheel, the buttons: a valid commit too."""
        super().stepBy(steps)
        self.clear_refusal_status()

    def clear_refusal_status(self) -> None:
        """Remove the last refusal's message from the window's status bar, if it is still the one shown."""
        message, self._refusal = self._refusal, None
        status_bar = getattr(self.window(), "statusBar", None)
        if message is None or not callable(status_bar):
            return
        if status_bar().currentMessage() == refusal_status(message):
            status_bar().clearMessage()

    def set_blank(self, blank: bool) -> None:
        """Show NO_VALUE instead of the value (without the prefix), or the value again; the value is kept."""
        if blank == self._blank:
            return
        self._blank = blank
        if blank:
            self._shown_prefix = self.prefix()
            self.setPrefix("")  # (re-shows the text: textFromValue says NO_VALUE)
        else:
            self.setPrefix(self._shown_prefix)

    def is_blank(self) -> bool:
        return self._blank

    def valueFromText(self, text: str) -> float:
        try:
            return typed_number(self._number_text(text))
        except ValueError:
            return self.value()

    def textFromValue(self, value: float) -> str:
        if self._blank:
            return NO_VALUE
        shown = f"{value:.{SHOWN_DECIMALS}f}"
        if float(shown) == value:
            return shown
        return f"{value:.{EXACT_DECIMALS}f}".rstrip("0")

    def sizeHint(self):
        hint = super().sizeHint()
        # Wide enough for the largest value with the usual decimals (textFromValue(max) is short).
        prefix = self._shown_prefix if self._blank else self.prefix()
        text = f"{prefix}{self.maximum():.{SHOWN_DECIMALS}f}{self.suffix()}  "
        hint.setWidth(max(hint.width(), self.fontMetrics().horizontalAdvance(text) + 30))
        return hint


class EpsilonEditor(QWidget):
    """Spin box + log slider for one epsilon (or a weight when ``kind='weight'``). Disabled by ``setEnabled(False)``
    (the side panel's editor of a column that is kept or dropped, or of no column), it shows no value: NO_VALUE in
    the field, no slider (review 20: a dropped column showed the stale greyed "ε 0.0882" it is not released with).
    Disabled only through a disabled parent, it still shows its value."""

    valueEdited = Signal(float, bool)
    #: Typed text that was not committed: the message in words (the field also turns red with it as tooltip).
    inputRefused = Signal(str)

    def __init__(self, parent=None, kind: str = "epsilon", compact: bool = False):
        super().__init__(parent)
        self.kind = kind
        self._updating = False
        self._lo, self._hi = (MIN_EPSILON, MAX_EPSILON) if kind == "epsilon" else (0.01, 100.0)
        self.error: str | None = None
        self.spin = ExactSpinBox(self, name="ε" if kind == "epsilon" else "the weight")
        self.spin.setRange(self._lo, self._hi)
        self.spin.setSingleStep(0.1)
        self.spin.setKeyboardTracking(False)
        self.spin.setAccelerated(True)
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setRange(0, SLIDER_STEPS)
        self.slider.setPageStep(SLIDER_STEPS // 20)
        policy = self.slider.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # hidden without a value: the row keeps its layout
        self.slider.setSizePolicy(policy)
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
        self._tip = tip
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
            self.hint = QLabel(EPSILON_HINT if kind == "epsilon" else WEIGHT_HINT, self)
            self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.hint.setStyleSheet("color: palette(mid); font-size: 9pt;")
            outer.addWidget(self.hint)
        self.spin.valueChanged.connect(self._spin_changed)
        self.spin.inputRefused.connect(self._refused)
        self.slider.valueChanged.connect(self._slider_moved)
        self.slider.sliderReleased.connect(self._slider_released)

    def value(self) -> float:
        return float(self.spin.value())

    def shows_value(self) -> bool:
        """False while the editor shows NO_VALUE (disabled itself: see the class doc)."""
        return not self.spin.is_blank()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.EnabledChange:
            blank = self.testAttribute(Qt.WidgetAttribute.WA_ForceDisabled)  # its own setEnabled(False)
            self.spin.set_blank(blank)
            self.slider.setVisible(not blank)

    def setValue(self, value: float) -> None:
        """Show a value without emitting ``valueEdited``."""
        if float(value) != self.spin.value():
            self.clear_error()
        self._updating = True
        try:
            self.spin.setValue(float(value))
            self.slider.setValue(value_to_slider(value, self._lo, self._hi))
        finally:
            self._updating = False

    def _refused(self, message: str) -> None:
        """Typed text not committed: say so on the field (red, tooltip) and in the window's status bar."""
        self._mark_invalid(message)
        if self.spin.isVisible():
            QToolTip.showText(self.spin.mapToGlobal(self.spin.rect().bottomLeft()), message, self.spin)
        window = self.window()
        status_bar = getattr(window, "statusBar", None)
        if callable(status_bar):
            status_bar().showMessage(refusal_status(message), 10_000)
        self.inputRefused.emit(message)

    def _mark_invalid(self, message: str) -> None:
        """The field red, ``message`` in its tooltip."""
        self.error = message
        self.spin.setStyleSheet(INVALID_STYLE)
        self.spin.setToolTip(f"{message}\n\n{self._tip}")

    def clear_error(self) -> None:
        """Drop the red state and message of a refused text (the field shows a valid value again)."""
        if self.error is not None:
            self.error = None
            self.spin.setStyleSheet("")
            self.spin.setToolTip(self._tip)

    def _spin_changed(self, value: float) -> None:
        if self._updating:
            return
        self.clear_error()
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
