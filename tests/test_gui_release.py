"""Release and analyse flows end to end with the real engine: perturb the sample into a temporary folder,
check the manifest and report, cancel a longer release (nothing left behind), then analyse the release."""

from __future__ import annotations

import csv
import json
import os
import threading

import numpy as np
import pandas as pd
import pytest

from optrr_engine.release.manifest import load_manifest, mechanism_from_manifest
from optrr_gui.main_window import PROCESS_MIN_BYTES, TAB_ANALYSE
from optrr_gui.release.dialog import ReleaseDialog, remaining_seconds
from tests.test_gui_support import SAMPLE, SAMPLE_ORANGE, WAIT_MS, close_window, open_window, tick_orange


def release(qtbot, window, output, **options) -> ReleaseDialog:
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    tick_orange(dialog)  # the sample releases rare categories (orange), nothing else: checked, then ticked
    dialog.output.setText(str(output))
    if options.get("seed") is not None:
        dialog.fixed_seed.setChecked(True)
        dialog.seed.setValue(options["seed"])
    assert dialog.start()
    return dialog


def test_release_of_the_sample_writes_data_manifest_and_report(qtbot, window, tmp_path, developer):
    window.state.set_column_value(0, "epsilon", 2.0)  # class: a little less private
    window.state.set_column_value(9, "role", "drop")  # irradiat: not exported
    qtbot.waitUntil(lambda: window.controller.is_idle() and len(window.controller.sizes) == 9, timeout=WAIT_MS)
    chosen = window.controller.chosen()
    expected = window.controller.current()[chosen]
    out = tmp_path / "out" / "released.csv"
    out.parent.mkdir()
    dialog = release(qtbot, window, out, seed=1234)
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()
    assert sorted(os.listdir(out.parent)) == sorted(
        ["released.csv", "released.csv.manifest.json", "released.csv.report.html"]
    )
    manifest = load_manifest(str(out) + ".manifest.json", data_path=str(out))
    mech = mechanism_from_manifest(manifest)
    # The release uses the design the panel recommended, with the same privacy accounting.
    assert manifest["design"]["method"] == expected.method or manifest["design"]["method_requested"] == "auto"
    # the mechanism shown is released as it is, and the notes say which method designed it
    assert f"it was designed by method {expected.design.method!r}" in " ".join(manifest["design"]["notes"])
    assert mech.overall_epsilon() == pytest.approx(expected.overall_epsilon, rel=1e-6)
    assert mech.attribute_epsilons()[0] == pytest.approx(2.0)
    assert manifest["rows"] == 286 and manifest["randomness"]["test_seed"] == 1234
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert "irradiat" not in rows[0] and len(rows) == 287
    assert rows[0][0] == "NOT_PRIVATE_insecure_test_seed" and {r[0] for r in rows[1:]} == {"yes"}
    html = dialog.summary.toHtml()
    assert "286" in html and "manifest.json" in html and "report.html" in html
    assert f"{mech.overall_epsilon():.3f}" in html
    assert dialog.folder_button.isEnabled()


def test_release_refuses_to_overwrite_the_input(qtbot, window):
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    dialog.output.setText(SAMPLE)
    assert not dialog.start()
    assert "input" in dialog.progress_label.text()


def big_copy(tmp_path, rows: int) -> str:
    with open(SAMPLE, newline="", encoding="utf-8") as fh:
        lines = list(csv.reader(fh))
    path = tmp_path / "big.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(lines[0])
        body = lines[1:]
        for i in range(rows):
            w.writerow(body[i % len(body)])
    return str(path)


def test_cancelled_release_leaves_nothing_behind(qtbot, tmp_path):
    path = big_copy(tmp_path, 400_000)
    assert os.path.getsize(path) >= PROCESS_MIN_BYTES  # schema and rows are read in a worker process
    window = open_window(qtbot, tmp_path, path)
    assert window.state.n_rows == 400_000
    model = window.data_view.model
    model.fetch_all()  # the rows streamed back from the worker process are all there
    assert model.rowCount() == 400_000
    assert model.data(model.index(399_999, 0)) in ("no-recurrence-events", "recurrence-events")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    seen = []
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    dialog.output.setText(str(out_dir / "released.csv"))
    original = dialog._progress

    def progress_then_cancel(fraction, message):
        original(fraction, message)
        seen.append(fraction)
        if "randomized" in message and dialog.result_state == "running":
            dialog.cancel()  # as if the user pressed Cancel once rows are being written

    dialog._progress = progress_then_cancel
    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "cancelled", dialog.progress_label.text()
    assert seen and max(seen) < 1.0
    assert "Nothing was written" in dialog.progress_label.text()
    assert os.listdir(out_dir) == []  # no output, manifest, report or temporary file
    close_window(window)


