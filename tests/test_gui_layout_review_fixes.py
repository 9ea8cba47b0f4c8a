"""Layout review of the main window at 1366 x 768 (stroke data): the toolbar's Undo/Redo buttons keep a short text
with the step in the tooltip (a long step was cut to "Un…ep"); the Data tab's histogram has room for its largest
y tick label (the "400" was cut in half at the widget's top edge); Save project and the other actions that need a
file are disabled while none is open (also after a cancelled or failed load); the Compare tab's preview ticks
the first three perturbed columns of the current state, also after a column is set to perturb and dropped again."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QToolBar

from optrr_gui.common.settings import Settings
from optrr_gui.design.attribute_table import COL_ROLE
from optrr_gui.main_window import TAB_COMPARE, TAB_DATA, MainWindow
from tests.test_gui_support import SAMPLE, WAIT_MS, close_window, open_window, wait_ready


def toolbar_button(window, action):
    toolbar = window.findChild(QToolBar, "main-toolbar")
    return toolbar.widgetForAction(action)


def set_role(window, row: int, role: str) -> None:
    """As the user does in the column table (one undo step)."""
    model = window.attributes.model
    assert model.setData(model.index(row, COL_ROLE), role)


def test_undo_and_redo_buttons_show_a_short_text_and_the_whole_step_in_the_tooltip(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path)
    window.resize(1366, 768)
    qtbot.waitUntil(lambda: window.width() == 1366)
    undo = toolbar_button(window, window.act_undo)
    redo = toolbar_button(window, window.act_redo)
    width = undo.width()
    row = next(i for i, c in enumerate(window.state.columns) if c.role == "perturb")
    set_role(window, row, "keep")
    step = window.stack.undoText()
    assert step.startswith("set role of ")
    # at once, before any relayout: a short text that fits the button as it is, the step in full in the tips
    assert undo.text() == "Undo" and undo.isEnabled()
    assert undo.fontMetrics().horizontalAdvance(undo.text()) < undo.width() - undo.iconSize().width()
    assert f"Undo: {step}" in undo.toolTip() and "Ctrl+Z" in undo.toolTip()
    assert f"Undo: {step}" in window.act_undo.statusTip()
    assert window.act_undo.text().replace("&", "") == f"Undo: {step}"  # the Edit menu names the step
    qtbot.waitUntil(lambda: not undo.testAttribute(Qt.WidgetAttribute.WA_PendingResizeEvent))
    assert undo.width() == width  # the toolbar does not jump at every change
    window.act_undo.trigger()
    assert window.stack.undoText() == "" and window.stack.redoText() == step
    assert undo.text() == "Undo" and not undo.isEnabled() and window.act_undo.text().replace("&", "") == "Undo"
    assert redo.text() == "Redo" and redo.isEnabled()
    assert f"Redo: {step}" in redo.toolTip() and f"Redo: {step}" in window.act_redo.statusTip()
    close_window(window)


def left_axis_top_row_is_blank(window, name: str) -> bool:
    """No text pixels in the top row of the histogram's left axis (where the largest tick label was cut).
    OPTRR_SHOT_DIR: the histogram is saved there as ``name``.png (to look at)."""
    plot = window.summary_view.histogram
    image = plot.grab().toImage()
    if os.environ.get("OPTRR_SHOT_DIR"):
        image.save(os.path.join(os.environ["OPTRR_SHOT_DIR"], f"{name}.png"))
    axis = plot.getPlotItem().getAxis("left")
    label_width = int(axis.width()) - 6  # the tick labels, not the axis line and ticks
    background = QColor("white").rgb()
    return all(image.pixel(x, 0) == background for x in range(label_width))


def test_histogram_has_room_for_its_largest_y_tick_label(qtbot, tmp_path):
    # 94 rows in each of the 20 bins: the view's top (94 plus pyqtgraph's padding) is just above the tick 100
    path = tmp_path / "ages.csv"
    values = [f"{20.5 + 4 * k:.1f}" for k in range(20)]  # one number per bin
    rows = [f"{values[i % len(values)]},{'ab'[i % 2]}" for i in range(20 * 94)]
    path.write_text("age,group\n" + "\n".join(rows) + "\n")
    window = open_window(qtbot, tmp_path, str(path))
    column = window.state.columns[0]
    assert column.role == "perturb" and column.type == "numeric"
    window.tabs.setCurrentIndex(TAB_DATA)
    qtbot.waitUntil(lambda: "age" in window.summaries, timeout=WAIT_MS)
    window.show_summary_of(0)
    counts, _edges = window.summaries["age"].histogram()
    assert set(counts.tolist()) == {94}
    plot = window.summary_view.histogram
    assert plot is not None and plot.isVisible()
    axis = plot.getPlotItem().getAxis("left")
    qtbot.waitUntil(lambda: axis.height() > 0 and axis.range[1] > 94)
    ticks = [v for _spacing, level in axis.tickValues(*axis.range, axis.height()) for v in level]
    assert 100 in ticks  # the largest tick label is drawn, at the top of the axis
    assert left_axis_top_row_is_blank(window, "histogram_auto_range")
    # the worst case: a tick exactly at the top of the view
    plot.setYRange(0, 100, padding=0)
    qtbot.waitUntil(lambda: axis.range[1] == 100)
    assert left_axis_top_row_is_blank(window, "histogram_tick_at_top")
    close_window(window)


def test_save_project_and_the_other_file_actions_need_an_open_file(qtbot, tmp_path):
    window = MainWindow(Settings(tmp_path / "settings.ini"))
    qtbot.addWidget(window, before_close_func=lambda w: w.stack.setClean())
    window.show()

    def file_actions():
        return [window.act_save, window.act_save_as, window.act_import, *getattr(window, "data_actions", [])]

    assert not any(a.isEnabled() for a in file_actions())  # no file yet
    assert window.act_open.isEnabled() and window.act_open_project.isEnabled()
    # a cancelled load leaves no file open
    window.open_file(SAMPLE)
    assert window.loading
    window.cancel_loading()
    assert not window.loading and not window.state.data_path
    assert not any(a.isEnabled() for a in file_actions())
    # a failed load neither
    bad = tmp_path / "bad.xlsx"
    bad.write_bytes(b"not a workbook")
    window.open_file(str(bad))
    qtbot.waitUntil(lambda: not window.loading, timeout=WAIT_MS)
    assert window.last_error and not window.state.data_path
    assert not window.act_save.isEnabled()
    # a file opened: enabled
    window.open_file(SAMPLE)
    wait_ready(qtbot, window)
    assert window.state.data_path == SAMPLE
    assert all(a.isEnabled() for a in file_actions())
    close_window(window)


def test_preview_ticks_the_first_three_perturbed_columns_of_the_current_state(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path)
    perturbed = [i for i, c in enumerate(window.state.columns) if c.role == "perturb"]
    assert len(perturbed) >= 5
    names = [window.state.columns[i].name for i in perturbed]
    # the first perturbed column set to drop before the tab is built, then to perturb (the tab built meanwhile),
    # then dropped again: the reviewer's `id`
    set_role(window, perturbed[0], "drop")
    window.tabs.setCurrentIndex(TAB_COMPARE)
    page = window.compare_view.preview
    assert page.picked() == names[1:4]
    set_role(window, perturbed[0], "perturb")
    assert page.picked() == names[:3]
    set_role(window, perturbed[0], "drop")
    assert page.picked() == names[1:4]  # three, not the two left of the first three
    window.act_undo.trigger()
    assert page.picked() == names[:3]
    # the user's own ticks are kept when the roles change
    page.columns.item(4).setCheckState(Qt.CheckState.Checked)
    assert page.picked() == names[:3] + [names[4]]
    set_role(window, perturbed[0], "drop")
    assert page.picked() == names[1:3] + [names[4]]
    set_role(window, perturbed[0], "perturb")
    assert page.picked() == names[1:3] + [names[4]]
    close_window(window)
