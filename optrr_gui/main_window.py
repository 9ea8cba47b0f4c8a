"""The main window: menus, toolbar, tabs (Design, Data, Compare, Analyse), file opening (menu, toolbar, drag
and drop, recent files), project files and the undo stack. It wires the Qt-free session and the engine
to the views; long work goes to the :class:`TaskRunner`.
"""

from __future__ import annotations

import html
import os
import threading
import time
from pathlib import Path

from PySide6.QtCore import QEventLoop, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QStyle,
    QTabWidget,
    QToolBar,
    QUndoView,
    QVBoxLayout,
    QWidget,
)

from optrr_engine.io.readers import ReaderOptions
from optrr_engine.process_pool import shared_pool
from optrr_engine.release.schema import rows_text
from optrr_engine.tolerance import eps_within

from .common.commands import SetColumnsFields, SetSessionValue, set_many
from .common.settings import Settings
from .common.widgets import Spinner
from .data.summary_view import ColumnSummaryView
from .data.table_view import DataView
from .design.attribute_table import AttributePanel
from .design.column_panel import ColumnPanel
from .design.controller import DesignController
from .design.mechanism_panel import MechanismPanel
from .state.config_bridge import perturbed_sizes, set_summaries
from .state.data_store import DataStore, read_encoded
from .state.design_summary import grr_parameters
from .state.paths import DATA_FILTER, PROJECT_FILTER, PROJECT_SUFFIX, SAMPLES
from .state.session import ColumnState, SessionState, too_few_rows
from .workers.jobs.schema import infer_columns
from .workers.runner import TaskRunner

TAB_DESIGN, TAB_DATA, TAB_COMPARE, TAB_ANALYSE = range(4)
#: The smallest window the layout is checked at (issue 14: 1024 x 600).
MIN_WIDTH, MIN_HEIGHT = 1024, 600


def fit_to_screen(window) -> None:
    """Keep the window inside the screen's available area (a restored or default size may be larger at 150 %
    scaling, which pushed the status bar and Cancel off screen)."""
    screen = window.screen() or QApplication.primaryScreen()
    if screen is None:
        return
    area = screen.availableGeometry()
    frame = window.frameGeometry()
    extra_w, extra_h = frame.width() - window.width(), frame.height() - window.height()
    room_w, room_h = area.width() - extra_w, area.height() - extra_h  # the window's own size, frame excluded
    window.setMinimumSize(min(MIN_WIDTH, room_w), min(MIN_HEIGHT, room_h))
    width = max(min(window.width(), room_w), min(MIN_WIDTH, room_w))
    height = max(min(window.height(), room_h), min(MIN_HEIGHT, room_h))
    if (width, height) != (window.width(), window.height()):
        window.resize(width, height)
    x = min(max(window.x(), area.left()), max(area.left(), area.right() - width - extra_w))
    y = min(max(window.y(), area.top()), max(area.top(), area.bottom() - height - extra_h))
    window.move(x, y)


def _step_tips(action: QAction, verb: str, step: str, nothing: str, keys: str) -> None:
    """Undo/Redo ``action`` after the stack named its next ``step`` ("" when there is none): the menu text without a
    dangling colon, and the step in full in the tooltip and status tip (the toolbar shows only ``verb``)."""
    if not step:
        action.setText(f"&{verb}")
    tip = f"{verb}: {step} ({keys})" if step else f"{nothing} ({keys})"
    action.setToolTip(tip)
    action.setStatusTip(tip)


def splitter(orientation, *parts):
    """A splitter of (widget, stretch factor) parts whose parts never collapse to nothing."""
    split = QSplitter(orientation)
    for i, (widget, stretch) in enumerate(parts):
        split.addWidget(widget)
        split.setStretchFactor(i, stretch)
    split.setChildrenCollapsible(False)
    return split


def scrolling(widget):
    """``widget`` in a frameless scroll area: on a screen smaller than its minimum size it scrolls instead of
    being squeezed (a layout squeezed below its minimum draws its labels over each other)."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    # not a stop of its own for Tab (nothing showed it had the focus): its controls are, and it scrolls to them
    area.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    return area


#: The Release action's tooltip once a release is possible (before, the reason comes first).
RELEASE_TIP = "Randomize the file with the chosen design and write the release, its manifest and report"
#: Why a file whose reading was cancelled cannot be released (the Release tooltip and the release dialog).
PARTLY_READ = "The data file was only partly read (reading was cancelled): open it again to release"
#: Shares (per cent) of the design tab's width: the columns (left) and the mechanism (right).
DESIGN_SPLIT = (45, 55)
#: Shares (per cent) of the column side's height: the column table (top) and the chosen column's panel.
COLUMNS_SPLIT = (50, 50)
#: Files at least this big are read (columns, then rows) in the "data" worker process; smaller ones in a
#: thread: the reading is short, and a worker process would first have to import pyarrow and pandas (measured:
#: launch -> every design of the sample 1.9 s in a thread, 2.3-2.7 s through a cold worker process).
PROCESS_MIN_BYTES = 8 << 20


def reader_pool(path) -> str | bool:
    """Where a file is read (its columns, then its rows): the "data" worker process from PROCESS_MIN_BYTES on,
    else a thread (False)."""
    return "data" if os.path.getsize(path) >= PROCESS_MIN_BYTES else False


#: What the warm-up thread imports, in order: what reading a file and its column summaries import, the
#: estimators' intervals (scipy.stats, ~0.9 s, kept out of the start of the window), the first design job's module.
WARM_MODULES = ("pandas", "pyarrow.compute", "scipy.stats", "optrr_gui.workers.jobs.clusters")
#: Seconds quitting waits for the module being imported by the warm-up thread (one import, ~1 s at most).
WARM_JOIN_SECONDS = 10.0


def _import_data_libraries(stop: threading.Event) -> None:
    """Import WARM_MODULES one by one until ``stop`` is set. An import that fails because the interpreter is
    already shutting down is dropped silently (the window joins this thread on close, so that is a last resort)."""
    import importlib

    for name in WARM_MODULES:
        if stop.is_set():
            return
        try:
            importlib.import_module(name)
        except RuntimeError:
            if not stop.is_set():
                raise
            return


class MessageBar(QWidget):
    """A non-modal message line at the top of the window (errors never block with a dialog)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QPushButton("×")
        close.setFlat(True)
        close.setFixedWidth(28)
        close.setToolTip("Hide this message")
        close.clicked.connect(self.hide)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 2, 2, 2)
        lay.addWidget(self.label, 1)
        lay.addWidget(close)
        self.setAutoFillBackground(True)
        self.hide()

    def show_message(self, text: str, error: bool = False) -> None:
        color = "#fde2e2" if error else "#e6f0fb"
        self.setStyleSheet(f"background: {color};")
        self.label.setText(text)
        self.show()


