"""Run Python's cyclic garbage collector on the UI thread only, and its full passes when the window is quiet.

With automatic collection, a worker thread that happens to trigger a collection can destroy Qt objects
(widgets of a closed window) off the UI thread; their destructors then take Qt's internal mutex and wait
for the GIL while the UI thread, holding the GIL, waits for that mutex: a deadlock (seen in the test suite).
The remedy (pyqtgraph's GarbageCollector, after Erik Janssens): disable automatic collection and collect
from a timer on the UI thread, generation by generation, as the thresholds would have.

A full (generation 2) pass visits every object of the process: with the data libraries imported, ~150,000
objects and 50-100 ms of UI-thread CPU, a stall of its own. It therefore waits until the window is quiet: no
watched task runner has work and the UI thread used under QUIET_CPU_SHARE of each of the last QUIET_CHECKS
intervals (the user is not editing, no results are being drawn); it never waits longer than MAX_DEFER_SECONDS.
The young generations are collected every YOUNG_INTERVAL_MS: a pass costs in proportion to the objects allocated
since the last one, and opening a file allocates ~60,000-75,000 tracked objects per 500 ms (lazy imports,
widgets, summaries): collected every 500 ms, a young pass took 20-50 ms and a generation-1 pass (the survivors of
ten of them, ~125,000 objects) 80-108 ms of UI-thread CPU; every 50 ms they stay a few milliseconds.
"""

from __future__ import annotations

import gc
import time
import weakref

from PySide6.QtCore import QCoreApplication, QObject, QTimer

_GUARD = None
#: The UI thread is quiet when it used less than this share of an interval's time ...
QUIET_CPU_SHARE = 0.05
#: ... in this many consecutive intervals (with the default interval of 500 ms: one second).
QUIET_CHECKS = 2
#: A full pass due for this long runs at the next check, quiet or not.
MAX_DEFER_SECONDS = 120.0
#: How often the young generations are looked at (a check that finds nothing due costs microseconds).
YOUNG_INTERVAL_MS = 50


class MainThreadCollector(QObject):
    def __init__(self, parent: QObject, interval_ms: int = 500):
        super().__init__(parent)
        self.threshold = gc.get_threshold()
        gc.disable()
        #: task runners whose work keeps a full pass waiting (``busy_channels()``); see :func:`watch`
        self.runners: weakref.WeakSet = weakref.WeakSet()
        self.interval = interval_ms / 1000
        self._cpu = time.thread_time()
        self._quiet_checks = 0
        self._full_due_since: float | None = None
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(interval_ms)
        self.young_timer = QTimer(self)
        self.young_timer.timeout.connect(self.collect_young)
        self.young_timer.start(YOUNG_INTERVAL_MS)

    def collect_young(self) -> None:
        """Generation 0 when more objects were allocated than its threshold, generation 1 when generation 0
        was collected more often than its threshold since (what automatic collection would do)."""
        l0, l1, _ = gc.get_count()
        if l0 > self.threshold[0]:
            gc.collect(1 if l1 >= self.threshold[1] else 0)

    def check(self) -> None:
        """The young generations, and a full pass when one is due and the window is quiet (or it waited too
        long)."""
        cpu = time.thread_time()  # the UI thread's own CPU (the timer runs there)
        quiet_now = cpu - self._cpu < QUIET_CPU_SHARE * self.interval and not self.busy()
        self._cpu = cpu
        self._quiet_checks = self._quiet_checks + 1 if quiet_now else 0
        self.collect_young()
        if gc.get_count()[2] <= self.threshold[2]:
            self._full_due_since = None  # not due (any more: a full pass elsewhere, e.g. an explicit gc.collect())
        else:
            now = time.monotonic()
            if self._full_due_since is None:
                self._full_due_since = now
            if self._quiet_checks >= QUIET_CHECKS or now - self._full_due_since > MAX_DEFER_SECONDS:
                self.collect_full()

    def busy(self) -> bool:
        """Whether a watched task runner has work (its results will soon be drawn)."""
        for runner in list(self.runners):
            try:
                if runner.busy_channels():
                    return True
            except RuntimeError:  # its Qt object is gone
                self.runners.discard(runner)
        return False

    def full_pass_pending(self) -> bool:
        """Whether a full pass is due and waits for a quiet window."""
        return self._full_due_since is not None

    def collect_full(self) -> None:
        gc.collect(2)
        self._full_due_since = None


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


def watch(runner) -> None:
    """Keep full passes waiting while ``runner`` (anything with ``busy_channels()``) has work."""
    guard = install()
    if guard is not None:
        guard.runners.add(runner)
