"""The Compare tab's *Designs at your ε* page: every design the recommender ranks at one whole-record ε
(Kronecker, Auto, Utility and the sampling designs SMP, Sample-m, RS+FD), each released from the loaded file in
memory as the Design tab encodes it, and estimated with the default estimator: the measured error of 1-, 2- and
3-way tables beside the predicted one (``optrr_engine.compare.designs_on_data``; the bench's comparison on the
user's own data). Nothing is written: the simulated releases stay in the worker process.
"""

from __future__ import annotations

import math
from html import escape

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDoubleSpinBox,
    QHeaderView,
    QLabel,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
)

from optrr_engine.compare import output as figures

from ..common.widgets import fmt_eps
from ..state import needed_marginals
from ..state.design_summary import METHOD_LABELS, short_label, words_listed
from ..workers.jobs import compare as compare_jobs
from .view import ComparePage

#: The table's texts for a size a design cannot answer: predicted (non-identifiable) and measured (no estimate).
NOT_IDENTIFIABLE = "not identifiable"
NO_ESTIMATE = "cannot"


def times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _avd_text(value: float, infinite: str = NOT_IDENTIFIABLE) -> str:
    if math.isnan(value):
        return NO_ESTIMATE
    return infinite if math.isinf(value) else f"{value:.3f}"


#: What the page does, shown until its first result.
INTRO = (
    "<b>Which design answers best on your data?</b> <i>Run</i> releases your data (in memory, nothing is written) "
    "with every design at the same whole-record ε, estimates the tables the Design tab marks as needed, "
    "and plots each design's measured error (AVD: the share of records in the wrong cell) next to the error "
    "predicted before release. The ★ marks the design the Design tab recommends. A few seconds to a minute."
)


class EpsilonBox(QDoubleSpinBox):
    """The page's whole-record ε, written as the Design tab's design table writes it (:func:`fmt_eps`: 8.210,
    not 8.21; review 20)."""

    def textFromValue(self, value: float) -> str:
        return fmt_eps(float(value))


