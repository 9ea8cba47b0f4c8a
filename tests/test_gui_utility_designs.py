"""Issue 13 (GUI) and issue 14 item 6 through the real main window and real engine designs: the needed marginals
(editor, undo, project file, release configuration), their predicted error on every design row, the utility and
sampling designs as budget-mode rows ranked as optrr_engine.utility.recommend ranks them, the non-identifiable
marginals named and the release refused unless overridden, and a release that never waits for a slow design."""

from __future__ import annotations

import csv
import json
import math
import threading

import numpy as np
import pytest

from optrr_engine.errors import InputError
from optrr_engine.release.manifest import load_manifest
from optrr_engine.utility.identifiability import way_out
from optrr_engine.utility.recommend import recommend as engine_recommend
from optrr_gui.design.mechanism_panel import DESIGN_COLUMNS, fmt_avd
from optrr_gui.release.dialog import ReleaseDialog
from optrr_gui.state import needed_marginals as nm
from optrr_gui.state.design_summary import BUDGET_ONLY_METHODS, recommend, short_label
from optrr_gui.workers.jobs.design import compute_design
from tests.test_gui_support import WAIT_MS, close_window, open_window, tick_orange, wait_ready


def binary_file(tmp_path, k: int = 3, n: int = 400) -> str:
    """k correlated binary columns (seeded), small enough for every exact design."""
    rng = np.random.default_rng(7)
    base = rng.integers(0, 2, n)
    path = tmp_path / "binary.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow([f"b{i}" for i in range(k)])
        for r in range(n):
            w.writerow(["yes" if (base[r] ^ (rng.random() < 0.2)) else "no" for _ in range(k)])
    return str(path)


def budget(qtbot, window, target: float) -> None:
    window.attributes.total.setChecked(True)
    window.attributes.target.setValue(target)
    c = window.controller
    qtbot.waitUntil(lambda: c.is_idle() and c.request.get("budget_mode") and not c.is_stale("utility"), timeout=WAIT_MS)
    window.mechanism.flush()


# -- the needed marginals: Qt-free rules ------------------------------------------------------------------------
def test_needed_marginals_default_spec_and_release_lists():
    assert nm.default_orders(10) == [1, 2] and nm.default_orders(70) == [1]  # 70 + 2415 > 2000: the CLI's default
    names = ["a", "b", "c"]
    assert nm.spec(None, names) == {"orders": [1, 2]}
    value = {"orders": [1], "sets": [["c", "a"], ["a", "x"]]}
    assert nm.unknown_names(value, names) == ["x"]
    assert nm.index_sets(value, names) == [(0,), (1,), (2,), (0, 2)]  # {a, x}: x is not perturbed
    assert nm.name_lists(value, names) == [["a"], ["b"], ["c"], ["a", "c"]]
    assert nm.parse_sets("a, b; c") == [["a", "b"], ["c"]]
    with pytest.raises(ValueError):
        nm.parse_sets("a, a")
    with pytest.raises(ValueError):
        nm.index_sets({"orders": [3], "sets": []}, [str(i) for i in range(60)])  # 34,220 tables


