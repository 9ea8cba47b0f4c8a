"""Progress reporting and cooperative cancellation for long engine work.

Engine functions accept ``progress`` (``callable(fraction: float, message: str)``) and
``cancel`` (``callable() -> bool``); both are optional and never Qt objects. ``TaskControl``
bundles them so inner loops call ``ctl.report(...)`` and ``ctl.check()``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .errors import Cancelled

ProgressFn = Callable[[float, str], None]
CancelFn = Callable[[], bool]


#: Default minimum seconds between two progress messages passed on by :func:`throttled`.
PROGRESS_INTERVAL = 0.05


def throttled(progress: ProgressFn, interval: float = PROGRESS_INTERVAL) -> ProgressFn:
    """``progress`` that passes a message on at most once per ``interval`` seconds (the last one, fraction 1,
    always goes through): for progress that crosses a thread or process boundary."""
    last = [float("-inf")]

    def report(fraction: float, message: str = "") -> None:
        now = time.perf_counter()
        if fraction >= 1.0 or now - last[0] >= interval:
            last[0] = now
            progress(float(fraction), str(message))

    return report


@dataclass
class TaskControl:
    progress: ProgressFn | None = None
    cancel: CancelFn | None = None

    def report(self, fraction: float, message: str = "") -> None:
        if self.progress is not None:
            self.progress(min(max(float(fraction), 0.0), 1.0), message)

    def check(self) -> None:
        """Raise :class:`Cancelled` when the caller asked to stop."""
        if self.cancel is not None and self.cancel():
            raise Cancelled("cancelled by the user")

    def sub(self, start: float, stop: float) -> TaskControl:
        """A control whose fractions 0..1 map onto start..stop of this one."""
        if self.progress is None:
            return TaskControl(None, self.cancel)
        parent = self.progress

        def scaled(fraction: float, message: str) -> None:
            parent(start + (stop - start) * fraction, message)

        return TaskControl(scaled, self.cancel)
