"""The Compare tab over the real comparison harness: each page (the release preview and the paper figures)
computes in the background, plots with pyqtgraph, and exports PNG, SVG and CSV."""

from __future__ import annotations

import pandas as pd
import pytest
from PySide6.QtGui import QImage

from optrr_engine.compare import output
from optrr_gui.main_window import TAB_COMPARE
from tests.test_gui_support import WAIT_MS, close_window, open_window


@pytest.fixture
def compare(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path)
    window.tabs.setCurrentIndex(TAB_COMPARE)
    view = window.compare_view
    assert view is not None
    qtbot.waitUntil(lambda: not view.is_busy(), timeout=WAIT_MS)  # the first picture runs at once
    yield window, view
    close_window(window)


def exported(page, tmp_path, stem):
    paths = {kind: tmp_path / f"{stem}.{kind}" for kind in ("png", "svg", "csv")}
    for kind, path in paths.items():
        assert page.export(kind, str(path)), kind
        assert path.stat().st_size > 200, kind
    assert QImage(str(paths["png"])).width() >= 1200
    assert "<svg" in paths["svg"].read_text()[:2000]
    return pd.read_csv(paths["csv"])


def test_ratio_curves_page(qtbot, compare, tmp_path):
    _window, view = compare
    page = view.pages[0]
    page.ks.setText("3, 4")
    page.sets.setValue(6)
    page.figure.setCurrentIndex(0)  # Fig. 1
    assert page.run()
    qtbot.waitUntil(lambda: not page.is_running(), timeout=WAIT_MS)
    frame = exported(page, tmp_path, "ratios")
    assert set(frame["k"]) == {3, 4}
    assert set(frame["method"]) == {"kronecker", "optimal", "heuristic"}
    kron = frame[frame["method"] == "kronecker"]["ratio_to_sum"]
    assert kron.to_numpy() == pytest.approx(1.0)  # Kronecker's whole-record epsilon is the sum
    opt = frame[frame["method"] == "optimal"]["ratio_to_sum"]
    assert (opt < 1.0).all()
    assert len(page.graphics.ci.items) == 2  # one panel per k


def test_the_tab_draws_the_engine_figure_with_its_colours_and_labels(qtbot, compare):
    """The tab and ``optrr compare`` draw the same FigureSpec: titles, axis labels, colours and markers."""
    _window, view = compare
    page = view.pages[0]
    page.ks.setText("3, 4")
    page.sets.setValue(5)
    page.figure.setCurrentIndex(2)  # Fig. 3: fixed epsilons, against the sum of the a_i
    assert page.run()
    qtbot.waitUntil(lambda: not page.is_running() and set(page.frame["mode"]) == {"fixed_epsilons"}, timeout=WAIT_MS)
    spec = output.ratios_figure(page.frame, "ratio_to_sum")
    for i, panel in enumerate(spec.panels):
        plot = page.graphics.ci.getItem(0, i)
        assert plot.titleLabel.text == panel.title
        assert plot.getAxis("bottom").labelText == panel.xlabel == "Σ a_i"
        assert plot.getAxis("left").labelText == panel.ylabel
        drawn = [(item.opts["symbolBrush"], item.opts["symbol"]) for item in plot.listDataItems()]
        assert drawn == [(s.color, s.marker) for s in panel.series]


def test_avd_page_on_the_loaded_data(qtbot, compare, tmp_path):
    _window, view = compare
    page = view.pages[1]
    page.subsets.setValue(3)
    page.target.setValue(5.0)
    assert page.run()
    qtbot.waitUntil(lambda: page.frame is not None and not page.is_running(), timeout=WAIT_MS)
    frame = exported(page, tmp_path, "avd")
    assert set(frame["way"]) == {2, 3, 4, 5}
    ok = frame[frame["mean_avd"].notna()]
    assert not ok.empty and (ok["overall_epsilon"] <= 5.0 + 1e-6).all()
    assert ((ok["mean_avd"] >= 0) & (ok["mean_avd"] <= 1)).all()


def test_release_preview_page_exports(qtbot, compare, tmp_path):
    """The preview (the Design tab's design and categories; details in test_gui_preview.py) exports too."""
    window, view = compare
    page = view.preview
    view.tabs.setCurrentIndex(0)
    qtbot.waitUntil(lambda: page.frame is not None and not page.is_running(), timeout=WAIT_MS)
    frame = exported(page, tmp_path, "preview")
    for col in ("original", "perturbed", "estimated"):
        assert frame.groupby("attribute")[col].sum().to_numpy() == pytest.approx(1.0)
    method = window.controller.chosen()
    assert frame["overall_epsilon"].to_numpy() == pytest.approx(window.controller.current()[method].overall_epsilon)
    assert "Total variation" not in page.status.text() and "total variation distance" in page.status.text()


