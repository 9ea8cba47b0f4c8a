"""Run Python's cyclic garbage collector on the UI thread only.

With automatic collection, a worker thread that happens to trigger a collection can destroy Qt objects
(widgets of a closed window) off the UI thread; their destructors then take Qt's internal mutex and wait
for the GIL while the UI thread, holding the GIL, waits for that mutex: a deadlock (seen in the test suite).
The remedy (pyqtgraph's GarbageCollector, after Erik Janssens): disable automatic collection and collect
from a timer on the UI thread, generation by generation, as the thresholds would have.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

_GUARD = None


class MainThreadCollector(QObject):
    def __init__(self, parent: QObject, interval_ms: int = 500):
        super().__init__(parent)
        self.threshold = gc.get_threshold()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(interval_ms)

    def check(self) -> None:
        l0, l1, l2 = gc.get_count()
        if l0 > self.threshold[0]:
            gc.collect(0)
            if l1 > self.threshold[1]:
                gc.collect(1)
                if l2 > self.threshold[2]:
                    gc.collect(2)


def install() -> MainThreadCollector | None:
    """Idempotent: one collector for the application's lifetime (parented to the QCoreApplication)."""
    global _GUARD
    app = QCoreApplication.instance()
    if app is None:
        return None
    if _GUARD is not None:
        try:
            _GUARD.timer.isActive()  # raises if Qt already deleted the object
        except RuntimeError:
            _GUARD = None
    if _GUARD is None:
        _GUARD = MainThreadCollector(app)
    return _GUARD
