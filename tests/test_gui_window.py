"""The main window end to end with the real engine: opening files (argument, sample, menu/dialog, drag and
drop, recent files), the lazy data view, the attribute table with undo/redo, budget mode, the live mechanism
panel, project files, settings, shortcuts, tooltips, About box, and the --screenshot mode."""

from __future__ import annotations

import csv
import json
import os
import threading
import time

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QImage
from PySide6.QtWidgets import QApplication

from optrr_gui import app as gui_app
from optrr_gui.common.about import about_html
from optrr_gui.common.settings import Settings
from optrr_gui.data.table_view import LazyDataModel
from optrr_gui.design.attribute_table import COL_EPS, COL_ROLE
from optrr_gui.main_window import RELEASE_TIP, EmptyHint, MainWindow
from optrr_gui.state.data_store import DataStore, load_rows
from tests.test_gui_support import SAMPLE, WAIT_MS, accept_dialog_when_ready, close_window, open_window, wait_ready


def sample_rows():
    with open(SAMPLE, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def test_sample_opens_with_columns_rows_and_designs(window):
    rows = sample_rows()
    assert [c.name for c in window.state.columns] == rows[0]
    assert window.state.n_rows == len(rows) - 1
    c = window.controller
    assert set(c.current()) == set(c.methods)
    rec = c.recommended()
    assert rec is not None and not c.current()[rec].exceeds_request
    # Every epsilon shown comes from the mechanism: the panel's achieved bars are the mechanism's epsilons.
    window.mechanism.flush()
    shown = c.current()[window.mechanism.shown_method]
    assert window.mechanism.chart.values[1] == pytest.approx(list(shown.design.mechanism.attribute_epsilons()))


def test_data_view_shows_the_file_lazily(window):
    rows = sample_rows()
    model = window.data_view.model
    assert model.rowCount() == len(rows) - 1
    assert model.columnCount() == len(rows[0])
    for r in (0, 17, len(rows) - 2):
        assert [model.data(model.index(r, c)) for c in range(len(rows[0]))] == rows[r + 1]


def test_lazy_model_over_many_rows_fetches_on_demand(qtbot, tmp_path):
    lines = sample_rows()
    path = tmp_path / "big.csv"
    n = 250_000
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(lines[0])
        for i in range(n):
            w.writerow(lines[1 + i % (len(lines) - 1)])
    store = DataStore(lines[0])
    done = threading.Event()
    threading.Thread(target=lambda: (load_rows(str(path), None, store), done.set())).start()
    model = LazyDataModel()
    model.set_store(store)
    qtbot.waitUntil(done.is_set, timeout=WAIT_MS)
    model._poll()
    assert 0 < model.rowCount() < n  # only the first page is exposed...
    assert model.canFetchMore()
    model.fetch_all()  # ...the rest on demand, as the view scrolls
    assert model.rowCount() == n
    last = n - 1
    assert [model.data(model.index(last, c)) for c in range(len(lines[0]))] == lines[1 + last % (len(lines) - 1)]


def editor_of(window, row):
    view = window.attributes.view
    return view.indexWidget(window.attributes.model.index(row, COL_EPS))


def test_epsilon_editor_updates_designs_and_undo_redo_restores(qtbot, window):
    c = window.controller
    editor = editor_of(window, 1)
    assert editor is not None  # spin box + slider open on every perturbed row
    before = c.current()["optimal"].overall_epsilon
    editor.spin.setValue(0.25)
    assert window.state.columns[1].epsilon == 0.25
    qtbot.waitUntil(lambda: c.is_idle() and not c.is_stale("optimal"), timeout=WAIT_MS)
    after = c.current()["optimal"]
    assert after.requested[1] == 0.25 and after.achieved[1] == pytest.approx(0.25)
    assert after.overall_epsilon < before  # lower epsilon = more private
    window.act_undo.trigger()
    assert window.state.columns[1].epsilon == 1.0
    assert editor_of(window, 1).spin.value() == pytest.approx(1.0)  # the editor follows the undo
    qtbot.waitUntil(lambda: c.is_idle() and not c.is_stale("optimal"), timeout=WAIT_MS)
    assert c.current()["optimal"].overall_epsilon == pytest.approx(before)
    window.act_redo.trigger()
    assert window.state.columns[1].epsilon == 0.25


def test_slider_drag_is_one_undo_step(qtbot, window):
    editor = editor_of(window, 0)
    start = window.stack.count()
    editor.slider.setSliderDown(True)
    for pos in range(400, 520, 10):
        editor.slider.setValue(pos)
    editor.slider.setSliderDown(False)
    editor.slider.sliderReleased.emit()
    assert window.stack.count() == start + 1
    moved = window.state.columns[0].epsilon
    assert moved != 1.0
    window.stack.undo()
    assert window.state.columns[0].epsilon == 1.0


def test_roles_types_and_categories_edits_are_undoable(qtbot, window):
    model = window.attributes.model
    s = window.state
    type_before = s.columns[2].type
    assert type_before != "ordinal"
    model.setData(model.index(2, COL_ROLE), "keep")
    assert s.columns[2].role == "keep"
    assert any("NOT privatised" in w for w in model.warnings[2])  # keep comes with a warning
    window.column_panel.show_column(2)
    window.column_panel.type.setCurrentText("ordinal")
    window.column_panel.type.activated.emit(window.column_panel.type.currentIndex())
    assert s.columns[2].type == "ordinal"
    window.column_panel.show_column(1)
    cats = list(s.columns[1].categories)
    window.column_panel.categories.setCurrentRow(0)
    window.column_panel.down.click()
    assert s.columns[1].categories == [cats[1], cats[0], *cats[2:]]
    window.attributes.view.selectRow(3)
    window.attributes.set_roles([3, 4], "drop")
    assert s.columns[3].role == s.columns[4].role == "drop"
    qtbot.waitUntil(lambda: window.controller.is_idle() and len(window.controller.sizes) == 7, timeout=WAIT_MS)
    for _ in range(4):
        window.stack.undo()
    assert [c.role for c in s.columns[2:5]] == ["perturb"] * 3
    assert s.columns[2].type == type_before
    assert s.columns[1].categories == cats
    qtbot.waitUntil(lambda: window.controller.is_idle() and len(window.controller.sizes) == 10, timeout=WAIT_MS)


def test_total_budget_mode_with_weights(qtbot, window):
    c = window.controller
    window.attributes.total.setChecked(True)
    assert window.state.budget_mode
    assert "Weight" in window.attributes.model.headerData(COL_EPS, Qt.Orientation.Horizontal)
    window.attributes.target.setValue(3.0)
    window.state.set_column_value(0, "weight", 3.0)
    qtbot.waitUntil(lambda: c.is_idle() and not c.is_stale("kronecker"), timeout=WAIT_MS)
    for m, s in c.current().items():
        if s.ok:
            assert s.overall_epsilon <= 3.0 + 1e-6, m
            if m not in ("utility", "sample-2", "sample-3"):  # these take no weights (docs/gui.md)
                assert s.achieved[0] > s.achieved[1], m  # the heavier weight gets more epsilon
    assert c.recommended() is not None
    window.stack.undo()  # target
    window.stack.undo()  # mode
    assert not window.state.budget_mode


def test_project_save_and_restore(qtbot, window, tmp_path):
    editor_of(window, 3).spin.setValue(2.5)
    window.state.set_column_value(5, "role", "drop")
    window.use_design("kronecker")
    path = tmp_path / "session.optrr"
    assert window.save_project_to(str(path))
    assert window.stack.isClean()
    saved = json.loads(path.read_text())
    assert saved["columns"][3]["epsilon"] == 2.5 and saved["session"]["method"] == "kronecker"
    other = MainWindow(Settings(tmp_path / "other.ini"))
    qtbot.addWidget(other)
    assert other.open_project(str(path))
    wait_ready(qtbot, other)
    assert other.state.to_project_dict(path) == window.state.to_project_dict(path)
    assert other.controller.chosen() == "kronecker"
    close_window(other)


def test_recent_files_and_settings_persist(qtbot, window, tmp_path):
    recent = window.settings.recent_files()
    assert recent and recent[0]["path"] == SAMPLE
    window.close()
    again = Settings(tmp_path / "settings.ini")
    assert again.recent_files()[0]["path"] == SAMPLE
    assert again.value("window/geometry") is not None
    window._fill_recent()
    actions = [a for a in window.recent_menu.actions() if a.text() == SAMPLE]
    assert actions
    heart = SAMPLE.replace("breast_cancer", "heart_cleveland")
    window.open_file(heart)
    wait_ready(qtbot, window)
    assert [i["path"] for i in window.settings.recent_files()[:2]] == [heart, SAMPLE]
    window._fill_recent()
    back = next(a for a in window.recent_menu.actions() if a.text() == SAMPLE)
    back.trigger()  # reopen through the recent-files menu
    qtbot.waitUntil(lambda: window.state.data_path == SAMPLE, timeout=WAIT_MS)


def write_semicolon_copy(tmp_path):
    rows = sample_rows()
    path = tmp_path / "semicolon.csv"
    with open(path, "w", newline="", encoding="cp1252") as fh:
        w = csv.writer(fh, delimiter=";")
        for r in rows:
            w.writerow(r)
    return path, rows


def test_import_dialog_detects_options_and_previews(qtbot, window, tmp_path):
    from optrr_gui.data.import_dialog import ImportDialog

    path, rows = write_semicolon_copy(tmp_path)
    dialog = ImportDialog(str(path), window.runner, {}, window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.frame is not None, timeout=WAIT_MS)
    assert dialog.detected["delimiter"] == ";"
    assert list(dialog.frame.columns) == rows[0]
    assert dialog.preview.rowCount() == 200  # the first PREVIEW_ROWS rows
    assert dialog.preview.item(0, 1).text() == rows[1][1]
    dialog.delimiter.setCurrentIndex(1)  # force "," : the whole line becomes one column
    qtbot.waitUntil(lambda: dialog.frame is not None and len(dialog.frame.columns) == 1, timeout=WAIT_MS)
    assert "Detected" in dialog.info.text()
    dialog.reject()


def test_drag_and_drop_opens_through_the_import_dialog(qtbot, window, tmp_path):
    path, rows = write_semicolon_copy(tmp_path)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    seen = accept_dialog_when_ready(lambda: getattr(window, "_import_dialog", None))
    event = QDropEvent(
        QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    window.dropEvent(event)
    qtbot.waitUntil(lambda: window.state.data_path == str(path), timeout=WAIT_MS)
    wait_ready(qtbot, window)
    assert seen, "the import dialog was shown"
    assert window.state.reader_options.get("delimiter") in (None, ";")
    assert [c.name for c in window.state.columns] == rows[0]
    assert window.state.n_rows == len(rows) - 1
    assert window.settings.recent_files()[0]["path"] == str(path)


def test_open_a_file_given_on_the_command_line(qtbot, tmp_path):
    heart = str(SAMPLE).replace("breast_cancer", "heart_cleveland")
    args = gui_app.build_parser().parse_args([heart, "--settings", str(tmp_path / "s.ini")])
    window = gui_app.build_window(args)
    qtbot.addWidget(window)
    wait_ready(qtbot, window)
    assert window.state.data_path == heart
    assert window.state.n_rows == 303
    assert any(c.type == "numeric" for c in window.state.columns)  # cholesterol etc. are binned
    close_window(window)


def test_without_a_file_release_is_disabled_and_the_design_tab_says_what_to_do(qtbot, tmp_path):
    """No file open: Release (menu, toolbar, Ctrl+R) is disabled with the reason as its tooltip, and the Design tab
    shows how to start instead of an empty column table and chart; opening a file brings both back."""
    from tests.test_gui_support import choose_columns_per_column

    window = MainWindow(Settings(tmp_path / "settings.ini"))
    qtbot.addWidget(window, before_close_func=lambda w: w.stack.setClean())
    window.show()
    assert not window.act_release.isEnabled()
    assert window.act_release.toolTip().startswith("Open a data file first (File ▸ Open data…)")
    assert window.design_stack.currentWidget() is window.empty_hint and window.empty_hint.isVisible()
    assert window.empty_hint.label.text() == EmptyHint.TEXT and not window.design_splitter.isVisible()
    window.open_release()
    assert getattr(window, "_release_dialog", None) is None and "Open a data file" in window.message_bar.label.text()
    window.open_file(SAMPLE)
    wait_ready(qtbot, window)
    assert window.design_splitter.isVisible() and not window.empty_hint.isVisible()
    assert not window.act_release.isEnabled() and window.act_release.toolTip().startswith("Confirm the columns")
    choose_columns_per_column(qtbot, window)
    assert window.act_release.isEnabled() and window.act_release.toolTip() == RELEASE_TIP


def test_missing_file_is_a_message_not_a_crash(qtbot, window, tmp_path):
    window.open_file(str(tmp_path / "nope.csv"))
    assert "does not exist" in window.last_error
    assert window.message_bar.isVisible()


def test_shortcuts_tooltips_about_and_small_screens(qtbot, window):
    assert window.act_open.shortcut().toString() == "Ctrl+O"
    assert window.act_undo.shortcut().toString() == "Ctrl+Z"
    assert window.act_release.shortcut().toString() == "Ctrl+R"
    assert window.act_save.shortcut().toString() == "Ctrl+S"
    for w in (
        window.attributes.total,
        window.attributes.target,
        window.column_panel.epsilon.spin,
        window.column_panel.missing,
        window.mechanism.designs,
        window.mechanism.cancel_button,
        window.mechanism.chart,
    ):
        assert w.toolTip(), w
    eps_tip = window.column_panel.epsilon.spin.toolTip()
    assert "Lower = more private" in eps_tip
    assert "lower = more private" in window.column_panel.epsilon.hint.text()
    html = about_html()
    for word in ("PySide6", "pyqtgraph", "numpy", "LGPL", "MIT", "CC BY 4.0", "Zwitter"):
        assert word in html
    window.resize(1366, 768)
    QApplication.processEvents()
    hint = window.minimumSizeHint()
    assert hint.width() <= 1366 and hint.height() <= 768
    assert window.mechanism.designs.isVisible() and window.attributes.view.height() > 120
    assert window.mechanism.chart.height() > 60 and window.mechanism.attributes.height() > 60


def test_engine_work_runs_off_the_ui_thread(qtbot, window, monkeypatch):
    import optrr_gui.design.controller as dc

    threads = []
    real = dc.compute_design

    def spy(*args, **kwargs):
        threads.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(dc, "compute_design", spy)
    window.state.set_column_value(0, "epsilon", 0.7)
    qtbot.waitUntil(
        lambda: (
            window.controller.is_idle()
            and len(threads) >= len([m for m in window.controller.methods if m != "clusters"])
        ),
        timeout=WAIT_MS,
    )
    assert threads and threading.main_thread().ident not in threads


def test_the_smallest_supported_screen_scrolls_instead_of_overlapping(qtbot, window):
    """At 1024 x 600 (issue 14: down to 1024x600, labels never overlap) no layout is squeezed below its
    minimum: a squeezed layout draws its labels over each other; the design panels scroll instead."""
    window.resize(1024, 600)
    QApplication.processEvents()
    hint = window.minimumSizeHint()
    assert hint.width() <= 1024 and hint.height() <= 600, hint
    for panel in (window.mechanism, window.column_panel):
        assert panel.isVisible()
        assert panel.height() >= panel.minimumSizeHint().height()
        assert panel.width() >= panel.minimumSizeHint().width()
    wait_ready(qtbot, window)
    window.mechanism.flush()
    QApplication.processEvents()
    m = window.mechanism
    # a long warning, as when many needed tables cannot be estimated (its real text is tested elsewhere)
    m.status_line.setText("the needed table(s) {a, b} cannot be estimated from this design; " * 8)
    m.status_line.setVisible(True)
    QApplication.processEvents()
    labels = [w for w in (m.title, m.status_line, m.choice_label, m.shown_label, m.changes) if w.isVisible()]
    assert m.status_line in labels
    for label in labels:
        assert label.height() >= label.heightForWidth(label.width()), label.text()


def test_screenshot_mode_writes_a_png(tmp_path):
    out = tmp_path / "shot.png"
    code = gui_app.main(["--screenshot", str(out), "--size", "1366x768", "--settings", str(tmp_path / "s.ini")])
    assert code == 0
    img = QImage(str(out))
    assert img.width() == 1366 and img.height() == 768
    # Not a blank image: many distinct colours.
    colours = {img.pixel(x, y) for x in range(0, 1366, 37) for y in range(0, 768, 29)}
    assert len(colours) > 10


def test_start_report_gives_the_milestones_in_order(tmp_path, capsys):
    before = time.time()
    code = gui_app.main(
        ["--screenshot", str(tmp_path / "shot.png"), "--start-report", "--settings", str(tmp_path / "s.ini")]
    )
    after = time.time()
    assert code == 0
    stamps = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(stamps) == {"shown", "usable", "ready"}
    assert before <= stamps["shown"] <= stamps["usable"] <= stamps["ready"] <= after


def test_cancelling_designs_keeps_the_window_usable(qtbot, window):
    c = window.controller
    window.state.set_column_value(0, "epsilon", 0.3)
    c.recompute()
    c.cancel()
    assert not c.running()
    assert all(c.status[m] in ("cancelled", "done", "failed") for m in c.methods)
    window.state.set_column_value(0, "epsilon", 0.35)
    qtbot.waitUntil(lambda: c.is_idle() and not c.is_stale("optimal"), timeout=WAIT_MS)
    assert c.current()["optimal"].requested[0] == 0.35


def test_missing_value_codes_and_bins_in_the_side_panel(qtbot, tmp_path):
    heart = str(SAMPLE).replace("breast_cancer", "heart_cleveland")
    window = open_window(qtbot, tmp_path, heart)
    s = window.state
    panel = window.column_panel
    # 'ca' holds '?' for missing values in the UCI file: mark it as a missing-value code.
    row = [c.name for c in s.columns].index("ca")
    panel.show_column(row)
    cats = list(s.columns[row].categories)
    assert "?" in cats
    panel.categories.setCurrentRow(cats.index("?"))
    panel.remove.click()
    col = s.columns[row]
    assert "?" not in col.categories and col.missing_values == ["?"]
    assert col.missing_label in col.categories  # missing values need their category
    window.stack.undo()  # one step
    assert s.columns[row].categories == cats and s.columns[row].missing_values == []
    # A numeric column's bins.
    num = next(i for i, c in enumerate(s.columns) if c.type == "numeric" and c.role == "perturb")
    panel.show_column(num)
    panel.bins.setText("-inf, 100, 200, 300, inf")
    panel.bins.returnPressed.emit()
    assert s.columns[num].bins["edges"] == [float("-inf"), 100.0, 200.0, 300.0, float("inf")]
    qtbot.waitUntil(
        lambda: window.controller.is_idle() and not window.controller.is_stale("kronecker"), timeout=WAIT_MS
    )
    after = window.controller.sizes[s.perturbed_indices().index(num)]
    assert after == 4 + len(s.columns[num].categories or [])
    panel.bins.setText("5, 3")
    panel.bins.returnPressed.emit()
    assert "increasing" in panel.bins_error.text()
    close_window(window)


def test_import_dialog_lists_the_sheets_of_a_workbook(qtbot, window, tmp_path):
    import openpyxl

    from optrr_gui.data.import_dialog import ImportDialog

    rows = sample_rows()
    book = openpyxl.Workbook()
    first = book.active
    first.title = "notes"
    first.append(["just", "a", "note"])
    data = book.create_sheet("patients")
    for r in rows[:51]:
        data.append(r)
    path = tmp_path / "book.xlsx"
    book.save(path)
    dialog = ImportDialog(str(path), window.runner, {"sheet": "patients"}, window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(
        lambda: dialog.sheet.count() == 2 and dialog.frame is not None and list(dialog.frame.columns) == rows[0],
        timeout=WAIT_MS,
    )
    assert dialog.options()["sheet"] == "patients"
    assert len(dialog.frame) == 50
    dialog.sheet.setCurrentText("notes")
    qtbot.waitUntil(
        lambda: dialog.frame is not None and list(dialog.frame.columns) == ["just", "a", "note"], timeout=WAIT_MS
    )
    dialog.reject()


def test_a_wide_file_has_every_column_fitted_to_its_first_rows(qtbot, tmp_path):
    """The data view fits every column to its first rows (short values narrower than the default width, long
    ones capped at 260 px; a header wider than its values keeps its text whole), however many columns."""
    import pandas as pd

    from optrr_gui.data.table_view import DataView

    columns = [f"c{j}" for j in range(29)] + ["a header wider than its values"]
    view = DataView()
    qtbot.addWidget(view)
    view.show()
    default = view.table.horizontalHeader().defaultSectionSize()
    store = DataStore(columns)
    store.append(pd.DataFrame({c: (["x" * 80] if j % 2 and j < 29 else ["y"]) * 30 for j, c in enumerate(columns)}))
    store.complete = True
    view.model.set_store(store)
    view.model._poll()
    widths = lambda: [view.table.columnWidth(j) for j in range(len(columns))]  # noqa: E731
    qtbot.waitUntil(lambda: all(w != default for w in widths()), timeout=WAIT_MS)
    assert all(w == 260 for w in widths()[1:-1:2])  # long values: capped
    assert all(w < default for w in widths()[0:-1:2])  # "y": narrower than the default
    header = view.table.horizontalHeader()
    assert widths()[-1] >= header.fontMetrics().horizontalAdvance(columns[-1])  # the header's text fits


def run_shown_window(then: str):
    """A fresh Python process that shows the main window (offscreen, its own settings), then runs ``then`` with
    ``app``, ``w`` and ``MainWindow`` defined."""
    import subprocess
    import sys

    code = (
        "import tempfile\n"
        "from optrr_gui.app import make_app\n"
        "app = make_app()\n"
        "from optrr_gui.main_window import MainWindow\n"
        "from optrr_gui.common.settings import Settings\n"
        "w = MainWindow(Settings(tempfile.mkdtemp() + '/s.ini'))\n"
        "w.show()\n"
    ) + then
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def test_the_window_starts_without_importing_scipy_stats():
    """scipy.stats takes ~0.9 s to import: the window is shown without it (it is warmed in the background
    once the event loop runs); the start target is measured in bench/gui_stall.py --only startup."""
    out = run_shown_window("import sys\nprint('scipy.stats' in sys.modules)\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_quitting_while_the_background_imports_run_prints_no_traceback():
    """Closing the window while the warm-up thread imports (here: started at once, closed on the first turn of
    the event loop) raised "can't register atexit after shutdown" in that thread: the window stops the
    imports and waits for the one in progress before the interpreter shuts down."""
    out = run_shown_window(
        "import threading\n"
        "from PySide6.QtCore import QTimer\n"
        "w._warm_when_quiet(MainWindow.WARM_QUIET_CHECKS)\n"
        "print(any(t.name == 'optrr-warm-imports' for t in threading.enumerate()))\n"
        "QTimer.singleShot(0, w.close)\n"
        "app.exec()\n"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "True"  # the imports were running when the window closed
    assert "Traceback" not in out.stderr, out.stderr


def test_the_background_imports_wait_until_the_file_being_opened_is_done(qtbot, tmp_path, monkeypatch):
    """Importing the data libraries in a thread beside a file being opened stretched the window's stalls to
    250-400 ms: the imports start only once the window has had no background work for a while."""
    import optrr_gui.main_window as main_window

    monkeypatch.setattr(main_window.MainWindow, "WARM_RETRY_MS", 20)
    started = []
    window = None

    def imports(_stop) -> None:
        started.append((window.loading, tuple(window.runner.busy_channels()), window.store.complete))

    monkeypatch.setattr(main_window, "_import_data_libraries", imports)
    window = main_window.MainWindow(Settings(tmp_path / "settings.ini"))
    qtbot.addWidget(window, before_close_func=lambda w: w.stack.setClean())
    window.show()
    window.open_file(SAMPLE)
    qtbot.waitUntil(lambda: bool(started), timeout=WAIT_MS)
    assert started == [(False, (), True)]  # after the rows were read, with no background work
