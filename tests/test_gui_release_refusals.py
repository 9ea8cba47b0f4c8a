"""What the release would refuse is said in the release dialog before Release (not at 75 % of the run): perturbed
columns that look like identifiers (the engine's one rule, every such column at once), an output name whose
extension contradicts the format, and needed column sets typed but not applied."""

from __future__ import annotations

import csv
import random

import pytest

from optrr_engine.errors import InputError
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.schema import UNIQUE_MIN_ROWS, infer_schema
from optrr_gui.release.dialog import FORMATS, ReleaseDialog
from optrr_gui.state.role_fields import role_fields
from tests.test_gui_datamanager import index_of
from tests.test_gui_support import WAIT_MS, tick_orange, window_with_summaries

ROWS = 309
IDENTIFIERS = ["record", "doctor_comment", "postcode"]
#: What the release dialog marks in orange for the ward's file with its identifiers dropped: the rare admission dates.
WARD_DAYS = "01-05 01-17 02-06 02-18 03-07 03-19 04-08 04-20 05-09 05-21".split()
WARD_DATES = ", ".join(f"'2023-{d}' (3 rows)" for d in WARD_DAYS)
WARD_ORANGE = {"kept": [], "rows_left_out": [], "labels_of_dropped": [], "bins_from_data": [],
               "rare_categories": [f"admitted: {WARD_DATES} and 74 more"]}


def ward_file(folder) -> str:
    """A ward's file: a record number, admission dates, a doctor's comment and a postcode (one per row each),
    besides ordinary columns."""
    rng = random.Random(7)
    path = folder / "ward.csv"
    words = ["pain", "stable", "fever", "discharged", "review", "follow", "up", "bloods", "normal", "scan"]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["record", "admitted", "sex", "outcome", "doctor_comment", "postcode"])
        for i in range(ROWS):
            comment = f"patient {i} " + " ".join(rng.choice(words) for _ in range(6))
            postcode = f"AB{i // 10 + 1} {i % 10}XY"
            admitted = f"2023-{1 + i % 12:02d}-{1 + i % 28:02d}"
            w.writerow([f"H{100000 + i}", admitted, rng.choice("MF"), rng.choice(["home", "ward", "died"]), comment,
                        postcode])
    return str(path)


# -- the rule, Qt-free ------------------------------------------------------------------------------------------
def test_identifier_rule():
    from optrr_engine.release.schema import identifier_like

    assert identifier_like(309, 309) and identifier_like(280, 309)
    assert not identifier_like(250, 309)  # the admission dates: many repeat
    assert not identifier_like(UNIQUE_MIN_ROWS - 1, UNIQUE_MIN_ROWS - 1)  # too few rows to say
    assert not identifier_like(3, 3) and not identifier_like(2, 300)
    assert identifier_like(18, 20)  # 18 patient numbers in 20 rows: refused (as before the rule was shared)


def test_a_small_file_of_patient_numbers_is_refused(tmp_path):
    """20 rows, 18 different patient numbers among 20 listed categories: the release refuses the column."""
    src = tmp_path / "ids20.csv"
    ids = [f"P{i:03d}" for i in range(18)] + ["P000", "P001"]
    src.write_text("pid,sex\n" + "".join(f"{p},{'MF'[i % 2]}\n" for i, p in enumerate(ids)), encoding="utf-8")
    cfg = infer_schema(str(src))
    col = cfg.column("pid")
    col.role, col.type, col.categories = "perturb", "nominal", [f"P{i:03d}" for i in range(20)]
    with pytest.raises(InputError, match="'pid' has 18 different values in 20 rows: it looks like an identifier"):
        perturb_file(str(src), cfg, tmp_path / "r.csv", audit_dir=tmp_path)


def test_perturb_names_every_identifier_like_column_at_once(tmp_path):
    src = ward_file(tmp_path)
    cfg = infer_schema(src)
    for name in IDENTIFIERS:  # as if every value were copied into the configuration
        col = cfg.column(name)
        with open(src, newline="", encoding="utf-8") as fh:
            col.categories = sorted({row[name] for row in csv.DictReader(fh)})
        col.role, col.type = "perturb", "nominal"
    with pytest.raises(InputError) as err:
        perturb_file(src, cfg, tmp_path / "r.csv", audit_dir=tmp_path)
    message = str(err.value)
    assert all(f"'{name}' ({ROWS} different values)" in message for name in IDENTIFIERS), message
    assert f"in {ROWS} rows look like identifiers" in message and "drop them" in message


# -- the dialog -------------------------------------------------------------------------------------------------
@pytest.fixture
def ward(qtbot, tmp_path):
    yield from window_with_summaries(qtbot, tmp_path, ward_file(tmp_path))


def perturb(qtbot, window, names) -> None:
    for name in names:
        j = index_of(window, name)
        window.state.set_column_fields(j, role_fields(window.state, j, "perturb"))
        assert window.state.columns[j].categories, name
    qtbot.waitUntil(window.is_ready, timeout=WAIT_MS)


