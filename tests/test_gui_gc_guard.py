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


def test_a_full_pass_waits_while_a_runner_has_work_and_runs_once_the_window_is_quiet(qtbot, monkeypatch):
    """A full collection (every object of the process: 50-100 ms of UI-thread CPU with the data libraries
    loaded) waits while a watched runner has work, and runs when the UI thread has been quiet."""
    guard = gc_guard.install()
    guard.timer.stop()  # the test drives the checks
    full: list = []

    def heard(phase, info):
        if phase == "stop" and info["generation"] == 2:
            full.append(1)

    class Runner:
        channels = ["design:optimal"]

        def busy_channels(self):
            return self.channels

    runner = Runner()
    others = list(guard.runners)  # (runners of other tests' windows, whatever they are doing)
    guard.runners.clear()
    gc_guard.watch(runner)
    # checks 60 s apart: the test's own work between two checks is far below the quiet share of an interval
    monkeypatch.setattr(guard, "interval", 60.0)
    gc.collect()  # whatever earlier tests left due is collected here: this test's full passes start from none due
    guard.check()
    assert not guard.full_pass_pending()
    gc.callbacks.append(heard)
    try:
        for _ in range(gc.get_threshold()[2] + 1):
            gc.collect(1)  # each young pass counts towards the next full one
        for _ in range(gc_guard.QUIET_CHECKS + 2):
            guard.check()
        assert full == [] and guard.full_pass_pending()  # the runner has work: waiting
        runner.channels = []
        for _ in range(gc_guard.QUIET_CHECKS):
            guard.check()  # (each check's interval: nothing ran on the UI thread in between)
        assert full == [1] and not guard.full_pass_pending()
        for _ in range(gc.get_threshold()[2] + 1):
            gc.collect(1)
        runner.channels = ["design:optimal"]
        monkeypatch.setattr(gc_guard, "MAX_DEFER_SECONDS", 0.0)
        guard.check()
        guard.check()  # due for longer than the longest wait: collected although the runner has work
        assert full == [1, 1]
    finally:
        gc.callbacks.remove(heard)
        guard.runners.discard(runner)
        for other in others:
            guard.runners.add(other)
        guard.timer.start()


def test_the_young_generations_are_collected_every_few_milliseconds_on_the_ui_thread(qtbot):
    """Collected every 500 ms, a young pass over what opening a file allocates took 20-50 ms and a generation-1
    pass 80-108 ms; the young generations have their own short timer on the UI thread."""
    guard = gc_guard.install()
    assert guard.young_timer.isActive() and guard.young_timer.interval() <= gc_guard.YOUNG_INTERVAL_MS <= 50
    assert guard.young_timer.thread() is guard.thread()
    passes = []

    def heard(phase, info):
        if phase == "stop":
            passes.append(info["generation"])

    gc.collect(1)  # generation 0 and 1 empty: nothing is due
    gc.callbacks.append(heard)
    try:
        guard.collect_young()
        assert passes == []
        # tracked containers, alive: generation 0 grows (ten thresholds' worth: objects other threads free meanwhile
        # count down, and a CI run saw one threshold plus ten end below the threshold)
        kept = [[] for _ in range(10 * gc.get_threshold()[0])]
        guard.collect_young()
        assert passes == [0] and len(kept) > gc.get_threshold()[0]
    finally:
        gc.callbacks.remove(heard)


def test_a_full_pass_made_elsewhere_ends_the_wait(qtbot, monkeypatch):
    """A full pass due since long ago but collected by someone else (an explicit gc.collect()) is no longer due:
    the next time one falls due, its wait starts then, and it is not run at once for the old wait (a CI run saw a
    full pass while a runner had work, due "since" a wait a conftest collection had ended)."""
    guard = gc_guard.install()
    guard.timer.stop()
    monkeypatch.setattr(guard, "interval", 60.0)
    full: list = []

    def heard(phase, info):
        if phase == "stop" and info["generation"] == 2:
            full.append(1)

    class Runner:
        def busy_channels(self):
            return ["design:optimal"]

    runner = Runner()
    others = list(guard.runners)
    guard.runners.clear()
    gc_guard.watch(runner)
    try:
        for _ in range(gc.get_threshold()[2] + 1):
            gc.collect(1)
        guard.check()
        assert guard.full_pass_pending()
        guard._full_due_since -= 10 * gc_guard.MAX_DEFER_SECONDS  # due, and waiting, for a long time
        gc.collect()  # collected elsewhere
        guard.check()
        assert not guard.full_pass_pending()
        gc.callbacks.append(heard)
        try:
            for _ in range(gc.get_threshold()[2] + 1):
                gc.collect(1)
            guard.check()
            assert full == [] and guard.full_pass_pending()  # a new wait: the runner has work
        finally:
            gc.callbacks.remove(heard)
    finally:
        guard.runners.discard(runner)
        for other in others:
            guard.runners.add(other)
        guard.timer.start()
