"""Import dialog: the data path's reader options (delimiter, encoding, decimal mark, sheet, rows above the header)
with a live preview of the first rows. Detection and previews run in the background (an Excel sheet can be slow).
A first line ``sep=X`` of a text file (Excel's delimiter hint) is detected by the engine: it needs no setting.
"""

from __future__ import annotations

import os
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from optrr_engine.io.readers import ReaderOptions, detect_options, read_preview

from ..common.widgets import Spinner
from ..state.config_bridge import gui_wording
from ..workers.runner import TaskRunner

AUTO = "(detect)"
DELIMITERS = [(AUTO, None), ("comma ,", ","), ("semicolon ;", ";"), ("tab", "\t"), ("pipe |", "|"), ("space", " ")]
ENCODINGS = [AUTO, "utf-8", "utf-8-sig", "latin-1", "cp1252", "utf-16", "cp850", "mac-roman"]
DECIMALS = [(AUTO, None), ("point .", "."), ("comma ,", ",")]
EXCEL = (".xlsx", ".xlsm", ".xls", ".ods")
TEXT = (".csv", ".tsv", ".txt", ".dat", ".tab")
PREVIEW_ROWS = 200
#: Most rows above the header the spin box offers.
MAX_SKIP_ROWS = 1000


def list_sheets(path: str, progress=None, cancel=None) -> list[str]:
    """Sheet names of a workbook (worker thread)."""
    import pandas as pd

    with pd.ExcelFile(path) as book:
        return [str(s) for s in book.sheet_names]


def detect_and_preview(path: str, options: dict, progress=None, cancel=None) -> dict:
    """Detected options and the first rows with the chosen options (worker thread). Detection leaves out the rows
    above the header (``skip_rows``), which is the user's choice and not shown as detected."""
    detected = detect_options(path, ReaderOptions(skip_rows=options.get("skip_rows"))).to_dict()
    detected.pop("skip_rows", None)
    merged = {**detected, **{k: v for k, v in options.items() if v not in (None, "")}}
    frame = read_preview(path, ReaderOptions.from_dict(merged), nrows=PREVIEW_ROWS)
    return {"detected": detected, "frame": frame}


def _initial_skip_rows(value) -> int:
    """The spin box's first value from stored options (0 when absent or not a whole number; at most MAX_SKIP_ROWS)."""
    try:
        return max(0, min(MAX_SKIP_ROWS, int(value or 0)))
    except (TypeError, ValueError):
        return 0


