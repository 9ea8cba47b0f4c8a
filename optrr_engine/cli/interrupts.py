"""Ctrl-C (SIGINT) and SIGTERM while an ``optrr`` command runs.

The first signal raises :class:`KeyboardInterrupt` (SIGINT) or :class:`Terminated` (SIGTERM) in the main thread, so
that every clean-up runs (no temporary file or shuffle bucket of a release is left beside the output); any later
signal is ignored, so a second Ctrl-C or ``kill`` cannot interrupt that clean-up. Past a command's commit point
(:func:`hold`, e.g. a release whose audit record is being written) a signal raises nothing: it is only recorded
(:func:`held`), and the command finishes and says so.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, ``timeout``, a job scheduler), raised like Ctrl-C so that every clean-up runs."""


class _Handler:
    """The handler of SIGINT and SIGTERM during one command: raises once, ignores later signals, records any
    signal past the commit point."""

    def __init__(self) -> None:
        self.raised = False
        self.holding = False
        self.received: int | None = None

    def __call__(self, signum, frame) -> None:
        if self.holding:
            self.received = self.received or signum
            return
        if self.raised:  # a second Ctrl-C / kill: the clean-up the first one started must finish
            return
        self.raised = True
        raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt


_current: _Handler | None = None


@contextmanager
def handled(restore: bool = True) -> Iterator[None]:
    """Install the handler for the duration of a command (main thread only; a SIGINT ignored by the parent, as for
    a background job, stays ignored). ``restore``: put the previous handlers back afterwards (in-process callers);
    otherwise (the ``optrr`` program itself, about to exit) later signals are ignored until the process ends."""
    global _current
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = _Handler()
    previous = {}
    _current = handler
    try:
        for signum in (signal.SIGINT, signal.SIGTERM):
            old = signal.getsignal(signum)
            if signum == signal.SIGINT and old == signal.SIG_IGN:
                continue
            previous[signum] = old
            signal.signal(signum, handler)
        yield
    finally:
        if restore:
            _current = None
            for signum, old in previous.items():  # a handler installed outside Python reads as None: the default
                signal.signal(signum, signal.SIG_DFL if old is None else old)
        else:  # ignored by the operating system: Python's own shutdown would put back the default, which kills
            for signum in previous:
                signal.signal(signum, signal.SIG_IGN)


def hold() -> None:
    """The commit point: from here on a signal is recorded, not raised, until the command ends."""
    if _current is not None:
        _current.holding = True


def held() -> int | None:
    """The signal received past the commit point, if any."""
    return _current.received if _current is not None else None
