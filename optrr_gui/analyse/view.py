"""Analyse a release (the receiver's side): open a perturbed file with its manifest, pick attributes, and see
the estimated marginal (one attribute) or contingency table (two) with confidence intervals, or its row or column
shares, the test of association (two attributes), export as CSV or JSON. Estimation streams the file in a worker
thread.
"""

from __future__ import annotations

import json
import math
import os
from html import escape
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from optrr_engine.analysis.chi_square import format_p_value
from optrr_engine.analysis.contingency import conditional_shares
from optrr_engine.analysis.release_chi2 import TEST_WARNINGS, json_report
from optrr_engine.errors import InputError
from optrr_engine.estimation.release_estimate import default_manifest_path
from optrr_engine.estimation.release_source import KEPT_COLUMNS_HINT, kept_column_message
from optrr_engine.io.atomic import write_text_atomic
from optrr_engine.io.json_file import strict_json
from optrr_engine.utility.release_check import INFORMATION_WARNINGS

from ..common.widgets import Spinner, WrappedLabel, fmt_eps
from ..workers.jobs.analyse import estimate_task, open_release_task

ESTIMATORS = {
    "map": "Smoothed maximum likelihood (recommended)",
    "ibu": "Maximum likelihood (EM)",
    "unbiased": "Unbiased, for inference (may show negative shares)",
    "clip": "Clipped and rescaled (no negatives)",
}


def estimator_name(method: str) -> str:
    """The estimator's short name in running text ("smoothed maximum likelihood") from its ESTIMATORS label."""
    return ESTIMATORS[method].split(" (")[0].split(",")[0].lower()
#: The engine's tests of association in plain words (the JSON keeps the engine's names).
#: Marks a cell whose shown estimate lies outside its interval (MarginalEstimate.outside_interval).
OUTSIDE_MARK = "†"
TEST_LABELS = {
    "wald_on_unbiased_estimate": "Wald test on the estimated table (accounts for the randomization)",
    "pearson_on_perturbed_counts": "Pearson test on the released counts as they are",
}
#: The test shown as the result of a two-way table (the others only as "also valid" or behind "why not ...?").
MAIN_TEST = "wald_on_unbiased_estimate"
#: Link of a not-valid test's "why not ...?" line in the tests' text (the test's engine name follows).
WHY_NOT = "why-not:"
#: What a two-way table shows: key -> label ({a} the rows' attribute, {b} the columns').
SHARES = {
    "joint": "joint shares (of all records)",
    "row": "row shares ({b} within each {a})",
    "column": "column shares ({a} within each {b})",
}


#: Data role of an Attributes item that is a column copied unchanged (listed, never ticked for estimation).
KEPT_ROLE = Qt.ItemDataRole.UserRole + 1


def kept_label(name: str) -> str:
    """How a kept column is listed among the attributes."""
    return f"{name} — copied unchanged, not private"


def kept_note(names: list[str]) -> str:
    """The line under the attributes on the release's kept columns (the engine's words, as the CLI says them)."""
    if not names:
        return ""
    if len(names) == 1:
        return f"{kept_column_message(names[0])}: it is not private and is not estimated here."
    listed = ", ".join(repr(n) for n in names)
    return f"{listed} are columns {KEPT_COLUMNS_HINT}: they are not private and are not estimated here."


def pct(v: float) -> str:
    return "—" if v is None or not math.isfinite(v) else f"{100 * v:.1f} %"


def cells_text(n: int) -> str:
    """The count with its noun: "1 cell", "2 cells"."""
    return f"{n} cell" if n == 1 else f"{n} cells"


def rows_text(est) -> str:
    """The rows an estimate comes from: "309 perturbed rows", or from a sampling release the records that do
    report the table (counted in it): "the 1 of 309 perturbed rows that reports this table"."""
    total = est.info.get("records_total")
    if total is not None and est.rows != total:
        verb = "reports" if est.rows == 1 else "report"
        return f"the {est.rows:,} of {total:,} perturbed rows that {verb} this table"
    return f"{est.rows:,} perturbed row{'s' if est.rows != 1 else ''}"


