"""The recommender (optrr_engine.utility.recommend): it picks the candidate with the smallest predicted error,
the SMP candidate's sampling weights are optimal for the needed 1-way marginals, and the recommended design's
predicted error matches simulation."""

import numpy as np
import pytest
from scipy.optimize import minimize

from optrr_engine.estimation import estimate_from_counts
from optrr_engine.estimation.counts import count_codes
from optrr_engine.estimation.sampled import estimate_sampled_codes
from optrr_engine.sampling import make_sampling_design
from optrr_engine.utility.candidate import MechanismCandidate
from optrr_engine.utility.recommend import recommend
from optrr_engine.utility.sampling import SamplingCandidate, sampling_candidates, smp_weights

SIZES = [3, 2, 5, 2]


def smp_score(weights, n, spec, target=1.0):
    design = make_sampling_design("smp", SIZES, target, weights=weights)
    return SamplingCandidate(design).predicted_error(n, spec).unbiased_score()  # the criterion of smp_weights


def test_smp_weights_minimise_the_predicted_one_way_error():
    spec = {"orders": [1]}
    w = smp_weights(SIZES, 1.0, spec)
    assert w.sum() == pytest.approx(1.0)

    def f(z):  # softmax parametrisation of the simplex, minimised by scipy independently of the closed form
        p = np.exp(z - z.max())
        return smp_score(p / p.sum(), 1000, spec)

    res = minimize(f, np.zeros(len(SIZES)), method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-12})
    assert smp_score(w, 1000, spec) <= res.fun * (1 + 1e-9)
    assert smp_score(w, 1000, spec) == pytest.approx(res.fun, rel=1e-4)
    assert smp_score(w, 1000, spec) < smp_score(None, 1000, spec)  # better than uniform (the sizes differ)


def test_smp_weights_drop_attributes_not_needed_and_skip_joint_needs():
    w = smp_weights(SIZES, 2.0, {"sets": [(0,), (2,)]})
    assert w[1] == 0 and w[3] == 0 and w[0] > 0 and w[2] > 0
    assert smp_weights(SIZES, 2.0, {"orders": [1, 2]}) is None
    design = make_sampling_design("smp", SIZES, 2.0, weights=w)
    eps = design.attribute_epsilons()
    assert eps[1] == 0.0 and eps[3] == 0.0  # never reported: the released cell does not depend on x_i
    assert np.all(np.isfinite(eps))
    equal = smp_weights([3, 3, 3], 1.0, {"orders": [1]})
    assert equal == pytest.approx(np.full(3, 1 / 3))


def test_recommend_ranks_by_predicted_error_and_picks_the_smallest():
    spec = {"orders": [1]}
    n = 3000
    extra = [
        SamplingCandidate(make_sampling_design("smp", SIZES, 1.0), name="smp-uniform"),
        SamplingCandidate(make_sampling_design("rsfd", SIZES, 1.0), name="rsfd-extra"),
    ]
    rec = recommend(SIZES, 1.0, rows=n, marginals=spec, extra=extra)
    scores = {r.candidate.name: r.candidate.predicted_error(n, spec).score() for r in rec.ranked if r.error}
    assert rec.best.candidate.name == min(scores, key=scores.get)
    ranked = [r.score for r in rec.ranked]
    assert ranked == sorted(ranked)
    # the weighted SMP in the default candidates is never worse than the uniform one added explicitly
    assert scores["smp"] <= scores["smp-uniform"] * (1 + 1e-12)
    for r in rec.ranked:
        assert r.candidate.whole_record_epsilon() <= 1.0 * (1 + 1e-9)


def test_sampling_candidates_carry_their_weights():
    cands = sampling_candidates(SIZES, 1.0, marginals={"orders": [1]})
    smp = cands[0]
    assert smp.name == "smp"
    assert smp.info["sampling_weights"] == pytest.approx(smp.design.probs)
    assert "sampling_weights" not in sampling_candidates(SIZES, 1.0, marginals={"orders": [2]})[0].info


def simulated_avd(cand, data, sets, reps, rng):
    """Mean AVD of the unbiased estimates over ``reps`` releases of ``data`` (the truth is its own marginals)."""
    sizes = [int(a) for a in np.max(data, axis=0) + 1]
    truths = [count_codes(data[:, list(a)], [sizes[i] for i in a]) / len(data) for a in sets]
    out = []
    for _ in range(reps):
        if isinstance(cand, MechanismCandidate):
            rel = cand.mechanism.sample(data, rng)
        else:
            rel = cand.design.sample(data, rng)
        for attrs, truth in zip(sets, truths, strict=True):
            if isinstance(cand, MechanismCandidate):
                counts = count_codes(rel[:, list(attrs)], [sizes[i] for i in attrs])
                est = estimate_from_counts(cand.mechanism.marginal(list(attrs)), counts, method="unbiased").estimate
            else:
                est = estimate_sampled_codes(cand.design, rel, list(attrs), method="unbiased").estimate
            out.append(0.5 * np.abs(est - truth).sum())
    return float(np.mean(out))


@pytest.mark.parametrize(("target", "orders"), [(1.0, [1]), (4.0, [2]), (8.0, [1, 2])])
def test_recommended_design_predicted_error_matches_simulation(target, orders):
    rng = np.random.default_rng(11)
    n = 3000
    data = np.stack([rng.integers(0, a, n) for a in SIZES], axis=1)  # near the uniform prior of the prediction
    spec = {"orders": orders}
    rec = recommend(SIZES, target, rows=n, marginals=spec)
    cand = rec.best.candidate
    sets = [m.attributes for m in rec.best.error.marginals]
    # the records are fixed and the truth is their own marginal: the prediction given the data
    predicted = cand.predicted_error(n, spec, given_data=True).score()
    simulated = simulated_avd(cand, data, sets, 150, rng)
    assert predicted == pytest.approx(simulated, rel=0.1)
    assert predicted <= rec.best.error.score()  # given the data, the records' own sampling noise is removed