def release_stalled_while_writing(input_path, config, output_path, options, progress=None, cancel=None):
    """The release job of a worker that never gets to read its cancel flag once it writes rows (a child starved
    of CPU on a busy machine, or stuck in one long call): its temporary files exist when it is terminated."""
    from optrr_gui.workers.jobs.release import run_release

    def stall_at_first_rows(fraction, message):
        if "randomized" in message:
            progress(1.0, "stalled while writing")  # a final fraction always passes the throttle
            threading.Event().wait()  # never returns and never reads the cancel flag

    return run_release(input_path, config, output_path, options, progress=stall_at_first_rows)


def test_a_release_terminated_while_writing_leaves_no_temporary_file(qtbot, window, tmp_path, monkeypatch):
    import optrr_gui.release.dialog as rd
    from optrr_engine import process_pool

    monkeypatch.setattr(rd, "run_release", release_stalled_while_writing)
    monkeypatch.setattr(process_pool, "GRACE_SECONDS", 0.5)  # the parent gives up on the stalled child sooner
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    dialog = release(qtbot, window, out_dir / "released.csv")
    qtbot.waitUntil(lambda: "stalled while writing" in dialog.progress_label.text(), timeout=WAIT_MS)
    assert os.listdir(out_dir), "the stalled child has its temporary files open"
    dialog.cancel()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "cancelled", dialog.progress_label.text()
    assert os.listdir(out_dir) == []  # the parent removed what the terminated child could not


def test_release_runs_off_the_ui_thread(qtbot, window, tmp_path, monkeypatch):
    import optrr_gui.release.dialog as rd

    threads = []
    real = rd.run_release

    def spy(*args, **kwargs):
        threads.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(rd, "run_release", spy)
    dialog = release(qtbot, window, tmp_path / "r.csv")
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done"
    assert threads and threads[0] != threading.main_thread().ident


def test_remaining_time_estimate():
    assert remaining_seconds(0.1, 0.5) is None  # too early to say
    assert remaining_seconds(10.0, 0.25) == pytest.approx(30.0)


def test_analyse_a_release(qtbot, window, tmp_path):
    out = tmp_path / "rel.csv"
    dialog = release(qtbot, window, out)
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done"
    dialog.analyse()  # "Analyse this release": opens the tab with the file
    assert window.tabs.currentIndex() == TAB_ANALYSE
    view = window.analyse_view
    qtbot.waitUntil(lambda: view.opened is not None or "color:#cc0000" in view.info.text(), timeout=WAIT_MS)
    assert view.opened is not None, view.info.text()
    assert view.attributes.count() == 10 and "NOT PRIVATE" not in view.info.text()
    # One attribute: its estimated distribution with intervals.
    view.set_selected(["age"])
    view.estimate()
    qtbot.waitUntil(lambda: view.result is not None, timeout=WAIT_MS)
    est = view.result["estimate"]
    assert est.names() == ["age"] and est.rows == 286
    assert float(np.sum(est.estimate)) == pytest.approx(1.0)
    centre = np.clip(est.unbiased, 0, 1)
    assert np.all(est.ci_low <= centre + 1e-12) and np.all(centre <= est.ci_high + 1e-12)
    assert np.all(est.ci_high >= est.ci_low) and np.any(est.ci_high > est.ci_low)  # truncated to [0, 1]
    assert view.table.rowCount() == len(est.labels()[0])
    # Two attributes: contingency table and chi-square tests.
    view.result = None
    view.set_selected(["age", "menopause"])
    view.estimate()
    qtbot.waitUntil(lambda: view.result is not None, timeout=WAIT_MS)
    assert view.result["chi2"] is not None
    assert view.table.rowCount() == len(view.result["estimate"].labels()[0])
    assert view.table.columnCount() == len(view.result["estimate"].labels()[1])
    assert view.tests.isVisible() and "recommended" in view.tests.toPlainText()
    assert "Wald test on the estimated table" in view.tests.toPlainText()  # in words, not the JSON key
    assert "p-value: simulated" in view.tests.toPlainText()  # how the p-value was obtained
    assert "Power: at the 5 % level this test" in view.tests.toPlainText()  # what the test could have detected
    csv_path, json_path = tmp_path / "e.csv", tmp_path / "e.json"
    assert view.export("csv", str(csv_path)) and view.export("json", str(json_path))
    assert csv_path.read_text().startswith("age,menopause,estimate,")
    frame = pd.read_csv(csv_path)
    assert set(frame["method"]) == {"map"} and set(frame["rows"]) == {286}  # the CSV says what it holds
    text = json_path.read_text()
    assert json.loads(text)["chi_square"]["attributes"] == ["age", "menopause"]
    assert "NaN" not in text and "Infinity" not in text  # standard JSON
    # a p-value below printing precision is exported as optrr analyze --json writes it: null with its bound, never 0
    view.result["chi2"]["tests"][0]["p_value"] = 0.0
    assert view.export("json", str(json_path))
    wald = json.loads(json_path.read_text())["chi_square"]["tests"][0]
    assert wald["p_value"] is None and wald["p_value_below"] == 1e-16 and wald["p_value_text"] != "0"


