"""Progress reporting and cooperative cancellation for long engine work.

Engine functions accept ``progress`` (``callable(fraction: float, message: str)``) and
``cancel`` (``callable() -> bool``); both are optional and never Qt objects. ``TaskControl``
bundles them so inner loops call ``ctl.report(...)`` and ``ctl.check()``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .errors import Cancelled

ProgressFn = Callable[[float, str], None]
CancelFn = Callable[[], bool]


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
