"""Worker processes for heavy engine work (exact LPs, releases, estimation of big files).

A task still belongs to a worker *thread* (in the GUI, one of its ``TaskRunner``); for heavy work that
thread hands the plain function to a warm worker process and waits on a pipe, so the engine's C code
(HiGHS model set-up, Arrow conversions) never holds the calling process's GIL: a window stays smooth even
with two big jobs at once. Protocol: the parent sends ``(task_id, fn, args, kwargs)`` (pickled; ``fn`` by
reference); the child calls ``fn(*args, progress=..., cancel=..., **kwargs)`` and sends back progress
messages and one final ``done`` / ``error`` / ``cancelled``. Cancelling sets a shared flag that the
engine's ``cancel()`` reads; a task that does not stop within ``GRACE_SECONDS`` (a solver inside one call, or
a child starved of CPU on a busy machine) is ended by terminating its process, which is replaced on the next use.
A terminated child runs none of its ``finally`` blocks, so it cannot remove its own temporary files: the parent
waits until the process is gone, then calls the task's ``after_kill`` (e.g. remove the temporaries of processes
that no longer run), and only then reports the cancel. This module never imports Qt.
"""

from __future__ import annotations

import atexit
import itertools
import pickle
import threading
import time

from .errors import Cancelled
from .tasks import throttled

#: Seconds a cancelled task may take to stop by itself before its process is terminated.
GRACE_SECONDS = 3.0
#: Worker processes at most (the machine's cores are shared with the UI process).
MAX_WORKERS = 2
#: Keyword value that the child replaces by a function sending partial results back (``emit``).
EMIT = "__optrr_emit__"
#: Scheduling priority of the worker processes relative to the window (Unix ``nice``).
WORKER_NICENESS = 10
#: What a new worker of each pool imports before its first task (while the user looks at the window).
WARM_IMPORTS = {
    "default": ("numpy", "optrr_engine.designs"),
    "data": ("numpy", "pyarrow.csv", "pandas", "optrr_engine.io.readers", "optrr_engine.release.schema"),
    "quick": ("numpy", "optrr_engine.designs", "optrr_engine.utility"),
}


def _exit_with_parent() -> None:
    """End this worker process as soon as the process that started it is gone (the window killed or crashed):
    an orphan would otherwise go on computing (a solver inside one long call never sends progress) or finish and
    commit a release nobody is waiting for. Like a terminated task, it leaves at most hidden temporaries, which
    ``remove_stale_temporaries`` deletes later."""
    import multiprocessing
    import os

    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()  # returns when the parent's end of the start-up pipe closes, i.e. when the parent has ended
        os._exit(1)

    threading.Thread(target=watch, name="optrr-parent-watch", daemon=True).start()


def _child_main(conn, cancel_id, warm_imports=WARM_IMPORTS["default"], niceness: int = WORKER_NICENESS) -> None:
    import importlib
    import os

    _exit_with_parent()
    if hasattr(os, "nice"):
        try:
            if niceness:
                os.nice(niceness)  # the window's process gets the CPU first on a busy machine
        except OSError:
            pass
    for module in warm_imports:  # the pool's heavy imports, once, before the first task
        importlib.import_module(module)

    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        task_id, fn, args, kwargs = msg

        def send_progress(fraction, message, task_id=task_id):
            conn.send(("progress", task_id, (fraction, message)))

        progress = throttled(send_progress)

        def cancel(task_id=task_id):
            return cancel_id.value == task_id

        def emit(payload, task_id=task_id):
            conn.send(("partial", task_id, payload))

        kwargs = {k: (emit if isinstance(v, str) and v == EMIT else v) for k, v in kwargs.items()}

        try:
            result = fn(*args, progress=progress, cancel=cancel, **kwargs)
        except BaseException as exc:
            if isinstance(exc, Cancelled):
                conn.send(("cancelled", task_id, None))
                continue
            try:
                pickle.dumps(exc)
            except Exception:
                exc = RuntimeError(f"{type(exc).__name__}: {exc}")
            conn.send(("error", task_id, exc))
        else:
            conn.send(("done", task_id, result))


class _Worker:
    def __init__(self, ctx, warm_imports=WARM_IMPORTS["default"], niceness: int = WORKER_NICENESS):
        self.conn, child_conn = ctx.Pipe()
        self.cancel_id = ctx.Value("q", 0, lock=False)
        self.process = ctx.Process(
            target=_child_main, args=(child_conn, self.cancel_id, tuple(warm_imports), niceness), daemon=True
        )
        self.process.start()
        child_conn.close()

    def alive(self) -> bool:
        return self.process.is_alive()

    def stop(self, terminate: bool = False) -> None:
        """End the process (asked politely, or terminated) and reap it; a second call does nothing."""
        if self.conn.closed:
            return
        try:
            if terminate:
                self.process.terminate()
            else:
                self.conn.send(None)
            self.process.join(2.0)
            if self.process.is_alive():
                self.process.kill()  # cannot be ignored: the join returns
                self.process.join()
        except (OSError, ValueError, BrokenPipeError):
            pass
        finally:
            self.conn.close()


class NotPicklable(TypeError):
    """The function or its arguments cannot be sent to a process (the caller runs it in a thread)."""


class ProcessUnavailable(RuntimeError):
    """No worker process can be started here (the caller runs the task in a thread)."""


class WorkerCrashed(RuntimeError):
    """The worker process ended without an answer (out of memory, killed...)."""