class StartBanner(QWidget):
    """Safe start, step 1: the proposed columns (identifiers and free text already dropped, with the reason in
    Warnings) must be confirmed before anything can be released."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.confirm = QPushButton("These are the columns to share")
        self.confirm.setToolTip("Confirm the roles below; Release becomes possible (one undo step)")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.confirm)
        self.setAutoFillBackground(True)
        self.setStyleSheet("background: #fff4d6;")

    def update_from(self, state) -> None:
        p = len(state.perturbed_indices())
        k = sum(1 for c in state.columns if c.role == "keep")
        d = sum(1 for c in state.columns if c.role == "drop")
        if state.budget_mode:
            budget = f"a whole-record budget ε = {state.target_total:g} shared by weight"
        else:
            # The ε now set, not the proposal's: their sum bounds the whole-record ε of the recommended design
            # (Kronecker's, which every exact design meets or beats), so the target is named only within it.
            eps = [c.epsilon for c in state.perturbed_columns()]
            low, high = min(eps, default=0.0), max(eps, default=0.0)
            each = f"ε {low:g}" if low == high else f"ε {low:g} to {high:g}"
            if eps_within(sum(eps), state.target_total):  # the project's epsilon comparison
                budget = f"the whole record within ε = {state.target_total:g} ({each} per column)"
            else:
                budget = f"{each} per column as set (each design's whole-record ε is shown under Mechanism)"
        name = Path(state.data_path).name if state.data_path else "the file"
        few = too_few_rows(state.n_rows, name)
        if few:  # not the identifier reason: with one row every value is unique
            self.label.setText(
                f"<b>Step 1 — choose the columns to share.</b> {html.escape(few)}; every column was dropped. "
                "Open a file with more rows."
            )
        else:
            self.label.setText(
                f"<b>Step 1 — choose the columns to share.</b> Proposed: {p} randomized, {k} exported in the clear, "
                f"{d} dropped (likely identifiers and free text are dropped; each column's reason is in its Warnings, "
                "and below the table when it is selected). "
                f"Privacy: {budget}. Set the roles, then confirm."
            )
        self.confirm.setEnabled(p > 0)


class EmptyHint(QWidget):
    """The Design tab with no file open: what to do first, instead of an empty column table and chart."""

    TEXT = "Open a data file to start (File ▸ Open data…)"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.label = QLabel(self.TEXT)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.label.setWordWrap(True)
        self.open = QPushButton("Open data…")
        self.open.setToolTip("Open a data file (CSV, Excel...)")
        lay = QVBoxLayout(self)
        lay.addStretch(1)
        lay.addWidget(self.label)
        lay.addWidget(self.open, 0, Qt.AlignmentFlag.AlignHCenter)
        lay.addStretch(1)


class MainWindow(QMainWindow):
    #: Emitted when a file's columns are loaded (path) — used by tests and the screenshot mode.
    fileLoaded = Signal(str)
    #: Emitted when all rows of the data file have been read (row count).
    rowsLoaded = Signal(int)
    #: Emitted when the column summaries of the loaded rows are ready.
    summariesReady = Signal()

    def __init__(self, settings: Settings | None = None, parent=None):
        super().__init__(parent)
        self.setWindowTitle("OptRR")
        self.setAcceptDrops(True)
        self.settings = settings or Settings()
        self.state = SessionState()
        self.stack = QUndoStack(self)
        self.runner = TaskRunner(self)
        self.project_path: str | None = None
        self.store: DataStore | None = None
        self.loading = False
        #: reading the rows was cancelled: the file is only partly read (reopen it to release)
        self.partly_read = False
        #: an opened project's saved row count, until its data is compared with the file (``_report_data_changes``)
        self._project_check: dict | None = None
        self.last_error = ""
        self._data_started = 0.0
        self._warm_stop = threading.Event()  # set on close: the warm-up imports stop (_stop_warm_imports)
        self._warm_thread: threading.Thread | None = None

        self.controller = DesignController(self.state, self.runner, lambda: perturbed_sizes(self.state), self)
        self.attributes = AttributePanel(self.state, self.stack)
        self.attributes.set_controller(self.controller)  # the budget's ε per column, the per-column whole-record ε
        self.column_panel = ColumnPanel(self.state, self.stack)
        self.mechanism = MechanismPanel(self.controller)
        self.attributes.currentColumnChanged.connect(self.column_panel.show_column)
        self.column_panel.risk_source = self.column_risk
        self.column_panel.runner = self.runner  # recodings of many categories run on a worker thread
        self.controller.changed.connect(self.column_panel.schedule_risk)
        self.mechanism.useDesign.connect(self.use_design)
        self.mechanism.neededEdited.connect(
            lambda v: self.stack.push(SetSessionValue(self.state, "needed_marginals", v))
        )
        self.mechanism.acceptChangedEdited.connect(
            lambda v: self.stack.push(SetSessionValue(self.state, "accept_changed_epsilons", bool(v)))
        )

        # The column table and the chosen column's panel share the height evenly; the panel scrolls on its own
        # when its categories and buttons need more (a newcomer's first step is to review every column's row).
        left = splitter(Qt.Orientation.Vertical, (self.attributes, 1), (scrolling(self.column_panel), 1))
        left.setSizes([100 * share for share in COLUMNS_SPLIT])
        design = splitter(Qt.Orientation.Horizontal, (scrolling(left), 1), (scrolling(self.mechanism), 1))
        # The mechanism side a little wider (its design table has six columns and long design names); the
        # column table's warnings and ε slider give way on the left, so at 1280 neither side scrolls sideways.
        design.setSizes([100 * share for share in DESIGN_SPLIT])  # (proportions: scaled to the width)
        self.design_splitter = design
        self.start_banner = StartBanner()
        self.start_banner.confirm.clicked.connect(self.confirm_columns)
        self.start_banner.hide()
        design_page = QWidget()
        dl = QVBoxLayout(design_page)
        dl.setContentsMargins(0, 0, 0, 0)
        dl.setSpacing(0)
        self.empty_hint = EmptyHint()
        self.design_stack = QStackedWidget()
        self.design_stack.addWidget(self.empty_hint)
        self.design_stack.addWidget(design)
        dl.addWidget(self.start_banner)
        dl.addWidget(self.design_stack, 1)

        self.data_view = DataView()
        self.summaries: dict = {}
        self.summary_view = ColumnSummaryView()
        self.data_view.table.selectionModel().currentColumnChanged.connect(
            lambda cur, _prev: self.show_summary_of(cur.column())
        )
        data_page = splitter(Qt.Orientation.Horizontal, (self.data_view, 3), (self.summary_view, 2))
        self.data_splitter = data_page
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(design_page, "Design")
        self.tabs.addTab(data_page, "Data")
        self.compare_view = None
        self.analyse_view = None
        self.tabs.addTab(QWidget(), "Compare")
        self.tabs.addTab(QWidget(), "Analyse a release")
        self.tabs.setTabToolTip(TAB_DESIGN, "Choose columns and ε; compare the mechanisms live (Ctrl+1)")
        self.tabs.setTabToolTip(TAB_DATA, "The data as read from the file (Ctrl+2)")
        self.tabs.setTabToolTip(TAB_COMPARE, "Plots comparing the designs (Ctrl+3)")
        self.tabs.setTabToolTip(TAB_ANALYSE, "The receiver's side: estimate distributions from a release (Ctrl+4)")
        self.tabs.currentChanged.connect(self._tab_changed)
        self.message_bar = MessageBar()
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.message_bar)
        cl.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self._set_design_tab_order()

        self.status_spinner = Spinner(self)
        self.status_label = QLabel()
        self.cancel_load = QPushButton("Cancel")
        self.cancel_load.setToolTip("Stop reading the file")
        self.cancel_load.clicked.connect(self.cancel_loading)
        self.cancel_load.hide()
        self.statusBar().addPermanentWidget(self.status_label)
        self.statusBar().addPermanentWidget(self.status_spinner)
        self.statusBar().addPermanentWidget(self.cancel_load)
        self.runner.busyChanged.connect(self._busy_changed)
        self._build_actions()
        self.empty_hint.open.clicked.connect(self.act_open.trigger)
        self._update_safe_start()  # no file yet: the hint, and Release disabled
        self.stack.cleanChanged.connect(self._clean_changed)
        self.state.subscribe(self._on_state)
        self.setMinimumSize(MIN_WIDTH, MIN_HEIGHT)
        self.resize(1366, 768)
        self.settings.restore_window(self)
        fit_to_screen(self)
        #: fit to the screen again once shown (False: keep an exact size, e.g. ``--screenshot --size``)
        self.fit_when_shown = True
        self._update_title()
        QTimer.singleShot(300, self._warm_workers)

    def _set_design_tab_order(self) -> None:
        """Tab through the column side in reading order: the table's filter and privacy mode above it, the
        table, then the chosen column's panel (role, type, missing, ε, categories), then the mechanism side. By
        creation order Tab went from the table back up to the filter, and the panel's ε before its role."""
        table, panel = self.attributes, self.column_panel
        order = [
            table.filter,
            table.per_column,
            table.total,
            table.target,
            table.view,
            panel.role,
            panel.type,
            panel.missing,
            panel.epsilon.spin,
            panel.epsilon.slider,
            panel.weight.spin,
            panel.weight.slider,
            panel.bins,
            panel.categories,
        ]
        for first, second in zip(order, order[1:], strict=False):
            QWidget.setTabOrder(first, second)

    def _warm_workers(self) -> None:
        """Start a worker process for heavy designs and releases, and the one for quick tasks, while the window is
        idle; the rest of the warming waits for a quiet window (:meth:`_warm_when_quiet`)."""
        shared_pool().warm()
        shared_pool("quick").warm()  # cheap designs and predictions, off the window's GIL (workers.runner)
        self._warm_when_quiet(0)

    def _warm_when_quiet(self, quiet_checks: int) -> None:
        """Once the window has had no background work for WARM_QUIET_CHECKS checks WARM_RETRY_MS apart: start
        the "data" worker (big files, recodings) and import the data libraries (pyarrow, pandas, scipy.stats:
        ~1.5 s) in a thread, so that later work (the first comparison or analysis) does not wait for them.

        A thread importing modules holds the GIL for long stretches (extension modules initialise without
        releasing it): beside a file being opened it stretched the window's longest stall from ~80 ms to
        250-400 ms. What opening a file needs (pyarrow, pandas) its own worker imports."""
        quiet = not self.loading and not self.runner.busy_channels()
        quiet_checks = quiet_checks + 1 if quiet else 0
        if quiet_checks < self.WARM_QUIET_CHECKS:
            QTimer.singleShot(self.WARM_RETRY_MS, self, lambda: self._warm_when_quiet(quiet_checks))
            return
        shared_pool("data").warm()
        self._warm_thread = threading.Thread(
            target=_import_data_libraries, args=(self._warm_stop,), name="optrr-warm-imports", daemon=True
        )
        self._warm_thread.start()

    def _stop_warm_imports(self) -> None:
        """Stop the warm-up imports and wait for the one in progress: an import still running once the
        interpreter shuts down fails ("can't register atexit after shutdown") with a traceback on stderr."""
        self._warm_stop.set()
        if self._warm_thread is not None:
            self._warm_thread.join(WARM_JOIN_SECONDS)

    WARM_RETRY_MS = 500
    WARM_QUIET_CHECKS = 4

    # -- actions, menus, toolbar ---------------------------------------------------------------
    def _action(self, text, slot, shortcut=None, tip="", icon=None) -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        if tip:
            act.setToolTip(tip)
            act.setStatusTip(tip)
        if icon is not None:
            act.setIcon(self.style().standardIcon(icon))
        act.triggered.connect(slot)
        return act

    def _build_actions(self) -> None:
        sp = QStyle.StandardPixmap
        self.act_open = self._action(
            "&Open data…",
            self.open_dialog,
            QKeySequence.StandardKey.Open,
            "Open a data file (CSV, Excel...)",
            sp.SP_DialogOpenButton,
        )
        self.act_import = self._action(
            "&Import options…", self.import_options, "Ctrl+I", "Change delimiter, encoding or sheet of this file"
        )
        self.act_open_project = self._action(
            "Open &project…", self.open_project_dialog, "Ctrl+Shift+O", "Open a saved session (.optrr)"
        )
        self.act_save = self._action(
            "&Save project",
            self.save_project,
            QKeySequence.StandardKey.Save,
            "Save the session (columns, ε, method) to a .optrr file",
            sp.SP_DialogSaveButton,
        )
        self.act_save_as = self._action(
            "Save project &as…", self.save_project_as, QKeySequence.StandardKey.SaveAs, "Save the session elsewhere"
        )
        self.act_release = self._action(
            "&Release…",
            self.open_release,
            "Ctrl+R",
            RELEASE_TIP,
            sp.SP_MediaPlay,
        )
        self.act_quit = self._action("&Quit", self.close, QKeySequence.StandardKey.Quit, "Close OptRR")
        self.act_undo = self.stack.createUndoAction(self, "&Undo:")
        self.act_undo.setShortcut(QKeySequence.StandardKey.Undo)
        self.act_undo.setIcon(self.style().standardIcon(sp.SP_ArrowBack))
        self.act_redo = self.stack.createRedoAction(self, "&Redo:")
        self.act_redo.setShortcuts([QKeySequence.StandardKey.Redo, QKeySequence("Ctrl+Y")])
        self.act_redo.setIcon(self.style().standardIcon(sp.SP_ArrowForward))
        # The menu names the step ("Undo: treat N/A of bmi as missing"); the toolbar button keeps a short fixed
        # text (a long step was cut to "Un…ep" and the toolbar jumped at every change), the step in its tooltip.
        self.act_undo.setIconText("Undo")
        self.act_redo.setIconText("Redo")
        self.stack.undoTextChanged.connect(self._undo_text_changed)
        self.stack.redoTextChanged.connect(self._redo_text_changed)
        self._undo_text_changed(self.stack.undoText())
        self._redo_text_changed(self.stack.redoText())
        self.act_history = self._action("Undo &history…", self.show_history, "Ctrl+H", "Every change, to go back")
        self.act_about = self._action("&About OptRR", self.show_about, None, "Versions, licences, data sources")
        self.act_help = self._action(
            "OptRR &guide", self.show_guide, QKeySequence.StandardKey.HelpContents, "The guide, at the current tab (F1)"
        )
        self.act_recipe = self._action(
            "Export &recipe…",
            self.export_recipe,
            None,
            "Write the release configuration and the exact optrr perturb command that makes this release",
        )

        menu = self.menuBar().addMenu("&File")
        menu.addAction(self.act_open)
        self.samples_menu = menu.addMenu("Open &sample")
        for sample in SAMPLES:
            self.samples_menu.addAction(sample.stem.replace("_", " "), lambda p=sample: self.open_file(str(p)))
        self.recent_menu = menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._fill_recent()
        menu.addAction(self.act_import)
        menu.addSeparator()
        menu.addAction(self.act_open_project)
        menu.addAction(self.act_save)
        menu.addAction(self.act_save_as)
        menu.addSeparator()
        menu.addAction(self.act_release)
        menu.addAction(self.act_recipe)
        menu.addSeparator()
        menu.addAction(self.act_quit)
        edit = self.menuBar().addMenu("&Edit")
        edit.addAction(self.act_undo)
        edit.addAction(self.act_redo)
        edit.addAction(self.act_history)
        edit.addSeparator()
        #: what needs an open file: disabled while there is none (at start, after a cancelled or failed load)
        self.data_actions = [self.act_save, self.act_save_as, self.act_import]
        for field, what in (("epsilon", "ε"), ("weight", "weight")):
            act = self._action(
                f"Set {what} of selected columns…",
                lambda _c=False, f=field: self.bulk_value(f),
                None,
                f"One {what} for every selected column (one undo step)",
            )
            edit.addAction(act)
            self.data_actions.append(act)
        self.act_merge_rare = self._action(
            "Merge rare categories in every column",
            self.merge_rare_everywhere,
            None,
            "Every perturbed column of categories: its rare ones into 'Other' (ordinal: with a neighbour), as "
            "optrr schema --merge-rare does (one undo step)",
        )
        edit.addAction(self.act_merge_rare)
        self.data_actions.append(self.act_merge_rare)
        for role, key in (("perturb", "Ctrl+P"), ("keep", "Ctrl+K"), ("drop", "Ctrl+D")):
            act = self._action(
                f"Set selected columns to {role}",
                lambda _c=False, r=role: self.attributes.set_roles(self.attributes.selected_rows(), r),
                key,
                f"Role of the selected columns: {role}",
            )
            edit.addAction(act)
            self.data_actions.append(act)
        view = self.menuBar().addMenu("&View")
        for i, name in enumerate(("Design", "Data", "Compare", "Analyse a release")):
            view.addAction(self._action(name, lambda _c=False, i=i: self.tabs.setCurrentIndex(i), f"Ctrl+{i + 1}"))
        helpm = self.menuBar().addMenu("&Help")
        helpm.addAction(self.act_help)
        helpm.addAction(self.act_about)

        tb = QToolBar("Main")
        tb.setObjectName("main-toolbar")
        tb.setIconSize(QSize(18, 18))
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for act in (self.act_open, self.act_save, None, self.act_undo, self.act_redo, None, self.act_release):
            if act is None:
                tb.addSeparator()
            else:
                tb.addAction(act)
        self.analyse_action = self._action(
            "Analyse a release…",
            self.open_analyse,
            "Ctrl+E",
            "Estimate distributions from a perturbed file",
            sp.SP_FileDialogContentsView,
        )
        tb.addAction(self.analyse_action)
        self.addToolBar(tb)

    def _undo_text_changed(self, step: str) -> None:
        """After the undo stack renamed Undo (``&Undo: step``): the step in the tooltip and status tip."""
        _step_tips(self.act_undo, "Undo", step, "Undo the last change", "Ctrl+Z")

    def _redo_text_changed(self, step: str) -> None:
        _step_tips(self.act_redo, "Redo", step, "Redo the change undone last", "Ctrl+Shift+Z or Ctrl+Y")

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        items = self.settings.recent_files()
        for item in items:
            path, options = item["path"], item.get("options") or {}
            self.recent_menu.addAction(path, lambda p=path, o=options: self.open_file(p, o))
        if not items:
            self.recent_menu.addAction("(none)").setEnabled(False)

    # -- messages -----------------------------------------------------------------------------------
    def show_error(self, text: str) -> None:
        self.last_error = text
        self.message_bar.show_message(text, error=True)
        self.statusBar().showMessage(text, 10_000)

    def show_info(self, text: str) -> None:
        self.message_bar.show_message(text, error=False)

    def _busy_changed(self, channel: str, busy: bool) -> None:
        if self.runner.busy_channels():
            self.status_spinner.start()
        else:
            self.status_spinner.stop()

    def _clean_changed(self, _clean) -> None:
        try:
            self._update_title()
        except RuntimeError:  # the stack is being destroyed with the window
            pass

    def _update_title(self) -> None:
        name = Path(self.state.data_path).name if self.state.data_path else "no file"
        project = f" — {Path(self.project_path).name}" if self.project_path else ""
        dirty = "" if self.stack.isClean() else " *"
        self.setWindowTitle(f"OptRR — {name}{project}{dirty}")

    def _on_state(self, kind, index, name) -> None:
        if kind in ("reset", "session", "column", "columns", "rows"):  # rows: a partly read file is read again
            self._update_safe_start()
        if kind in ("reset", "rows"):
            self._update_title()
            n = self.state.n_rows
            cols = len(self.state.columns)
            if n is not None:
                rows = rows_text(n)
            elif self.partly_read:
                read = self.store.rows if self.store is not None else 0
                rows = f"only partly read ({read:,} rows before the cancel)"
            else:
                rows = "counting rows…"
            self.status_label.setText(
                f"{Path(self.state.data_path).name if self.state.data_path else ''}: {rows}, {cols} columns"
            )

    # -- opening files --------------------------------------------------------------------------------
    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open data", self.settings.last_dir("data"), DATA_FILTER)
        if path:
            self.settings.set_last_dir("data", path)
            self.open_with_dialog(path)

    def open_with_dialog(self, path: str, options: dict | None = None) -> bool:
        """The import dialog (reader options + preview), then open. Returns False if the user cancels."""
        from .data.import_dialog import ImportDialog

        dialog = ImportDialog(path, self.runner, options or self.settings.options_for(path), self)
        self._import_dialog = dialog
        if dialog.exec() != ImportDialog.DialogCode.Accepted:
            return False
        self.open_file(path, dialog.options())
        return True

    def import_options(self) -> None:
        if self.state.data_path:
            self.open_with_dialog(self.state.data_path, self.state.reader_options)

    def confirm_discard(self, action: str) -> bool:
        """True when nothing is unsaved, or the user saves or discards the changes before ``action``."""
        if self.stack.isClean():
            return True
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(
            self,
            "Unsaved changes",
            f"The session has changes that are not saved in a project. Save them before {action}?",
            buttons.Save | buttons.Discard | buttons.Cancel,
            buttons.Save,
        )
        if answer == buttons.Save:
            return self.save_project()
        return answer == buttons.Discard

    def open_file(self, path: str, options: dict | None = None) -> None:
        """Open a data file (or a project): infer its columns in the background, then read its rows."""
        if str(path).endswith(PROJECT_SUFFIX):
            self.open_project(path)
            return
        if not self.confirm_discard(f"opening {Path(path).name}"):
            return
        if not os.path.exists(path):
            self.show_error(f"{path} does not exist")
            return
        options = dict(options if options is not None else self.settings.options_for(path))
        self.loading = True
        self.message_bar.hide()
        self.statusBar().showMessage(f"Reading the columns of {Path(path).name}…")
        self.status_spinner.start()
        self.cancel_load.show()
        self.runner.submit(
            "schema",
            infer_columns,
            str(path),
            options,
            on_done=lambda result: self._columns_inferred(str(path), options, result),
            on_error=lambda exc: self._load_failed(path, exc),
            on_progress=lambda f, msg: self.statusBar().showMessage(f"Reading columns: {msg}"),
            on_cancelled=self._load_cancelled,
            process=reader_pool(path),
        )

    def _columns_inferred(self, path: str, options: dict, result: dict) -> None:
        self.project_path = None
        self._project_check = None
        self.summaries = {}
        self.state.load_columns(path, options, result["columns"], None, safe_start=True)  # one reset
        self.stack.clear()
        self.statusBar().showMessage(f"Opened {Path(path).name}", 5000)
        self.start_reading_rows()
        self.fileLoaded.emit(path)
        QTimer.singleShot(0, lambda: self.settings.add_recent(path, options))  # writes the settings file

    def start_reading_rows(self) -> None:
        """Read every row in the background for the data view and the row count."""
        path = self.state.data_path
        if not path or not os.path.exists(path):
            self.loading = False
            self.cancel_load.hide()
            return
        self.loading = True
        self.partly_read = False
        self.cancel_load.show()
        columns = [c.name for c in self.state.columns]
        self.store = DataStore(columns)
        set_summaries(self.state, {})  # the previous rows' summaries no longer apply
        self.summaries = {}
        self.data_view.model.set_store(self.store)
        self.data_view.status.setText("Reading rows…")
        self._data_started = time.perf_counter()
        store = self.store
        self.runner.submit(
            "data",
            read_encoded,
            path,
            ReaderOptions.from_dict(self.state.reader_options),
            columns,
            partial=store.append_encoded,
            process=reader_pool(path),
            on_done=self._rows_loaded,
            on_error=lambda exc: self._load_failed(path, exc),
            on_progress=lambda f, msg: self.data_view.status.setText(msg),
            on_cancelled=self._rows_cancelled,
        )

    def _rows_loaded(self, n: int) -> None:
        self.store.complete = True
        self._summarize()
        self.loading = False
        self.cancel_load.hide()
        self.data_view.model._poll()
        seconds = time.perf_counter() - self._data_started
        self.data_view.status.setText(
            f"{rows_text(n)} × {len(self.store.columns)} columns (read in {seconds:.1f} s)"
        )
        self.state.set_n_rows(n)
        self.rowsLoaded.emit(n)

    def _load_failed(self, path, exc) -> None:
        self.loading = False
        self.cancel_load.hide()
        from .state.config_bridge import gui_wording

        self.show_error(f"Cannot open {Path(path).name}: {gui_wording(str(exc))}")

    def _load_cancelled(self) -> None:
        self.loading = False
        self.cancel_load.hide()
        if not self.runner.busy_channels():
            self.status_spinner.stop()
        self.statusBar().showMessage("Reading the file was cancelled", 5000)

    def _rows_cancelled(self) -> None:
        """Reading the rows was cancelled: the file is only partly read; the release (it needs every row and
        the row count) waits until it is opened again."""
        self._load_cancelled()
        self.partly_read = True
        self._project_check = None
        name = Path(self.state.data_path).name if self.state.data_path else "the file"
        read = self.store.stop() if self.store is not None else 0  # chunks still on their way are not shown
        self.data_view.model._poll()
        self.data_view.status.setText(f"Only the first {read:,} rows were read (reading was cancelled)")
        self._on_state("rows", None, None)  # the status bar and Release (disabled, with the reason)
        self.show_error(
            f"Reading {name} was cancelled: it was only partly read ({read:,} rows). The designs have no row "
            "count and nothing can be released: open the file again (File ▸ Open) to read all of it."
        )

    def cancel_loading(self) -> None:
        self.runner.cancel("schema")
        self.runner.cancel("data")

    # -- drag and drop ----------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        files = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if not files:
            return
        event.acceptProposedAction()
        path = files[0]
        # Let the drop finish before a modal dialog opens.
        if path.endswith(PROJECT_SUFFIX):
            QTimer.singleShot(0, lambda: self.open_project(path))
        else:
            QTimer.singleShot(0, lambda: self.open_with_dialog(path))

    # -- projects ---------------------------------------------------------------------------------
    def open_project_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open project", self.settings.last_dir("project"), PROJECT_FILTER)
        if path:
            self.settings.set_last_dir("project", path)
            self.open_project(path)

    def open_project(self, path: str) -> bool:
        if not self.confirm_discard(f"opening {Path(path).name}"):
            return False
        try:
            self.state.load_project(path)
        except (ValueError, OSError) as exc:
            self.show_error(str(exc))
            return False
        self.project_path = str(path)
        self.partly_read = False
        # compared with the file once its rows and column summaries are read (_report_data_changes)
        self._project_check = {"rows": self.state.n_rows}
        self.stack.clear()
        self._update_title()
        if self.state.data_path and not os.path.exists(self.state.data_path):
            self.show_error(f"The project's data file {self.state.data_path} is missing; the designs still work.")
        else:
            self.start_reading_rows()
        self.fileLoaded.emit(self.state.data_path or "")
        return True

    def save_project(self) -> bool:
        if not self.project_path:
            return self.save_project_as()
        return self.save_project_to(self.project_path)

    def save_project_as(self) -> bool:
        start = self.settings.last_dir("project")
        if self.state.data_path:
            start = os.path.join(start, Path(self.state.data_path).stem + PROJECT_SUFFIX)
        path, _ = QFileDialog.getSaveFileName(self, "Save project", start, PROJECT_FILTER)
        if not path:
            return False
        if not path.endswith(PROJECT_SUFFIX):
            path += PROJECT_SUFFIX
        self.settings.set_last_dir("project", path)
        return self.save_project_to(path)

    def commit_pending_edits(self) -> bool:
        """Apply what is typed in the focused field but not yet applied (bin edges, the needed column sets, a
        typed ε): Ctrl+S, Release and Export recipe leave the focus where it is, so the field never learns. False
        (and the reason in the message bar) when typed bin edges are not valid: saving or releasing then would
        keep the old edges while the field shows the new ones."""
        from PySide6.QtWidgets import QAbstractSpinBox, QLineEdit

        widget = QApplication.focusWidget()
        if widget is self.column_panel.bins and widget.isModified():
            if not self.column_panel.apply_typed_bins():
                self.show_error(
                    f"The bin edges typed ({widget.text()}) are not valid: {self.column_panel.bins_error.text()}. "
                    "Correct them (or undo the typing) first."
                )
                return False
            return True
        spin = widget if isinstance(widget, QAbstractSpinBox) else None
        if spin is None and widget is not None and isinstance(widget.parent(), QAbstractSpinBox):
            spin = widget.parent()  # the spin box's own line edit
        if spin is not None:
            spin.interpretText()  # valueChanged when the typed value differs (keyboard tracking is off)
        elif isinstance(widget, QLineEdit) and widget.isModified() and not widget.isReadOnly():
            if widget.hasAcceptableInput():
                widget.editingFinished.emit()
        return True

    def save_project_to(self, path: str) -> bool:
        if not self.commit_pending_edits():
            return False
        try:
            self.state.save_project(path)
        except OSError as exc:
            self.show_error(f"Cannot save the project: {exc}")
            return False
        self.project_path = str(path)
        self.stack.setClean()
        self._update_title()
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    # -- design choice, release, tabs ------------------------------------------------------------------
    def use_design(self, method: str) -> None:
        if method != self.state.method:
            self.stack.push(SetSessionValue(self.state, "method", method))

    def open_release(self) -> None:
        from .release.dialog import ReleaseDialog

        if not self.commit_pending_edits():
            return
        if not self.state.data_path:
            self.show_info(f"{self.release_blocker()}.")
            return
        if not self.state.columns_chosen:
            self.tabs.setCurrentIndex(TAB_DESIGN)
            self.show_info("First choose the columns to share (step 1 above the table), then confirm them.")
            return
        old = getattr(self, "_release_dialog", None)
        if old is not None and old.result_state != "running":  # a closed dialog stops following the designs
            self.controller.changed.disconnect(old._design_changed)
            old.deleteLater()
        dialog = ReleaseDialog(self, self)
        self._release_dialog = dialog
        dialog.show()

    def open_analyse(self) -> None:
        self.tabs.setCurrentIndex(TAB_ANALYSE)
        if self.analyse_view is not None:
            self.analyse_view.open_release_dialog()

    def _tab_changed(self, index: int) -> None:
        """Build the Compare and Analyse tabs on first use (keeps start-up fast)."""
        if index == TAB_COMPARE and self.compare_view is None:
            from .compare.view import CompareView

            self.compare_view = CompareView(self)
            self._replace_tab(TAB_COMPARE, self.compare_view, "Compare")
        elif index == TAB_ANALYSE and self.analyse_view is None:
            from .analyse.view import AnalyseView

            self.analyse_view = AnalyseView(self)
            self._replace_tab(TAB_ANALYSE, self.analyse_view, "Analyse a release")

    def _replace_tab(self, index: int, widget, title: str) -> None:
        tip = self.tabs.tabToolTip(index)
        self.tabs.blockSignals(True)
        old = self.tabs.widget(index)
        self.tabs.removeTab(index)
        self.tabs.insertTab(index, widget, title)
        self.tabs.setTabToolTip(index, tip)
        self.tabs.setCurrentIndex(index)
        self.tabs.blockSignals(False)
        old.deleteLater()

    def show_history(self) -> None:
        view = QUndoView(self.stack)
        view.setWindowTitle("Undo history — click a step to go back to it")
        view.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        view.resize(420, 400)
        view.setWindowFlag(Qt.WindowType.Tool)
        view.setParent(self, Qt.WindowType.Tool)
        view.show()

    def show_about(self) -> None:
        from .common.about import AboutDialog

        AboutDialog(self).exec()

    def show_guide(self) -> None:
        """The guide in a help window, at the section of the current tab (F1)."""
        from .common.help_window import TAB_SECTIONS, HelpWindow

        if getattr(self, "help_window", None) is None:
            self.help_window = HelpWindow(self)
            self.help_window.resize(min(900, self.width()), min(700, self.height()))
        self.help_window.show_section(TAB_SECTIONS[self.tabs.currentIndex()])
        self.help_window.show()
        self.help_window.raise_()

    # -- safe start, bulk edits, summaries, recipe -----------------------------------------------------
    def _update_safe_start(self) -> None:
        """The start banner, the empty-state hint (no columns yet) and what Release, the recipe and the actions that
        need an open file (``data_actions``: Save project...) allow."""
        chosen = self.state.columns_chosen or not self.state.columns
        self.start_banner.setVisible(not chosen)
        if not chosen:
            self.start_banner.update_from(self.state)
        self.design_stack.setCurrentIndex(1 if self.state.columns else 0)
        blocker = self.release_blocker()
        self.act_release.setEnabled(blocker is None)
        tip = RELEASE_TIP if blocker is None else f"{blocker}. {RELEASE_TIP}."
        self.act_release.setToolTip(tip)
        self.act_release.setStatusTip(tip)
        self.act_recipe.setEnabled(bool(self.state.data_path and self.state.perturbed_indices()))
        has_data = bool(self.state.data_path and self.state.columns)
        for act in self.data_actions:
            act.setEnabled(has_data)

    def release_blocker(self) -> str | None:
        """Why Release is not possible yet (one sentence for its tooltip), or None when it is."""
        if not self.state.data_path:
            return "Open a data file first (File ▸ Open data…)"
        few = too_few_rows(self.state.n_rows, Path(self.state.data_path).name)
        if few and not self.state.perturbed_indices():  # before step 1: nothing to confirm
            return few
        if self.state.columns and not self.state.columns_chosen:
            return "Confirm the columns to share first (step 1 above the column table)"
        if not self.state.perturbed_indices():
            return "Choose at least one column to perturb first"
        if self.partly_read:
            return PARTLY_READ
        return None

    def column_risk(self, row: int) -> str | None:
        """Beside the ε of a perturbed column: P(released value = true value) from the mechanism the release
        would use, and what the whole-record ε allows an attacker who knows everything else."""
        from optrr_engine.release.risk import column_sentence, record_sentence

        method = self.controller.chosen()
        summary = self.controller.current().get(method) if method else None
        if summary is None or not summary.ok or summary.design is None or self.state.columns[row].role != "perturb":
            return None
        positions = self.state.perturbed_indices()
        mechanism = summary.design.mechanism
        if row not in positions or mechanism.k != len(positions) or not hasattr(mechanism, "marginal"):
            return None
        position = positions.index(row)
        keep, _ = grr_parameters(mechanism, position)
        size = int(mechanism.sizes[position])
        return f"{column_sentence(keep, size)}\n{record_sentence(mechanism.overall_epsilon())}"

    def confirm_columns(self) -> None:
        """Step 1 done (one undo step): the perturbed columns that still hold the starting share get the
        whole-record budget split over the columns now chosen."""
        if self.state.columns_chosen:
            return
        start = self.state.start_share
        untouched = [i for i in self.state.perturbed_indices() if self.state.columns[i].epsilon == start]
        self.stack.beginMacro("confirm the columns to share")
        set_many(self.stack, self.state, untouched, "epsilon", self.state.budget_share())
        self.stack.push(SetSessionValue(self.state, "columns_chosen", True))
        self.stack.endMacro()

    def bulk_value(self, field: str, value: float | None = None) -> None:
        """Edit ▸ Set ε (or weight) of the selected perturbed columns: one undo step."""
        from PySide6.QtWidgets import QInputDialog

        rows = [r for r in self.attributes.selected_rows() if self.state.columns[r].role == "perturb"]
        if not rows:
            self.show_info("Select perturbed columns in the table first (Shift/Ctrl+click).")
            return
        what = "ε" if field == "epsilon" else "weight"
        if value is None:
            value, ok = QInputDialog.getDouble(
                self, f"Set {what}", f"{what} for the {len(rows)} selected perturbed columns:",
                float(getattr(self.state.columns[rows[0]], field)), 0.01, 50.0 if field == "epsilon" else 1000.0, 3
            )
            if not ok:
                return
        set_many(self.stack, self.state, rows, field, float(value))

    def merge_rare_everywhere(self) -> None:
        """Edit ▸ Merge rare categories in every column: the engine's rule of ``optrr schema --merge-rare`` on every
        perturbed nominal or ordinal column (workers.jobs.recode.merge_rare_everywhere), in the data worker process
        (as a column's own recoding: counting a many-category column in a thread held the window); applied as one
        undo step when it arrives, if the columns did not change meanwhile."""
        from .workers.jobs.recode import merge_rare_everywhere

        if self.loading or not self.summaries:
            self.show_info("The rows are still being read: merge the rare categories once they are.")
            return
        columns = [ColumnState(**c.copied_fields()) for c in self.state.columns]
        version = self.state.data_version
        self.runner.submit(
            "merge_rare_all",
            merge_rare_everywhere,
            columns,
            dict(self.summaries),
            on_done=lambda result: self._merged_everywhere(result, version),
            on_error=lambda exc: self.show_error(f"Merging the rare categories failed: {exc}"),
            process="data",
        )

    def _merged_everywhere(self, result, version: int) -> None:
        if self.state.data_version != version:
            self.show_info("The columns changed while their rare categories were being merged: nothing was changed.")
            return
        for i, change in result.changes.items():  # counted by the worker: the warnings do not count them again
            name = self.state.columns[i].name
            if name in result.counts and self.summaries.get(name) is not None:
                self.summaries[name].remember_recoded(change["recode"], result.counts[name])
        if result.changes:
            n = len(result.merged)
            self.stack.push(
                SetColumnsFields(self.state, result.changes, f"merge rare categories in {n} column{'s' * (n != 1)}")
            )
        done = (
            f"Merged rare categories in {len(result.merged)} column(s): {', '.join(result.merged[:8])}"
            + (f" and {len(result.merged) - 8} more" if len(result.merged) > 8 else "")
            if result.merged
            else "No rare category could be merged"
        )
        left = (
            f". Still rare in {len(result.still_rare)} column(s) ({', '.join(result.still_rare[:8])}"
            + (" …" if len(result.still_rare) > 8 else "")
            + "): drop them, or approve their rare categories in the release dialog."
            if result.still_rare
            else "; no rare category is left."
        )
        self.show_info(done + left)

    def _summarize(self) -> None:
        from .workers.jobs.summaries import summarize_file_store

        self.runner.submit(
            "summaries",
            summarize_file_store,
            self.store,
            self.state.data_path,
            self.state.reader_options,
            on_done=self._summaries_ready,
        )

    def _summaries_ready(self, summaries: dict) -> None:
        self.summaries = summaries
        set_summaries(self.state, summaries)
        if any(c.recode for c in self.state.columns):  # their rare-category warnings are recounted: one refresh
            self.state.set_column_values([], "warnings", [])
        self.column_panel.set_summaries(summaries)
        self.controller.recompute()  # the file's shares are known now: the tests' power under the design table
        current = self.data_view.table.currentIndex()
        self.show_summary_of(current.column() if current.isValid() else 0)
        self._report_data_changes()
        self.summariesReady.emit()

    def _report_data_changes(self) -> None:
        """A reopened project: what differs from its data file now read (columns gone or new, values outside a
        perturbed column's categories, another row count), in the message bar."""
        from .state.data_changes import changes_message, data_changes

        check, self._project_check = self._project_check, None
        if check is None or self.store is None:
            return
        changes = data_changes(
            self.state.columns, self.store.file_columns, self.summaries, check.get("rows"), self.state.n_rows
        )
        self._update_safe_start()
        if changes:
            self.show_error(changes_message(changes))

    def data_problems(self) -> list[str]:
        """Why the file as read cannot be released (the release dialog lists them): read only in part, or
        released columns it no longer has."""
        from .state.data_changes import absent_released, unknown_values

        out = []
        if self.partly_read:
            out.append(f"{PARTLY_READ}.")
        if self.store is not None and self.store.columns == [c.name for c in self.state.columns]:
            absent = absent_released(self.state.columns, self.store.file_columns)
            if absent:
                out.append(
                    f"Column {', '.join(absent)} is not in {Path(self.state.data_path or '').name} any more: drop it "
                    "(role drop) or open the data file it came from."
                )
            for col in self.state.columns:
                bad = unknown_values(col, self.summaries.get(col.name))
                if bad:
                    values = ", ".join(f"'{v}'" for v, _n in bad[:3]) + (" and more" if len(bad) > 3 else "")
                    out.append(
                        f"{col.name} has values that are not among its categories ({values}): add or merge them."
                    )
        return out

    def needed_sets_error(self) -> str:
        """Why the needed column sets typed in the Design tab were refused (the field is red and the session keeps
        the sets applied before), "" when the field holds what is applied."""
        editor = getattr(self.mechanism, "needed", None)
        return str(getattr(editor, "sets_message", "") or "")

    def show_summary_of(self, column: int) -> None:
        if not 0 <= column < len(self.state.columns):
            return
        col = self.state.columns[column]
        self.summary_view.show_summary(self.summaries.get(col.name), col)

    def recipe_configuration(self):
        """The configuration of the design the release would use now (the panel's choice or the recommended one),
        with its mechanism, exactly as the release dialog builds it; None while that design is computing."""
        from .release.configuration import release_configuration

        method = self.controller.chosen()
        summary = self.controller.current().get(method) if method else None
        if summary is None or not summary.ok or summary.design is None:
            return None
        accept = bool(summary.exceeds_request and self.state.accept_changed_epsilons)
        return release_configuration(self.state, method, summary, accept)

    def export_recipe(self) -> str | None:
        """File ▸ Export recipe: the release configuration and the optrr perturb command line."""
        from optrr_engine.errors import InputError
        from optrr_engine.release.recipe import script_path, write_recipe

        if not self.commit_pending_edits():
            return None
        if not self.state.data_path:
            return None
        config = self.recipe_configuration()
        if config is None:
            self.show_info("Wait for the design the release would use, then export the recipe.")
            return None
        start = os.path.join(self.settings.last_dir("project"), Path(self.state.data_path).stem + "_release.json")
        path, _ = QFileDialog.getSaveFileName(self, "Export recipe", start, "Release configuration (*.json)")
        if not path:
            return None
        chosen = path
        if not path.endswith(".json"):
            path += ".json"
        # the dialog confirmed replacing the name it showed; the script beside it (and a name with ".json" added)
        # is replaced only when the user says so
        unconfirmed = [p for p in (path, script_path(path)) if os.path.exists(p) and p != chosen]
        if unconfirmed:
            answer = QMessageBox.question(self, "Export recipe", "Replace these files?\n" + "\n".join(unconfirmed))
            if answer != QMessageBox.StandardButton.Yes:
                return None
        out = str(Path(self.state.data_path).with_name(Path(self.state.data_path).stem + "_released.csv"))
        try:
            command = write_recipe(config, self.state.data_path, path, out, force=True)
        except (InputError, OSError) as exc:
            self.show_error(f"Cannot export the recipe: {exc}")
            return None
        self.show_info(f"Recipe written: {path} and its command script. To make the release again:\n{command}")
        return command

    # -- readiness and shutdown ----------------------------------------------------------------------
    def is_ready(self) -> bool:
        """Columns known, rows read, every design computed and no background work left (the screenshot
        waits for this)."""
        return (
            not self.loading
            and self.controller.is_idle()
            and not self.runner.busy_channels()
            and not self.attributes.editors_pending()
            and not self.mechanism.drawing_pending()
        )

    def wait_until_ready(self, timeout: float = 120.0) -> bool:
        from PySide6.QtWidgets import QApplication

        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
            if self.is_ready():
                QApplication.processEvents()
                if self.is_ready():
                    return True
            time.sleep(0.01)
        return False

    def showEvent(self, event) -> None:
        """Fit to the screen again once shown: only then are the window manager's frame and title bar known
        (fitted before, the frame made the window larger than the screen by its decorations)."""
        super().showEvent(event)
        if self.fit_when_shown:
            self.fit_when_shown = False
            QTimer.singleShot(0, self, lambda: fit_to_screen(self))

    def closeEvent(self, event) -> None:
        if not self.confirm_discard("quitting"):
            event.ignore()
            return
        release = getattr(self, "_release_dialog", None)
        if release is not None and release.result_state == "running":
            buttons = QMessageBox.StandardButton
            answer = QMessageBox.question(
                self, "Release running", "A release is running: cancel it and quit?", buttons.Yes | buttons.No,
                buttons.No,
            )
            if answer != buttons.Yes:
                event.ignore()  # the release goes on
                return
            release.cancel()  # the engine stops and removes what it wrote (cancel_all below ends the wait)
        self.settings.save_window(self)
        self._stop_warm_imports()
        self.runner.cancel_all()
        self.runner.wait_for_done(5000)
        super().closeEvent(event)
