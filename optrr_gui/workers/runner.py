"""A small task runner for long engine work, modelled on Orange3's ``widgets/utils/concurrent.py``.

A task is a plain function called as ``fn(*args, progress=..., cancel=..., **kwargs)`` on a worker thread of
a ``QThreadPool``; ``progress(fraction, message)`` and ``cancel() -> bool`` are the engine's own protocol
(``optrr_engine.tasks.TaskControl``). Results, errors and progress come back to the UI thread through one
queued signal. Every submission belongs to a *channel* (one kind of request, e.g. ``"design:optimal"``) and
gets the next generation number of that channel; a result whose generation is no longer the channel's
newest is dropped, so a slow stale computation can never overwrite a newer one. Cancelling sets the task's
flag (the engine stops at its next check) and drops whatever the task still delivers. Heavy work
(``process=True``) is passed on by its thread to a warm worker process, so that C code holding the GIL in
the engine never stalls the UI thread (:mod:`optrr_engine.process_pool`).
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal, Slot

from optrr_engine.errors import Cancelled
from optrr_engine.process_pool import POOL_SIZES, NotPicklable, ProcessUnavailable, shared_pool
from optrr_engine.tasks import throttled

#: How long a thread may hold the GIL while another waits for it (CPython's default is 5 ms); see share_the_gil.
GIL_SWITCH_SECONDS = 0.0005


def share_the_gil() -> None:
    """Make worker threads hand the GIL to the UI thread after at most GIL_SWITCH_SECONDS.

    The UI thread takes the GIL again for every call from Qt into Python (an event handler, a model's
    ``data()``, a slot) and, while a worker thread runs Python code, waits up to the switch interval each time
    (CPython's default: 5 ms). A shorter interval costs the workers a few microseconds per switch, and only
    while two threads want the GIL. Long Python work belongs in a worker process all the same."""
    sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_SECONDS))


@dataclass
class TaskHandle:
    """What the UI keeps of a submitted task."""

    channel: str
    generation: int
    task_id: int
    cancel_event: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.perf_counter)
    on_done: Callable | None = None
    on_error: Callable | None = None
    on_progress: Callable | None = None
    on_cancelled: Callable | None = None
    thread_ident: int | None = None
    finished: bool = False

    def cancel(self) -> None:
        self.cancel_event.set()

    def is_cancelled(self) -> bool:
        return self.cancel_event.is_set()


class _Bridge(QObject):
    """Lives on the UI thread; workers emit, the queued connection delivers on the UI thread."""

    event = Signal(object)


class _Runnable(QRunnable):
    def __init__(
        self, handle: TaskHandle, fn, args, kwargs, bridge: _Bridge, process=None, partial=None, after_kill=None
    ):
        super().__init__()
        self.setAutoDelete(True)
        self.handle, self.fn, self.args, self.kwargs, self.bridge = handle, fn, args, kwargs, bridge
        self.process, self.partial, self.after_kill = process, partial, after_kill

    def call(self, progress):
        """In a worker process when asked (and possible), else right here in the worker thread. A quick task goes
        to the warm "quick" worker only when it is idle, never waiting for it to start (its Python then never holds
        the window's GIL: opening a 77-column file stalled the window 125-192 ms with quick tasks in threads, 71-98
        ms so)."""
        h = self.handle
        if self.process == "quick" and not shared_pool("quick").has_idle():
            self.process = None
        if self.process:
            try:
                return shared_pool(self.process).run(
                    self.fn, self.args, self.kwargs, progress, h.is_cancelled, self.partial, self.after_kill
                )
            except (NotPicklable, ProcessUnavailable):
                pass  # e.g. a closure, or no way to start a process here: run it in this thread
        kwargs = dict(self.kwargs)
        if self.partial is not None:
            kwargs["emit"] = self.partial
        return self.fn(*self.args, progress=progress, cancel=h.is_cancelled, **kwargs)

    def run(self) -> None:  # worker thread
        h = self.handle
        h.thread_ident = threading.get_ident()

        def send_progress(fraction: float, message: str) -> None:
            self.bridge.event.emit(("progress", h, (fraction, message)))

        progress = throttled(send_progress)

        try:
            if h.is_cancelled():
                raise _CancelledBeforeStart()
            result = self.call(progress)
        except _CancelledBeforeStart:
            self.bridge.event.emit(("cancelled", h, None))
        except BaseException as exc:
            if isinstance(exc, Cancelled) or h.is_cancelled():
                self.bridge.event.emit(("cancelled", h, None))
            else:
                exc.__optrr_traceback__ = traceback.format_exc()
                self.bridge.event.emit(("error", h, exc))
        else:
            self.bridge.event.emit(("done", h, result))


class _CancelledBeforeStart(Exception):
    pass


class TaskRunner(QObject):
    """Runs functions on thread pools; one current generation per channel."""

    #: (channel, busy) whenever a channel starts or stops having a current task.
    busyChanged = Signal(str, bool)

    def __init__(self, parent=None, max_threads: int = 2):
        super().__init__(parent)
        from . import gc_guard

        # Worker threads must never run the cyclic GC (it could destroy Qt objects there); its full passes wait
        # while this runner has work.
        gc_guard.watch(self)
        share_the_gil()
        self._bridge = _Bridge()
        self._bridge.event.connect(self._dispatch, Qt.ConnectionType.QueuedConnection)
        self._pool = QThreadPool()
        self._pool.setMaxThreadCount(max_threads)
        # Cheap work gets its own thread so that it never waits behind a slow LP.
        self._quick_pool = QThreadPool()
        self._quick_pool.setMaxThreadCount(1)
        # Threads that hand work to a worker process only wait on its pipe: a thread pool for each process pool
        # (optrr_engine.process_pool.POOL_SIZES), so that the threads' own work (column summaries, small files)
        # never queues behind slow exact designs, and a file opens or a column is recoded ("data") while exact
        # designs hold the default pool's threads.
        self._process_threads: dict[str, QThreadPool] = {}
        for name, size in POOL_SIZES.items():
            threads = self._process_threads[name] = QThreadPool()
            threads.setMaxThreadCount(max_threads if name == "default" else size)
        self._generation: dict[str, int] = {}
        self._current: dict[str, TaskHandle] = {}
        self._ids = itertools.count(1)
        self.dropped = 0  # stale deliveries dropped (for tests and diagnostics)

    def submit(
        self,
        channel: str,
        fn: Callable,
        *args,
        on_done: Callable | None = None,
        on_error: Callable | None = None,
        on_progress: Callable | None = None,
        on_cancelled: Callable | None = None,
        quick: bool = False,
        process: bool | str = False,
        partial: Callable | None = None,
        after_kill: Callable | None = None,
        **kwargs,
    ) -> TaskHandle:
        """Start ``fn`` for ``channel``; a previous task of the channel is cancelled and becomes stale.

        ``quick``: a separate one-thread pool, so cheap work never waits behind slow work; its thread hands ``fn``
        to the warm "quick" worker process when that one is idle, else runs it itself. ``process``: heavy
        work whose thread hands ``fn`` to a worker process (see :mod:`optrr_engine.process_pool`): True for the
        default pool, or a pool's name ("data": reading files and recoding, a process and thread of its own).
        ``partial``: ``fn`` gets a keyword ``emit`` whose payloads are passed to ``partial`` ON THE WORKER
        THREAD, in order (for streaming data into a thread-safe store). ``after_kill``: called on the worker
        thread when a process task ignored its cancel and its process was terminated (e.g. to remove the
        temporary files it left)."""
        previous = self._current.get(channel)
        if previous is not None and not previous.finished:
            previous.cancel()
        generation = self._generation.get(channel, 0) + 1
        self._generation[channel] = generation
        handle = TaskHandle(channel, generation, next(self._ids), on_done=on_done, on_error=on_error)
        handle.on_progress, handle.on_cancelled = on_progress, on_cancelled
        self._current[channel] = handle
        pool_name = "quick" if quick else None if not process else "default" if process is True else process
        runnable = _Runnable(handle, fn, args, kwargs, self._bridge, pool_name, partial=partial, after_kill=after_kill)
        if quick:
            threads = self._quick_pool
        else:
            threads = self._process_threads[pool_name] if pool_name else self._pool
        threads.start(runnable)
        self.busyChanged.emit(channel, True)
        return handle

    def cancel(self, channel: str) -> bool:
        """Cancel the channel's current task; it becomes stale at once (its result will be dropped)."""
        handle = self._current.get(channel)
        if handle is None or handle.finished:
            return False
        handle.cancel()
        handle.finished = True
        self._generation[channel] = self._generation.get(channel, 0) + 1
        self.busyChanged.emit(channel, False)
        if handle.on_cancelled:
            handle.on_cancelled()
        return True

    def request_cancel(self, channel: str) -> bool:
        """Ask the channel's task to stop but keep it current: its final outcome (normally "cancelled", or
        "done" if it finished first) is still delivered. For work whose end state matters (a release)."""
        handle = self._current.get(channel)
        if handle is None or handle.finished:
            return False
        handle.cancel()
        return True

    def cancel_all(self) -> None:
        for channel in list(self._current):
            self.cancel(channel)

    def is_busy(self, channel: str) -> bool:
        handle = self._current.get(channel)
        return handle is not None and not handle.finished

    def busy_channels(self) -> list[str]:
        return [c for c in self._current if self.is_busy(c)]

    def generation(self, channel: str) -> int:
        return self._generation.get(channel, 0)

    def wait_for_done(self, msecs: int = -1) -> bool:
        """Block until the worker threads are idle (shutdown and tests only)."""
        pools = (self._pool, self._quick_pool, *self._process_threads.values())
        return all([p.waitForDone(msecs) for p in pools])

    def _is_current(self, handle: TaskHandle) -> bool:
        return self._generation.get(handle.channel) == handle.generation and not handle.finished

    @Slot(object)
    def _dispatch(self, event) -> None:  # UI thread
        kind, handle, payload = event
        if kind == "progress":
            if self._is_current(handle) and handle.on_progress:
                handle.on_progress(*payload)
            return
        if not self._is_current(handle):
            self.dropped += 1
            return
        handle.finished = True
        self.busyChanged.emit(handle.channel, False)
        if kind == "done" and handle.on_done:
            handle.on_done(payload)
        elif kind == "error" and handle.on_error:
            handle.on_error(payload)
        elif kind == "cancelled" and handle.on_cancelled:
            handle.on_cancelled()