class ImportDialog(QDialog):
    """Returns the chosen reader options (plain dict; missing keys = detect) through :meth:`options`."""

    def __init__(self, path: str, runner: TaskRunner, options: dict | None = None, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"Import {os.path.basename(path)}")
        self.resize(900, 560)
        self.path, self.runner = path, runner
        self.frame = None
        self.detected: dict = {}
        options = dict(options or {})
        ext = os.path.splitext(path)[1].lower()
        self.delimiter = QComboBox()
        for label, value in DELIMITERS:
            self.delimiter.addItem(label, value)
        self.delimiter.setToolTip("The character between two values on a line. '(detect)' guesses it from the file.")
        self.encoding = QComboBox()
        self.encoding.setEditable(True)
        self.encoding.addItems(ENCODINGS)
        self.encoding.setToolTip(
            "How the text is stored. If accents look wrong in the preview, try another (latin-1, cp1252...)."
        )
        self.decimal = QComboBox()
        for label, value in DECIMALS:
            self.decimal.addItem(label, value)
        self.decimal.setToolTip("The decimal mark in numbers: 1.5 (point) or 1,5 (comma).")
        self.sheet = QComboBox()
        self.sheet.setToolTip("Which sheet of the workbook to read.")
        self.skip_rows = QSpinBox()
        self.skip_rows.setRange(0, MAX_SKIP_ROWS)
        self.skip_rows.setValue(_initial_skip_rows(options.get("skip_rows")))
        self.skip_rows.setToolTip(
            "Lines (rows of a sheet) above the header row, such as a title and a blank line, to leave out: the "
            "preview shows the columns named by the row below them. A first line 'sep=;' (Excel's delimiter hint) "
            "is left out on its own; do not count it."
        )
        self._select(self.delimiter, options.get("delimiter"))
        if options.get("encoding"):
            self.encoding.setCurrentText(options["encoding"])
        self._select(self.decimal, options.get("decimal"))
        self._initial_sheet = options.get("sheet")
        form = QFormLayout()
        is_excel = ext in EXCEL
        if not is_excel:
            form.addRow("Delimiter", self.delimiter)
            form.addRow("Encoding", self.encoding)
            form.addRow("Decimal mark", self.decimal)
        else:
            form.addRow("Sheet", self.sheet)
        self._has_rows_above = is_excel or ext in TEXT
        if self._has_rows_above:
            form.addRow("Rows above the header", self.skip_rows)
        if ext not in EXCEL + TEXT:
            form.addRow(QLabel("This format carries its own types; there are no reader options to set."))
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.spinner = Spinner(self)
        self.preview = QTableWidget()
        self.preview.setToolTip(f"The first {PREVIEW_ROWS} rows as they will be read.")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Open")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        head = QHBoxLayout()
        head.addWidget(QLabel(f"<b>{path}</b>"), 1)
        head.addWidget(self.spinner)
        lay = QVBoxLayout(self)
        lay.addLayout(head)
        lay.addLayout(form)
        lay.addWidget(self.info)
        lay.addWidget(self.preview, 1)
        lay.addWidget(self.buttons)
        for box in (self.delimiter, self.decimal, self.sheet):
            box.currentIndexChanged.connect(self.refresh)
        self.encoding.currentTextChanged.connect(self.refresh)
        self.skip_rows.valueChanged.connect(self.refresh)
        if is_excel:
            self.runner.submit(
                "import:sheets", list_sheets, path, on_done=self._sheets, on_error=self._failed, quick=True
            )
        self.refresh()

    @staticmethod
    def _select(box: QComboBox, value) -> None:
        for i in range(box.count()):
            if box.itemData(i) == value:
                box.setCurrentIndex(i)
                return

    def options(self) -> dict:
        out = {
            "delimiter": self.delimiter.currentData(),
            "encoding": None if self.encoding.currentText() in ("", AUTO) else self.encoding.currentText(),
            "decimal": self.decimal.currentData(),
            "sheet": self.sheet.currentText() or None,
            "skip_rows": (self.skip_rows.value() or None) if self._has_rows_above else None,
        }
        return {k: v for k, v in out.items() if v not in (None, "")}

    def refresh(self) -> None:
        self.spinner.start()
        self.info.setText("Reading a preview…")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(False)
        self.runner.submit(
            "import:preview",
            detect_and_preview,
            self.path,
            self.options(),
            on_done=self._previewed,
            on_error=self._failed,
        )

    def _sheets(self, names: list[str]) -> None:
        self.sheet.blockSignals(True)
        self.sheet.clear()
        self.sheet.addItems(names)
        if self._initial_sheet in names:
            self.sheet.setCurrentText(self._initial_sheet)
        self.sheet.blockSignals(False)
        self.refresh()

    def _previewed(self, result: dict) -> None:
        self.spinner.stop()
        self.detected = result["detected"]
        frame = result["frame"]
        self.frame = frame
        shown = {k: ("tab" if v == "\t" else v) for k, v in self.detected.items()}
        det = ", ".join(f"{k} {v!r}" for k, v in shown.items()) or "nothing to detect"
        self.info.setText(f"Detected: {det}. Preview: {len(frame)} rows × {len(frame.columns)} columns.")
        self.preview.clear()
        self.preview.setColumnCount(len(frame.columns))
        self.preview.setRowCount(len(frame))
        self.preview.setHorizontalHeaderLabels([str(c) for c in frame.columns])
        values = frame.astype(object).where(frame.notna(), "").to_numpy()
        for r in range(values.shape[0]):
            for c in range(values.shape[1]):
                item = QTableWidgetItem(str(values[r, c]))
                item.setFlags(Qt.ItemFlag.ItemIsEnabled)
                self.preview.setItem(r, c, item)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(True)

    def _failed(self, exc: BaseException) -> None:
        self.spinner.stop()
        message = escape(gui_wording(str(exc)), quote=False)  # a value quoted in the message may hold < or &
        self.info.setText(f"<span style='color:#cc0000'>Cannot read the file with these options: {message}</span>")
        self.preview.clear()
        self.preview.setRowCount(0)
        self.preview.setColumnCount(0)  # no stale column headers of an earlier preview
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(False)

    def done(self, result: int) -> None:
        self.runner.cancel("import:preview")
        self.runner.cancel("import:sheets")
        super().done(result)
