"""The task runner: work runs off the UI thread, results come back on it, stale results are dropped."""

import threading

import pytest

from optrr_engine.designs import run_design
from optrr_gui.tasks import TaskRunner


@pytest.fixture
def runner(qtbot):
    r = TaskRunner()
    yield r
    r.cancel_all()
    r.wait_for_done(10_000)


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
    runner.wait_for_done(10_000)
    qtbot.wait(50)
    assert results == ["new"]  # the old one finished later and was dropped
    assert runner.dropped >= 1


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
    qtbot.wait(50)
    assert outcome == ["cancelled"]


def test_request_cancel_reports_the_engines_own_end(qtbot, runner):
    outcome = []

    def work(progress=None, cancel=None):
        from optrr_engine.tasks import TaskControl

        ctl = TaskControl(progress, cancel)
        while True:
            ctl.check()
            threading.Event().wait(0.001)

    runner.submit("r", work, on_cancelled=lambda: outcome.append("cancelled"))
    qtbot.wait(20)
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
