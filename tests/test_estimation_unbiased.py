"""Unbiasedness and interval coverage of the structured estimator, for every design family.

Repetitions are vectorised: all replicates are perturbed in one call and counted with one bincount.
"""

import numpy as np
import pytest

from optrr_engine.designs import METHODS, run_design
from optrr_engine.designs.product import grouped_design, joint_grr_clusters
from optrr_engine.errors import InfeasibleError
from optrr_engine.estimation import StructuredOperator, z_value
from optrr_engine.estimation.counts import count_codes, count_replicates
from optrr_engine.estimation.covariance import variance

SIZES = [3, 2, 4]
EPS = [1.2, 2.0, 1.5]


def family(name):
    if name == "clusters":
        return joint_grr_clusters(SIZES, [3.2, 1.5], [[0, 1], [2]])
    if name == "grouped_optimal":
        return grouped_design("optimal", SIZES, EPS, [[0, 2], [1]])
    if name == "marginal_of_k5":
        sizes5 = [2, 3, 2, 2, 4]
        mech = run_design("optimal", sizes5, [1.0, 1.2, 0.8, 1.5, 2.0]).mechanism
        return mech, [1, 0, 4]
    try:
        return run_design(name, SIZES, EPS).mechanism
    except InfeasibleError:
        pytest.skip(f"{name} is infeasible for these epsilons")


FAMILIES = list(METHODS) + ["clusters", "grouped_optimal", "marginal_of_k5"]


def setup(name):
    got = family(name)
    if isinstance(got, tuple):
        mech, attrs = got
    else:
        mech, attrs = got, list(range(got.k))
    return mech, attrs


def true_distribution(sizes, rng):
    """A dependent joint distribution with every cell >= 1%."""
    p = rng.dirichlet(np.full(int(np.prod(sizes)), 4.0)).reshape(sizes)
    p = 0.8 * p + 0.2 / p.size
    return p


def draw_records(pi, n, rng):
    flat = rng.choice(pi.size, size=n, p=pi.ravel())
    return np.stack(np.unravel_index(flat, pi.shape), axis=1)


def embed(codes_marg, mech, attrs, rng):
    """Full records for the mechanism: the marginal's attributes from codes, the others uniform."""
    n = codes_marg.shape[0]
    full = np.stack([rng.integers(0, a, n) for a in mech.sizes], axis=1)
    full[:, attrs] = codes_marg
    return full


def replicate_counts(mech, attrs, records_by_rep, rng):
    """Perturb R stacked replicates at once and count the marginal per replicate: (sizes..., R)."""
    reps, n, _ = records_by_rep.shape
    stacked = records_by_rep.reshape(reps * n, -1)
    perturbed = mech.sample(stacked, rng)[:, attrs]
    sizes = mech.sizes[attrs]
    counts = count_replicates(perturbed, sizes, np.repeat(np.arange(reps), n), reps)
    return np.moveaxis(counts, 0, -1), n


@pytest.mark.parametrize("name", FAMILIES)
def test_unbiased_for_fixed_data_and_variance_matches(name):
    mech, attrs = setup(name)
    rng = np.random.default_rng(11)
    sizes = tuple(int(a) for a in mech.sizes[attrs])
    n, reps = 1500, 400
    data = embed(draw_records(true_distribution(sizes, rng), n, rng), mech, attrs, rng)
    truth = count_codes(data[:, attrs], sizes) / n  # the data set's own distribution
    counts, _ = replicate_counts(mech, attrs, np.broadcast_to(data, (reps,) + data.shape), rng)
    op = StructuredOperator.from_mechanism(mech.marginal(attrs))
    est = op.solve(counts / n)
    mean = est.mean(axis=-1)
    sd = est.std(axis=-1, ddof=1)
    z = (mean - truth) / (sd / np.sqrt(reps))
    assert np.max(np.abs(z)) < 4.5, f"bias detected: max |z| = {np.max(np.abs(z)):.2f}"
    # fixed data: Cov = (M^-1 diag(lambda) M^-1 - diag(pi)) / n with lambda = M pi exactly
    lam = op.apply(truth)
    predicted = variance(op, lam, truth, n) + (truth**2 - truth) / n
    ratio = sd**2 / predicted
    assert 0.75 < ratio.min() and ratio.max() < 1.33, f"variance ratio range {ratio.min():.3f}..{ratio.max():.3f}"


@pytest.mark.parametrize("name", FAMILIES)
def test_interval_coverage_is_nominal(name):
    mech, attrs = setup(name)
    rng = np.random.default_rng(23)
    sizes = tuple(int(a) for a in mech.sizes[attrs])
    pi = true_distribution(sizes, rng)
    n, reps = 4000, 300
    records = np.stack([embed(draw_records(pi, n, rng), mech, attrs, rng) for _ in range(reps)])
    counts, _ = replicate_counts(mech, attrs, records, rng)
    op = StructuredOperator.from_mechanism(mech.marginal(attrs))
    lam_hat = counts / n
    est = op.solve(lam_hat)
    se = np.sqrt(variance(op, lam_hat, est, n))
    z = z_value(0.95)
    covered = (np.abs(est - pi[..., None]) <= z * se).mean()
    assert 0.92 <= covered <= 0.98, f"coverage {covered:.3f}"
    # 80% intervals must cover about 80%: the width is not just generous
    z80 = z_value(0.80)
    covered80 = (np.abs(est - pi[..., None]) <= z80 * se).mean()
    assert 0.76 <= covered80 <= 0.84, f"80% coverage {covered80:.3f}"


@pytest.mark.parametrize("method", ["heuristic", "auto"])
def test_small_marginal_of_a_design_with_hundreds_of_attributes(method):
    """Only the 3-attribute marginal is ever formed; the estimate is within a few standard errors."""
    from optrr_engine.estimation import estimate_marginal

    rng = np.random.default_rng(31)
    k, n = 300, 20000
    sizes = np.where(np.arange(k) < k // 2, 2, 3)
    mech = run_design(method, sizes, np.full(k, 0.8)).mechanism
    codes = np.stack([rng.integers(0, a, n) for a in sizes], axis=1)
    codes[:, 1] = codes[:, 0]  # dependent pair
    attrs = [0, 1, k - 1]
    perturbed = mech.sample(codes, rng)
    est = estimate_marginal(mech, attrs, count_codes(perturbed[:, attrs], sizes[attrs]))
    truth = count_codes(codes[:, attrs], sizes[attrs]) / n
    assert np.all(np.abs(est.unbiased - truth) <= 4.5 * est.std_error)
    assert np.all(est.std_error > 0)
