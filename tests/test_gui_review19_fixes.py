"""GUI review 19 (stroke.csv and cirrhosis.csv walked through as a newcomer): the Design tab's status line and
the blank space above it, the Warnings cell's order, a one-row file, the release dialog after a release, the
Analyse tab before an estimate and the release summary in total-budget mode."""

from __future__ import annotations

import csv

import numpy as np
from PySide6.QtCore import Qt

from optrr_gui.common.widgets import WrappedLabel
from optrr_gui.design.attribute_table import COL_WARN
from optrr_gui.main_window import TAB_ANALYSE
from tests.test_gui_release import release
from tests.test_gui_support import WAIT_MS, close_window, open_window

LONG = " ".join(["a long status line that wraps over several lines at this width"] * 4)
SHORT = "Recommended: Utility (least unbiased error)"


# -- 1. the status line ---------------------------------------------------------------------------------------------
def test_a_wrapped_label_gets_lower_again_after_a_longer_text(qtbot):
    """The Design tab's status line kept the height of an earlier, longer text (its one line centred in 60 px of
    blank space): QLabel's height-for-width never goes below the minimum height set for that text."""
    label = WrappedLabel()
    qtbot.addWidget(label)
    label.resize(300, 20)
    label.setText(LONG)
    tall = label.minimumHeight()
    line = label.fontMetrics().height()
    assert tall >= 3 * line
    label.setText(SHORT)
    assert label.minimumHeight() < 2 * line


def test_the_status_line_names_no_information_only_for_the_recommended_or_picked_design(qtbot, tmp_path):
    from tests.test_gui_design_wording import binary_file

    window = open_window(qtbot, tmp_path, binary_file(tmp_path))
    try:
        panel, c = window.mechanism, window.controller
        current = c.current()
        assert "auto" in current and "kronecker" in current
        for method, s in current.items():  # Auto: the smallest error alone, but no information at these rows
            s.predicted_rank = (0, 0.05 if method == "auto" else 0.30 if method == "kronecker" else 0.40)
            s.predicted_avd = s.predicted_rank[1]
            s.no_information = method == "auto"
        c.request["budget_mode"] = True
        panel.refresh()
        assert c.recommended() == "kronecker"
        assert "no information" not in panel.status_line.text()  # not news: neither recommended nor picked
        # a much longer text before (e.g. the designs still computing): the line gets as high as its text again
        label = panel.status_line
        label.resize(300, 20)
        label.setText(LONG * 4)
        window.use_design("auto")
        panel.refresh()
        text = label.text()
        assert "Auto (best exact) (your pick) has no information at this number of rows" in text
        fresh = WrappedLabel()
        qtbot.addWidget(fresh)
        fresh.setTextFormat(label.textFormat())
        fresh.resize(label.width(), 20)
        fresh.setText(text)
        assert label.minimumHeight() == fresh.minimumHeight() > 0
    finally:
        close_window(window)


# -- 2. the Warnings cell -------------------------------------------------------------------------------------------
def rare_numeric_file(tmp_path) -> str:
    """A numeric column (binned: its bins warning) whose 'NA' holds 2 rows (a rare category the release refuses
    until ticked), as cirrhosis.csv's Prothrombin."""
    rng = np.random.default_rng(3)
    path = tmp_path / "rare.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["group", "level"])
        for r in range(300):
            w.writerow([rng.choice(["a", "b", "c"]), "NA" if r in (5, 77) else f"{rng.normal(10, 1):.1f}"])
    return str(path)


def test_the_warnings_cell_shows_what_blocks_the_release_first(qtbot, tmp_path):
    from optrr_engine.release.schema import RARE_WARNING_START

    window = open_window(qtbot, tmp_path, rare_numeric_file(tmp_path))
    try:
        qtbot.waitUntil(lambda: bool(window.summaries), timeout=WAIT_MS)
        model = window.attributes.view.model()
        row = [c.name for c in window.state.columns].index("level")
        qtbot.waitUntil(lambda: RARE_WARNING_START in (model.index(row, COL_WARN).data() or ""), timeout=WAIT_MS)
        warnings = model.warnings[row]
        assert len(warnings) >= 2 and not warnings[0].startswith(RARE_WARNING_START)  # the usual order...
        assert model.index(row, COL_WARN).data().startswith(RARE_WARNING_START)  # ...but the cell: rare first
        tip = model.index(row, COL_WARN).data(Qt.ItemDataRole.ToolTipRole)
        assert tip.index("numbers grouped") < tip.index("rare categories")  # the tooltip as before
    finally:
        close_window(window)