# -- through the main window ------------------------------------------------------------------------------
def test_needed_marginals_editor_undo_project_and_release_config(qtbot, window, tmp_path):
    state, editor = window.state, window.mechanism.needed
    assert state.needed_marginals is None and editor.orders[1].isChecked() and editor.orders[2].isChecked()
    editor.orders[3].setChecked(True)  # a user click: one undo step
    assert state.needed_marginals == {"orders": [1, 2, 3], "sets": []}
    c = window.controller
    qtbot.waitUntil(lambda: c.is_idle() and not c.is_stale("kronecker"), timeout=WAIT_MS)
    assert c.current()["kronecker"].predicted_orders == "1/2/3-way"
    assert set(c.current()["kronecker"].predicted_by_order) == {1, 2, 3}
    editor.sets.setText("age, menopause; breast")
    editor.sets.editingFinished.emit()
    assert state.needed_marginals["sets"] == [["age", "menopause"], ["breast"]]
    # a set of one column is applied (a 1-way table) but said plainly: a review typed "AGE; SMOKING; LUNG_CANCER"
    # for one 3-way table and got three 1-way tables without a word
    window.mechanism.flush()
    assert not editor.error_label.isHidden() and editor.error_label.text().startswith(
        "“breast”: a set of one column is a 1-way table. The columns of one table are separated by commas"
    )
    config = state.to_release_config()
    assert ["age", "menopause"] in config.needed_marginals and ["class", "age", "breast"] in config.needed_marginals
    assert window.stack.count() == 2 and window.stack.undoText().startswith("need ")
    window.stack.undo()
    assert state.needed_marginals == {"orders": [1, 2, 3], "sets": []} and editor.sets.text() == ""
    assert editor.error_label.isHidden()
    window.stack.undo()
    assert state.needed_marginals is None and not editor.orders[3].isChecked()
    window.stack.redo()
    window.stack.redo()
    project = tmp_path / "p.optrr"
    state.save_project(project)
    assert json.loads(project.read_text())["session"]["needed_marginals"]["sets"][0] == ["age", "menopause"]
    state.needed_marginals = None
    state.load_project(project)
    assert state.needed_marginals == {"orders": [1, 2, 3], "sets": [["age", "menopause"], ["breast"]]}
    wait_ready(qtbot, window)
    window.mechanism.flush()
    assert editor.orders[3].isChecked() and editor.sets.text() == "age, menopause; breast"


def test_weighted_sampling_rows_are_the_engines_candidates(qtbot, window):
    """Unequal weights and 1-way tables only: the Design tab's SMP and RS+FD rows sample by the columns'
    weights (what their release uses), and the engine's ranking of the same request has the same designs."""
    budget(qtbot, window, 2.0)
    state, c = window.state, window.controller
    state.set_column_value(0, "weight", 4.0)
    state.set_session_value("needed_marginals", {"orders": [1], "sets": []})
    qtbot.waitUntil(
        lambda: c.is_idle() and c.request.get("weights", [0])[0] == 4.0 and not c.is_stale("smp"), timeout=WAIT_MS
    )
    sizes, weights = c.sizes, c.request["weights"]
    rec = engine_recommend(sizes, 2.0, weights, state.n_rows, {"orders": [1]})
    engine = {r.candidate.name: r.score for r in rec.ranked if r.error is not None}
    current = c.current()
    for name in ("smp", "rsfd"):
        assert current[name].predicted_avd == pytest.approx(engine[name], rel=1e-6), name


def test_budget_mode_rows_and_recommendation_follow_the_engine_ranking(qtbot, window):
    budget(qtbot, window, 2.0)
    c, panel = window.controller, window.mechanism
    current = c.current()
    assert set(BUDGET_ONLY_METHODS) <= set(c.methods)
    for method in ("utility", "smp", "sample-2", "sample-3", "rsfd"):
        assert current[method].ok, current[method].error
        assert current[method].overall_epsilon <= 2.0 * (1 + 1e-9)  # recomputed from the design
    assert "1 of 10 columns" in current["smp"].suppression and "2 of 10" in current["sample-2"].suppression
    assert current["smp"].non_identifiable  # SMP never reports two columns together: every pair erased
    assert current["kronecker"].suppression == ""
    # the engine's own ranking of the same design kinds, computed independently of the panel
    sizes, weights = c.sizes, c.request["weights"]
    rec = engine_recommend(sizes, 2.0, weights, window.state.n_rows, {"orders": [1, 2]})
    engine = {r.candidate.name: r.score for r in rec.ranked if r.error is not None}
    for name, score in engine.items():
        gui = current[name].predicted_avd
        assert gui == pytest.approx(score, rel=1e-6) or (np.isinf(score) and np.isinf(gui)), name
    best = c.recommended()
    assert current[best].predicted_avd == min(s.predicted_avd for s in current.values() if s.ok and s.releasable)
    assert current[best].predicted_avd <= rec.best.score * (1 + 1e-9)
    # the table: the recommended row on top, every row with a tooltip and its predicted error, runners-up listed
    col = DESIGN_COLUMNS.index("Predicted AVD")
    assert panel.designs.item(0, 0).text().startswith("★")
    for row, method in enumerate(panel._rows):
        item = panel.designs.item(row, col)
        assert panel.designs.item(row, 0).toolTip().startswith(panel.designs.item(row, 0).text().lstrip("★● ")[:3])
        s = current[method]
        if s.ok and s.predicted_avd is not None:
            expected = "not identifiable" if s.erased else None
            assert item.text() == (expected or fmt_avd(s.predicted_avd) + (" ⚠" if s.non_identifiable else ""))
            assert "Predicted AVD" in item.toolTip()
    smp_row = panel._rows.index("smp")
    assert not panel.designs.item(smp_row, col).icon().isNull()  # the warning icon
    assert "each row carries 1 of 10 columns" in panel.designs.item(smp_row, 0).toolTip()


