"""The Compare tab's release preview through the real main window and engine (issue 14, item 5): the Design
tab's perturbed columns, their categories after recoding and the design marked ● (exactly the mechanism the
release would use); original vs expected perturbed vs estimated with the unbiased estimator's intervals;
recomputed in a worker when the design or the recoding changes. Expectations are computed independently
(pandas counts of the CSV, the channel written out as a matrix, the textbook GRR variance)."""

from __future__ import annotations

from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QFontMetrics, QImage

from optrr_engine.analysis.avd import avd
from optrr_engine.estimation import DEFAULT_METHOD
from optrr_gui.compare.view import ESTIMATORS, MAX_LABEL_STEP
from optrr_gui.main_window import TAB_COMPARE, TAB_DESIGN
from tests.test_gui_support import WAIT_MS, close_window, open_window

NURSERY = str(Path(__file__).parent / "data" / "nursery.csv")


@pytest.fixture
def preview(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path, NURSERY)
    window.tabs.setCurrentIndex(TAB_COMPARE)
    view = window.compare_view
    yield window, view.preview
    close_window(window)


def chosen(window):
    method = window.controller.chosen()
    return method, window.controller.current()[method]


def wait_preview(qtbot, page, ok=lambda result: True) -> dict:
    qtbot.waitUntil(lambda: page.result is not None and not page.is_running() and ok(page.result), timeout=WAIT_MS)
    return page.result


def channel_matrix(mechanism, j: int) -> np.ndarray:
    """The channel the mechanism induces on column j as an a x a matrix: P(same) p, P(one other value) q."""
    p, q = np.exp(mechanism.marginal([j]).log_pattern_probs()[:2])
    a = int(mechanism.sizes[j])
    return np.full((a, a), q) + np.eye(a) * (p - q)


def test_the_column_list_is_the_design_tabs_perturbed_columns_at_once(qtbot, preview):
    window, page = preview
    perturbed = [c.name for c in window.state.perturbed_columns()]
    # filled as soon as the tab exists, before any preview has run
    assert [page.columns.item(i).text() for i in range(page.columns.count())] == perturbed
    assert page.picked() == perturbed[:3]
    view = window.compare_view
    texts = [view.tabs.tabText(i) for i in range(view.tabs.count())]
    assert texts == ["Release preview", "Designs at your ε", "Paper figures"]
    assert [view.papers.tabText(i) for i in range(view.papers.count())] == [p.title for p in view.pages]
    # a dropped column leaves the list
    window.state.set_column_value(0, "role", "drop")
    assert page.columns.count() == len(perturbed) - 1 and perturbed[0] not in page.picked()


def test_preview_is_the_release_original_expected_estimated(qtbot, preview):
    window, page = preview
    page.set_picked(["parents", "class"])
    method, summary = chosen(window)
    result = wait_preview(qtbot, page, lambda r: [f["attribute"].iloc[0] for f in r["frames"]] == ["parents", "class"])
    mech = summary.design.mechanism
    data = pd.read_csv(NURSERY, dtype=str)
    names = [c.name for c in window.state.perturbed_columns()]
    assert result["rows"] == len(data)
    assert result["overall_epsilon"] == pytest.approx(mech.overall_epsilon(), rel=1e-12)
    z = NormalDist().inv_cdf(0.975)
    for frame in result["frames"]:
        name = frame["attribute"].iloc[0]
        j = names.index(name)
        col = window.state.columns[[c.name for c in window.state.columns].index(name)]
        assert list(frame["category"]) == list(col.categories)  # the release's categories, in code order
        truth = data[name].value_counts().reindex(col.categories, fill_value=0).to_numpy() / len(data)
        assert frame["original"].to_numpy() == pytest.approx(truth, abs=1e-12)
        expected = truth @ channel_matrix(mech, j)
        assert frame["perturbed"].to_numpy() == pytest.approx(expected, abs=1e-12)
        assert frame["attribute_epsilon"].iloc[0] == pytest.approx(mech.attribute_epsilons()[j], rel=1e-12)
        assert frame["estimated"].sum() == pytest.approx(1.0)
        assert (frame["estimator"] == DEFAULT_METHOD).all()  # the engine's default estimator
        # the interval: unbiased estimate +- z standard errors, GRR variance lambda (1 - lambda) / (n (p - q)^2)
        p, q = np.exp(mech.marginal([j]).log_pattern_probs()[:2])
        lam = frame["simulated_perturbed"].to_numpy()
        unbiased = (lam - q) / (p - q)
        assert frame["unbiased"].to_numpy() == pytest.approx(unbiased, abs=1e-9)
        se = np.sqrt(lam * (1 - lam) / (len(data) * (p - q) ** 2))
        centre = np.clip(unbiased, 0, 1)  # an estimate outside [0, 1]: the interval of the nearest bound
        assert frame["ci_high"].to_numpy() == pytest.approx(np.clip(centre + z * se, 0, 1), abs=1e-9)
        assert frame["ci_low"].to_numpy() == pytest.approx(np.clip(centre - z * se, 0, 1), abs=1e-9)
    assert "total variation distance" in page.status.text()
    for frame in page.result["frames"]:  # each column's error: the estimate's first, the noiseless perturbed one marked
        name = str(frame["attribute"].iat[0])
        est, raw = avd(frame["estimated"], frame["original"]), avd(frame["perturbed"], frame["original"])
        assert f"<b>{name}</b> estimate {est:.3f} (interval" in page.status.text()
        assert f"the perturbed shares read as they are: {raw:.3f} expected)" in page.status.text()
    legends = [item for item in page.graphics.ci.childItems() if isinstance(item, pg.LegendItem)]
    assert len(legends) == 1  # one legend for the figure, labelled: what the bars and the intervals are
    texts = [label.text for _sample, label in legends[0].items]
    assert texts[:2] == ["original data", "expected perturbed"]
    assert "95 % interval" in texts[2] and "unbiased estimator's<br>covariance" in texts[2]
    assert ESTIMATORS[DEFAULT_METHOD] in texts[2]
    plots = [page.graphics.ci.getItem(0, i) for i in range(2)]
    assert [p.titleLabel.text.split(" (")[0] for p in plots] == ["parents", "class"]
    assert METHOD_WORD[method] in page.design_label.text()


