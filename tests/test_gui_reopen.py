"""A project reopened on a data file changed since (told in words, a missing column refused before the release),
no stray editor over the column table after a project is opened, and a cancelled read that leaves the window in
a plain state (partly read: nothing released until the file is opened again)."""

from __future__ import annotations

import csv
import shutil
import threading

from PySide6.QtWidgets import QApplication, QComboBox

from optrr_gui import main_window as main_window_module
from optrr_gui.common.settings import Settings
from optrr_gui.main_window import MainWindow
from optrr_gui.state.data_store import read_encoded
from tests.test_gui_support import SAMPLE, WAIT_MS, close_window, open_window, wait_ready


def new_window(qtbot, tmp_path, name: str) -> MainWindow:
    w = MainWindow(Settings(tmp_path / f"{name}.ini"))
    qtbot.addWidget(w, before_close_func=lambda x: x.stack.setClean())
    w.show()
    return w


def saved_project(qtbot, tmp_path):
    """A project saved on a copy of the sample (the copy may then be changed)."""
    data = tmp_path / "bc.csv"
    shutil.copy(SAMPLE, data)
    w = open_window(qtbot, tmp_path, str(data))
    project = tmp_path / "p.optrr"
    assert w.save_project_to(str(project))
    close_window(w)
    return data, project


def rewrite(path, change) -> None:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(change(rows))


def changed(rows):
    """breast-quad removed, a new age band in 3 rows, 50 rows fewer."""
    quad, age = rows[0].index("breast-quad"), rows[0].index("age")
    rows = rows[:-50]
    for r in rows[1:4]:
        r[age] = "90-99"
    return [r[:quad] + r[quad + 1 :] for r in rows]


def test_a_project_reopened_on_changed_data_says_what_changed(qtbot, tmp_path):
    data, project = saved_project(qtbot, tmp_path)
    rewrite(data, changed)
    w = new_window(qtbot, tmp_path, "other")
    with qtbot.waitSignal(w.summariesReady, timeout=WAIT_MS):
        assert w.open_project(str(project))
    wait_ready(qtbot, w)
    text = w.message_bar.label.text()
    assert w.message_bar.isVisible() and text.startswith("Since the project was saved:"), text
    assert "column breast-quad is no longer in the file" in text
    assert "age has values that are not among its categories: '90-99' (3 rows)" in text
    assert "the file has 236 rows, it had 286" in text
    # the release lists the missing column before it starts, and does not start
    w.open_release()
    dialog = w._release_dialog
    assert any("breast-quad" in p for p in dialog.problems()), dialog.problems()
    assert any("'90-99'" in p for p in dialog.problems()), dialog.problems()
    assert not dialog.release_button.isEnabled() or dialog.problems()
    dialog.output.setText(str(tmp_path / "out.csv"))
    assert not dialog.start()
    assert "breast-quad" in dialog.progress_label.text() and dialog.result_state != "running"
    # dropped, the column is no longer a problem
    names = [c.name for c in w.state.columns]
    w.state.set_column_value(names.index("breast-quad"), "role", "drop")
    assert not any("breast-quad" in p for p in dialog.problems())
    dialog.close()
    close_window(w)


def test_a_project_reopened_on_the_same_data_says_nothing(qtbot, tmp_path):
    _data, project = saved_project(qtbot, tmp_path)
    w = new_window(qtbot, tmp_path, "other")
    with qtbot.waitSignal(w.summariesReady, timeout=WAIT_MS):
        assert w.open_project(str(project))
    assert not w.message_bar.isVisible(), w.message_bar.label.text()
    assert w.data_problems() == []
    close_window(w)


def stray_editors(w: MainWindow) -> list:
    """Visible combo boxes in the column table that are not an editor over one of its cells."""
    view = w.attributes.view
    model = view.model()
    cells = [view.visualRect(model.index(r, c)) for r in range(model.rowCount()) for c in range(model.columnCount())]
    out = []
    for box in view.findChildren(QComboBox):
        if not box.isVisible():
            continue
        inside = box.parent() is view.viewport() and any(rect.contains(box.geometry().center()) for rect in cells)
        if not inside:
            out.append((box.currentText(), box.geometry().getRect()))
    return out


def test_opening_a_project_leaves_no_editor_over_the_table_header(qtbot, tmp_path):
    _data, project = saved_project(qtbot, tmp_path)
    w = new_window(qtbot, tmp_path, "other")
    assert w.open_project(str(project))  # as at start-up: no event loop runs around the call
    QApplication.processEvents()
    assert stray_editors(w) == []
    wait_ready(qtbot, w)
    assert stray_editors(w) == []
    close_window(w)


def test_a_cancelled_read_leaves_a_partly_read_file_that_cannot_be_released(qtbot, tmp_path, monkeypatch):
    release_reader = threading.Event()

    def slow_reader(path, options, columns, emit, progress=None, cancel=None):
        """The real reader's rows, then it waits until cancelled (a file still being read)."""
        read_encoded(path, options, columns, emit, progress, cancel)
        while not cancel():
            release_reader.wait(0.01)
        emit(read_encoded.__globals__["EncodedChunk"](0, [], []))  # a chunk arriving after the cancel is ignored
        raise RuntimeError("cancelled")

    w = open_window(qtbot, tmp_path)
    monkeypatch.setattr(main_window_module, "read_encoded", slow_reader)
    monkeypatch.setattr(main_window_module, "reader_pool", lambda path: False)
    data = tmp_path / "bc.csv"
    shutil.copy(SAMPLE, data)
    w.open_file(str(data))
    qtbot.waitUntil(
        lambda: w.state.data_path == str(data) and w.store.rows == 286 and w.loading, timeout=WAIT_MS
    )
    w.cancel_load.click()
    qtbot.waitUntil(lambda: not w.loading, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not w.runner.busy_channels(), timeout=WAIT_MS)
    assert not w.status_spinner.is_spinning() and not w.cancel_load.isVisible()
    assert "counting rows" not in w.status_label.text()
    assert "only partly read (286 rows before the cancel)" in w.status_label.text(), w.status_label.text()
    assert w.data_view.status.text() == "Only the first 286 rows were read (reading was cancelled)"
    assert w.message_bar.isVisible() and "only partly read" in w.message_bar.label.text()
    assert "open the file again" in w.message_bar.label.text()
    w.confirm_columns()
    assert not w.act_release.isEnabled() and "only partly read" in w.release_blocker()
    assert any("only partly read" in p for p in w.data_problems())
    # opened again and read to the end, it can be released
    monkeypatch.setattr(main_window_module, "read_encoded", read_encoded)
    with qtbot.waitSignal(w.rowsLoaded, timeout=WAIT_MS):
        w.start_reading_rows()
    assert not w.partly_read and w.data_problems() == [] and w.act_release.isEnabled()
    close_window(w)


def test_a_ragged_file_is_explained_in_gui_words(qtbot, tmp_path):
    """The reader's "give the right --delimiter" (a command-line option) reads as the import dialog's separator."""
    ragged = tmp_path / "notes.csv"
    ragged.write_text("a,b\n1,2\n3,4,5,6\n" + "7,8\n" * 50, encoding="utf-8")
    w = open_window(qtbot, tmp_path)
    w.open_file(str(ragged))
    qtbot.waitUntil(lambda: "notes.csv" in (w.last_error or ""), timeout=WAIT_MS)
    assert "--delimiter" not in w.last_error and "separator in the import dialog" in w.last_error, w.last_error
    close_window(w)