def test_cancel_a_comparison(qtbot, compare):
    _window, view = compare
    page = view.pages[0]
    page.ks.setText("10, 12")
    page.sets.setValue(500)
    assert page.run()
    qtbot.waitUntil(lambda: page.progress.value() > 0 or not page.is_running(), timeout=WAIT_MS)
    page.cancel()
    assert not page.is_running()
    assert page.status.text() == "Cancelled."


def test_avd_page_with_the_bloom_schemes_per_attribute(qtbot, compare, tmp_path):
    _window, view = compare
    page = view.pages[1]
    page.subsets.setValue(2)
    page.target.setValue(1.0)
    page.axis.setCurrentIndex(page.axis.findData("per_attribute"))
    page.bloom.setChecked(True)
    assert page.run()
    qtbot.waitUntil(lambda: page.frame is not None and not page.is_running(), timeout=WAIT_MS)
    frame = exported(page, tmp_path, "avd")
    assert {"lopub", "locop", "brr", "kronecker"} <= set(frame["method"])
    assert (frame["epsilon_axis"] == "per_attribute").all()
    bloom = frame[frame["method"].isin(["lopub", "locop", "brr"])]
    assert bloom["mean_avd"].between(0, 1).all()
    assert (bloom["mean_attribute_epsilon"] <= 1.0 * (1 + 1e-9)).all()


def test_designs_page_releases_every_ranked_design_from_the_loaded_data(qtbot, compare, tmp_path):
    """Designs at your ε: the target follows the Design tab until the user sets it; the rows are the engine
    recommender's candidates in its order (★ first), each at most the target, measured on the loaded file."""
    import numpy as np

    from optrr_engine.tolerance import eps_within
    from optrr_engine.utility.recommend import recommend
    from optrr_gui.state import needed_marginals
    from optrr_gui.state.design_summary import METHOD_LABELS

    window, view = compare
    page = view.designs
    view.tabs.setCurrentIndex(1)
    assert page.intro.isVisibleTo(page) and "nothing is written" in page.intro.text()  # says what Run does
    method = window.controller.chosen()
    summary = window.controller.current()[method]
    assert page.target.value() == pytest.approx(summary.overall_epsilon, abs=0.005)
    page.target.setValue(3.0)  # the user's own: no longer follows the Design tab
    page.follow_design()
    assert page.target.value() == 3.0
    page.repetitions.setValue(1)
    page.sets.setValue(3)
    assert page.run()
    qtbot.waitUntil(lambda: page.result is not None and not page.is_running(), timeout=WAIT_MS)
    assert not page.intro.isVisibleTo(page) and page.table.isVisibleTo(page)  # the result takes its place
    rows = page.result["rows"]
    state = window.state
    names = [c.name for c in state.perturbed_columns()]
    sizes = [int(a) for a in summary.design.mechanism.sizes]
    rec = recommend(sizes, 3.0, state.weights(), rows=page.result["rows_in_file"],
                    marginals=needed_marginals.spec(state.needed_marginals, names))
    expected = [r.candidate.name for r in rec.ranked if r.error is not None]
    assert list(rows.sort_values("rank").drop_duplicates("design")["design"]) == expected
    assert all(eps_within(e, 3.0) for e in rows["whole_record_epsilon"])
    assert page.table.rowCount() == len(expected)
    assert page.table.item(0, 0).text() == "★" and page.table.item(1, 0).text() == ""
    assert page.table.item(0, 1).text() == METHOD_LABELS.get(expected[0], expected[0])
    legend = [series.label for series in page._spec.panels[0].series]  # the table's names, not the engine's
    assert "Sample-2" in legend and "SMP" in legend and "sample-2" not in legend and "smp" not in legend
    smp = rows[(rows["design"] == "smp") & (rows["way"] == 2)]
    assert smp["unanswered"].iat[0] == smp["marginals"].iat[0] > 0  # one column per row: no pair
    answered = rows[rows["unanswered"] == 0]
    assert np.isfinite(answered["measured_avd"]).all() and (answered["measured_avd"] <= 1).all()
    frame = exported(page, tmp_path, "designs")
    assert set(frame["way"]) == {1, 2, 3}
    # 3 tables per size of the file's: the status says the columns average a random sample, unlike the ★
    from math import comb

    k = len(names)
    assert f"The columns average 3 of the {k} 1-way tables, 3 of the {comb(k, 2):,} 2-way tables and 3 of the " \
        f"{comb(k, 3):,} 3-way tables, drawn at random" in page.status.text()
    assert "which is ranked on every table needed" in page.status.text()
    page.grab().save(str(tmp_path / "designs.png"))