def test_analyse_warns_that_a_test_without_power_says_little(qtbot, window, tmp_path):
    """A review: p = 0.961 for two strongly associated columns, in bold, with no word that the test could not
    have found the association. The tab shows the power statement and the low-power warning in red above it."""
    from optrr_engine.analysis.release_chi2 import chi2_release
    from tests.test_analysis_power import release as weak_release

    data, manifest = weak_release(tmp_path, 1.0, 300, "weak")
    out = chi2_release(str(data), ["a", "b"], manifest_path=str(manifest), check_hash=False)
    assert out["low_power_warning"]
    window.tabs.setCurrentIndex(TAB_ANALYSE)  # built when first shown
    view = window.analyse_view
    view._show_tests(out)
    shown = view.tests.toPlainText()
    assert out["low_power_warning"] in shown and shown.index(out["low_power_warning"]) < shown.index("p = ")
    assert "Power: at the 5 % level this test detects, with 80 % power, associations of w >= " in shown


def test_analyse_reports_a_file_that_does_not_match_its_manifest(qtbot, window, tmp_path):
    out = tmp_path / "rel.csv"
    dialog = release(qtbot, window, out)
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    with open(out, "a", encoding="utf-8") as fh:
        fh.write(open(out, encoding="utf-8").read().splitlines()[1] + "\n")  # one row too many
    window.tabs.setCurrentIndex(TAB_ANALYSE)
    view = window.analyse_view
    view.open_release(str(out))
    qtbot.waitUntil(lambda: not view.spinner.is_spinning(), timeout=WAIT_MS)
    assert view.opened is None
    assert "color:#cc0000" in view.info.text()
    assert view.result_label.text() == ""  # said once, beside the file (it was repeated above the results)


def test_analyse_says_in_words_that_a_file_without_a_manifest_is_not_a_release(qtbot, window, tmp_path):
    """A data file with no manifest beside it: one plain sentence naming the manifest looked for and the button
    that chooses one (it was the bare "manifest <path> does not exist", shown twice)."""
    plain = tmp_path / "breast_cancer.csv"
    plain.write_bytes(open(SAMPLE, "rb").read())
    window.tabs.setCurrentIndex(TAB_ANALYSE)
    view = window.analyse_view
    view.open_release(str(plain))
    assert view.opened is None and not view.spinner.is_spinning() and not view.estimate_button.isEnabled()
    expected = (
        "breast_cancer.csv has no OptRR manifest beside it (breast_cancer.csv.manifest.json); it is not a release, "
        "or choose its manifest with Choose manifest…"
    )
    assert expected in view.info.text() and view.manifest_button.text() == "Choose manifest…"
    assert view.result_label.text() == ""


def test_release_in_total_budget_mode(qtbot, window, tmp_path):
    window.attributes.total.setChecked(True)
    window.attributes.target.setValue(3.0)
    window.state.set_column_value(1, "weight", 2.0)
    c = window.controller
    qtbot.waitUntil(
        lambda: c.is_idle() and c.request.get("budget_mode") and not c.is_stale("kronecker"), timeout=WAIT_MS
    )
    # budget mode recommends by predicted error (possibly the utility design, whose per-column ε do not follow the
    # weights); the weight-split design is the user's pick here
    assert c.recommended() is not None
    window.use_design("auto")
    chosen = c.chosen()
    assert chosen == "auto"
    out = tmp_path / "budget.csv"
    dialog = release(qtbot, window, out)
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()
    mech = mechanism_from_manifest(load_manifest(str(out) + ".manifest.json", data_path=str(out)))
    assert mech.overall_epsilon() <= 3.0 + 1e-6
    eps = mech.attribute_epsilons()
    assert eps[1] == pytest.approx(2 * eps[0], rel=1e-6)  # weights 2 : 1
    assert mech.overall_epsilon() == pytest.approx(c.current()[chosen].overall_epsilon, rel=1e-6)