def dialog_on(qtbot, window, tmp_path) -> ReleaseDialog:
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    dialog.output.setText(str(tmp_path / "out.csv"))
    dialog._design_changed()
    return dialog


def test_identifier_columns_set_to_perturb_are_named_before_release_and_never_offered_the_tick(
    qtbot, ward, tmp_path
):
    perturb(qtbot, ward, [*IDENTIFIERS, "admitted"])
    dialog = dialog_on(qtbot, ward, tmp_path)
    problems = dialog.problems()
    for name in IDENTIFIERS:
        assert any(p.startswith(f"{name} has {ROWS} different values in {ROWS} rows: it looks like an identifier")
                   for p in problems), problems
    assert not any(p.startswith("admitted ") for p in problems)  # many dates repeat: no identifier
    assert not dialog.release_button.isEnabled() and "looks like an identifier" in dialog.progress_label.text()
    assert not dialog.start() and not (tmp_path / "out.csv").exists()
    # No tick offered for what cannot be released; the refused columns are named in red instead.
    assert dialog._outside is not None and not any(n in IDENTIFIERS for v in dialog._outside.values() for n in v)
    assert "Refused, they look like identifiers</b>: record, doctor_comment, postcode" in dialog.columns_label.text()
    # Dropped again: nothing refused, nothing orange; the release runs.
    for name in IDENTIFIERS:
        ward.state.set_column_fields(index_of(ward, name), role_fields(ward.state, index_of(ward, name), "drop"))
    qtbot.waitUntil(ward.is_ready, timeout=WAIT_MS)
    dialog._design_changed()
    assert "Refused" not in dialog.columns_label.text() and "admitted: " in dialog.columns_label.text()  # rare dates
    tick_orange(dialog, WARD_ORANGE)
    assert dialog.release_button.isEnabled()
    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()


def test_the_dialog_counts_like_the_engine_after_recoding(qtbot, ward):
    """Recoded into few categories, a record number is no identifier any more: the codes are counted, not the
    texts read."""
    from optrr_gui.release.dialog import identifier_columns

    perturb(qtbot, ward, ["record"])
    assert [name for name, _d, _r in identifier_columns(ward.state, ward.summaries)] == ["record"]
    j = index_of(ward, "record")
    values = ward.state.columns[j].categories
    ward.state.set_column_fields(j, {"categories": ["low", "high"],
                                     "recode": {"low": values[: ROWS // 2], "high": values[ROWS // 2:]}})
    assert identifier_columns(ward.state, ward.summaries) == []


def test_an_output_name_with_another_extension_chooses_the_format(qtbot, window, tmp_path):
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    tick_orange(dialog)  # the sample releases rare categories (orange), nothing else: checked, then ticked
    assert FORMATS[dialog.format.currentText()][0] == "csv"
    dialog.output.setText(str(tmp_path / "out.xlsx"))
    assert FORMATS[dialog.format.currentText()][0] == "xlsx"
    assert dialog.output.text() == str(tmp_path / "out.xlsx") and dialog.format_mismatch() == ""
    dialog.output.setText(str(tmp_path / "out.tsv"))  # tab-separated text: CSV, and the name stays
    assert FORMATS[dialog.format.currentText()][0] == "csv" and dialog.output.text().endswith("out.tsv")
    dialog.output.setText(str(tmp_path / "out.xlsx"))
    assert dialog.problems() == []
    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()
    assert (tmp_path / "out.xlsx").exists()


def test_a_mismatched_name_and_format_are_named_before_release(qtbot, window, tmp_path):
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    dialog.output.setText(str(tmp_path / "out.xlsx"))
    dialog.format.blockSignals(True)  # however it came about (the format chosen without renaming the file)
    dialog.format.setCurrentText(next(label for label, (fmt, _e) in FORMATS.items() if fmt == "csv"))
    dialog.format.blockSignals(False)
    assert any("ends in .xlsx" in p and "make them agree" in p for p in dialog.problems())
    assert not dialog.start() and not (tmp_path / "out.xlsx").exists()


def test_needed_sets_typed_but_refused_are_a_problem_of_the_release(qtbot, window, tmp_path):
    editor = window.mechanism.needed
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    dialog.output.setText(str(tmp_path / "out.csv"))
    tick_orange(dialog)  # the sample releases rare categories (orange), nothing else: checked, then ticked
    applied = window.state.needed_marginals
    editor.sets.setText("age, no_such_column")
    editor.sets.editingFinished.emit()
    assert editor.sets_message and window.state.needed_marginals == applied  # refused: the old sets stay
    problems = dialog.problems()
    assert any(p.startswith("The needed column sets typed are not applied: ") and "no_such_column" in p
               for p in problems), problems
    assert window.needed_sets_error() == editor.sets_message
    dialog._design_changed()
    assert not dialog.release_button.isEnabled() and not dialog.start()
    editor.sets.setText("age, menopause")
    editor.sets.editingFinished.emit()
    assert window.needed_sets_error() == "" and dialog.problems() == []
