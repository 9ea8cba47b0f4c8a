"""The task runner's pools: threads that only wait on a worker process never hold up the threads' own work
(reading rows, column summaries, recoding), however many slow exact designs are running."""

from __future__ import annotations

import os
import threading
import time

import pytest

from optrr_gui.workers.runner import TaskRunner


@pytest.fixture
def runner(qtbot):
    r = TaskRunner(max_threads=2)
    yield r
    r.cancel_all()
    r.wait_for_done(30_000)


def run_until_cancelled(progress=None, cancel=None):
    """A long task (like an exact design) that reports its process, then works until it is cancelled."""
    progress(0.0, str(os.getpid()))
    while not cancel():
        time.sleep(0.01)
    return "stopped"


def test_thread_work_runs_while_every_thread_waits_on_a_process(qtbot, runner):
    pids = {}
    for name in ("exact-1", "exact-2", "exact-3"):  # more than the pool's threads and worker processes
        runner.submit(
            name, run_until_cancelled, process=True, on_progress=lambda _f, m, n=name: pids.setdefault(n, int(m))
        )
    qtbot.waitUntil(lambda: len(pids) >= 2, timeout=120_000)  # two of them inside worker processes
    assert os.getpid() not in pids.values()
    got = []
    runner.submit("summaries", lambda progress=None, cancel=None: threading.get_ident(), on_done=got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=60_000)
    assert got[0] != threading.get_ident()  # on a worker thread
    assert runner.is_busy("exact-1") and runner.is_busy("exact-2")  # still running meanwhile


def report_pid(progress=None, cancel=None):
    return os.getpid()


def test_data_work_runs_in_its_own_process_while_exact_designs_hold_the_default_pool(qtbot, runner):
    """Reading a file and recoding (process="data") have a worker process and a waiting thread of their own:
    they neither queue behind slow exact designs nor share the GIL with the window."""
    pids = {}
    for name in ("exact-1", "exact-2", "exact-3"):  # every default worker and process thread busy
        runner.submit(
            name, run_until_cancelled, process=True, on_progress=lambda _f, m, n=name: pids.setdefault(n, int(m))
        )
    qtbot.waitUntil(lambda: len(pids) >= 2, timeout=120_000)
    got = []
    runner.submit("data", report_pid, process="data", on_done=got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=120_000)
    assert got[0] != os.getpid() and got[0] not in pids.values()  # another process: the data pool's
    assert runner.is_busy("exact-1") and runner.is_busy("exact-2")  # still running meanwhile
    again = []
    runner.submit("data", report_pid, process="data", on_done=again.append)
    qtbot.waitUntil(lambda: bool(again), timeout=120_000)
    assert again == got  # the same warm worker


def test_a_runner_makes_worker_threads_hand_over_the_gil_quickly(runner):
    """The UI thread takes the GIL for every call from Qt into Python; with CPython's default 5 ms switch
    interval each of them could wait 5 ms behind a worker thread's Python code."""
    import sys

    from optrr_gui.workers.runner import GIL_SWITCH_SECONDS

    assert GIL_SWITCH_SECONDS <= 0.001
    assert sys.getswitchinterval() <= GIL_SWITCH_SECONDS * 1.0001


def test_quick_work_goes_to_the_warm_quick_worker_when_it_is_idle_and_stays_here_otherwise(qtbot, runner):
    """Quick tasks (closed-form designs, predicted errors) ran in a thread and their Python held the window's GIL:
    opening a 77-column file stalled it 125-192 ms (bench/gui_stall.py usable), 71-82 ms with them in the warm
    "quick" worker. Before that worker is up, and for a task that cannot be pickled, they run in a thread as before."""
    from optrr_engine.process_pool import shared_pool

    pool = shared_pool("quick")
    got: list = []
    if not pool.has_idle():  # not started yet: the task does not wait for a process to start
        runner.submit("quick-1", report_pid, quick=True, on_done=got.append)
        qtbot.waitUntil(lambda: bool(got), timeout=60_000)
        assert got.pop() == os.getpid()
    pool.warm()
    qtbot.waitUntil(pool.has_idle, timeout=120_000)
    runner.submit("quick-2", report_pid, quick=True, on_done=got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=60_000)
    assert got.pop() != os.getpid()  # in the quick worker process
    runner.submit("quick-3", lambda progress=None, cancel=None: os.getpid(), quick=True, on_done=got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=60_000)
    assert got.pop() == os.getpid()  # a closure cannot be pickled: in the quick thread, as before