def test_release_again_asks_before_replacing_and_before_a_repeat_of_the_same_data(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    import optrr_gui.release.dialog as rd

    asked = {"question": [], "warning": []}
    answers = {"question": QMessageBox.StandardButton.No, "warning": QMessageBox.StandardButton.Yes}

    def fake(kind):
        def ask(parent, title, text, *args):
            asked[kind].append(text)
            return answers[kind]

        return ask

    monkeypatch.setattr(rd.QMessageBox, "question", fake("question"))
    monkeypatch.setattr(rd.QMessageBox, "warning", fake("warning"))
    out = tmp_path / "out" / "released.csv"
    out.parent.mkdir()
    dialog = release(qtbot, window, out)
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done" and not asked["question"] and not asked["warning"]
    first = out.read_bytes()
    audit = os.path.join(window.settings.audit_dir(), "optrr-audit.json")
    assert len(json.load(open(audit))["releases"]) == 1

    # Release after Release: the files exist; "No" keeps them.
    assert not dialog.start()
    assert "released.csv" in asked["question"][-1] and out.read_bytes() == first
    # "Yes" replaces them, but the same data was released before: the ledger warning shows the sum of epsilons.
    answers["question"] = QMessageBox.StandardButton.Yes
    eps = dialog.manifest["overall_epsilon"]
    answers["warning"] = QMessageBox.StandardButton.No
    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.result_state != "running" and len(asked["warning"]) == 1, timeout=WAIT_MS)
    assert "released 1 time before" in asked["warning"][0] and f"{2 * eps:.3f}" in asked["warning"][0]
    assert "Not released" in dialog.progress_label.text() and out.read_bytes() == first
    answers["warning"] = QMessageBox.StandardButton.Yes
    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.result_state == "done", timeout=WAIT_MS)
    assert len(asked["warning"]) == 2 and out.read_bytes() != first
    assert len(asked["question"]) == 3  # one "replace?" per click, not again after the repeat question
    assert len(json.load(open(audit))["releases"]) == 2
    assert "released 2 times" in dialog.summary.toPlainText() and f"{2 * eps:.3f}" in dialog.summary.toPlainText()


