"""One bar per column stays readable for many columns (issue 14, item 7): the mechanism panel's ε chart draws
horizontal bars with every column's name on its own row and scrolls, checked on a synthetic 77-column survey
through the real main window and engine; the chart and the window are rendered to PNG."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtGui import QFontMetrics, QImage
from PySide6.QtWidgets import QApplication

from optrr_gui.main_window import TAB_DESIGN
from optrr_gui.plots.column_bars import ACHIEVED_COLOR, HIGHER_COLOR, LOWER_COLOR, EpsilonBars
from tests.test_gui_support import WAIT_MS, close_window, open_window

TOPICS = (
    "smoking_status", "alcohol_use_past_30_days", "physical_activity_level", "self_rated_health",
    "diabetes_diagnosed_by_doctor", "high_blood_pressure_ever", "asthma_current", "copd_diagnosis",
    "depression_screening_result", "anxiety_last_two_weeks", "sleep_hours_category", "bmi_category",
    "insurance_coverage_type", "usual_source_of_care", "emergency_visits_last_year",
    "hospital_admissions_last_12_months", "flu_vaccine_this_season", "covid19_vaccination_status",
    "education_highest_level", "employment_status", "household_income_bracket", "marital_status",
    "region_of_residence", "urban_rural_classification", "age_group", "sex",
)
LEVELS = ("never", "former", "current", "rarely", "sometimes", "often", "always", "unknown", "refused",
          "not applicable", "very good", "excellent")


def survey_csv(path, columns: int = 77, rows: int = 600, seed: int = 7) -> list[str]:
    """A synthetic survey: ``columns`` categorical columns of 2-12 categories with realistic names (a topic,
    and for repeats a wave suffix), ``rows`` rows drawn from skewed distributions. Returns the names."""
    rng = np.random.default_rng(seed)
    names = [TOPICS[i % len(TOPICS)] + ("" if i < len(TOPICS) else f"_wave{i // len(TOPICS) + 1}")
             for i in range(columns)]
    sizes = rng.integers(2, 13, size=columns)
    data = []
    for a in sizes:
        shares = rng.dirichlet(np.full(a, 2.0))
        data.append(rng.choice(np.array(LEVELS[:a], dtype=object), size=rows, p=shares))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(names)
        writer.writerows(zip(*data, strict=True))
    return names


@pytest.fixture
def wide(qtbot, tmp_path):
    path = tmp_path / "survey77.csv"
    names = survey_csv(path)
    window = open_window(qtbot, tmp_path, str(path))
    window.resize(1280, 800)
    window.tabs.setCurrentIndex(TAB_DESIGN)
    yield window, names
    close_window(window)


def test_the_epsilon_chart_of_77_columns_is_horizontal_named_and_scrolls(qtbot, wide, tmp_path):
    window, names = wide
    chart = window.mechanism.chart
    perturbed = [c.name for c in window.state.perturbed_columns()]
    assert len(perturbed) == 77
    qtbot.waitUntil(lambda: chart.names == perturbed, timeout=WAIT_MS)
    # horizontal bars: one row per column (y = its position), the length is the epsilon
    requested, achieved = chart.bars
    assert list(requested.opts["y"] + achieved.opts["y"]) == pytest.approx(list(2 * np.arange(77)))
    assert list(requested.opts["width"]) == pytest.approx(window.state.requested_epsilons())
    assert list(achieved.opts["width"]) == pytest.approx(chart.values[1])
    # every name on its own row, in order, elided only when longer than the room it has
    ticks = chart.plot.getAxis("left")._tickLevels[0]
    assert [i for i, _t in ticks] == list(range(77))
    for (_i, text), name in zip(ticks, perturbed, strict=True):
        assert text == name or ("…" in text and len(text) < len(name))
    assert chart.row_px >= QFontMetrics(chart.font()).height()  # rows never lower than a line of the names
    # the rows do not fit: the chart scrolls, and the first and last names can be scrolled into view
    QApplication.processEvents()
    bar = chart.verticalScrollBar()
    assert chart.plot.minimumHeight() >= 77 * chart.row_px > chart.viewport().height()
    assert bar.maximum() > 0
    bar.setValue(bar.maximum())
    QApplication.processEvents()
    image = tmp_path / "eps-chart-77.png"
    assert chart.grab().save(str(image))
    assert QImage(str(image)).height() == chart.height()


def test_few_columns_share_the_height_without_scrolling(qtbot):
    chart = EpsilonBars()
    qtbot.addWidget(chart)
    chart.resize(480, 300)
    chart.show()
    names = [f"column {i}" for i in range(10)]
    chart.set_data(names, [1.0] * 10, [0.5] + [1.0] * 8 + [2.0])
    qtbot.waitUntil(lambda: chart.plot.height() >= chart.viewport().height() - 2)
    assert chart.verticalScrollBar().maximum() == 0
    brushes = chart.bars[1].opts["brushes"]
    colours = [b.color().getRgb()[:3] for b in brushes]
    assert colours[0] == LOWER_COLOR and colours[1] == ACHIEVED_COLOR and colours[-1] == HIGHER_COLOR
    chart.set_data(names * 8, [1.0] * 80, [1.0] * 80)  # 80 rows: now it scrolls
    qtbot.waitUntil(lambda: chart.verticalScrollBar().maximum() > 0)