METHOD_WORD = {
    "auto": "Auto",
    "optimal": "Optimal",
    "classes": "Classes",
    "family": "Family",
    "heuristic": "Heuristic",
    "kronecker": "Kronecker",
}


def test_preview_follows_the_design_and_the_recoding(qtbot, preview):
    window, page = preview
    page.set_picked(["class"])
    wait_preview(qtbot, page)
    # another design chosen on the Design tab: the preview uses exactly its mechanism
    window.use_design("kronecker")
    kron = window.controller.current()["kronecker"]
    result = wait_preview(qtbot, page, lambda r: r["overall_epsilon"] == kron.overall_epsilon)
    assert result["overall_epsilon"] == pytest.approx(len(window.state.perturbed_columns()) * 1.0, rel=1e-9)
    # a merge of rare categories on the Design tab: the preview shows the recoded column
    j = [c.name for c in window.state.columns].index("class")
    window.tabs.setCurrentIndex(TAB_DESIGN)
    window.attributes.view.selectRow(j)
    qtbot.waitUntil(lambda: bool(window.summaries), timeout=WAIT_MS)
    window.column_panel.merge_categories(["recommend", "very_recom"], "recommended")
    window.tabs.setCurrentIndex(TAB_COMPARE)
    result = wait_preview(qtbot, page, lambda r: "recommended" in set(r["frames"][0]["category"]))
    frame = result["frames"][0]
    data = pd.read_csv(NURSERY, dtype=str)["class"]
    assert list(frame["category"]) == window.state.columns[j].categories
    merged = frame.set_index("category").loc["recommended", "rows"]
    assert merged == int(data.isin(["recommend", "very_recom"]).sum())
    assert result["overall_epsilon"] == pytest.approx(window.controller.current()["kronecker"].overall_epsilon)


def test_a_superseded_preview_is_cancelled_and_never_shown(qtbot, preview):
    window, page = preview
    wait_preview(qtbot, page)
    started = window.runner.generation(page.channel)
    window.use_design("kronecker")
    page.refresh()  # now, not after the debounce
    qtbot.waitUntil(lambda: window.runner.generation(page.channel) > started, timeout=WAIT_MS)
    window.use_design("heuristic")
    page.refresh()
    heuristic = window.controller.current()["heuristic"]
    result = wait_preview(qtbot, page, lambda r: r["overall_epsilon"] == heuristic.overall_epsilon)
    assert window.runner.generation(page.channel) >= started + 2
    assert result["overall_epsilon"] == pytest.approx(heuristic.design.mechanism.overall_epsilon(), rel=1e-12)


@pytest.mark.parametrize("size", [(1280, 800), (1024, 600)])
def test_preview_renders_at_laptop_sizes(qtbot, preview, tmp_path, size):
    """The window at 1280 x 800 and 1024 x 600: the figure is laid out again at the new size, each category name
    fits the room under its bars, and the tab renders to a PNG of the window's size."""
    window, page = preview
    page.set_picked(["parents", "health", "class"])
    wait_preview(qtbot, page, lambda r: len(r["frames"]) == 3)
    window.resize(*size)
    graphics = page.graphics
    qtbot.waitUntil(lambda: page._drawn_size == (graphics.width(), graphics.height()), timeout=WAIT_MS)
    assert graphics.width() > 300 and graphics.height() > 200
    for i, frame in enumerate(page.result["frames"]):
        plot = graphics.ci.getItem(i // 2, i % 2)
        ticks = plot.getAxis("bottom")._tickLevels[0]
        room = plot.getViewBox().width() / len(frame)
        metrics = QFontMetrics(plot.getAxis("bottom").style["tickFont"] or graphics.font())
        shown = [(i, metrics.horizontalAdvance(t)) for i, (_x, t) in enumerate(ticks) if t]
        assert shown and shown[0][0] == 0
        # names too wide for one bar go under every other (or third) bar: neighbours shown never overlap
        assert all((wa + wb) / 2 <= room * (b - a) for (a, wa), (b, wb) in zip(shown, shown[1:], strict=False))
        assert all(w <= room * MAX_LABEL_STEP for _i, w in shown)
    path = tmp_path / f"compare-{size[0]}x{size[1]}.png"
    assert window.grab().save(str(path))
    assert (QImage(str(path)).width(), QImage(str(path)).height()) == (window.width(), window.height())