def test_erased_needed_pair_is_named_and_the_release_refused_unless_overridden(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path, path=binary_file(tmp_path))
    try:
        budget(qtbot, window, 1.5)
        c = window.controller
        window.use_design("optimal")  # the lowest-epsilon design erases every pair of 3 binary columns here
        qtbot.waitUntil(lambda: c.chosen() == "optimal", timeout=WAIT_MS)
        s = c.current()["optimal"]
        assert sorted(s.erased) == [[1, 2], [1, 3], [2, 3]]
        window.mechanism.flush()
        status = window.mechanism.status_line.text()
        # the way out is the engine's text (optrr design / perturb say it too) in the window's words
        assert nm.WAY_OUT == way_out("ε", "Kronecker", "Utility", "tables") and "a higher whole-record ε" in nm.WAY_OUT
        assert "(b0, b1)" in status and "{" not in status and "can never be estimated" in status
        assert f"The way out: {nm.WAY_OUT}." in status
        out = tmp_path / "out.csv"
        dialog = ReleaseDialog(window, window)
        qtbot.addWidget(dialog)
        dialog.output.setText(str(out))
        assert not any(dialog.published_outside().values())  # nothing orange in this file: no tick asked
        assert "erases 3 needed table" in dialog.needed_label.text()
        assert f"The way out: {nm.WAY_OUT}." in dialog.needed_label.text()
        assert "No column suppressed" in dialog.design_label.text()
        assert not dialog.start() and "Refused" in dialog.progress_label.text() and not out.exists()
        assert f"The way out: {nm.WAY_OUT}; or tick the box" in dialog.progress_label.text()
        assert dialog.allow_unidentifiable.isVisibleTo(dialog)
        dialog.allow_unidentifiable.setChecked(True)
        assert dialog.start()
        qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
        assert dialog.result_state == "done", dialog.progress_label.text()
        manifest = load_manifest(str(out) + ".manifest.json", data_path=str(out))
        assert any("override given" in n for n in manifest["design"]["notes"])
        assert dialog.audit["configuration"]["allow_unidentifiable"] is True
        assert ["b0", "b1"] in dialog.audit["configuration"]["needed_marginals"]
        assert "cannot be estimated" in dialog.summary.toHtml()
    finally:
        close_window(window)


def test_release_job_refuses_an_erased_needed_marginal_itself(tmp_path):
    """The worker runs the same check as optrr perturb, so a release never depends on the dialog's pre-check."""
    from optrr_engine.release.config import ColumnConfig, ReleaseConfig
    from optrr_gui.workers.jobs.release import run_release

    data = binary_file(tmp_path)
    request = {"budget_mode": True, "epsilons": [1] * 3, "weights": [1.0] * 3, "target_total": 1.5}
    mech = compute_design("optimal", [2, 2, 2], request, 400).design.mechanism
    cols = [ColumnConfig(f"b{i}", role="perturb", categories=["no", "yes"], epsilon=None) for i in range(3)]
    config = ReleaseConfig(
        method="optimal", columns=cols, target_total=1.5, needed_marginals=[["b0", "b2"]], mechanism=mech.to_dict()
    )
    out = tmp_path / "refused.csv"
    (tmp_path / "audit").mkdir()
    with pytest.raises(InputError, match=r"refusing to release.*\(b0, b2\)"):
        run_release(data, config, str(out), {"audit_dir": str(tmp_path / "audit")})
    assert not out.exists()