def test_given_weights_are_the_sampling_designs_weights_as_the_release_would_use_them():
    """With the columns' weights (the GUI always gives them) SMP and RS+FD sample by them, exactly the design the
    Design tab's SMP / RS+FD rows and their release use; without weights SMP's are chosen for 1-way needs."""
    from optrr_engine.sampling import make_sampling_design

    weights = [3.0, 1.0, 1.0, 1.0]
    rec = recommend(SIZES, 1.0, weights=weights, marginals={"orders": [1]})
    by_name = {r.candidate.name: r.candidate for r in rec.ranked if r.error is not None}
    expected = np.asarray(weights) / np.sum(weights)
    for method in ("smp", "rsfd"):
        released = make_sampling_design(method, SIZES, 1.0, weights=weights)
        assert by_name[method].design.probs == pytest.approx(expected)
        assert by_name[method].design.probs == pytest.approx(released.probs)
    unweighted = recommend(SIZES, 1.0, marginals={"orders": [1]})
    smp = next(r.candidate for r in unweighted.ranked if r.candidate.name == "smp")
    assert smp.design.probs == pytest.approx(sampling_candidates(SIZES, 1.0, marginals={"orders": [1]})[0].design.probs)


def test_only_erased_needed_marginals_rank_first_and_the_pick_simulates_better_than_the_old_rule():
    """The ranking puts designs with fewer *erased* needed marginals first (no number of rows recovers them), then
    orders by the default estimate's predicted error, which already counts the marginals that are merely too noisy
    at n rows for the unbiased estimate. Car at whole-record epsilon 1, all 2-way tables, its 1,728 rows: the pick
    (auto) has such noisy tables; ranking those first as well (the earlier rule) took a design whose default
    estimates are measurably worse on the real file (docs/utility.md)."""
    import os

    from optrr_engine.compare.datasets import load_dataset
    from optrr_engine.compare.designs_on_data import estimate_marginal, release_of

    data = load_dataset(os.path.join(os.path.dirname(__file__), "data", "car.csv"))
    codes, sizes, n = data.codes, data.sizes, data.rows
    spec = {"orders": [2]}
    rec = recommend(sizes, 1.0, rows=n, marginals=spec)
    best = rec.best.error
    assert best.erased == [] and best.non_identifiable  # too noisy for the unbiased estimate, not erased
    keys = [r.rank_key for r in rec.ranked if r.error is not None]
    assert keys == sorted(keys)
    # first key: the erased needed marginals, or all of them for a design with no information on any (here only
    # SMP and RS+FD, which erase every pair anyway; Kronecker's 21 pairs are too noisy for the unbiased estimate,
    # yet the data remove 0.4-2 % of the prior's spread from its default estimate: ranked by its prediction)
    firsts = [len(r.error.marginals) if r.error.no_information else len(r.error.erased) for r in rec.ranked if r.error]
    assert firsts == sorted(k[0] for k in keys) == [len(r.error.erased) for r in rec.ranked if r.error]
    assert any(r.error is not None and r.error.erased for r in rec.ranked)  # SMP cannot answer pairs: last
    old = min((r for r in rec.ranked if r.error is not None), key=lambda r: (len(r.error.non_identifiable), r.score))
    assert old.candidate.name != rec.best.candidate.name

    def simulated(cand, reps=12, seed=5):
        rng = np.random.default_rng(seed)
        sets = [m.attributes for m in best.marginals]
        truths = [count_codes(codes[:, list(s)], [sizes[i] for i in s]) / n for s in sets]
        out = []
        for _ in range(reps):
            rel = release_of(cand).sample(codes, rng)
            for s, truth in zip(sets, truths, strict=True):
                out.append(0.5 * np.abs(estimate_marginal(cand, rel, sizes, s).estimate - truth).sum())
        return float(np.mean(out))

    assert simulated(rec.best.candidate) < 0.9 * simulated(old.candidate)


def test_rank_order_lets_only_the_ties_of_the_best_lead_in_their_given_order():
    """Predictions within RANK_TOLERANCE of the best one tie with it (one design reached by two searches differs
    by 3e-7); the rest are ordered strictly, so the order does not depend on the order the candidates come in
    (closeness is not transitive: 1.0 ~ 1.0009 ~ 1.0018, but 1.0018 is 1.8e-3 worse than 1.0)."""
    from itertools import permutations

    from optrr_engine.utility.predicted import rank_order, ties_with

    assert ties_with((0, 0.14875140446902335), (0, 0.14875145177018853))
    assert not ties_with((0, 0.15), (0, 0.15 * 1.002))
    assert not ties_with((0, 0.9), (1, 0.01))  # an erased needed table outranks any error
    keys = {"a": (0, 1.0), "b": (0, 1.0009), "c": (0, 1.0018), "d": (1, 0.5), "e": (0, float("nan"))}
    for names in permutations(keys):
        order = [names[i] for i in rank_order([keys[n] for n in names])]
        assert set(order[:2]) == {"a", "b"} and order[2:] == ["c", "e", "d"]
        assert order[:2] == [n for n in names if n in ("a", "b")]  # the tie keeps the given order
