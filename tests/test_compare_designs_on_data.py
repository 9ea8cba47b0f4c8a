"""The recommender's designs released from the user's data (optrr_engine.compare.designs_on_data)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from optrr_engine.compare.designs_on_data import MAX_CELLS, choose_marginals, compare_designs
from optrr_engine.errors import Cancelled, InputError
from optrr_engine.tolerance import eps_within
from optrr_engine.utility.recommend import recommend


def correlated_codes(n: int, sizes, seed: int = 3) -> np.ndarray:
    """Attributes that copy the first one's value (mod their size) with probability 0.6."""
    rng = np.random.default_rng(seed)
    first = rng.integers(0, sizes[0], n)
    cols = [first]
    for a in sizes[1:]:
        copy = rng.random(n) < 0.6
        cols.append(np.where(copy, first % a, rng.integers(0, a, n)))
    return np.column_stack(cols).astype(np.int64)


def test_every_ranked_design_is_released_and_ranked_as_the_recommender_ranks():
    sizes = [2, 3, 2, 4]
    codes = correlated_codes(3000, sizes)
    rows, ranking = compare_designs(codes, sizes, 2.0, marginals={"orders": [1, 2]}, sets=10, repetitions=2, seed=1)
    rec = recommend(sizes, 2.0, rows=3000, marginals={"orders": [1, 2]})
    expected = [r.candidate.name for r in rec.ranked if r.error is not None]
    by_rank = rows.drop_duplicates("design").sort_values("rank")
    assert list(by_rank["design"]) == expected
    assert ranking["chosen"] == expected[0]
    for _, row in by_rank.iterrows():
        assert eps_within(row["whole_record_epsilon"], 2.0)  # never above the target (relative tolerance)
    assert set(rows["way"]) == {1, 2, 3}
    # all 4 attributes, all 6 pairs and the 4 triples fit in 10 per size
    assert rows.groupby("way")["marginals"].first().to_dict() == {1: 4, 2: 6, 3: 4}


def test_a_sampling_design_that_cannot_answer_a_joint_table_says_so():
    sizes = [2, 2, 3]
    rows, _ = compare_designs(correlated_codes(2000, sizes), sizes, 1.0, sets=5, repetitions=1, seed=2)
    smp = rows[rows["design"] == "smp"].set_index("way")
    assert smp.loc[1, "unanswered"] == 0 and np.isfinite(smp.loc[1, "measured_avd"])
    assert smp.loc[2, "unanswered"] == smp.loc[2, "marginals"] == 3  # one column per row: no pair is seen
    assert np.isnan(smp.loc[2, "measured_avd"]) and smp.loc[2, "predicted_avd"] == np.inf
    assert "1 of 3" in smp.loc[1, "note"]


def test_a_release_that_keeps_the_data_has_no_error():
    """At the largest usable epsilon (50 per column) a mechanism design releases the data unchanged: every marginal
    is exact (a larger target is refused: no column may exceed 50)."""
    sizes = [2, 3, 2]
    rows, _ = compare_designs(
        correlated_codes(500, sizes), sizes, 150.0, sets=5, repetitions=1, seed=4, estimator="unbiased"
    )
    kron = rows[rows["design"] == "kronecker"]
    assert np.allclose(kron["measured_avd"], 0.0, atol=1e-9)


def test_measured_error_agrees_with_the_prediction_within_its_standard_error():
    """The unbiased estimator's mean AVD over many releases against the predicted AVD of the same marginals
    (6 standard errors of the measured mean: a failure is a real disagreement, not noise)."""
    sizes = [2, 3, 2]
    rows, _ = compare_designs(
        correlated_codes(4000, sizes), sizes, 3.0, sets=3, repetitions=30, seed=5, estimator="unbiased"
    )
    kron = rows[(rows["design"] == "kronecker") & (rows["way"] <= 2)]
    for _, row in kron.iterrows():
        count = row["marginals"] * row["repetitions"]
        assert abs(row["measured_avd"] - row["predicted_avd"]) <= 6 * row["sd_avd"] / np.sqrt(count), row


def test_choose_marginals_takes_all_when_few_else_distinct_random_sets_within_the_cell_limit():
    rng = np.random.default_rng(0)
    assert choose_marginals([2, 3, 4], 2, 10, rng) == list(combinations(range(3), 2))
    sizes = [5] * 12
    sets = choose_marginals(sizes, 3, 15, rng)
    assert len(sets) == len(set(sets)) == 15 and all(len(s) == 3 for s in sets)
    big = [200, 200, 2]
    assert choose_marginals(big, 2, 10, rng) == [(0, 2), (1, 2)]  # 200 x 200 = 40,000 > MAX_CELLS
    assert 200 * 200 > MAX_CELLS
    assert choose_marginals([2, 2], 3, 5, rng) == []


def test_bad_input_and_cancel():
    sizes = [2, 2]
    codes = correlated_codes(100, sizes)
    with pytest.raises(InputError, match="positive"):
        compare_designs(codes, sizes, 0.0)
    with pytest.raises(InputError, match="no rows"):
        compare_designs(codes[:0], sizes, 1.0)
    with pytest.raises(InputError, match="one column per attribute"):
        compare_designs(codes, [2, 2, 2], 1.0)
    with pytest.raises(Cancelled):
        compare_designs(codes, sizes, 1.0, cancel=lambda: True)


def test_a_table_only_too_noisy_at_these_rows_keeps_its_predicted_error():
    """Car's sizes at whole-record epsilon 1 and 1,728 rows: ``auto`` is recommended for the pairs although the
    unbiased estimate of some pairs has a cell sd >= 1. Its predicted 2-way error (the default estimate's) is
    shown, not "not identifiable", which stays for the tables a design erases (SMP's pairs)."""
    sizes = [4, 4, 4, 3, 3, 3, 4]
    rows, ranking = compare_designs(
        correlated_codes(1728, sizes), sizes, 1.0, marginals={"orders": [2]}, sets=4, repetitions=1, seed=3
    )
    assert ranking["chosen"] == "auto"
    top = next(c for c in ranking["candidates"] if c["design"] == "auto")
    assert top["non_identifiable"] and not top["erased"]
    auto = rows[(rows["design"] == "auto") & (rows["way"] == 2)].iloc[0]
    assert np.isfinite(auto["predicted_avd"]) and auto["not_identifiable"] == ""
    smp = rows[(rows["design"] == "smp") & (rows["way"] == 2)].iloc[0]
    assert smp["predicted_avd"] == np.inf and smp["not_identifiable"].startswith("never reported")