def test_sampling_design_release_states_the_suppression(qtbot, window, tmp_path):
    budget(qtbot, window, 2.0)
    window.use_design("sample-2")
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    assert "each row carries 2 of 10 columns" in dialog.design_label.text()
    out = tmp_path / "sampled.csv"
    dialog.output.setText(str(out))
    dialog.allow_unidentifiable.setChecked(True)  # the 3-way tables are not needed; nothing is erased
    tick_orange(dialog)  # exactly the sample's rare categories are orange: ticked
    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()
    manifest = load_manifest(str(out) + ".manifest.json", data_path=str(out))
    assert manifest["design"]["method"] == "sample-m" and manifest["overall_epsilon"] <= 2.0 * (1 + 1e-9)
    assert "Suppresses columns: each row carries 2 of 10 columns" in dialog.summary.toHtml()


def test_utility_design_is_released_exactly_as_shown(qtbot, window, tmp_path):
    budget(qtbot, window, 2.0)
    window.use_design("utility")
    shown = window.controller.current()["utility"]
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    out = tmp_path / "utility.csv"
    dialog.output.setText(str(out))
    tick_orange(dialog)  # exactly the sample's rare categories are orange: ticked
    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()
    manifest = load_manifest(str(out) + ".manifest.json", data_path=str(out))
    assert manifest["overall_epsilon"] == pytest.approx(shown.overall_epsilon, rel=1e-9)
    assert manifest["design"]["method"] == "utility"


# -- issue 14 item 6 ------------------------------------------------------------------------------------------
def test_lowered_epsilons_are_recommended_only_when_accepted():
    request = {"budget_mode": False, "epsilons": [0.5, 1, 2, 3], "weights": [1.0] * 4, "target_total": 4}
    heur = compute_design("heuristic", [2, 2, 2, 2], request, 1000)
    auto = compute_design("auto", [2, 2, 2, 2], request, 1000)
    assert heur.changes and not heur.exceeds_request  # it lowers two columns' epsilons ...
    assert heur.overall_epsilon < auto.overall_epsilon  # ... and so has the lower whole-record epsilon
    assert recommend({"heuristic": heur, "auto": auto}, False) == "auto"
    assert recommend({"heuristic": heur, "auto": auto}, False, accept_changed=True) == "heuristic"


def test_release_now_or_wait_while_a_slow_design_computes(qtbot, window, tmp_path, monkeypatch):
    """A design that took long last time is not waited for by default (issue 14): release now, or wait."""
    import optrr_gui.design.controller as dc
    import optrr_gui.release.dialog as rd

    monkeypatch.setattr(rd, "DEFAULT_WAIT_S", 0.0)  # every design "took longer" than this last time

    gate = threading.Event()
    real = dc.compute_design

    def slow_optimal(method, *args, **kwargs):
        if method == "optimal":
            gate.wait(120)  # the exact design "takes long" until the test lets it finish
        return real(method, *args, **kwargs)

    monkeypatch.setattr(dc, "compute_design", slow_optimal)
    c = window.controller
    window.state.set_column_value(0, "epsilon", 0.7)
    qtbot.waitUntil(lambda: not c.is_stale("kronecker") and c.is_running("optimal"), timeout=WAIT_MS)
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    assert dialog.release_now.isVisibleTo(dialog) and dialog.release_now.isChecked()
    tick_orange(dialog)  # exactly the sample's rare categories are orange: ticked
    assert dialog.problems() == [] and dialog.release_button.isEnabled()  # not blocked
    now = dialog.chosen_method()
    assert now in c.current() and c.current()[now].ok
    dialog.wait_designs.setChecked(True)
    assert dialog.problems() and not dialog.release_button.isEnabled()
    with qtbot.waitSignal(c.changed, timeout=WAIT_MS):
        gate.set()
    qtbot.waitUntil(lambda: c.is_idle() and dialog.release_button.isEnabled(), timeout=WAIT_MS)
    assert dialog.chosen_method() == c.chosen()
    out = tmp_path / "waited.csv"
    dialog.output.setText(str(out))
    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()


