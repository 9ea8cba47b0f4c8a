"""Cyclic garbage collection runs on the UI thread only once a task runner exists."""

import gc
import threading

from optrr_gui.workers import gc_guard
from optrr_gui.workers.runner import TaskRunner


def test_task_runner_moves_garbage_collection_to_the_ui_thread(qtbot):
    runner = TaskRunner()
    assert not gc.isenabled()
    guard = gc_guard.install()
    assert guard is gc_guard.install()  # one collector per application

    collected_in = []

    class Cycle:
        def __init__(self):
            self.me = self

        def __del__(self):
            collected_in.append(threading.get_ident())

    for _ in range(gc.get_threshold()[0] + 10):
        Cycle()
    assert collected_in == []  # not collected automatically (nor in whatever thread allocates)
    assert guard.timer.isActive() and guard.timer.thread() is guard.thread()  # the UI thread's timer
    guard.check()  # what the timer runs
    assert len(collected_in) > 0
    assert set(collected_in) == {threading.get_ident()}
    runner.cancel_all()
