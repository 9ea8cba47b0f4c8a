"""The exact LP over the grid of classes of identical (a_i, eps_i) (designs/optimal_lp.ClassLPProblem) gives the same
design as the LP over all 2^k patterns: the same optimum, the same eps_i (relative 1e-9), a valid certificate, a
mechanism checked against brute-force dense matrices; and budget mode finds the same scale. No timing here
(bench/optimal_budget.py times it)."""

import numpy as np
import pytest

from optrr_engine.budget import distribute_budget, forget_remembered
from optrr_engine.dense import dense_epsilons, dense_matrix
from optrr_engine.designs import optimal_lp, run_design
from optrr_engine.tolerance import eps_equal

#: (sizes, eps_i): repeated (a, eps) in 1-4 classes, and one request without repeats (no reduction); every
#: domain small enough for a dense matrix (prod a_i <= 4096).
CASES = [
    ([2, 3, 2, 3, 2], [1.0] * 5),
    ([4, 3, 3, 4, 2, 3, 3], [0.6] * 7),  # cirrhosis' first columns at an equal share
    ([2, 2, 5, 5, 3, 3, 2], [0.4, 0.4, 2.0, 2.0, 1.0, 1.0, 0.4]),
    ([3, 3, 3, 3, 3, 3, 3], [0.2, 0.2, 0.2, 2.5, 2.5, 2.5, 2.5]),
    ([2, 3, 4, 5, 2, 3, 2], [0.8] * 7),  # four classes, as cirrhosis' 19 columns
    ([2, 3, 4, 5], [0.5, 1.0, 1.5, 2.0]),
]


def _classes(sizes, eps) -> int:
    return len(set(zip(sizes, eps, strict=True)))


@pytest.mark.parametrize(("sizes", "eps"), CASES)
def test_class_lp_equals_full_lp(sizes, eps, monkeypatch):
    fast = run_design("optimal", sizes, eps)
    with monkeypatch.context() as m:
        m.setattr(optimal_lp, "lp_problem", optimal_lp.LPProblem)
        slow = run_design("optimal", sizes, eps)
    assert slow.info["lp_columns"] == 2 ** len(sizes) + 1
    counts = np.unique(list(zip(sizes, eps, strict=True)), axis=0, return_counts=True)[1]
    grid = int(np.prod(counts + 1))
    reduced = grid < 2 ** len(sizes)
    assert fast.info["lp_rows"] == (_classes(sizes, eps) if reduced else len(sizes))
    assert fast.info["lp_columns"] == (grid if reduced else 2 ** len(sizes)) + 1
    assert eps_equal(fast.overall_epsilon, slow.overall_epsilon)
    assert np.all(eps_equal(fast.attribute_epsilons, slow.attribute_epsilons))
    assert np.all(eps_equal(fast.attribute_epsilons, np.asarray(eps)))
    # the certificate (the class dual lifted to the full LP) is valid and tight
    assert fast.info["lower_bound"] <= fast.overall_epsilon * (1 + 1e-12)
    assert fast.info["certified_gap"] <= 1e-9 * fast.overall_epsilon
    # the mechanism, spread back over the patterns, against brute force
    overall, per = dense_epsilons(dense_matrix(fast.mechanism), sizes)
    assert abs(overall - fast.overall_epsilon) < 1e-9
    np.testing.assert_allclose(per, eps, rtol=1e-9)
    assert fast.mechanism.self_check().ok


def test_class_lp_is_symmetric_within_classes():
    """The symmetric optimum (the full LP returns an asymmetric vertex here): swapping two attributes of one class
    maps the pattern table to itself."""
    sizes, eps = [4, 3, 3, 4, 2, 3, 3], [0.6] * 7
    log_x = run_design("optimal", sizes, eps).mechanism.log_pattern_probs()
    masks = np.arange(1 << len(sizes))
    for i, j in [(0, 3), (1, 2), (2, 6)]:  # a = 4, 3, 3
        bit_i, bit_j = (masks >> i) & 1, (masks >> j) & 1
        swapped = masks & ~((1 << i) | (1 << j)) | bit_i << j | bit_j << i
        np.testing.assert_allclose(log_x[swapped], log_x, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("sizes", "weights", "target"),
    [([4, 3, 3, 4, 2, 3, 3, 3, 3, 4], [1.0] * 10, 3.0), ([2, 2, 3, 3, 5, 5, 4], [1, 1, 0.5, 0.5, 1, 1, 0.2], 2.0)],
)
def test_budget_mode_same_scale_and_design(sizes, weights, target, monkeypatch):
    forget_remembered()
    fast = distribute_budget("optimal", sizes, weights, target)
    forget_remembered()
    with monkeypatch.context() as m:
        m.setattr(optimal_lp, "lp_problem", optimal_lp.LPProblem)
        slow = distribute_budget("optimal", sizes, weights, target)
    forget_remembered()
    assert fast.design.info["lp_columns"] < slow.design.info["lp_columns"]
    assert abs(fast.scale - slow.scale) <= 1e-9 * slow.scale
    assert eps_equal(fast.design.overall_epsilon, slow.design.overall_epsilon)
    assert np.all(eps_equal(fast.design.attribute_epsilons, slow.design.attribute_epsilons))
    assert fast.design.overall_epsilon <= target * (1 + 1e-9)
