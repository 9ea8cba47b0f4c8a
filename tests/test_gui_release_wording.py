"""The release workflow's wording after the GUI review, through the real main window and engine: a kept numeric
column is described as kept (its NOT-private warning first, no text on bins, its values counted rather than bins);
the release summary names the design as the window does ("Sample-2 (2 columns per row)", never "sample-m"); before
the release the dialog shows the engine's notes on needed tables that carry almost no information (and the summary
lists the manifest's notes after it); a CSV release of a ';'-separated input says that it keeps the ';'."""

from __future__ import annotations

import pytest

from optrr_engine.release.manifest import load_manifest
from optrr_engine.utility.release_check import uninformative_notes
from optrr_gui.design.attribute_table import COL_COUNT, COL_ROLE, COL_WARN
from optrr_gui.release.dialog import FORMATS, NOTES_SHOWN, ReleaseDialog
from optrr_gui.state.design_summary import METHOD_LABELS
from optrr_gui.state.needed_marginals import name_lists
from tests.test_gui_datamanager import index_of
from tests.test_gui_support import WAIT_MS, window_with_summaries
from tests.test_gui_utility_designs import budget

AGES = 60  # different ages in the file (20 to 79)
ROWS = 300


def ages_file(folder) -> str:
    """240 patients: an age (every one of AGES values in 4 rows), a sex and a ward with one patient in 'ICU'."""
    path = folder / "ages.csv"
    wards = ["ICU" if i == 5 else "ABC"[i % 3] for i in range(4 * AGES)]
    lines = ["age,sex,ward"] + [f"{20 + i % AGES},{'MF'[i % 2]},{wards[i]}" for i in range(4 * AGES)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def semicolon_file(folder) -> str:
    """ROWS patients in a ';'-separated file: four columns of three categories, each seen in many rows."""
    path = folder / "wards.csv"
    lines = ["sex;ward;grade;smoker"] + [
        f"{'MFX'[i % 3]};{'ABC'[(i // 3) % 3]};{'123'[(i // 9) % 3]};{('yes', 'no', 'ex')[(i // 27) % 3]}"
        for i in range(ROWS)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture
def ages(qtbot, tmp_path):
    yield from window_with_summaries(qtbot, tmp_path, ages_file(tmp_path))


@pytest.fixture
def wards(qtbot, tmp_path):
    yield from window_with_summaries(qtbot, tmp_path, semicolon_file(tmp_path))


def dialog_on(qtbot, window) -> ReleaseDialog:
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    return dialog


# -- 1. a kept numeric column ---------------------------------------------------------------------------------------
def test_a_kept_numeric_column_warns_not_private_first_and_neither_bins_nor_counts_them(qtbot, ages):
    model = ages.attributes.model
    row = index_of(ages, "age")

    def cell(column: int) -> str:
        return model.data(model.index(row, column))

    assert ages.state.columns[row].type == "numeric"
    assert cell(COL_COUNT) == "4" and cell(COL_WARN).startswith("numbers grouped into quantile bins")  # perturbed
    assert model.setData(model.index(row, COL_ROLE), "keep")  # the table's own edit (one undo step)
    qtbot.waitUntil(ages.is_ready, timeout=WAIT_MS)
    warnings = model.warnings[row]
    assert warnings[0] == "kept unchanged: this column is exported as is, NOT privatised", warnings
    assert cell(COL_WARN).startswith("kept unchanged: this column is exported as is, NOT privatised")
    assert not any("bin" in w for w in warnings), warnings  # its exact ages are released, in no bins
    assert cell(COL_COUNT) == str(AGES)  # the different ages it copies, not 4 bins
    panel = ages.column_panel
    panel.show_column(row)
    assert panel.title.text() == f"age — {AGES} values, copied as they are"
    assert not panel.bins.isVisibleTo(panel) and not panel.bins_label.isVisibleTo(panel)  # no bins to edit
    ages.stack.undo()  # perturbed again: bins, and their warning, are back
    assert cell(COL_COUNT) == "4" and cell(COL_WARN).startswith("numbers grouped into quantile bins")
    panel.show_column(row)
    assert panel.title.text() == "age — 4 categories" and panel.bins.isVisibleTo(panel)
    assert not any("kept unchanged" in w for w in model.warnings[row])
    # any kept column: its NOT-private warning before the others (the cell shows the start of its text)
    ward = index_of(ages, "ward")
    assert model.setData(model.index(ward, COL_ROLE), "keep")
    qtbot.waitUntil(ages.is_ready, timeout=WAIT_MS)
    assert model.warnings[ward][0] == "kept unchanged: this column is exported as is, NOT privatised"
    assert "'ICU' (1)" in model.warnings[ward][1], model.warnings[ward]


# -- 2. and 3. the design's name and the notes on tables without information ------------------------------------------
def test_a_sample_2_release_names_its_design_and_says_which_tables_carry_no_information(qtbot, wards, tmp_path):
    budget(qtbot, wards, 0.2)  # a tiny whole-record ε: the 2-way tables carry almost nothing at 300 rows
    wards.use_design("sample-2")
    qtbot.waitUntil(lambda: wards.controller.chosen() == "sample-2", timeout=WAIT_MS)
    summary = wards.controller.current()["sample-2"]
    names = [c.name for c in wards.state.perturbed_columns()]
    expected = uninformative_notes(
        summary.design.mechanism, names, name_lists(wards.state.needed_marginals, names), ROWS
    )
    assert len(expected) > NOTES_SHOWN  # the engine's notes: more than the dialog writes out
    dialog = dialog_on(qtbot, wards)
    assert dialog.design_label.text().startswith(METHOD_LABELS["sample-2"])
    label = dialog.information_label
    qtbot.waitUntil(lambda: label.isVisibleTo(dialog), timeout=WAIT_MS)  # computed in a worker process
    text = label.text()
    assert text.startswith("Almost no information in some needed tables (a warning; the release is not refused")
    for note in expected[:NOTES_SHOWN]:
        assert note.replace("'", "&#x27;") in text, text  # the engine's notes, as the manifest will have them
    assert f"… and {len(expected) - NOTES_SHOWN} more note(s)" in text
    assert all(note.replace("'", "&#x27;") in label.toolTip() for note in expected)
    assert "color" not in text and not dialog.allow_unidentifiable.isVisibleTo(dialog)  # a warning, nothing to tick
    assert dialog.problems() == []
    dialog.output.setText(str(tmp_path / "sampled.csv"))
    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()
    manifest = load_manifest(str(tmp_path / "sampled.csv.manifest.json"), data_path=str(tmp_path / "sampled.csv"))
    assert manifest["design"]["method"] == "sample-m"
    shown = dialog.summary.toPlainText()
    assert "Design\nSample-2 (2 columns per row)\n" in shown, shown  # the table's cells, one line each
    assert "sample-m" not in shown.replace("sampling design sample-m", "")  # only the engine's own note says it
    assert "Notes in the manifest:" in shown
    assert set(expected) <= set(manifest["design"]["notes"])
    for note in manifest["design"]["notes"]:
        assert note in shown, note


# -- 4. the delimiter of a CSV release -----------------------------------------------------------------------------
def test_a_csv_release_of_a_semicolon_file_says_it_keeps_the_semicolon(qtbot, wards, tmp_path):
    assert "delimiter" not in wards.state.reader_options  # detected, not given
    dialog = dialog_on(qtbot, wards)
    assert dialog.format.currentText() == "CSV (comma-separated text)"
    note = dialog.delimiter_label
    assert note.isVisibleTo(dialog) and note.text() == "CSV, with the input's delimiter ';' (not commas)"
    parquet = next(label for label, (fmt, _ext) in FORMATS.items() if fmt == "parquet")
    dialog.format.setCurrentText(parquet)  # no delimiter in a Parquet file
    assert not note.isVisibleTo(dialog)
    dialog.output.setText(str(tmp_path / "out.csv"))  # a .csv name chooses CSV again
    assert dialog.format.currentText() == "CSV (comma-separated text)" and note.isVisibleTo(dialog)
