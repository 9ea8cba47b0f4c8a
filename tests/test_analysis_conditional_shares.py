"""Row and column shares of a two-way table: the engine's arithmetic, which the Analyse tab shows."""

import numpy as np

from optrr_engine.analysis import conditional_shares


def test_row_shares_sum_to_one_per_row_and_column_shares_per_column():
    joint = np.array([[0.1, 0.3], [0.2, 0.4]])
    rows = conditional_shares(joint, axis=1)
    cols = conditional_shares(joint, axis=0)
    np.testing.assert_allclose(rows, [[0.25, 0.75], [1 / 3, 2 / 3]])
    np.testing.assert_allclose(cols, [[1 / 3, 3 / 7], [2 / 3, 4 / 7]])
    np.testing.assert_allclose(rows.sum(axis=1), 1.0)
    np.testing.assert_allclose(cols.sum(axis=0), 1.0)


def test_a_row_or_column_without_a_positive_sum_is_nan_not_a_division_warning():
    joint = [[0.0, 0.0], [0.5, 0.5], [0.25, -0.25]]  # an estimate may be negative
    with np.errstate(all="raise"):
        rows = conditional_shares(joint, axis=1)
        cols = conditional_shares([[0.0, 0.2], [0.0, 0.8]], axis=0)
    assert np.isnan(rows[0]).all() and np.isnan(rows[2]).all()
    np.testing.assert_allclose(rows[1], [0.5, 0.5])
    assert np.isnan(cols[:, 0]).all()
    np.testing.assert_allclose(cols[:, 1], [0.2, 0.8])
