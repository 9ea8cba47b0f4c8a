"""The task runner: work runs off the UI thread, results come back on it, stale results are dropped."""

import os
import threading
import time

import pytest

from optrr_engine.designs import run_design


def test_engine_work_runs_off_the_ui_thread_and_returns_on_it(qtbot, runner):
    seen = {}

    def work(sizes, eps, progress=None, cancel=None):
        seen["worker"] = threading.get_ident()
        return run_design("optimal", sizes, eps, progress=progress, cancel=cancel)

    def done(design):
        seen["delivered_on"] = threading.get_ident()
        seen["design"] = design

    runner.submit("d", work, [3, 4, 2], [1.0, 2.0, 0.5], on_done=done)
    qtbot.waitUntil(lambda: "design" in seen, timeout=30_000)
    assert seen["worker"] != threading.main_thread().ident
    assert seen["delivered_on"] == threading.main_thread().ident
    assert seen["design"].overall_epsilon < 3.5  # optimal beats Kronecker's sum of epsilons


def test_a_newer_request_makes_the_older_result_stale(qtbot, runner):
    release_first = threading.Event()
    results = []

    def slow(value, progress=None, cancel=None):
        release_first.wait(10)
        return value

    def fast(value, progress=None, cancel=None):
        return value

    runner.submit("ch", slow, "old", on_done=results.append)
    runner.submit("ch", fast, "new", on_done=results.append)
    qtbot.waitUntil(lambda: results == ["new"], timeout=10_000)
    release_first.set()
    assert runner.wait_for_done(10_000)  # every task has sent its one final event
    # The old task's event (its result, or "cancelled" if it never started) arrives and is dropped.
    qtbot.waitUntil(lambda: runner.dropped >= 1, timeout=10_000)
    assert results == ["new"]


def test_cancel_stops_engine_work_and_drops_its_result(qtbot, runner):
    started = threading.Event()
    outcome = []

    def work(progress=None, cancel=None):
        from optrr_engine.tasks import TaskControl

        ctl = TaskControl(progress, cancel)
        started.set()
        for i in range(10_000):
            ctl.check()
            ctl.report(i / 10_000, "working")
            threading.Event().wait(0.001)
        return "finished"

    runner.submit("c", work, on_done=outcome.append, on_cancelled=lambda: outcome.append("cancelled"))
    assert started.wait(10)
    assert runner.cancel("c")
    assert outcome == ["cancelled"]
    assert not runner.is_busy("c")
    assert runner.wait_for_done(10_000)  # the engine stopped at its next check, well before 10 s of work
    qtbot.waitUntil(lambda: runner.dropped >= 1, timeout=10_000)  # its own late "cancelled" was delivered...
    assert outcome == ["cancelled"]  # ...and dropped: the UI heard of the cancellation once


def test_request_cancel_reports_the_engines_own_end(qtbot, runner):
    outcome = []
    started = threading.Event()

    def work(progress=None, cancel=None):
        from optrr_engine.tasks import TaskControl

        ctl = TaskControl(progress, cancel)
        started.set()
        while True:
            ctl.check()
            threading.Event().wait(0.001)

    runner.submit("r", work, on_cancelled=lambda: outcome.append("cancelled"))
    assert started.wait(10)
    assert runner.request_cancel("r")
    assert runner.is_busy("r")  # still current until the engine acknowledges
    qtbot.waitUntil(lambda: outcome == ["cancelled"], timeout=10_000)
    assert not runner.is_busy("r")


def test_errors_and_progress_are_delivered(qtbot, runner):
    got = {"progress": []}

    def work(progress=None, cancel=None):
        progress(0.5, "half")
        progress(1.0, "all")
        return run_design("optimal", [2, 2], [100.0, 1.0])  # epsilon above the engine's maximum

    runner.submit(
        "e",
        work,
        on_error=lambda exc: got.setdefault("error", exc),
        on_progress=lambda f, m: got["progress"].append((f, m)),
    )
    qtbot.waitUntil(lambda: "error" in got, timeout=10_000)
    assert "at most" in str(got["error"])
    assert (1.0, "all") in got["progress"]


def sleep_ignoring_cancel(seconds, progress=None, cancel=None):
    """A task that never checks its cancel flag (like a solver inside one long call); it first reports the
    process it runs in."""
    progress(0.0, str(os.getpid()))
    time.sleep(seconds)
    return "slept"


def test_heavy_work_runs_in_a_worker_process(qtbot, runner):
    from optrr_engine.process_pool import where_am_i
    from optrr_gui.workers.jobs.design import compute_design

    got = {}
    runner.submit("where", where_am_i, process=True, on_done=lambda r: got.setdefault("where", r))
    request = {"budget_mode": False, "epsilons": [1.0, 0.5, 2.0, 1.5], "weights": [1] * 4, "target_total": 1.0}
    runner.submit(
        "lp",
        compute_design,
        "optimal",
        [3, 4, 2, 5],
        request,
        1000,
        process=True,
        on_done=lambda r: got.setdefault("lp", r),
    )
    qtbot.waitUntil(lambda: len(got) == 2, timeout=60_000)
    assert got["where"]["pid"] != os.getpid()
    direct = run_design("optimal", [3, 4, 2, 5], [1.0, 0.5, 2.0, 1.5])
    assert got["lp"].overall_epsilon == pytest.approx(direct.overall_epsilon)
    assert got["lp"].design.mechanism.attribute_epsilons() == pytest.approx([1.0, 0.5, 2.0, 1.5])


def process_gone(pid: int) -> bool:
    """Whether the process ``pid`` has ended and been reaped (POSIX; elsewhere nothing can be asked)."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_process_task_that_ignores_cancel_is_stopped(qtbot, runner):
    from optrr_engine import process_pool

    outcome, pids = [], []
    runner.submit(
        "s",
        sleep_ignoring_cancel,
        600.0,
        process=True,
        on_progress=lambda _f, message: pids.append(int(message)),
        on_cancelled=lambda: outcome.append("cancelled"),
    )
    qtbot.waitUntil(lambda: bool(pids), timeout=60_000)  # running in its worker process
    assert pids[0] != os.getpid()
    assert runner.request_cancel("s")
    # The task sleeps 600 s and never reads its flag: it can only end by its process being stopped.
    qtbot.waitUntil(lambda: outcome == ["cancelled"], timeout=60_000)
    qtbot.waitUntil(lambda: process_gone(pids[0]), timeout=30_000)
    # The pool replaced the terminated worker: new work still runs, in another process.
    got = []
    runner.submit("again", process_pool.where_am_i, process=True, on_done=got.append)
    qtbot.waitUntil(lambda: len(got) == 1, timeout=60_000)
    assert got[0]["pid"] not in (os.getpid(), pids[0])