@pytest.mark.parametrize("new_target", [1.9, 4.0])
def test_release_waits_by_default_for_the_designs_that_were_better(qtbot, tmp_path, monkeypatch, new_target):
    """A reviewer's release (cirrhosis, total budget): after an edit every design restarts, Kronecker is back
    first, and the release dialog's default released it while the designs recommended a moment before were still
    computing. Now the dialog waits by default for those that ranked above the best one finished at the settings
    before the edit (and took seconds), not for the others; the user may still release now. Whether the budget
    went down or up (a second reviewer: results at two budgets must not be compared)."""
    import optrr_gui.design.controller as dc
    from optrr_gui.state.design_summary import ranked

    window = open_window(qtbot, tmp_path, binary_file(tmp_path, k=3))
    try:
        budget(qtbot, window, 2.0)
        c = window.controller
        before = ranked(c.current(), True)
        gate = threading.Event()
        real = dc.compute_design

        def gated(method, *args, **kwargs):
            if method == "sample-2":  # the quick thread runs in order: the designs after it wait with it
                gate.wait(120)
            return real(method, *args, **kwargs)

        monkeypatch.setattr(dc, "compute_design", gated)
        window.attributes.target.setValue(new_target)
        behind = {"sample-2", "sample-3", "classes", "optimal", "auto", "utility"}
        qtbot.waitUntil(lambda: set(c.running()) == behind and not c.is_stale("heuristic"), timeout=WAIT_MS)
        current = c.current()
        best_now = c.recommended()
        assert best_now in current and best_now in before
        better = {m for m in before[: before.index(best_now)] if m in behind}  # ranked above it at target 2
        assert better and better < behind  # premise: some ranked above it before the edit, sample-2 did not
        assert set(c.better_running()) == better
        dialog = ReleaseDialog(window, window)
        qtbot.addWidget(dialog)
        assert dialog.wait_better.isVisibleTo(dialog) and dialog.wait_better.isChecked()  # the default
        assert f"ranked above {short_label(best_now)} at your settings before" in dialog.running_label.text()
        assert set(dialog.awaited()) == better  # sample-2 and sample-3 are not waited for
        assert dialog.chosen_method() is None and not dialog.release_button.isEnabled()
        assert any(p.startswith("Waiting for ") for p in dialog.problems())
        dialog.release_now.click()  # the user's choice stays theirs
        assert dialog.chosen_method() == c.recommended() and dialog.chosen_method() in current
        assert not any(p.startswith("Waiting for ") for p in dialog.problems())
        window.attributes.target.setValue(1.8)  # another edit: the dialog does not pick for the user again
        qtbot.waitUntil(lambda: c.is_running("sample-2") and not c.is_stale("kronecker"), timeout=WAIT_MS)
        assert dialog.release_now.isChecked()
        dialog.wait_better.click()
        assert dialog.waiting()
        with qtbot.waitSignal(c.changed, timeout=WAIT_MS):
            gate.set()
        qtbot.waitUntil(lambda: c.is_idle(), timeout=WAIT_MS)
        assert not dialog.waiting() and dialog.chosen_method() == c.chosen()
    finally:
        gate.set()
        close_window(window)


def test_the_design_chosen_for_release_is_waited_for(qtbot, tmp_path, monkeypatch):
    """A design the user chose for release (Design tab) that an edit restarted is waited for, whatever else has
    finished; the dialog offers no other choice and then releases exactly that design (a reviewer saw Kronecker,
    then Heuristic, as the design to release while the chosen Optimal recomputed)."""
    import optrr_gui.design.controller as dc

    window = open_window(qtbot, tmp_path, binary_file(tmp_path, k=3))
    try:
        budget(qtbot, window, 2.0)
        c = window.controller
        window.state.set_session_value("method", "optimal")
        assert c.picked() == "optimal"
        gate = threading.Event()
        real = dc.compute_design

        def gated(method, *args, **kwargs):
            if method == "optimal":
                gate.wait(120)
            return real(method, *args, **kwargs)

        monkeypatch.setattr(dc, "compute_design", gated)
        window.attributes.target.setValue(3.0)
        qtbot.waitUntil(lambda: c.is_running("optimal") and not c.is_stale("kronecker"), timeout=WAIT_MS)
        dialog = ReleaseDialog(window, window)
        qtbot.addWidget(dialog)
        assert dialog.chosen_method() is None and dialog.awaited() == ["optimal"]
        assert not dialog.release_now.isVisibleTo(dialog) and not dialog.wait_designs.isVisibleTo(dialog)
        assert "the design you chose for release" in dialog.running_label.text()
        assert not dialog.release_button.isEnabled()
        with qtbot.waitSignal(c.changed, timeout=WAIT_MS):
            gate.set()
        qtbot.waitUntil(lambda: not c.is_running("optimal"), timeout=WAIT_MS)
        assert dialog.chosen_method() == "optimal"
    finally:
        gate.set()
        close_window(window)