def test_unsaved_changes_are_not_discarded_without_asking(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    import optrr_gui.main_window as mw
    from optrr_gui.common.commands import SetSessionValue

    asked = []
    answer = [QMessageBox.StandardButton.Cancel]

    def ask(parent, title, text, *args):
        asked.append(text)
        return answer[0]

    monkeypatch.setattr(mw.QMessageBox, "question", ask)
    window.stack.push(SetSessionValue(window.state, "method", "kronecker"))
    assert not window.stack.isClean()
    window.close()  # Ctrl+Q: cancelled, the window stays
    assert window.isVisible() and "quitting" in asked[-1]
    other = tmp_path / "other.csv"
    other.write_text("a,b\nx,p\ny,q\n")
    window.open_file(str(other))  # opening another file: cancelled, nothing changes
    assert window.state.data_path == SAMPLE and window.state.method == "kronecker" and "other.csv" in asked[-1]
    project = tmp_path / "p.optrr"
    window.save_project_to(str(project))
    window.stack.push(SetSessionValue(window.state, "method", "optimal"))
    assert not window.open_project(str(project)) and window.state.method == "optimal"
    answer[0] = QMessageBox.StandardButton.Discard
    assert window.open_project(str(project)) and window.state.method == "kronecker"
    window.stack.push(SetSessionValue(window.state, "method", "optimal"))
    count = len(asked)
    window.close()
    assert not window.isVisible() and len(asked) == count + 1


def test_a_release_with_a_secret_key_is_reproducible_and_never_ships_the_key(qtbot, window, tmp_path, monkeypatch):
    """New key… writes a key with the engine's generator; two releases with it are identical, the shipped files
    carry neither the key nor its fingerprint, and a release without a key differs."""
    from PySide6.QtWidgets import QFileDialog

    from optrr_engine.release.randomness import key_fingerprint, read_key_file

    qtbot.waitUntil(lambda: window.controller.is_idle() and window.controller.chosen() is not None, timeout=WAIT_MS)
    key_path = tmp_path / "hospital.key"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(key_path), ""))
    probe = ReleaseDialog(window, window)
    qtbot.addWidget(probe)
    probe.new_key_file()
    assert probe.key_file.text() == str(key_path) and (os.stat(key_path).st_mode & 0o777) == 0o600
    key = read_key_file(key_path)

    outputs = []
    for name, use_key in (("a", True), ("b", True), ("c", False)):
        folder = tmp_path / name
        folder.mkdir()
        dialog = ReleaseDialog(window, window)
        qtbot.addWidget(dialog)
        dialog.output.setText(str(folder / f"{name}.csv"))  # internal reports share the audit folder
        dialog.allow_repeat = True  # the same data released three times on purpose (the ledger is tested elsewhere)
        if use_key:
            dialog.key_file.setText(str(key_path))
        tick_orange(dialog)  # the sample releases rare categories (orange), nothing else: checked, then ticked
        assert dialog.start()
        qtbot.waitUntil(lambda d=dialog: d.result_state != "running", timeout=WAIT_MS)
        assert dialog.result_state == "done", dialog.progress_label.text()
        outputs.append(folder / f"{name}.csv")
    a, b, c = (p.read_bytes() for p in outputs)
    assert a == b and a != c
    for folder in ("a", "b"):
        for path in (tmp_path / folder).iterdir():
            text = path.read_bytes()
            assert key.hex().encode() not in text and key_fingerprint(key).encode() not in text, path.name
    manifest = load_manifest(str(outputs[0]) + ".manifest.json", data_path=str(outputs[0]))
    assert manifest["randomness"]["source"] == "secret-key"


def test_the_test_seed_is_offered_to_developers_only_and_the_audit_folder_is_shown(
    qtbot, window, monkeypatch, audit_dir
):
    monkeypatch.delenv("OPTRR_DEVELOPER", raising=False)
    qtbot.waitUntil(window.controller.is_idle, timeout=WAIT_MS)
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    dialog.show()
    assert not dialog.fixed_seed.isVisible() and not dialog.seed.isVisible()
    assert dialog.audit_label.text() == os.path.join(str(audit_dir), "optrr-audit.json")
    dialog.close()
    monkeypatch.setenv("OPTRR_DEVELOPER", "1")
    developer = ReleaseDialog(window, window)
    qtbot.addWidget(developer)
    developer.show()
    assert developer.fixed_seed.isVisible() and "NOT private" in developer.fixed_seed.text()
    developer.close()


def test_analyse_warns_about_a_test_seed_release_and_ignores_its_marker(qtbot, window, tmp_path, developer):
    from optrr_engine.release.perturb import perturb_file

    qtbot.waitUntil(lambda: window.controller.is_idle(), timeout=WAIT_MS)
    out = tmp_path / "seeded.csv"
    # the sample has rare categories (not this test's subject)
    perturb_file(SAMPLE, window.state.to_release_config(), out, insecure_test_seed=9, allow_rare_categories=True)
    window.tabs.setCurrentIndex(TAB_ANALYSE)
    view = window.analyse_view
    view.open_release(str(out))
    qtbot.waitUntil(lambda: view.opened is not None or "color:#cc0000" in view.info.text(), timeout=WAIT_MS)
    assert view.opened is not None
    assert "WARNING" in view.info.text() and "NOT PRIVATE" in view.info.text()
    names = [view.attributes.item(i).data(0x0100) for i in range(view.attributes.count())]  # UserRole
    assert len(names) == 10 and "NOT_PRIVATE_insecure_test_seed" not in names


def test_columns_exported_in_the_clear_need_a_tick_before_release(qtbot, window, tmp_path):
    """A column set to keep is copied unchanged (no privacy): the release waits for an explicit tick."""
    from tests.test_gui_datamanager import index_of

    window.state.set_column_value(index_of(window, "breast"), "role", "keep")
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    dialog.output.setText(str(tmp_path / "clear.csv"))
    assert not dialog.accept_clear.isHidden()
    qtbot.waitUntil(lambda: window.controller.is_idle(), timeout=WAIT_MS)
    dialog._design_changed()
    assert not dialog.release_button.isEnabled() and "published outside the ε" in dialog.progress_label.text()
    assert not dialog.start() and not (tmp_path / "clear.csv").exists()
    dialog.accept_clear.setChecked(True)
    assert dialog.release_button.isEnabled(), dialog.progress_label.text()
    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done" and (tmp_path / "clear.csv").exists()
    window.state.set_column_value(index_of(window, "breast"), "role", "perturb")
    again = ReleaseDialog(window, window)
    qtbot.addWidget(again)
    assert "Exported in the clear: none" in again.columns_label.text()
    tick_orange(again)  # orange again: the sample's rare categories only



