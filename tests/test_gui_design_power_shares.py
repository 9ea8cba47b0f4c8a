"""The Design tab's line under the design table evaluates the tests of association at the loaded file's own
shares (a rare outcome: much weaker than at uniform margins), computed from the rows read (the column summaries),
and says so; before the rows are summarised, at uniform margins."""

from __future__ import annotations

from itertools import combinations

import pytest

from optrr_engine.analysis.power import design_power
from optrr_gui.state.config_bridge import column_codec, column_shares
from optrr_gui.state.design_summary import association_power
from tests.test_design_power_shares import write_rare_csv
from tests.test_gui_support import WAIT_MS, close_window, open_window


@pytest.fixture
def rare_window(qtbot, tmp_path):
    data = tmp_path / "rare.csv"
    counts = write_rare_csv(data)
    window = open_window(qtbot, tmp_path, str(data))
    qtbot.waitUntil(lambda: bool(window.summaries), timeout=WAIT_MS)
    yield window, counts
    close_window(window)


def idle(qtbot, window) -> None:
    c, panel = window.controller, window.mechanism
    qtbot.waitUntil(lambda: c.is_idle() and not c.running() and not panel.drawing_pending(), timeout=WAIT_MS)
    panel.flush()


def test_the_line_under_the_design_table_uses_the_loaded_files_shares(qtbot, rare_window):
    window, counts = rare_window
    idle(qtbot, window)
    cols = window.state.perturbed_columns()
    # the file's own shares, in the codec's category order (the design's)
    expected = []
    for col in cols:
        labels = column_codec(col).labels
        total = sum(counts[col.name].values())
        expected.append([counts[col.name][label] / total for label in labels])
    flat = [x for v in expected for x in v]
    assert [x for v in column_shares(window.state) for x in v] == pytest.approx(flat)
    c = window.controller
    assert [x for v in c.request["shares"] for x in v] == pytest.approx(flat)
    method = window.mechanism.shown_method
    s = c.current()[method]
    pairs = list(combinations(range(len(cols)), 2))
    at_shares = design_power(s.design.mechanism, window.state.n_rows, pairs, expected)
    uniform = design_power(s.design.mechanism, window.state.n_rows, pairs)
    assert s.test_power["margins"] == "file" and s.test_power["median_w"] == pytest.approx(at_shares["median_w"])
    assert at_shares["weakest_w"] > 2 * uniform["weakest_w"]  # the rare outcome's tables: far weaker
    text = window.mechanism.power_line.text()
    assert window.mechanism.power_line.isVisible() and "at your file's shares" in text and "not released" in text
    assert f"the weakest table {at_shares['weakest_w']:.2g}" in text
    # without the file's shares (before the rows are read): uniform margins, said so
    before = association_power(s.design.mechanism, window.state.n_rows, [], None)
    assert before is None  # no 2-way table: nothing to say
    from optrr_engine.utility.candidate import candidate_of

    pe = candidate_of(s.design.mechanism).predicted_error(window.state.n_rows, {"orders": [2]})
    plain = association_power(s.design.mechanism, window.state.n_rows, pe.marginals, None)
    assert plain["margins"] == "uniform" and "uniform margins" in plain["statement"]
