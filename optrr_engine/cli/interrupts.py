"""Ctrl-C (SIGINT) and SIGTERM while an ``optrr`` command runs.

The first signal raises :class:`KeyboardInterrupt` (SIGINT) or :class:`Terminated` (SIGTERM) in the main thread, so
that every clean-up runs (no temporary file or shuffle bucket of a release is left beside the output). For
:data:`CLEANUP_SECONDS` after it, the next signal is ignored, so a second Ctrl-C or ``kill`` cannot interrupt that
clean-up; after that window, or at the signal after the ignored one (a third Ctrl-C), a signal raises again (and
starts a new window). A raised signal can be lost: CPython runs the handler at any point of the main thread, also
inside a ``__del__``, a weakref finalizer or a gc callback, where the exception is printed and discarded; ignoring
every later signal would then leave a command that only SIGKILL stops (and SIGKILL leaves the temporaries behind).
Past a command's commit point (:func:`hold`, e.g. a release whose audit record is being written) a signal raises
nothing: it is only recorded (:func:`held`), and the command finishes and says so.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, ``timeout``, a job scheduler), raised like Ctrl-C so that every clean-up runs."""


#: Seconds after a raised signal during which the next signal is ignored (the clean-up it started deletes temporary
#: files: well under this); read at each signal.
CLEANUP_SECONDS = 10.0


class _Handler:
    """The handler of SIGINT and SIGTERM during one command: a signal raises, except the first one within
    :data:`CLEANUP_SECONDS` of the last raise (ignored: the clean-up must finish); records any signal past the commit
    point instead of raising."""

    def __init__(self) -> None:
        self.raised_at: float | None = None  # time.monotonic() of the last raise
        self.ignored = 0  # signals ignored since the last raise
        self.holding = False
        self.received: int | None = None

    def __call__(self, signum, frame) -> None:
        if self.holding:
            self.received = self.received or signum
            return
        now = time.monotonic()
        if self.raised_at is not None and now - self.raised_at < CLEANUP_SECONDS and self.ignored == 0:
            self.ignored += 1  # a second Ctrl-C / kill: the clean-up the first one started must finish
            return
        self.raised_at, self.ignored = now, 0  # the first, one after the window, or a third in it (escape hatch)
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