def test_editing_the_needed_tables_never_restarts_a_slow_exact_design(qtbot, window, monkeypatch):
    import optrr_gui.design.controller as dc

    gate = threading.Event()
    calls: list[str] = []
    real = dc.compute_design

    def counted(method, *args, **kwargs):
        calls.append(method)
        if method == "optimal":
            gate.wait(120)
        return real(method, *args, **kwargs)

    monkeypatch.setattr(dc, "compute_design", counted)
    c = window.controller
    submit = c.runner.submit

    def in_background(channel, fn, *args, **kwargs):  # a slow exact design runs off the quick thread
        if channel == dc.channel_of("optimal"):
            kwargs.update(quick=False, process=False)
        return submit(channel, fn, *args, **kwargs)

    monkeypatch.setattr(c.runner, "submit", in_background)
    window.state.set_column_value(0, "epsilon", 0.8)
    qtbot.waitUntil(lambda: not c.is_stale("kronecker") and c.is_running("optimal"), timeout=WAIT_MS)
    started = list(calls)
    window.mechanism.needed.orders[3].setChecked(True)  # only the needed tables change
    qtbot.waitUntil(
        lambda: not c.is_stale("kronecker") and c.current()["kronecker"].predicted_orders == "1/2/3-way",
        timeout=WAIT_MS,
    )
    assert c.is_running("optimal")  # the slow one goes on ...
    assert sorted(set(calls)) == sorted(calls) and set(started) <= set(calls)  # ... and no design ran twice
    gate.set()
    qtbot.waitUntil(lambda: c.is_idle() and not c.is_stale("optimal"), timeout=WAIT_MS)
    assert calls.count("optimal") == 1
    assert c.current()["optimal"].predicted_orders == "1/2/3-way"
    assert set(c.current()["optimal"].predicted_by_order) == {1, 2, 3}


def test_accepting_changed_epsilons_is_one_undo_step_and_steers_the_recommendation(qtbot, window):
    c, box = window.controller, window.mechanism.accept_changed
    assert box.isVisibleTo(window.mechanism) and not box.isChecked()
    for i, eps in enumerate([0.2, 0.5, 1.0, 2.0, 3.0, 0.3, 0.8, 1.5, 2.5, 0.4]):
        window.state.set_column_value(i, "epsilon", eps)
    qtbot.waitUntil(lambda: c.is_idle() and not c.is_stale("heuristic"), timeout=WAIT_MS)
    current = c.current()
    assert c.recommended() == recommend(current, False, False)
    assert not current[c.recommended()].changes  # keeps every typed epsilon
    box.click()
    assert window.state.accept_changed_epsilons and window.stack.undoText() == "recommend designs that change ε"
    assert c.recommended() == recommend(current, False, True)
    window.stack.undo()
    window.mechanism.flush()
    assert not window.state.accept_changed_epsilons and not box.isChecked()


def test_tables_too_noisy_at_these_rows_warn_but_do_not_hide_the_predicted_error(qtbot, tmp_path):
    """Car at whole-record epsilon 1, all pairs needed: the recommended design (the engine's pick) has pairs whose
    unbiased estimate is too noisy at the file's 1,728 rows but none erased. Its row shows the predicted AVD with
    a warning sign, is not greyed or flagged as a refusal, and the status line says what that means."""
    import os

    window = open_window(qtbot, tmp_path, os.path.join(os.path.dirname(__file__), "data", "car.csv"))
    try:
        window.state.set_session_value("needed_marginals", {"orders": [2], "sets": []})
        budget(qtbot, window, 1.0)
        c, panel = window.controller, window.mechanism
        qtbot.waitUntil(lambda: c.is_idle() and not c.is_stale("auto"), timeout=WAIT_MS)
        panel.flush()
        best = c.recommended()
        rec = engine_recommend(c.sizes, 1.0, c.request["weights"], window.state.n_rows, {"orders": [2]})
        assert best == rec.best.candidate.name
        s = c.current()[best]
        assert s.non_identifiable and not s.erased and math.isfinite(s.predicted_avd)
        row = panel._rows.index(best)
        col = DESIGN_COLUMNS.index("Predicted AVD")
        assert panel.designs.item(row, col).text() == fmt_avd(s.predicted_avd) + " ⚠"
        assert panel.designs.item(0, 0).text().startswith("★")
        assert "Too noisy at 1728 rows" in panel.designs.item(row, col).toolTip()
        text = panel.status_text(best, None)
        assert "so noisy that their confidence intervals span everything" in text and "never" not in text
        # in plain words, the tables as (a, b), never as a Python set's {a, b}
        first = "(" + ", ".join(c.request["names"][i - 1] for i in s.too_noisy[0]) + ")"
        assert first in text and "{" not in text and "leans on its prior" not in text
        assert "the estimate shown falls back towards equal shares" in text
        window.grab().save(str(tmp_path / "noisy.png"))
        # the release dialog says it too, and does not refuse or offer the override
        dialog = ReleaseDialog(window, window)
        qtbot.addWidget(dialog)
        needed = dialog.needed_label.text()
        assert f"At 1728 rows, {len(s.non_identifiable)} needed table(s) are too noisy" in needed
        assert "erases" not in needed and not dialog.allow_unidentifiable.isVisibleTo(dialog)
        dialog.grab().save(str(tmp_path / "noisy_release.png"))
    finally:
        close_window(window)


