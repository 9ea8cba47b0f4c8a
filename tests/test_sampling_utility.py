"""Sampling designs as utility candidates: the protocol, and predicted squared error against simulation."""

import numpy as np
import pytest

from optrr_engine.estimation.sampled import estimate_sampled_codes
from optrr_engine.sampling import make_sampling_design
from optrr_engine.utility import DesignCandidate
from optrr_engine.utility.sampling import SamplingCandidate, sampling_candidates

SIZES = [3, 2, 4, 2]


@pytest.mark.parametrize(("method", "m", "attrs"), [("smp", None, (2,)), ("sample-m", 2, (0, 2)), ("rsfd", None, (0,))])
def test_predicted_squared_error_matches_simulation(method, m, attrs):
    design = make_sampling_design(method, SIZES, 1.5, m=m)
    cand = SamplingCandidate(design)
    assert isinstance(cand, DesignCandidate)
    assert cand.whole_record_epsilon() == pytest.approx(design.whole_record_epsilon())
    n = 4000
    rng = np.random.default_rng(3)
    sub = [SIZES[a] for a in attrs]
    truth = np.full(sub, 1.0 / np.prod(sub))  # the default (uniform) prior is the truth here
    errs = []
    for _ in range(400):  # relative SE of the mean about 5%: the tolerance is about 3 SE
        data = np.stack([rng.integers(0, a, n) for a in SIZES], axis=1)
        est = estimate_sampled_codes(design, design.sample(data, rng), list(attrs), method="unbiased")
        errs.append(np.sum((est.estimate - truth) ** 2))
    predicted = cand.predicted_error(n, {"sets": [attrs]}).marginals[0].expected_squared_error
    assert np.mean(errs) == pytest.approx(predicted, rel=0.15)


def test_marginals_that_a_design_cannot_recover_are_named():
    smp = SamplingCandidate(make_sampling_design("smp", SIZES, 2.0))
    rsfd = SamplingCandidate(make_sampling_design("rsfd", SIZES, 2.0))
    pairs = SamplingCandidate(make_sampling_design("sample-m", SIZES, 2.0, m=2))
    spec = {"orders": [1, 2]}
    assert len(smp.predicted_error(1000, spec).non_identifiable) == 6
    assert len(rsfd.predicted_error(1000, spec).non_identifiable) == 6
    assert pairs.predicted_error(1000, spec).non_identifiable == []
    assert np.isfinite(pairs.predicted_error(1000, spec).score()) and not np.isfinite(
        smp.predicted_error(1000, spec).score()
    )


def test_candidates_for_ranking_meet_the_target():
    cands = sampling_candidates([3, 2, 4, 2, 3], 2.0)
    assert [c.name for c in cands] == ["smp", "sample-2", "sample-3", "rsfd"]
    for c in cands:
        assert c.whole_record_epsilon() <= 2.0 * (1 + 1e-9)


def test_too_many_subsets_for_sample_m_leave_the_other_sampling_designs_in():
    """33 attributes: C(33, 3) = 5,456 subsets exceed sample-m's limit; SMP, sample-2 and RS+FD are still offered
    (the whole sampling family used to fail with sample-3's refusal)."""
    from math import comb

    from optrr_engine.sampling.design import MAX_SUBSETS

    sizes = [2] * 33
    assert comb(33, 3) > MAX_SUBSETS >= comb(33, 2)
    names = [c.name for c in sampling_candidates(sizes, 2.0)]
    assert "smp" in names and "sample-2" in names and "rsfd" in names and "sample-3" not in names
