"""A data manager's review of a stroke release, the GUI's part. (3) The Analyse tab keeps the order the attributes
were ticked in (stroke, then hypertension: rows stroke, as `optrr estimate --marginal stroke,hypertension`); it
showed them in the list's (the manifest's) order. (5) The Design tab's "Needed:" says in a line under it what is
counted: named tables are added to the ticked 1-/2-/3-way ones, which a reviewer did not see after typing four pairs.

Screenshots go to OPTRR_SCREENSHOTS (a folder) when it is set."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from optrr_gui.state.needed_marginals import needed_summary
from tests.test_gui_analyse_kept_and_bins import screenshot
from tests.test_gui_pending_edits import type_into
from tests.test_gui_support import WAIT_MS

# -- (3) the Analyse tab keeps the order ticked --------------------------------------------------------------------


def test_a_two_way_table_keeps_the_order_the_attributes_were_ticked_in(qtbot, window, tmp_path):
    from optrr_engine.release.perturb import perturb_file
    from optrr_gui.main_window import TAB_ANALYSE

    out = tmp_path / "rel.csv"
    # the sample has rare categories (not this test's subject)
    perturb_file(window.state.data_path, window.state.to_release_config(), out, allow_rare_categories=True)
    window.tabs.setCurrentIndex(TAB_ANALYSE)
    view = window.analyse_view
    view.open_release(str(out))
    qtbot.waitUntil(lambda: view.opened is not None or "color:#cc0000" in view.info.text(), timeout=WAIT_MS)
    assert view.opened is not None, view.info.text()
    items = {view.attributes.item(i).data(Qt.ItemDataRole.UserRole): view.attributes.item(i)
             for i in range(view.attributes.count())}
    listed = list(items)
    first, later, earlier = listed[0], listed[4], listed[2]  # ticked: the later one in the list first
    assert items[first].checkState() == Qt.CheckState.Checked  # ticked when opened
    items[first].setCheckState(Qt.CheckState.Unchecked)  # as a click on its box does
    items[later].setCheckState(Qt.CheckState.Checked)
    items[earlier].setCheckState(Qt.CheckState.Checked)
    assert view.selected_names() == [later, earlier]
    view.estimate()
    qtbot.waitUntil(lambda: view.result is not None, timeout=WAIT_MS)
    est = view.result["estimate"]
    assert est.names() == [later, earlier]
    assert view.result_label.text().startswith(f"{later} × {earlier}:")
    assert view.table.verticalHeaderItem(0).text().startswith(f"{later} = ")
    assert view.table.horizontalHeaderItem(0).text().startswith(f"{earlier} = ")
    # set_selected (a project, a test) keeps the order it is given; one ticked at open comes first
    view.set_selected([earlier, later])
    assert view.selected_names() == [earlier, later]
    items[later].setCheckState(Qt.CheckState.Unchecked)
    items[first].setCheckState(Qt.CheckState.Checked)
    assert view.selected_names() == [earlier, first]
    screenshot(view, "analyse_ticked_order.png")


# -- (5) what "Needed:" counts ---------------------------------------------------------------------------------------


def test_the_summary_says_named_tables_add_to_the_ticked_ones():
    names = ["age", "hypertension", "heart_disease", "smoking_status", "stroke"]
    pairs = [["stroke", n] for n in names[:4]]
    text = needed_summary({"orders": [1, 2], "sets": pairs}, names)
    assert text == (
        "Counted as needed: all 1-way, all 2-way and 4 named tables (15 tables; the named ones are added to the "
        "ticked ones, and 4 of them are among those already)."
    )
    assert needed_summary({"orders": [], "sets": pairs}, names) == "Counted as needed: 4 named tables (4 tables)."
    assert needed_summary(None, names) == "Counted as needed: all 1-way and all 2-way tables (15 tables)."
    assert needed_summary({"orders": [1], "sets": [["age", "stroke", "hypertension"]]}, names) == (
        "Counted as needed: all 1-way and 1 named table (6 tables; the named ones are added to the ticked ones)."
    )
    assert needed_summary({"orders": [], "sets": []}, names) == "Counted as needed: no tables."


def test_the_needed_line_updates_live_while_typing_and_after_enter(qtbot, window):
    needed = window.mechanism.needed
    assert needed.sets.placeholderText().startswith("plus named tables")
    assert "in addition to the tables ticked" in needed.sets.toolTip()
    names = [c.name for c in window.state.perturbed_columns()]
    assert needed.orders[1].isChecked() and needed.orders[2].isChecked()  # the default
    assert needed.summary.isVisible()
    assert needed.summary.text() == "Counted as needed: all 1-way and all 2-way tables (55 tables)."
    typed = f"{names[0]}, {names[1]}; {names[0]}, {names[2]}"
    type_into(qtbot, needed.sets, typed)  # not applied yet: what it would make, and how to apply it
    assert needed.summary.text() == (
        "Counted as needed: all 1-way, all 2-way and 2 named tables (55 tables; the named ones are added to the ticked "
        "ones, and 2 of them are among those already). Press Enter to apply."
    )
    QTest.keyClick(needed.sets, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: (window.state.needed_marginals or {}).get("sets") == [[names[0], names[1]],
                                                                                  [names[0], names[2]]],
                    timeout=WAIT_MS)
    assert needed.summary.text().endswith("are among those already).")  # applied: no "Press Enter"
    needed.orders[1].setChecked(False)
    needed.orders[2].setChecked(False)
    qtbot.waitUntil(lambda: needed.summary.text() == "Counted as needed: 2 named tables (2 tables).",
                    timeout=WAIT_MS)
    screenshot(window, "design_needed_summary.png")