def test_a_design_that_ignores_the_weights_says_so(qtbot, window):
    """A GUI review set stroke's weight to 5 in total-budget mode and saw the recommended Utility design give it the
    lowest ε, with nothing said: the status line now says when the design in use does not follow the weights."""
    from optrr_gui.state.design_summary import WEIGHTLESS_METHODS, weights_note

    assert weights_note("utility", [1.0, 5.0], True).startswith("Utility does not use the column weights")
    assert weights_note("sample-2", [1.0, 5.0], True).startswith("Sample-2 does not use the column weights")
    assert weights_note("utility", [1.0, 1.0], True) == ""  # equal weights: nothing to follow
    assert weights_note("auto", [1.0, 5.0], True) == "" and weights_note("utility", [1.0, 5.0], False) == ""
    assert "smp" not in WEIGHTLESS_METHODS  # SMP samples the columns with their weights
    budget(qtbot, window, 2.0)
    c, panel = window.controller, window.mechanism
    window.state.set_session_value("method", "utility")
    window.state.set_column_value(0, "weight", 5.0)
    qtbot.waitUntil(lambda: c.is_idle() and not c.is_stale("utility"), timeout=WAIT_MS)
    window.mechanism.flush()
    assert "Utility does not use the column weights" in panel.status_line.text()
    window.state.set_session_value("method", "auto")
    window.mechanism.flush()
    assert "does not use the column weights" not in panel.status_line.text()


def gate_designs(monkeypatch, methods, fail=()):
    """compute_design held for ``methods`` until the returned event is set; those in ``fail`` then raise."""
    import optrr_gui.design.controller as dc

    gate = threading.Event()
    real = dc.compute_design

    def gated(method, *args, **kwargs):
        if method in methods:
            gate.wait(120)
            if method in fail:
                raise RuntimeError(f"{method} failed on purpose; use --method heuristic, family or auto")
        return real(method, *args, **kwargs)

    monkeypatch.setattr(dc, "compute_design", gated)
    return gate


@pytest.mark.parametrize("how", ["failed", "cancelled"])
def test_a_chosen_design_that_failed_or_was_cancelled_is_never_replaced(qtbot, tmp_path, monkeypatch, how):
    """A second review: a chosen Optimal that was cancelled left the release to Auto with no choice shown, and a
    failed one let Release go on with "being recomputed". Now nothing is released in its place: the dialog says
    what happened and the way out (pick another, or follow the recommendation)."""
    window = open_window(qtbot, tmp_path, binary_file(tmp_path, k=3))
    gate = threading.Event()
    try:
        budget(qtbot, window, 2.0)
        c = window.controller
        window.state.set_session_value("method", "optimal")
        gate = gate_designs(monkeypatch, {"optimal"}, fail={"optimal"} if how == "failed" else ())
        window.attributes.target.setValue(3.0)
        qtbot.waitUntil(lambda: c.is_running("optimal") and not c.is_stale("kronecker"), timeout=WAIT_MS)
        dialog = ReleaseDialog(window, window)
        qtbot.addWidget(dialog)
        assert dialog.problems()[0] == "Waiting for Optimal, the design you chose for release."
        if how == "cancelled":
            c.cancel("optimal")
        gate.set()
        qtbot.waitUntil(lambda: not c.is_running("optimal") and c.is_idle(), timeout=WAIT_MS)
        dialog._design_changed()
        assert dialog.chosen_method() is None and not dialog.release_button.isEnabled()
        # the reason in the window's words (design_wording), never the command line's "--method"
        why = (
            "failed: RuntimeError: optimal failed on purpose; pick the Heuristic, Family or Auto design instead"
            if how == "failed"
            else "is not computed"
        )
        problem = next(p for p in dialog.problems() if p.startswith("The design you chose for release, Optimal,"))
        assert why in problem and "Follow recommendation" in problem
        dialog.output.setText(str(tmp_path / "o.csv"))
        assert not dialog.start() and why in dialog.progress_label.text()
        window.state.set_session_value("method", "recommended")  # the way out
        dialog._design_changed()
        assert dialog.chosen_method() == c.recommended() and not dialog.picked_problem()
    finally:
        gate.set()
        close_window(window)