# -- 3. a one-row file ----------------------------------------------------------------------------------------------
def test_a_one_row_file_says_that_nothing_can_be_released(qtbot, tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("id,sex,smoker\n9046,Male,yes\n", encoding="utf-8")
    window = open_window(qtbot, tmp_path, str(path), safe_start=True)
    try:
        assert window.state.n_rows == 1
        banner = window.start_banner.label.text()
        assert "likely identifiers" not in banner
        assert "Nothing can be released from one.csv: it has 1 data row" in banner
        qtbot.waitUntil(lambda: "1 data row" in window.controller.message, timeout=WAIT_MS)
        window.mechanism.flush()
        assert "1 data row" in window.mechanism.choice_label.text()
        assert "1 data row" in window.release_blocker()
        assert "one.csv: 1 row, 3 columns" in window.status_label.text()  # not "1 rows"
        m = window.mechanism
        assert not m.use_button.isEnabled() and not m.recommended_button.isEnabled()  # no design to use
    finally:
        close_window(window)


# -- 4. and 5. after a release -------------------------------------------------------------------------------------
def test_after_a_release_close_is_the_primary_action_until_something_changes(qtbot, window, tmp_path):
    out = tmp_path / "rel.csv"
    dialog = release(qtbot, window, out)
    assert dialog.release_button.isDefault()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()
    assert "requested → achieved" in dialog.summary.toPlainText()  # per-column ε: as before
    assert not dialog.release_button.isEnabled() and not dialog.release_button.isDefault()
    assert dialog.close_button.isDefault()
    dialog._design_changed()  # e.g. back in the dialog: nothing changed, Release stays off
    assert not dialog.release_button.isEnabled() and dialog.close_button.isDefault()
    dialog.output.setText(str(tmp_path / "other.csv"))  # something changed: Release again
    assert dialog.release_button.isEnabled() and dialog.release_button.isDefault()
    assert not dialog.close_button.isDefault()


def test_the_analyse_tab_says_what_to_do_before_an_estimate(qtbot, window, tmp_path):
    out = tmp_path / "rel.csv"
    dialog = release(qtbot, window, out)
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()
    dialog.analyse()
    assert window.tabs.currentIndex() == TAB_ANALYSE
    view = window.analyse_view
    qtbot.waitUntil(lambda: view.opened is not None, timeout=WAIT_MS)
    hint = view.result_label.text()
    assert f"press {view.estimate_button.text()}" in hint and "Tick" in hint
    assert view.result_label.isVisible()


# -- 6. the release summary in total-budget mode --------------------------------------------------------------------
def test_the_release_summary_in_total_budget_mode_names_no_requested_epsilon(qtbot, window, tmp_path):
    window.attributes.total.setChecked(True)
    window.attributes.target.setValue(3.0)
    c = window.controller
    qtbot.waitUntil(
        lambda: c.is_idle() and c.request.get("budget_mode") and not c.is_stale("kronecker"), timeout=WAIT_MS
    )
    window.use_design("auto")
    dialog = release(qtbot, window, tmp_path / "budget.csv")
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()
    text = dialog.summary.toPlainText()
    assert "requested" not in text and "→" not in text
    assert "ε per perturbed column (chosen by the design within the whole-record target ε 3.000):" in text


def test_an_undo_step_quotes_a_column_name_with_spaces_at_its_ends():
    """The lung-cancer survey's 'ALLERGY ' read "set role of ALLERGY  to drop" (the space lost in a double one)."""
    from optrr_gui.common.commands import column_text

    assert column_text("ALLERGY ", "role", "drop") == "set role of “ALLERGY ” to drop"
    assert column_text("age", "role", "drop") == "set role of age to drop"