class DesignsPage(ComparePage):
    """Controls: the whole-record ε (follows the Design tab until edited), releases per design and tables per
    size; below the plot, one table row per design in the recommender's order (★ = recommended)."""

    title = "Designs at your ε"
    channel = "compare:designs"
    in_process = True

    def __init__(self, window, parent=None):
        super().__init__(window, parent)
        self.controller = window.controller
        self.target = EpsilonBox()
        self.target.setRange(0.05, 500.0)
        self.target.setDecimals(3)  # (the decimals fmt_eps shows below 100)
        self.target.setSingleStep(0.5)
        self.target.setPrefix("ε ")
        self.target.setToolTip(
            "The whole-record ε every design gets. It follows the Design tab (its budget, or the marked design's "
            "whole-record ε) until you change it here. Lower = more private."
        )
        self.user_target = False
        self.target.valueChanged.connect(self._target_edited)
        self.repetitions = QSpinBox()
        self.repetitions.setRange(1, 50)
        self.repetitions.setValue(3)
        self.repetitions.setToolTip("Simulated releases per design (more = a steadier measured error, slower)")
        self.sets = QSpinBox()
        self.sets.setRange(1, 200)
        self.sets.setValue(20)
        self.sets.setToolTip("Tables per size measured (all of them when there are fewer), the same for every design")
        self.controls.addWidget(QLabel("Whole-record"))
        self.controls.addWidget(self.target)
        self.controls.addWidget(QLabel("simulated releases per design"))
        self.controls.addWidget(self.repetitions)
        self.controls.addWidget(QLabel("tables per size"))
        self.controls.addWidget(self.sets)
        self.controls.addStretch(1)
        self.intro = QLabel(INTRO)
        self.intro.setWordWrap(True)
        self.intro.setContentsMargins(6, 6, 6, 6)
        self.layout().insertWidget(1, self.intro)
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setMaximumHeight(230)
        self.layout().insertWidget(2, self.table)
        self.table.hide()  # until the first result (the intro says what Run does)
        self.result = None
        self.follow_design()

    # -- the target follows the Design tab until the user sets it ------------------------------
    def _target_edited(self, _value) -> None:
        self.user_target = True

    def suggested_target(self) -> float | None:
        """The Design tab's whole-record budget (budget mode), else the whole-record ε of the marked design."""
        state = self.window_.state
        if state.budget_mode:
            return float(state.target_total)
        method = self.controller.chosen()
        summary = self.controller.current().get(method) if method else None
        if summary is None or not summary.ok or not math.isfinite(summary.overall_epsilon):
            return None
        return float(summary.overall_epsilon)

    def follow_design(self) -> None:
        value = self.suggested_target()
        if self.user_target or value is None:
            return
        self.target.blockSignals(True)
        self.target.setValue(value)
        self.target.blockSignals(False)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.follow_design()

    # -- the job -------------------------------------------------------------------------------
    def job(self):
        state = self.window_.state
        if not state.data_path:
            raise ValueError("open a data file first")
        self.follow_design()
        names = [c.name for c in state.perturbed_columns()]
        if not names:
            raise ValueError("choose the columns to perturb on the Design tab first")
        try:
            marginals = needed_marginals.spec(state.needed_marginals, names)
        except ValueError as exc:
            raise ValueError(f"the needed tables: {exc}") from None
        config = state.to_release_config(method="auto")
        return compare_jobs.designs_on_file, (
            state.data_path,
            config.to_dict(),
            float(self.target.value()),
            state.weights(),
            marginals,
            self.sets.value(),
            self.repetitions.value(),
        )

    def draw(self, result) -> None:
        self.intro.hide()
        self.table.show()
        self.result = result
        rows = result["rows"]
        self.frame = rows
        labels = {m: short_label(m) for m in rows["design"].unique()}  # the names of the table, not the engine's
        self.show_figure(figures.designs_figure(rows, labels))
        self.fill_table(rows)
        ranking = result["ranking"]
        best = METHOD_LABELS.get(ranking["chosen"], ranking["chosen"])
        self.status.setText(
            f"{result['rows_in_file']:,} rows, each design released {times(int(rows['repetitions'].iat[0]))} in memory "
            f"(nothing is written) and estimated with the default estimator. ★ {escape(best)}: the smallest "
            f"predicted error for {escape(ranking['marginals'])} (the tables ticked as needed on the Design tab). "
            "Predicted (without looking at your data; the ranking's): the default estimator's error for columns whose "
            "shares are spread as if drawn at random, against your data's own tables; measured: the default "
            "estimator's on your data."
            + self.sample_note(rows)
        )

    def sample_note(self, rows) -> str:
        """What the columns average over when they are a random sample of the tables (a review: with 20 tables per
        size the columns ranked Auto ahead of the ★ Utility, which the Design tab ranks by all the needed tables)."""
        k = len(self.window_.state.perturbed_columns())
        parts = []
        for way, count in rows.drop_duplicates("way").set_index("way")["marginals"].items():
            total = math.comb(k, int(way))
            if 0 < int(count) < total:
                parts.append(f"{int(count)} of the {total:,} {int(way)}-way tables")
        if not parts:
            return ""
        return (
            f" The columns average {words_listed(parts)}, drawn at random (the same for every design; 'tables per "
            "size' sets how many): their order can differ from the ★, which is ranked on every table needed."
        )

    def fill_table(self, rows) -> None:
        ways = sorted(int(w) for w in rows["way"].unique())
        headers = ["", "design", "whole-record ε"]
        tips = ["★ = recommended: the smallest predicted error of the needed tables", "", "Recomputed from the design"]
        for w in ways:
            headers += [f"{w}-way predicted", f"{w}-way measured"]
            tips += [
                f"Mean predicted AVD of the {w}-way tables measured (the default estimator's, predicted from the "
                "design alone, for columns whose shares are spread as if drawn at random; this ranks the designs)",
                f"Mean AVD of the same {w}-way tables estimated with the default estimator from the simulated releases",
            ]
        headers.append("each row carries")
        tips.append("What a row of the release holds")
        designs = rows.sort_values("rank").drop_duplicates("design")
        self.table.clear()
        self.table.setColumnCount(len(headers))
        self.table.setRowCount(len(designs))
        self.table.setHorizontalHeaderLabels(headers)
        for j, tip in enumerate(tips):
            self.table.horizontalHeaderItem(j).setToolTip(tip)
        for i, (_, d) in enumerate(designs.iterrows()):
            part = rows[rows["design"] == d["design"]].set_index("way")
            cells = [
                "★" if int(d["rank"]) == 1 else "",
                METHOD_LABELS.get(d["design"], d["design"]),
                fmt_eps(float(d["whole_record_epsilon"])),
            ]
            reasons = {}
            for w in ways:
                cells += [_avd_text(float(part.loc[w, "predicted_avd"])), _avd_text(float(part.loc[w, "measured_avd"]))]
                reasons[len(cells) - 2] = str(part.loc[w, "not_identifiable"])
            cells.append(str(d["note"]) or "every column")
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if text == NOT_IDENTIFIABLE:
                    item.setToolTip(f"Not identifiable from this design at this many rows: {reasons.get(j, '')}")
                elif text == NO_ESTIMATE:
                    item.setToolTip(
                        "This design cannot estimate tables of this size (e.g. a sampling design that "
                        "reports fewer columns per row)"
                    )
                elif j == len(cells) - 1:  # "each row carries": a sentence, elided in its stretched column
                    item.setToolTip(text)
                self.table.setItem(i, j, item)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