def test_the_release_dialog_names_why_no_design_can_be_computed(qtbot, window):
    """A perturbed column with one category stops every design: the dialog says so, not 'change the ε'."""
    from tests.test_gui_datamanager import index_of

    j = index_of(window, "irradiat")
    window.state.set_column_fields(j, {"categories": ["yes"], "recode": {"yes": ["no", "yes"]}})
    qtbot.waitUntil(lambda: bool(window.controller.message), timeout=WAIT_MS)
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    problems = " ".join(dialog.problems())
    assert "No design can be computed:" in problems and "'irradiat' has only one category" in problems
    assert "change the ε" not in problems and not dialog.release_button.isEnabled()


def test_a_perturbed_column_the_schema_dropped_needs_the_tick_too(qtbot, window):
    """A likely identifier set to perturb: every label (each patient number) goes into the codebook."""
    from optrr_engine.release.schema import DROPPED
    from tests.test_gui_datamanager import index_of

    j = index_of(window, "breast")
    window.state.set_column_value(j, "warnings", [f"likely identifier (its name){DROPPED}"])
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    assert "every category label is published in the codebook" in dialog.columns_label.text()
    assert "breast" in dialog.columns_label.text() and not dialog.accept_clear.isHidden()
    assert any("published outside the ε" in p for p in dialog.problems())
    dialog.accept_clear.setChecked(True)
    assert not any("published outside the ε" in p for p in dialog.problems())



def test_the_default_output_never_lands_inside_the_application(tmp_path):
    """The bundled sample lives in the installed application's folder: its release goes to the home folder."""
    from pathlib import Path

    from optrr_gui.release.dialog import default_output
    from optrr_gui.state.paths import DEFAULT_SAMPLE

    assert Path(default_output(str(DEFAULT_SAMPLE), ".csv")).parent == Path.home()
    data = tmp_path / "ward.csv"
    assert default_output(str(data), ".csv") == str(tmp_path / "ward_released.csv")
    (tmp_path / "out").mkdir()
    assert default_output(str(data), ".csv", str(tmp_path / "out")) == str(tmp_path / "out" / "ward_released.csv")


def test_rows_left_out_by_a_missing_value_need_the_tick(qtbot, window):
    from tests.test_gui_datamanager import index_of

    window.state.set_column_value(index_of(window, "node-caps"), "missing", "exclude")
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    assert not dialog.accept_clear.isHidden() and any("published outside the ε" in p for p in dialog.problems())


def test_the_tick_follows_the_session_while_the_dialog_is_open(qtbot, window):
    """The dialog is not modal: a column set to keep after the tick clears the tick and is listed (it went out
    in the clear unseen); a column set to keep while nothing was orange shows the box."""
    from tests.test_gui_datamanager import index_of

    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    assert "Exported in the clear: none" in dialog.columns_label.text()
    tick_orange(dialog)  # the sample releases rare categories (orange), nothing else: checked, then ticked
    window.state.set_column_value(index_of(window, "breast"), "role", "keep")
    assert any("published outside the ε" in p for p in dialog.problems()) and not dialog.accept_clear.isChecked()
    tick_orange(dialog, {**SAMPLE_ORANGE, "kept": ["breast"]})
    window.state.set_column_value(index_of(window, "irradiat"), "role", "keep")
    assert any("published outside the ε" in p for p in dialog.problems()) and not dialog.accept_clear.isChecked()
    assert "NOT private (2)</b>: breast, irradiat" in dialog.columns_label.text()


def test_bin_edges_computed_from_the_data_need_the_tick(qtbot, window):
    from tests.test_gui_datamanager import index_of

    j = index_of(window, "age")
    window.state.set_column_fields(j, {"type": "numeric", "bins": {"method": "quantile", "count": 3,
                                                                  "edges": [float("-inf"), 40.0, 50.0, float("inf")]}})
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    assert "Bin edges computed from the data, published rounded</b>: age" in dialog.columns_label.text()

