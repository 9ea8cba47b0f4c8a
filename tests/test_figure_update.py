"""The figure renderer's two ways of showing a new figure without building axes on the UI thread in one go
(optrr_gui.plots.figure_render): a spec of the shape already drawn updates the drawn items in place (same
plots, new data, titles and tick texts), and a new shape is built one panel per step."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from optrr_engine.compare.figures import FigureSpec, PanelSpec, SeriesSpec
from optrr_gui.plots.figure_render import draw_figure, figure_steps, update_figure


def spec_of(shares: list[list[float]], title: str = "q", legend: str | None = "right") -> FigureSpec:
    """One panel per list of shares: bars (original), points with error bars (estimate), named ticks."""
    panels = []
    for j, y in enumerate(shares):
        x = np.arange(len(y), dtype=float)
        y = np.asarray(y, dtype=float)
        panels.append(
            PanelSpec(
                [
                    SeriesSpec(x, y, label="original", color="#1f77b4", kind="bars"),
                    SeriesSpec(x, y / 2, label="estimate", color="#d62728", kind="points",
                               err_low=y / 10, err_high=y / 5),
                ],
                title=f"{title}{j}",
                xticks=x,
                xtick_labels=[f"{title}{j}_{i}" for i in range(len(y))],
                legend=None,
            )
        )
    return FigureSpec(panels, columns=2, legend=legend)


@pytest.fixture
def layout(qtbot):
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    widget.show()
    yield widget.ci  # (the widget stays referenced while the test runs)


def run(steps):
    """All steps of a figure_steps generator: (number of steps before the end, the DrawnFigure)."""
    count = 0
    while True:
        try:
            next(steps)
            count += 1
        except StopIteration as done:
            return count, done.value


def test_a_figure_is_built_one_panel_per_step(layout):
    spec = spec_of([[0.2, 0.8], [0.5, 0.3, 0.2], [1.0, 0.0]])
    steps = figure_steps(layout, spec, (900, 600))
    next(steps)
    assert [type(i).__name__ for i in layout.items] == ["PlotItem"]  # one panel so far
    count, drawn = run(steps)
    assert count + 1 == len(spec.panels)
    assert drawn.plots == [layout.getItem(i // 2, i % 2) for i in range(3)]
    legends = [i for i in layout.childItems() if isinstance(i, pg.LegendItem)]
    assert len(legends) == 1 and [label.text for _s, label in legends[0].items] == ["original", "estimate"]


def test_same_shape_updates_the_drawn_items_in_place(layout):
    first = spec_of([[0.2, 0.8], [0.5, 0.3, 0.2]], title="a")
    _count, drawn = run(figure_steps(layout, first, (900, 600)))
    plots, items = list(drawn.plots), [list(s) for s in drawn.series]
    second = spec_of([[0.6, 0.4], [0.1, 0.1, 0.7, 0.1]], title="b")  # other data, a category more, other texts
    assert update_figure(drawn, second, (900, 600))
    assert [layout.getItem(0, i) for i in range(2)] == plots  # no plot (nor axis) built again
    assert [list(s) for s in drawn.series] == items
    for plot, panel, (bars_item, _none), (points, errors) in zip(
        plots, second.panels, [s[0] for s in items], [s[1] for s in items], strict=True
    ):
        bars_spec, points_spec = panel.series
        assert plot.titleLabel.text == panel.title
        assert [t for _x, t in plot.getAxis("bottom")._tickLevels[0]] == list(panel.xtick_labels)
        np.testing.assert_allclose(bars_item.opts["height"], bars_spec.y)
        np.testing.assert_allclose(points.getData()[1], points_spec.y)
        np.testing.assert_allclose(errors.opts["top"], points_spec.err_high)
        np.testing.assert_allclose(errors.opts["bottom"], points_spec.err_low)
        assert len(plot.listDataItems()) == 2  # nothing added beside the updated items


def test_another_shape_is_not_updated_and_nothing_changes(layout):
    first = spec_of([[0.2, 0.8], [0.5, 0.5]])
    _count, drawn = run(figure_steps(layout, first, (900, 600)))
    heights = [np.array(s[0][0].opts["height"]) for s in drawn.series]
    for other in (spec_of([[0.3, 0.7]]), spec_of([[0.3, 0.7], [0.1, 0.9]], legend=None)):
        assert not update_figure(drawn, other, (900, 600))
    for s, h in zip(drawn.series, heights, strict=True):
        np.testing.assert_array_equal(s[0][0].opts["height"], h)


def test_draw_figure_draws_every_panel_at_once(layout):
    spec = spec_of([[0.2, 0.8], [0.5, 0.3, 0.2], [1.0, 0.0]])
    plots = draw_figure(layout, spec, (900, 600))
    assert plots == [layout.getItem(i // 2, i % 2) for i in range(3)]
    assert all(len(p.listDataItems()) == 2 for p in plots)
