"""Two GUI findings. (1) The Analyse tab lists a release's columns copied unchanged (role "keep") among the
attributes, marked "copied unchanged, not private", without a tick box, with the CLI's words on why they are not
estimated (they were missing from the list, unexplained). (2) The Data tab's summary of a numeric column that the
release bins: "Released as" is the bin of each value (it was the raw number), the rare-values warning names no
number (a binned column never publishes its numbers), and a file whose decimal comma was detected (not given) keeps
its histogram and release bins (the summary read its numbers with '.': none or only the whole ones).

Screenshots go to OPTRR_SCREENSHOTS (a folder) when it is set."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from optrr_engine.errors import InputError
from optrr_engine.estimation.release_source import KEPT_COLUMN_HINT, attribute_index, kept_column_message
from optrr_engine.release.column_stats import OUTSIDE_BINS, ColumnSummary
from tests.test_gui_support import WAIT_MS, close_window, open_window

EDGES = [-math.inf, 25.0, 45.0, 61.0, math.inf]
AGE_BINS = {"method": "quantile", "count": 4, "edges": EDGES}


def screenshot(widget, name: str) -> None:
    folder = os.environ.get("OPTRR_SCREENSHOTS")
    if folder:
        from PySide6.QtWidgets import QApplication

        QApplication.processEvents()  # the layout follows the texts just set
        os.makedirs(folder, exist_ok=True)
        widget.grab().save(os.path.join(folder, name))


def age_summary(decimal: str = ".") -> ColumnSummary:
    """An age column as stroke.csv writes it (a few rare fractions of a year), with '?' (rare, listed) and a note;
    the numbers written with ``decimal``."""
    values = ["78", "57", "0.08", "0.4", "1.4", "61", "24.5", "?", "see notes"]
    counts = [102, 95, 2, 2, 3, 40, 30, 1, 2]
    if decimal == ",":
        values = [v.replace(".", ",") for v in values]
    return ColumnSummary("age", values, counts, 0, decimal)  # counted with the file's mark, as the window does


# -- Qt-free --------------------------------------------------------------------------------------------------


def test_the_kept_column_wording_is_one_shared_sentence():
    """The CLI's error for a kept column and the Analyse tab use the engine's one wording."""
    manifest = {"attributes": [{"name": "age"}], "kept_columns": ["Residence_type"]}
    with pytest.raises(InputError) as err:
        attribute_index(manifest, ["Residence_type"])
    assert kept_column_message("Residence_type") in str(err.value)
    assert str(err.value).startswith(f"'Residence_type' is a column {KEPT_COLUMN_HINT} (randomized attributes: 'age')")
    assert KEPT_COLUMN_HINT == "copied unchanged (kept, not randomized); tabulate it directly from the file"


def test_each_number_of_a_summary_is_released_in_its_bin_by_the_codec_and_rare_values_without_numbers():
    from optrr_engine.release.codec import ColumnCodec
    from optrr_engine.release.config import ColumnConfig

    s = ColumnSummary("age", ["78", "0.08", "24.5", "61", "?", "200"], [102, 2, 3, 40, 1, 4], 0, ".")

    def released(edges):
        cfg = ColumnConfig(name="age", role="perturb", type="numeric", bins={"method": "edges", "edges": edges},
                           categories=["?"], missing_values=[])
        return dict(zip(s.values.tolist(), ColumnCodec(cfg, s.decimal, check=False).released_labels(s.values),
                        strict=True))

    labels = released(EDGES)
    assert labels == {"78": ">= 61", "0.08": "< 25", "24.5": "< 25", "61": ">= 61", "?": "?", "200": ">= 61"}
    assert released([0, 50, 100])["200"] == OUTSIDE_BINS
    assert [v for v, _ in s.rare()] == ["?", "0.08", "24.5", "200"]
    assert s.rare(numbers=False) == [("?", 1)]  # the numbers are published as bins, never as they are


def test_the_summaries_use_the_decimal_mark_the_release_reads_the_file_with(tmp_path):
    """A decimal comma detected in the file (not given) was counted with '.': 67,0 read as text, no histogram."""
    from optrr_gui.workers.jobs.summaries import file_decimal

    path = tmp_path / "eu.csv"
    path.write_text("age;sex\n" + "".join(f"{20 + i},5;{'mf'[i % 2]}\n" for i in range(40)), encoding="utf-8")
    assert file_decimal(str(path), {}) == ","  # detected, as the release detects it
    assert file_decimal(str(path), {"decimal": "."}) == "."  # given: kept
    assert file_decimal(None, None) == "."

def test_the_summary_line_of_a_binned_column_warns_about_texts_only():
    from optrr_gui.data.summary_view import summary_line

    s = age_summary(".")
    assert "'0.08' (2)" in summary_line(s)  # a nominal column's rare values: named
    line = summary_line(s, listed={"?"})  # a numeric column: '?' listed, 'see notes' released as missing
    assert "Rare (fewer than 5 rows): '?' (1) — merge" in line
    assert "see notes" not in line and "0.08" not in line and "1.4" not in line and "24.5" not in line
    only_numbers = ColumnSummary("bmi", ["28.7", "14.9", "54.1"], [41, 1, 1], 3, ".")
    assert "Rare" not in summary_line(only_numbers, listed=set())
    recoded = summary_line(s, recode={"unknown": ["?", "see notes"]}, listed={"unknown"})
    assert "Rare after recoding (fewer than 5 rows): 'unknown' (3)" in recoded and "0.08" not in recoded


# -- the Data tab's summary ---------------------------------------------------------------------------------------


def released_column(view) -> dict[str, str]:
    m = view.model
    return {m.index(r, 0).data(): m.index(r, 3).data() for r in range(m.rowCount())}


def highlighted(view) -> set[str]:
    from PySide6.QtCore import Qt

    m = view.model
    return {m.index(r, 0).data() for r in range(m.rowCount()) if m.index(r, 0).data(Qt.ItemDataRole.BackgroundRole)}


@pytest.mark.parametrize("decimal", [".", ","])
def test_the_summary_of_a_binned_column_shows_bins_not_numbers(qtbot, decimal):
    from optrr_gui.data.summary_view import ColumnSummaryView
    from optrr_gui.state.session import ColumnState

    view = ColumnSummaryView()
    qtbot.addWidget(view)
    view.resize(520, 620)
    view.show()
    column = ColumnState(name="age", type="numeric", bins=AGE_BINS, categories=["?"])
    view.show_summary(age_summary(decimal), column)
    fraction = "0,08" if decimal == "," else "0.08"
    released = released_column(view)
    assert released["78"] == ">= 61" and released["57"] == "[45, 61)" and released[fraction] == "< 25"
    assert released["?"] == "?"  # listed: released as a category of its own
    assert released["see notes"] == "NA"  # neither a number nor listed: released as missing
    title = view.title.text()
    assert "Rare (fewer than 5 rows): '?' (1) — merge" in title  # only texts released as categories: not the
    assert fraction not in title and "see notes" not in title  # numbers (bins) nor an unlisted text (missing)
    assert highlighted(view) == {"?"}
    assert view.histogram is not None and not view.histogram.isHidden()
    assert view.bins_text.text() == (
        "Release bins (red lines): < 25: 37 (14%); [25, 45): 0 (0%); [45, 61): 95 (35%); >= 61: 142 (52%). "
        "Percentages of the 274 rows with a number (not of all rows)."
    )
    screenshot(view, f"summary_binned_age_decimal_{'comma' if decimal == ',' else 'point'}.png")
    # a nominal column's summary is as before: every rare value named, released as itself
    view.show_summary(age_summary(decimal), ColumnState(name="age", type="nominal", categories=None))
    assert fraction in view.title.text() and released_column(view)["78"] == "78"
    assert fraction in highlighted(view)


def test_bins_computed_at_release_time_are_said_in_released_as(qtbot):
    from optrr_gui.data.summary_view import BIN_AT_RELEASE, ColumnSummaryView
    from optrr_gui.state.session import ColumnState

    view = ColumnSummaryView()
    qtbot.addWidget(view)
    view.show_summary(age_summary(), ColumnState(name="age", type="numeric", bins={"method": "quantile", "count": 4}))
    released = released_column(view)
    assert released["78"] == BIN_AT_RELEASE and released["0.08"] == BIN_AT_RELEASE
    assert view.bins_text.text() == "Bins: computed from the data at release time"


def test_a_detected_decimal_comma_file_keeps_its_histogram_and_bins(qtbot, tmp_path):
    """The whole window on a ';' file with decimal commas, the decimal mark detected (not given): the summary of a
    numeric column shows its histogram, the release bins and their counts, and the bins in "Released as"."""
    from optrr_gui.main_window import TAB_DATA

    rng = np.random.default_rng(5)
    ages = rng.uniform(0, 90, 400).round(1)
    path = tmp_path / "eu.csv"
    lines = ["id;age;sex"] + [
        f"{i};{f'{a:.1f}'.replace('.', ',')};{'MF'[i % 2]}" for i, a in enumerate(ages.tolist())
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    window = open_window(qtbot, tmp_path, str(path))
    try:
        qtbot.waitUntil(lambda: bool(window.summaries), timeout=WAIT_MS)
        names = [c.name for c in window.state.columns]
        j = names.index("age")
        column = window.state.columns[j]
        assert window.state.reader_options.get("decimal") is None  # detected, not given
        assert column.type == "numeric" and column.bins.get("edges")
        window.tabs.setCurrentIndex(TAB_DATA)
        window.show_summary_of(j)
        view = window.summary_view
        assert view.histogram is not None and not view.histogram.isHidden()
        text = view.bins_text.text()
        assert text.startswith("Release bins (red lines): ") and "outside" not in text
        edges = [float(e) for e in column.bins["edges"]]
        from optrr_engine.release.bins import assign, bin_labels

        idx, _ = assign(ages, edges)
        for label, n in zip(bin_labels(edges), np.bincount(idx, minlength=len(edges) - 1).tolist(), strict=True):
            assert f"{label}: {n:,} (" in text  # every number counted in its bin (not only the whole ones)
        released = released_column(view)
        first = f"{ages[0]:.1f}".replace(".", ",")
        assert released[first] == bin_labels(edges)[int(idx[0])]
        assert "Rare" not in view.title.text()  # 400 distinct numbers, each once: never named
        screenshot(view, "summary_detected_decimal_comma.png")
    finally:
        close_window(window)


# -- the Analyse tab ------------------------------------------------------------------------------------------------


def test_analyse_lists_a_kept_column_marked_and_not_tickable(qtbot, window, tmp_path):
    from PySide6.QtCore import Qt

    from optrr_engine.release.perturb import perturb_file
    from optrr_gui.analyse.view import KEPT_ROLE
    from optrr_gui.main_window import TAB_ANALYSE

    names = [c.name for c in window.state.columns]
    window.state.set_column_value(names.index("breast"), "role", "keep")
    qtbot.waitUntil(lambda: window.controller.is_idle(), timeout=WAIT_MS)
    out = tmp_path / "kept.csv"
    # the sample has rare categories (not this test's subject)
    perturb_file(window.state.data_path, window.state.to_release_config(), out, allow_rare_categories=True)
    window.tabs.setCurrentIndex(TAB_ANALYSE)
    view = window.analyse_view
    view.open_release(str(out))
    qtbot.waitUntil(lambda: view.opened is not None or "color:#cc0000" in view.info.text(), timeout=WAIT_MS)
    assert view.opened is not None, view.info.text()
    assert view.opened[0]["kept_columns"] == ["breast"]
    items = [view.attributes.item(i) for i in range(view.attributes.count())]
    kept = [it for it in items if it.data(KEPT_ROLE) is not None]
    assert len(items) == len(names) and len(kept) == 1  # 9 attributes and the kept column
    (item,) = kept
    assert item.text() == "breast — copied unchanged, not private"
    assert not item.flags() & Qt.ItemFlag.ItemIsUserCheckable and not item.flags() & Qt.ItemFlag.ItemIsEnabled
    assert item.data(Qt.ItemDataRole.CheckStateRole) is None  # no tick box drawn
    assert item.toolTip() == f"{kept_column_message('breast')}."
    assert view.kept_note.isVisible() and view.kept_note.text().startswith(kept_column_message("breast"))
    assert KEPT_COLUMN_HINT in view.kept_note.text()
    assert "1 more copied unchanged, not private" in view.info.text()
    view.set_selected(["breast", "age"])
    assert view.selected_names() == ["age"] and item.data(Qt.ItemDataRole.CheckStateRole) is None
    assert view.kept_names() == ["breast"]
    window.resize(1300, 800)
    screenshot(view, "analyse_kept_column.png")
    # another release without kept columns: no note, no kept item
    window.state.set_column_value(names.index("breast"), "role", "perturb")
    qtbot.waitUntil(lambda: window.controller.is_idle(), timeout=WAIT_MS)
    plain = tmp_path / "plain.csv"
    rare = {"allow_rare_categories": True}  # the sample has rare categories (not this test's subject)
    perturb_file(window.state.data_path, window.state.to_release_config(), plain, allow_repeat=True, **rare)
    view.open_release(str(plain))
    qtbot.waitUntil(lambda: view.opened is not None and view.release_path == str(plain), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not view.spinner.is_spinning(), timeout=WAIT_MS)
    assert view.kept_names() == [] and view.kept_note.isHidden() and view.attributes.count() == len(names)


def test_the_kept_note_speaks_of_several_columns_in_the_plural():
    from optrr_gui.analyse.view import kept_note

    several = kept_note(["GENDER", "AGE"])
    assert several.startswith("'GENDER', 'AGE' are columns copied unchanged") and "tabulate them directly" in several
    assert "tabulate it directly" in kept_note(["AGE"])
