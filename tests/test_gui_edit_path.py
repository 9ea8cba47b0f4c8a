"""The path from an edit to the redrawn designs: a bulk edit is one state change and one undo step, category
counts are computed once per data change and shared, RR-Clusters' data pass is reused while the file and the
column coding stay the same."""

import os

import numpy as np
import pytest
from PySide6.QtGui import QUndoStack

from optrr_engine.release.codec import Codec
from optrr_engine.release.schema import infer_schema
from optrr_gui.common.commands import set_many
from optrr_gui.design.attribute_table import COL_EPS
from optrr_gui.state.config_bridge import category_counts, perturbed_sizes
from optrr_gui.state.session import ColumnState, SessionState
from optrr_gui.workers.jobs.clusters import clusters_design, encoded_codes
from tests.conftest import TEST_DATA
from tests.test_gui_support import close_window, open_window, wait_ready


def wide_state(n: int = 40) -> SessionState:
    s = SessionState()
    cols = [ColumnState(f"c{i}", categories=[f"v{j}" for j in range(2 + i % 5)], epsilon=1.0) for i in range(n)]
    s.load_columns("/data/wide.csv", {}, cols, n_rows=1000)
    return s


def test_a_bulk_role_change_is_one_notification_and_one_undo_step(qapp):
    s = wide_state()
    stack = QUndoStack()
    heard = []
    s.subscribe(lambda *event: heard.append(event))
    set_many(stack, s, range(40), "role", "drop")
    assert heard == [("columns", None, "role")]
    assert stack.count() == 1
    assert all(c.role == "drop" for c in s.columns)
    heard.clear()
    stack.undo()
    assert heard == [("columns", None, "role")]
    assert all(c.role == "perturb" for c in s.columns)


def test_a_bulk_edit_with_a_bad_value_changes_nothing():
    s = wide_state(3)
    with pytest.raises(ValueError):
        s.set_column_values([0, 1, 2], "epsilon", [0.5, -1.0, 0.5])
    assert [c.epsilon for c in s.columns] == [1.0, 1.0, 1.0]


def test_counts_are_shared_until_the_data_changes():
    s = wide_state()
    first = category_counts(s)
    s.set_column_value(3, "epsilon", 0.25)
    assert category_counts(s) is first  # an epsilon edit reuses the counts
    s.set_column_value(3, "role", "keep")
    second = category_counts(s)
    assert second is not first
    assert len(second.sizes) == len(first.sizes) - 1
    s.set_column_value(0, "categories", ["a", "b", "c", "d", "e", "f", "g"])
    assert category_counts(s).counts[0] == 7


def test_counts_agree_with_the_engine_codec_on_a_real_file():
    path = TEST_DATA / "heart_cleveland.csv"
    config = infer_schema(path)
    s = SessionState()
    s.load_columns(str(path), {}, [ColumnState.from_config(c) for c in config.columns])
    expected = [int(a) for a in Codec(s.to_release_config()).sizes]  # the whole configuration at once
    assert perturbed_sizes(s) == expected
    counts = category_counts(s)
    assert [counts.counts[i] for i in s.perturbed_indices()] == expected


def test_clusters_data_pass_is_reused_across_epsilon_edits(tmp_path):
    src = (TEST_DATA / "car.csv").read_text(encoding="utf-8")
    path = tmp_path / "car.csv"
    path.write_text(src, encoding="utf-8")
    config = infer_schema(path)
    k = len(config.perturbed())
    codes = encoded_codes(str(path), config)
    first = clusters_design(str(path), config, [1.0] * k, None, 50, 0.1)
    again = clusters_design(str(path), config, [0.5] * k, None, 50, 0.1)
    assert encoded_codes(str(path), config) is codes  # no second pass over the file
    assert first.ok and again.ok
    # Joint GRR per cluster with eps_C = sum of its columns' eps: the whole record gets sum eps_i.
    assert first.overall_epsilon == pytest.approx(1.0 * k, rel=1e-9)
    assert again.overall_epsilon == pytest.approx(0.5 * k, rel=1e-9)
    # Another column coding, or a changed file, means a new pass.
    dropped = infer_schema(path)
    dropped.columns[0].role = "drop"
    fewer = encoded_codes(str(path), dropped)
    assert fewer.shape == (codes.shape[0], codes.shape[1] - 1)
    path.write_text(src + src.splitlines()[1] + "\n", encoding="utf-8")
    os.utime(path, ns=(1, 1))  # a different modification time whatever the clock's resolution
    grown = encoded_codes(str(path), config)
    assert grown.shape[0] == codes.shape[0] + 1
    np.testing.assert_array_equal(grown[:-1], codes)


def test_bulk_role_change_in_the_window_is_one_change_and_opens_every_editor(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path)
    try:
        panel = window.attributes
        rows = list(range(len(window.state.columns)))
        heard = []
        window.state.subscribe(lambda *event: heard.append(event))
        count = window.stack.count()
        panel.set_roles(rows, "drop")
        panel.set_roles(rows, "perturb")
        assert heard == [("columns", None, "role")] * 2
        assert window.stack.count() == count + 2
        wait_ready(qtbot, window)
        view = panel.view
        assert all(view.indexWidget(panel.model.index(r, COL_EPS)) is not None for r in rows)
        assert window.controller.sizes == perturbed_sizes(window.state)
        assert len(window.controller.sizes) == len(rows)
    finally:
        close_window(window)