class ProcessPool:
    """A few warm worker processes; :meth:`run` is called from worker threads and blocks until done."""

    def __init__(
        self, max_workers: int = MAX_WORKERS, warm_imports=WARM_IMPORTS["default"], niceness: int = WORKER_NICENESS
    ):
        import multiprocessing

        self.ctx = multiprocessing.get_context("spawn")
        self.max_workers = max_workers
        self.warm_imports = tuple(warm_imports)
        self.niceness = int(niceness)
        self._idle: list[_Worker] = []
        self._count = 0
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        self._closed = False

    def warm(self) -> None:
        """Start one worker now (its imports run while the user looks at the window)."""
        with self._cond:
            if self._count == 0 and not self._closed:
                try:
                    self._idle.append(_Worker(self.ctx, self.warm_imports, self.niceness))
                except (RuntimeError, OSError):
                    return  # e.g. a script without a __main__ guard: tasks will run in threads
                self._count += 1

    def has_idle(self) -> bool:
        """Whether a started worker is waiting for a task now (never starts one: a caller that must not wait for a
        process to start runs the task itself otherwise)."""
        with self._cond:
            return any(w.alive() for w in self._idle)

    def _acquire(self) -> _Worker:
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeError("the worker processes are shut down")
                while self._idle:
                    w = self._idle.pop()
                    if w.alive():
                        return w
                    self._count -= 1
                if self._count < self.max_workers:
                    self._count += 1
                    break
                self._cond.wait()
        try:
            return _Worker(self.ctx, self.warm_imports, self.niceness)
        except BaseException as exc:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            if isinstance(exc, (RuntimeError, OSError)):
                raise ProcessUnavailable(str(exc)) from None
            raise

    def _release(self, worker: _Worker, healthy: bool = True) -> None:
        with self._cond:
            if healthy and worker.alive() and not self._closed:
                self._idle.append(worker)
            else:
                self._count -= 1
                threading.Thread(target=worker.stop, args=(True,), daemon=True).start()
            self._cond.notify()

    def run(self, fn, args=(), kwargs=None, progress=None, cancel=None, partial=None, after_kill=None):
        """Run ``fn`` in a worker process; progress and cancellation as in the engine's protocol. With
        ``partial``, ``fn`` gets a keyword ``emit`` whose payloads reach ``partial`` here (in order). When a
        cancelled task outlives ``GRACE_SECONDS``, its process is terminated and reaped, then ``after_kill()`` runs
        here, before :class:`Cancelled` is raised."""
        worker = self._acquire()
        task_id = next(self._ids)
        healthy = True
        try:
            kwargs = dict(kwargs or {})
            if partial is not None:
                kwargs["emit"] = EMIT
            try:
                worker.conn.send((task_id, fn, tuple(args), kwargs))  # pickled before anything is sent
            except (pickle.PicklingError, AttributeError, TypeError) as exc:
                raise NotPicklable(str(exc)) from None
            cancel_sent = None
            while True:
                if worker.conn.poll(0.05):
                    kind, tid, payload = worker.conn.recv()
                    if tid != task_id:
                        continue
                    if kind == "progress":
                        if progress is not None:
                            progress(*payload)
                        continue
                    if kind == "partial":
                        if partial is not None:
                            partial(payload)
                        continue
                    if kind == "done":
                        return payload
                    if kind == "cancelled":
                        raise Cancelled("cancelled by the user")
                    raise payload
                if not worker.alive():
                    healthy = False
                    raise WorkerCrashed("the worker process ended unexpectedly (out of memory?)")
                if cancel is not None and cancel():
                    now = time.perf_counter()
                    if cancel_sent is None:
                        worker.cancel_id.value = task_id
                        cancel_sent = now
                    elif now - cancel_sent > GRACE_SECONDS:
                        healthy = False
                        worker.stop(terminate=True)  # gone before anything cleans up after it
                        if after_kill is not None:
                            after_kill()
                        raise Cancelled("cancelled by the user (the computation was stopped)")
        except (EOFError, BrokenPipeError, ConnectionResetError):
            healthy = False
            raise WorkerCrashed("the worker process ended unexpectedly") from None
        finally:
            self._release(worker, healthy)

    def shutdown(self) -> None:
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for w in idle:
            w.stop()


#: Worker processes of each named pool: "default" for heavy engine work (exact LPs, releases, estimation, the
#: Compare tab's jobs), "data" for reading a file and recoding its columns (a worker of its own, so that a file
#: opens while slow exact designs keep the default pool busy).
#: "quick": one warm worker for a front end's cheap tasks (closed-form designs, predicted errors), so that their Python
#: never holds the front end's GIL (:meth:`ProcessPool.has_idle`: used only while one is idle, else in a thread).
POOL_SIZES = {"default": MAX_WORKERS, "data": 1, "quick": 1}
#: The quick worker does what the user waits for after an edit (the design table): at the window's priority. At
#: nice 10 beside a busy machine an epsilon edit took 52 ms to reach the design table, 33 ms at 0 (target 50 ms).
POOL_NICENESS = {"default": WORKER_NICENESS, "data": WORKER_NICENESS, "quick": 0}
_POOLS: dict[str, ProcessPool] = {}
_POOL_LOCK = threading.Lock()


def shared_pool(name: str = "default") -> ProcessPool:
    """The application's pool called ``name`` (see POOL_SIZES; created on first use, shut down at exit)."""
    with _POOL_LOCK:
        pool = _POOLS.get(name)
        if pool is None:
            pool = _POOLS[name] = ProcessPool(POOL_SIZES[name], WARM_IMPORTS[name], POOL_NICENESS[name])
            atexit.register(pool.shutdown)
        return pool


def where_am_i(progress=None, cancel=None) -> dict:
    """Process and thread ids of the caller (diagnostics: shows where a task ran)."""
    import os

    return {"pid": os.getpid(), "thread": threading.get_ident()}


def picklable(fn) -> bool:
    """Whether ``fn`` can be sent to a worker process (module-level functions can; closures cannot)."""
    try:
        pickle.dumps(fn)
    except Exception:
        return False
    return True