def test_after_a_mode_switch_nothing_is_said_to_have_ranked_before(qtbot, tmp_path, monkeypatch):
    """A second review: after per-column and back to total budget the dialog said designs "were ranked above
    Heuristic" (results of the other mode) and released the first design back by default. Without results of this
    mode before, nothing is claimed, and the dialog waits for the designs when each was quick last time."""
    window = open_window(qtbot, tmp_path, binary_file(tmp_path, k=3))
    gate = threading.Event()
    try:
        budget(qtbot, window, 2.0)
        c = window.controller
        window.attributes.per_column.setChecked(True)
        qtbot.waitUntil(lambda: c.is_idle() and not c.request.get("budget_mode"), timeout=WAIT_MS)
        gate = gate_designs(monkeypatch, {"sample-2"})
        window.attributes.total.setChecked(True)
        qtbot.waitUntil(lambda: c.is_running("sample-2") and not c.is_stale("kronecker"), timeout=WAIT_MS)
        assert c.ranked_before() == []  # no total-budget results survive the switch
        dialog = ReleaseDialog(window, window)
        qtbot.addWidget(dialog)
        assert "ranked above" not in dialog.running_label.text() and "recommended" not in dialog.running_label.text()
        assert dialog.wait_designs.isChecked() and dialog.chosen_method() is None  # every design was quick before
        gate.set()
        qtbot.waitUntil(lambda: c.is_idle(), timeout=WAIT_MS)
        dialog._design_changed()
        assert dialog.chosen_method() == c.recommended()
    finally:
        gate.set()
        close_window(window)


def test_designs_repredicted_for_new_needed_tables_count_as_computing(qtbot, tmp_path, monkeypatch):
    """A second review: after only the needed tables changed, the designs whose predicted error was being recomputed
    were neither current nor running, so "release now" could take a design while the one recommended before was
    a moment from coming back. They count as computing: the dialog waits for the one ranked first before."""
    import optrr_gui.design.controller as dc

    window = open_window(qtbot, tmp_path, binary_file(tmp_path, k=3))
    gate = threading.Event()
    try:
        budget(qtbot, window, 2.0)
        c = window.controller
        real = dc.repredict

        def held(*args, **kwargs):
            gate.wait(120)
            return real(*args, **kwargs)

        monkeypatch.setattr(dc, "repredict", held)  # every re-prediction waits (one quick thread: in turn)
        window.state.set_session_value("needed_marginals", {"orders": [1]})
        qtbot.waitUntil(lambda: bool(c.ranked_before()) and c.runner.is_busy(f"predict:{c.ranked_before()[0]}"),
                        timeout=WAIT_MS)
        before = c.ranked_before()
        assert not c.is_running(before[0]) and before[0] not in c.current()  # premise: re-predicted, not computed
        assert c.recommended() is None and c.better_running()[:1] == [before[0]]
        dialog = ReleaseDialog(window, window)
        qtbot.addWidget(dialog)
        assert dialog.chosen_method() is None and before[0] in dialog.awaited()
        gate.set()
        qtbot.waitUntil(lambda: c.is_idle(), timeout=WAIT_MS)
        dialog._design_changed()
        assert dialog.chosen_method() == c.recommended() is not None
    finally:
        gate.set()
        close_window(window)