def negative_note(n: int) -> str:
    """The estimate's note on negative cells of the unbiased estimate, in words ("" for none)."""
    if not n:
        return ""
    if n == 1:
        why = "the share is small and the randomization's noise larger; its interval says how large it may be"
    else:
        why = "the shares are small and the randomization's noise larger; their intervals say how large they may be"
    return f"in {cells_text(n)} the unbiased estimate (behind the intervals) is below zero: {why}"


class AnalyseView(QWidget):
    def __init__(self, window, parent=None):
        super().__init__(parent)
        self.window_ = window
        self.runner = window.runner
        self.release_path: str | None = None
        self.manifest_path: str | None = None
        self.opened = None
        self.result: dict | None = None
        #: Engine names of the not-valid tests whose "why not ...?" explanation is open.
        self.why_open: set[str] = set()
        self._chi2: dict | None = None

        self.open_button = QPushButton("Open release…")
        self.open_button.setToolTip("Open a perturbed data file; its manifest (.manifest.json) is found next to it.")
        self.open_button.clicked.connect(self.open_release_dialog)
        self.manifest_button = QPushButton("Choose manifest…")
        self.manifest_button.setToolTip("Use a manifest stored somewhere else")
        self.manifest_button.clicked.connect(self.choose_manifest)
        self.info = QLabel("Open a released file and its manifest to estimate the true distributions.")
        self.info.setWordWrap(True)
        self.spinner = Spinner(self)
        head = QHBoxLayout()
        head.addWidget(self.open_button)
        head.addWidget(self.manifest_button)
        head.addWidget(self.info, 1)
        head.addWidget(self.spinner)

        self.attributes = QListWidget()
        self.attributes.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        #: The ticked attributes in the order they were ticked: the order of the table asked for (the first its
        #: rows), as `optrr estimate` keeps the order named, never the list's (the manifest's) order.
        self._ticked: list[str] = []
        self.attributes.itemChanged.connect(self._tick_changed)
        self.attributes.setToolTip(
            "Tick one attribute for its distribution, two for their table and a test; the table's attributes come in "
            "the order you tick them (the first gives its rows)."
        )
        self.kept_note = QLabel()
        self.kept_note.setWordWrap(True)
        self.kept_note.setTextFormat(Qt.TextFormat.PlainText)
        self.kept_note.setStyleSheet("color: #666666")
        self.kept_note.hide()
        self.estimator = QComboBox()
        for key, label in ESTIMATORS.items():
            self.estimator.addItem(label, key)
        self.estimator.setToolTip(
            "How the true shares are recovered. Maximum likelihood (the default) always gives proper shares and is "
            "the most accurate; unbiased is exact on average but can go below 0 with few rows. The confidence "
            "intervals and tests always come from the unbiased estimate."
        )
        self.confidence = QDoubleSpinBox()
        self.confidence.setRange(0.5, 0.999)
        self.confidence.setDecimals(3)
        self.confidence.setSingleStep(0.01)
        self.confidence.setValue(0.95)
        self.confidence.setToolTip("Confidence level of the intervals (0.95 = 95 %).")
        self.estimate_button = QPushButton("Estimate")
        self.estimate_button.setEnabled(False)
        self.estimate_button.clicked.connect(self.estimate)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: self.runner.cancel("analyse:estimate"))
        self.export_csv = QPushButton("Export CSV…")
        self.export_json = QPushButton("Export JSON…")
        for b in (self.export_csv, self.export_json):
            b.setEnabled(False)
        self.export_csv.clicked.connect(lambda: self.export("csv"))
        self.export_json.clicked.connect(lambda: self.export("json"))
        form = QFormLayout()
        form.addRow("Estimator", self.estimator)
        form.addRow("Confidence", self.confidence)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(QLabel("Attributes"))
        ll.addWidget(self.attributes, 1)
        ll.addWidget(self.kept_note)
        ll.addLayout(form)
        buttons = QHBoxLayout()
        buttons.addWidget(self.estimate_button)
        buttons.addWidget(self.cancel_button)
        ll.addLayout(buttons)
        ex = QHBoxLayout()
        ex.addWidget(self.export_csv)
        ex.addWidget(self.export_json)
        ll.addLayout(ex)

        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.shares = QComboBox()
        for key, label in SHARES.items():
            self.shares.addItem(label.format(a="rows", b="columns"), key)
        self.shares.setToolTip(
            "What the table shows. Joint: each cell's share of all records, with its confidence interval. Row "
            "shares: each cell divided by its row's sum (e.g. the stroke rate among hypertensive patients), column "
            "shares likewise; both are computed from the shown estimate and have no interval (the intervals are for "
            "the joint shares)."
        )
        self.shares.currentIndexChanged.connect(self._shares_changed)
        self.shares_note = WrappedLabel()
        self.shares_note.setStyleSheet("color: #666666")
        self.shares_row = QWidget()
        shares_layout = QHBoxLayout(self.shares_row)
        shares_layout.setContentsMargins(0, 0, 0, 0)
        shares_layout.addWidget(QLabel("Show:"))
        shares_layout.addWidget(self.shares)
        shares_layout.addStretch(1)
        self.shares_row.hide()
        self.shares_note.hide()
        self.tests = QTextBrowser()
        self.tests.setMaximumHeight(200)
        self.tests.setOpenLinks(False)  # the only links open or close a "why not ...?" explanation
        self.tests.anchorClicked.connect(self._test_link)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        self.result_label = QLabel()
        self.result_label.setWordWrap(True)
        rl.addWidget(self.result_label)
        rl.addWidget(self.shares_row)
        rl.addWidget(self.shares_note)
        rl.addWidget(self.table, 1)
        rl.addWidget(self.tests)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([300, 900])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(head)
        lay.addWidget(split, 1)
        self.tests.hide()

    # -- opening ---------------------------------------------------------------------------------
    def open_release_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a release", self.window_.settings.last_dir("release"), "Released data (*.csv *.parquet *.xlsx)"
        )
        if path:
            self.open_release(path)

    def choose_manifest(self) -> None:
        start = os.path.dirname(self.release_path) if self.release_path else self.window_.settings.last_dir("release")
        path, _ = QFileDialog.getOpenFileName(self, "Manifest", start, "Manifests (*.json)")
        if path and self.release_path:
            self.open_release(self.release_path, path)

    def clear_results(self) -> None:
        """Forget the estimate on screen (tables, tests, exports): it belongs to a release no longer open."""
        self.result = None
        self.table.clear()
        self.table.setRowCount(0)
        self.table.setColumnCount(0)
        self.tests.clear()
        self.tests.hide()
        self.shares_row.hide()
        self.shares_note.hide()
        self.result_label.setText("")
        for b in (self.export_csv, self.export_json):
            b.setEnabled(False)

    def open_release(self, path: str, manifest_path: str | None = None) -> None:
        self.release_path, self.manifest_path = str(path), manifest_path
        self.opened = None
        self.clear_results()
        self.clear_attributes()
        self.estimate_button.setEnabled(False)
        missing = None if manifest_path else self.missing_manifest(str(path))
        if missing:
            self._failed(missing)
            return
        self.info.setText(f"Opening {Path(path).name} and checking it against its manifest…")
        self.spinner.start()
        self.runner.submit(
            "analyse:open",
            open_release_task,
            str(path),
            manifest_path,
            on_done=self._opened,
            on_error=self._failed,
            process=True,
        )

    def missing_manifest(self, path: str) -> str | None:
        """Why ``path`` cannot be opened as a release when no manifest lies beside it, else None."""
        manifest = default_manifest_path(path)
        if os.path.exists(manifest):
            return None
        return (
            f"{Path(path).name} has no OptRR manifest beside it ({Path(manifest).name}); it is not a release, "
            f"or choose its manifest with {self.manifest_button.text()}"
        )

    def _opened(self, result: dict) -> None:
        self.spinner.stop()
        manifest, mechanism = result["manifest"], result["mechanism"]
        self.manifest_path = result["manifest_path"]
        self.opened = (manifest, mechanism)
        eps = mechanism.attribute_epsilons()
        rows = manifest.get("rows")
        rows_text = f"{rows:,} rows, " if isinstance(rows, int) else ""
        kept = [str(c) for c in manifest.get("kept_columns") or []]
        kept_text = f" ({len(kept)} more copied unchanged, not private)" if kept else ""
        self.info.setText(
            f"<b>{Path(self.release_path).name}</b>: {rows_text}{mechanism.k} perturbed attributes{kept_text}, "
            f"whole-record ε {fmt_eps(mechanism.overall_epsilon())} (recomputed from the manifest's mechanism)."
            + self.not_private_html(result.get("not_private"))
        )
        self.clear_attributes()
        for i, attr in enumerate(manifest["attributes"]):
            label = f"{attr['name']}  (ε {fmt_eps(float(eps[i]))}, {len(attr['categories'])} categories)"
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, str(attr["name"]))
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if i == 0 else Qt.CheckState.Unchecked)
            self.attributes.addItem(item)
        self._ticked = [str(a["name"]) for a in manifest["attributes"][:1]]  # ticked above before it was listed
        self.show_kept_columns(kept)
        self.estimate_button.setEnabled(True)
        self.result_label.setText(self.start_hint())

    def start_hint(self) -> str:
        """The right pane before an estimate: what to do (a GUI review found it empty, one attribute ticked)."""
        return (
            f"Tick one attribute for its distribution, or two for their table and a test, then press "
            f"{self.estimate_button.text()}."
        )

    def clear_attributes(self) -> None:
        self.attributes.clear()
        self._ticked = []
        self.kept_note.setText("")
        self.kept_note.hide()

    def show_kept_columns(self, names: list[str]) -> None:
        """The release's columns copied unchanged, listed after the attributes, greyed and without a tick box (they
        are in the file but not randomized: nothing to estimate), with the reason in a tooltip and under the list."""
        italic = QFont(self.attributes.font())
        italic.setItalic(True)
        for name in names:
            item = QListWidgetItem(kept_label(name))
            item.setData(KEPT_ROLE, name)
            item.setFlags(Qt.ItemFlag.NoItemFlags)  # not enabled, not checkable: never one of selected_names()
            item.setForeground(QColor(120, 120, 120))
            item.setFont(italic)
            item.setToolTip(f"{kept_column_message(name)}.")
            self.attributes.addItem(item)
        self.kept_note.setText(kept_note(names))
        self.kept_note.setVisible(bool(names))

    @staticmethod
    def not_private_html(warning: str | None) -> str:
        """The loud line for a test-seed release (ignored as data, never silently analysed as private)."""
        if not warning:
            return ""
        return f"<br><span style='color:#cc0000'><b>WARNING: {escape(warning)}</b></span>"

    def _failed(self, exc: BaseException | str) -> None:
        """Opening or estimating failed: no table of an earlier release or estimate stays on screen. The message
        is shown once: beside the file when opening failed, above the results when estimating failed."""
        self.spinner.stop()
        self.cancel_button.setEnabled(False)
        self.clear_results()
        message = f"<span style='color:#cc0000'>{escape(str(exc))}</span>"
        if self.opened is None:  # the open failed: nothing can be estimated
            self.clear_attributes()
            self.estimate_button.setEnabled(False)
            self.info.setText(message)
        else:
            self.result_label.setText(message)

    # -- estimating -------------------------------------------------------------------------------
    def _tick_changed(self, item: QListWidgetItem) -> None:
        name = item.data(Qt.ItemDataRole.UserRole)
        if item.data(KEPT_ROLE) is not None or name is None:
            return
        on = item.checkState() == Qt.CheckState.Checked
        if on and name not in self._ticked:
            self._ticked.append(name)
        elif not on and name in self._ticked:
            self._ticked.remove(name)

    def selected_names(self) -> list[str]:
        """The ticked attributes in the order they were ticked (the first ticked gives the rows of a 2-way table)."""
        checked = []
        for i in range(self.attributes.count()):
            item = self.attributes.item(i)
            if item.data(KEPT_ROLE) is None and item.checkState() == Qt.CheckState.Checked:
                checked.append(item.data(Qt.ItemDataRole.UserRole))
        return [n for n in self._ticked if n in checked] + [n for n in checked if n not in self._ticked]

    def kept_names(self) -> list[str]:
        """The kept columns listed (copied unchanged, not tickable)."""
        items = (self.attributes.item(i) for i in range(self.attributes.count()))
        return [item.data(KEPT_ROLE) for item in items if item.data(KEPT_ROLE) is not None]

    def set_selected(self, names: list[str]) -> None:
        for i in range(self.attributes.count()):
            item = self.attributes.item(i)
            if item.data(KEPT_ROLE) is not None:
                continue  # a kept column has no tick box
            on = item.data(Qt.ItemDataRole.UserRole) in names
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        self._ticked = [n for n in names if n in self._ticked]  # in the order given

    def estimate(self) -> None:
        names = self.selected_names()
        if not names or self.opened is None:
            self.result_label.setText("Tick at least one attribute.")
            return
        if len(names) > 4:
            self.result_label.setText("Tick at most four attributes (the joint table grows quickly).")
            return
        self.spinner.start()
        self.cancel_button.setEnabled(True)
        self.result_label.setText("Estimating…")
        self.runner.submit(
            "analyse:estimate",
            estimate_task,
            self.release_path,
            names,
            self.manifest_path,
            self.estimator.currentData(),
            float(self.confidence.value()),
            self.opened,
            on_done=self._estimated,
            on_error=self._failed,
            on_progress=lambda f, msg: self.result_label.setText(f"Estimating… {100 * f:.0f} % {msg}"),
            on_cancelled=lambda: (self.spinner.stop(), self.result_label.setText("Cancelled.")),
            process=True,
        )

    def _estimated(self, result: dict) -> None:
        self.spinner.stop()
        self.cancel_button.setEnabled(False)
        self.result = result
        est = result["estimate"]
        level = f"{100 * est.confidence:g} %"
        negatives = f"; {negative_note(est.negative_cells)}" if est.negative_cells else ""
        if not est.info.get("converged", True):
            negatives += f"; NOT converged after {est.info['iterations']} iterations"
        if "suppression" in est.info:
            negatives += f"; {est.info['suppression']}"
        if "prior_lowered" in est.info:
            negatives += f"; {est.info['prior_lowered']}"
        for key in ("not_identifiable", *INFORMATION_WARNINGS, "few_rows"):  # the 2nd: estimate_information
            if key in est.info:
                negatives += f"; warning: {est.info[key]}"
        if est.outside_interval_note:
            negatives += f"; {OUTSIDE_MARK} {est.outside_interval_note}"
        self.result_label.setText(
            f"{' × '.join(est.names())}: {estimator_name(est.method)} estimate from "
            f"{rows_text(est)}, {level} confidence intervals of the unbiased estimate (the same whichever "
            f"estimate is shown){negatives}."
        )
        if len(est.sizes) == 2:
            self._show_two_way(est)
        else:
            self.shares_row.hide()
            self.shares_note.hide()
            self._show_cells(est)
        self.why_open = set()
        self._show_tests(result.get("chi2"))
        for b in (self.export_csv, self.export_json):
            b.setEnabled(True)

    def _show_cells(self, est) -> None:
        cells = est.cells()
        names = est.names()
        headers = [*names, "Estimated share", "CI low", "CI high", "Std. error", "Share in the release"]
        self.table.clear()
        self.table.setColumnCount(len(headers))
        self.table.setHorizontalHeaderLabels(headers)
        self.table.setRowCount(len(cells))
        outside_cells = est.outside_interval.reshape(-1)  # C order, as cells()
        for r, c in enumerate(cells):
            raw = c["observed"] / est.rows if est.rows else float("nan")
            outside = bool(outside_cells[r])
            values = [
                *c["values"],
                (OUTSIDE_MARK + " " if outside else "") + pct(c["estimate"]),
                pct(c["ci_low"]),
                pct(c["ci_high"]),
                pct(c["std_error"]),
                pct(raw),
            ]
            for col, text in enumerate(values):
                item = QTableWidgetItem(text)
                if col >= len(names):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, col, item)
        self.table.horizontalHeaderItem(len(names) + 4).setToolTip(
            "Share in the perturbed file itself (biased towards uniform: do not report it as a result)."
        )

    def _show_two_way(self, est) -> None:
        """The table of the two attributes: joint shares with their intervals, or row or column shares of the shown
        estimate (``self.shares``), each cell's numbers in words in its tooltip."""
        labels = est.labels()
        a, b = est.names()
        for i, key in enumerate(SHARES):
            self.shares.setItemText(i, SHARES[key].format(a=a, b=b))
        self.shares_row.show()
        mode = self.shares.currentData()
        method = estimator_name(est.method)
        if mode == "joint":
            self.shares_note.setText("")
        else:
            sums = "row" if mode == "row" else "column"
            self.shares_note.setText(
                f"Each {sums} sums to 100 %. Computed from the {method} estimate shown; no intervals (the intervals "
                "are for the joint shares)."
            )
        self.shares_note.setVisible(mode != "joint")
        self.table.clear()
        self.table.setRowCount(len(labels[0]))
        self.table.setColumnCount(len(labels[1]))
        self.table.setHorizontalHeaderLabels([f"{b} = {v}" for v in labels[1]])
        self.table.setVerticalHeaderLabels([f"{a} = {v}" for v in labels[0]])
        within = None if mode == "joint" else conditional_shares(est.estimate, 1 if mode == "row" else 0)
        for i in range(len(labels[0])):
            for j in range(len(labels[1])):
                if within is None:
                    item = self._joint_cell(est, i, j)
                else:
                    share = float(within[i, j])
                    item = QTableWidgetItem(pct(share))
                    if mode == "row":
                        part, of, whole = f"{b} = {labels[1][j]}", f"{a} = {labels[0][i]}", est.estimate[i, :].sum()
                    else:
                        part, of, whole = f"{a} = {labels[0][i]}", f"{b} = {labels[1][j]}", est.estimate[:, j].sum()
                    item.setToolTip(
                        f"{part} among the records with {of}: {pct(share)} = {pct(est.estimate[i, j])} of all "
                        f"records / {pct(whole)} with {of}, both from the {method} estimate shown; no interval (the "
                        "intervals are for the joint shares)"
                    )
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)

    @staticmethod
    def _joint_cell(est, i: int, j: int) -> QTableWidgetItem:
        outside = bool(est.outside_interval[i, j])
        item = QTableWidgetItem(
            f"{OUTSIDE_MARK + ' ' if outside else ''}{pct(est.estimate[i, j])}  "
            f"[{pct(est.ci_low[i, j])} – {pct(est.ci_high[i, j])}]"
        )
        item.setToolTip(
            f"estimated share {pct(est.estimate[i, j])}, {100 * est.confidence:g} % interval "
            f"{pct(est.ci_low[i, j])} to {pct(est.ci_high[i, j])}; "
            f"share in the perturbed file {pct(est.observed[i, j] / est.rows)}"
            + (f"; {OUTSIDE_MARK} outside its interval: read as unknown" if outside else "")
        )
        return item

    def _shares_changed(self, _index: int) -> None:
        est = self.result["estimate"] if self.result else None
        if est is not None and len(est.sizes) == 2:
            self._show_two_way(est)

    def _show_tests(self, chi2: dict | None) -> None:
        """The test of association: the Wald test's result prominently; another test that is valid here below it,
        smaller; a test that is not valid here only as a grey "why not ...?" line, whose explanation (and the
        test's numbers) opens on a click (``why_open``)."""
        if not chi2:
            self.tests.hide()
            return
        self._chi2 = chi2
        tests = chi2["tests"]
        main = next((t for t in tests if t["test"] == MAIN_TEST), tests[0])
        parts = ["<b>Test of association</b> (H0: the two attributes are independent)"]
        for key in TEST_WARNINGS:
            if chi2.get(key):
                parts.append(f"<br><span style='color:#cc0000'>{escape(chi2[key])}</span>")
        rec = " — recommended" if main["test"] == chi2.get("recommended") else ""
        unreliable = "" if main.get("valid", True) else " — <span style='color:#cc0000'>not reliable</span>"
        parts.append(
            f"<p style='font-size:large'><b>{self._test_label(main)}{rec}: p = {self._p_text(main)}</b>"
            f"{unreliable}</p>"
            f"<small>{self._numbers(main)}. {self._how(main)}Assumes: {escape(main['assumes'])}</small>"
        )
        if chi2.get("power"):  # what the test could have found: a large p-value is read against it
            said = chi2["power"]["statement"]
            parts.append(f"<p><small>{escape(said[:1].upper() + said[1:])}</small></p>")
        for t in tests:
            if t is main:
                continue
            if t.get("valid", True):
                parts.append(
                    f"<p>Also valid here: {self._test_label(t)}: p = {self._p_text(t)}<br>"
                    f"<small>{self._numbers(t)}. {self._how(t)}Assumes: {escape(t['assumes'])}</small></p>"
                )
                continue
            name = t["test"]
            is_open = name in self.why_open
            short = self._test_label(t).split(" test")[0]
            parts.append(
                f"<p style='color:#888888'><a style='color:#888888' href='{WHY_NOT}{escape(name)}'>"
                f"{'▾' if is_open else '▸'} Why no {escape(short)} test?</a>"
            )
            if is_open:
                parts.append(
                    f"<br><small>{self._test_label(t)}: {escape(t['assumes'])}. So its result says nothing reliable "
                    f"about the true data: {self._numbers(t)}, p = {self._p_text(t)}. Use the {self._test_label(main)} "
                    "above.</small>"
                )
            parts.append("</p>")
        self.tests.setHtml("".join(parts))
        self.tests.show()

    def _test_link(self, url: QUrl) -> None:
        """A "why not ...?" line was clicked: open or close its explanation."""
        text = url.toString()
        if not text.startswith(WHY_NOT):
            return
        self.why_open ^= {text[len(WHY_NOT) :]}
        self._show_tests(self._chi2)

    @staticmethod
    def _test_label(t: dict) -> str:
        return escape(TEST_LABELS.get(t["test"], t["test"].replace("_", " ")))

    @staticmethod
    def _p_text(t: dict) -> str:
        p = t["p_value"]
        return format_p_value(p, 3) if p is not None and not (isinstance(p, float) and math.isnan(p)) else "—"

    @staticmethod
    def _numbers(t: dict) -> str:
        if t["statistic"] is None:
            return f"χ² not computable, df = {t['dof']}"
        return f"χ² = {t['statistic']:.3f}, df = {t['dof']}"

    @staticmethod
    def _how(t: dict) -> str:
        return f"p-value: {escape(t['p_value_method'])}<br>" if t.get("p_value_method") else ""

    # -- export ------------------------------------------------------------------------------------
    def export(self, kind: str, path: str | None = None) -> bool:
        if not self.result:
            return False
        est = self.result["estimate"]
        if path is None:
            stem = "_".join(est.names())
            start = os.path.join(self.window_.settings.last_dir("export"), f"{stem}_estimate.{kind}")
            path, _ = QFileDialog.getSaveFileName(self, "Export", start, f"{kind.upper()} (*.{kind})")
            if not path:
                return False
        self.window_.settings.set_last_dir("export", path)
        if kind == "csv":
            text = est.to_frame().to_csv(index=False)
        else:
            d = est.to_json_dict()
            if self.result.get("chi2"):
                d["chi_square"] = json_report(self.result["chi2"])  # as optrr analyze --json: never a p of 0
            text = json.dumps(strict_json(d), indent=2, default=str, allow_nan=False) + "\n"
        try:
            write_text_atomic(path, text)  # the save dialog asked before replacing; never a half-written file
        except InputError as exc:
            self.result_label.setText(f"<span style='color:#cc0000'>{escape(str(exc))}</span>")
            return False
        return True
