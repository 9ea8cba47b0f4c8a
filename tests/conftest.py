import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
TEST_DATA = ROOT / "tests" / "data"  # real public datasets (see tests/data/ATTRIBUTION.md)
SAMPLE_DIR = ROOT / "resources" / "sample"


import gc  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _collect_cycles_on_the_main_thread():
    """Once a GUI test has disabled automatic collection (optrr_gui.workers.gc_guard), collect after each test here,
    on the main thread, so garbage never piles up for a worker thread to meet."""
    yield
    if not gc.isenabled():
        threshold = gc.get_threshold()
        count = gc.get_count()
        for generation in range(3):
            if count[generation] > threshold[generation]:
                gc.collect(generation)


@pytest.fixture(autouse=True)
def _no_unanswered_message_box(monkeypatch):
    """A modal QMessageBox nobody answers would hang the run (offscreen, no user): fail the test instead, naming
    the box. A test that expects a question answers it by patching the same static method itself."""
    import sys

    if "PySide6.QtWidgets" not in sys.modules:  # engine tests never load Qt
        yield
        return
    from PySide6.QtWidgets import QMessageBox

    def unexpected(kind):
        def box(*args, **kwargs):
            title = args[1] if len(args) > 1 else kwargs.get("title", "")
            raise AssertionError(f"unexpected modal QMessageBox.{kind}: {title!r}")

        return box

    for kind in ("question", "warning", "critical", "information"):
        monkeypatch.setattr(QMessageBox, kind, unexpected(kind))
    yield


@pytest.fixture(scope="session", autouse=True)
def _audit_dir_of_the_session(tmp_path_factory):
    """Module- and session-scoped fixtures run before the per-test folder below is set: they get this one, so no
    release of the test suite ever writes into the real per-user audit folder."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPTRR_AUDIT_DIR", str(tmp_path_factory.mktemp("audit-session")))
        yield


@pytest.fixture(autouse=True)
def audit_dir(tmp_path_factory, monkeypatch):
    """Every test's audit record (optrr-audit.json, the privacy ledger) goes to a fresh folder of its own through
    OPTRR_AUDIT_DIR (the engine's default audit folder), never into the real per-user data folder; the folder is
    outside tmp_path, so tests that list tmp_path see only their own files."""
    folder = tmp_path_factory.mktemp("audit")
    monkeypatch.setenv("OPTRR_AUDIT_DIR", str(folder))
    return folder


@pytest.fixture
def developer(monkeypatch):
    """OPTRR_DEVELOPER=1: the insecure test seed is accepted (tests that need a reproducible release)."""
    monkeypatch.setenv("OPTRR_DEVELOPER", "1")


@pytest.fixture
def window(qtbot, tmp_path):
    """The real main window on the bundled sample (tests/test_gui_support.open_window), closed after the test; a
    module that needs more (e.g. the column summaries loaded) overrides it with ``def window(window, qtbot)``."""
    from tests.test_gui_support import close_window, open_window

    w = open_window(qtbot, tmp_path)
    yield w
    close_window(w)


@pytest.fixture
def runner(qtbot):
    """A task runner of the window's kind, its tasks cancelled and awaited after the test."""
    from optrr_gui.workers.runner import TaskRunner

    r = TaskRunner()
    yield r
    r.cancel_all()
    r.wait_for_done(30_000)
