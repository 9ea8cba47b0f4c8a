"""How the Compare tab's release preview is drawn without stalling the window (issue 14): a new figure is built
one panel per turn of the event loop (the page counts as busy until it is complete), and a new result of the same
shape (an epsilon edit) is shown in the panels already there, with the new values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest

from optrr_gui.common.commands import SetColumnValue
from optrr_gui.main_window import TAB_COMPARE
from tests.test_gui_support import WAIT_MS, close_window, open_window

NURSERY = str(Path(__file__).parent / "data" / "nursery.csv")
PICKED = ["parents", "health", "class"]


@pytest.fixture
def preview(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path, NURSERY)
    window.tabs.setCurrentIndex(TAB_COMPARE)
    page = window.compare_view.preview
    page.set_picked(PICKED)
    wait_shown(qtbot, page)
    yield window, page
    close_window(window)


def wait_shown(qtbot, page, ok=lambda result: True) -> dict:
    def shown() -> bool:
        r = page.result
        return r is not None and not page.is_running() and [f["attribute"].iat[0] for f in r["frames"]] == PICKED
    qtbot.waitUntil(lambda: shown() and ok(page.result), timeout=WAIT_MS)
    return page.result


def plots(page) -> list:
    return [item for item in page.graphics.ci.items if isinstance(item, pg.PlotItem)]


def test_a_new_figure_is_built_across_event_loop_turns(qtbot, preview):
    _window, page = preview
    page.clear_plots()
    page.draw(page.result)
    assert page.drawing() and page.is_running()  # the UI thread is back before every panel is built
    assert len(plots(page)) < len(PICKED)
    qtbot.waitUntil(lambda: not page.drawing(), timeout=WAIT_MS)
    assert not page.is_running()
    assert [p.titleLabel.text.split(" (")[0] for p in plots(page)] == PICKED
    assert page.graphics.updatesEnabled()


def test_an_epsilon_edit_redraws_the_same_panels_with_the_new_values(qtbot, preview):
    window, page = preview
    before, drawn = page.result, plots(page)
    column = [c.name for c in window.state.columns].index(PICKED[0])
    window.stack.push(SetColumnValue(window.state, column, "epsilon", 0.2))
    result = wait_shown(qtbot, page, lambda r: r is not before)
    assert not page.drawing()  # updated at once, in place
    assert plots(page) == drawn  # no plot (and no axis) built again
    for plot, frame in zip(drawn, result["frames"], strict=True):
        eps = frame["attribute_epsilon"].iat[0]
        assert plot.titleLabel.text.startswith(f"{frame['attribute'].iat[0]} (ε {eps:.3g}")
        heights = sorted(tuple(np.round(item.opts["height"], 12)) for item in plot.items
                         if isinstance(item, pg.BarGraphItem))
        expected = sorted(tuple(np.round(frame[c].to_numpy(), 12)) for c in ("original", "perturbed", "estimated"))
        assert heights == expected
    assert result["frames"][0]["attribute_epsilon"].iat[0] == pytest.approx(0.2, rel=1e-9)
