"""Bloom-filter server side: corrected counts, candidate matrix, LASSO / LOPUB / BRR / LOCOP estimates."""

import numpy as np
import pytest

from optrr_engine.analysis.avd import avd
from optrr_engine.bloom import BloomMechanism
from optrr_engine.bloom.copula import LocopModel, pearson_from_joint, repair_correlation
from optrr_engine.bloom.estimators import brr_joint, lasso_joint, lopub_joint
from optrr_engine.bloom.reports import BloomReports, candidate_matrix
from optrr_engine.errors import TooLargeError

SIZES = (2, 3, 2)
#: A dependent joint on (2, 3, 2): attribute 1 follows attribute 0, attribute 2 is independent of both.
PAIR = np.array([[0.30, 0.12, 0.03], [0.05, 0.15, 0.35]])
JOINT = PAIR[:, :, None] * np.array([0.6, 0.4])[None, None, :]


def sample_codes(joint, n, rng):
    cells = rng.choice(joint.size, size=n, p=joint.ravel())
    return np.stack(np.unravel_index(cells, joint.shape), axis=1)


def reports(codes, eps, seed):
    mech = BloomMechanism.from_epsilons(SIZES, eps)
    return BloomReports(mech, mech.sample(codes, np.random.default_rng(seed)))


def test_candidate_matrix_times_the_counts_gives_the_bit_counts():
    rng = np.random.default_rng(0)
    codes = sample_codes(JOINT, 500, rng)
    mech = BloomMechanism.from_epsilons(SIZES, 1.0)
    for attrs in ([0], [0, 1], [2, 0, 1]):
        m = candidate_matrix(mech, attrs)
        counts = np.zeros([SIZES[a] for a in attrs])
        np.add.at(counts, tuple(codes[:, a] for a in attrs), 1)
        bits = mech.encoding.encode(codes)
        want = np.concatenate([bits[:, mech.encoding.columns(a)].sum(axis=0) for a in attrs])
        np.testing.assert_array_equal(m @ counts.ravel(), want)


def test_candidate_matrix_is_bounded():
    mech = BloomMechanism.from_epsilons([12] * 6, 1.0)
    with pytest.raises(TooLargeError):
        candidate_matrix(mech, list(range(6)))


def test_corrected_counts_are_unbiased_in_simulation():
    rng = np.random.default_rng(1)
    codes = sample_codes(JOINT, 400, rng)
    mech = BloomMechanism.from_epsilons(SIZES, 0.8)
    true = mech.encoding.encode(codes).sum(axis=0)
    runs = np.array([BloomReports(mech, mech.sample(codes, rng)).corrected_counts([0, 1, 2]) for _ in range(300)])
    se = runs.std(axis=0, ddof=1) / np.sqrt(len(runs))
    assert np.all(np.abs(runs.mean(axis=0) - true) < 4.5 * se)


@pytest.mark.parametrize("estimate", [lasso_joint, brr_joint, lopub_joint])
def test_one_way_marginals_converge_with_n_and_epsilon(estimate):
    rng = np.random.default_rng(2)
    truth = JOINT.sum(axis=(0, 2))
    errors = []
    for n, eps in ((300, 1.0), (20_000, 8.0)):
        rep = reports(sample_codes(JOINT, n, rng), eps, 3)
        est = estimate(rep, [1])
        assert est.shape == (3,) and est.min() >= 0 and est.sum() == pytest.approx(1.0)
        errors.append(avd(truth, est))
    assert errors[1] < errors[0] and errors[1] < 0.03


def test_lopub_recovers_the_dependence_that_the_bit_counts_alone_cannot():
    rng = np.random.default_rng(4)
    codes = sample_codes(JOINT, 20_000, rng)
    rep = reports(codes, 8.0, 5)
    truth = JOINT.sum(axis=2)
    lopub = avd(truth, lopub_joint(rep, [0, 1]))
    assert lopub < 0.05
    # LASSO and BRR see only the per-attribute bit counts: their joint carries no dependence beyond the margins
    assert avd(truth, brr_joint(rep, [0, 1])) > 2 * lopub
    small = avd(truth, lopub_joint(reports(codes[:500], 1.0, 6), [0, 1]))
    assert lopub < small


def test_locop_keeps_the_margins_and_the_sign_of_the_dependence():
    rng = np.random.default_rng(7)
    rep = reports(sample_codes(JOINT, 20_000, rng), 8.0, 8)
    model = LocopModel(rep, np.random.default_rng(9))
    assert model.correlation[0, 1] > 0.3 and abs(model.correlation[0, 2]) < 0.1
    pair = model.joint([0, 1])
    assert avd(PAIR.sum(axis=1), pair.sum(axis=1)) < 0.03
    assert pearson_from_joint(pair) > 0.3


def test_pearson_from_joint_matches_numpy_on_the_expanded_rows():
    counts = np.array([[3, 1, 0], [1, 2, 5]])
    rows = np.array([(i, j) for i in range(2) for j in range(3) for _ in range(counts[i, j])])
    want = np.corrcoef(rows[:, 0], rows[:, 1])[0, 1]
    assert pearson_from_joint(counts / counts.sum()) == pytest.approx(want, rel=1e-12)
    assert pearson_from_joint(np.array([[0.5, 0.5], [0.0, 0.0]])) == 0.0


def test_correlation_repair():
    good = np.array([[1.0, 0.5], [0.5, 1.0]])
    fixed, repaired = repair_correlation(good)
    assert not repaired and np.allclose(fixed, good)
    bad = np.array([[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]])
    fixed, repaired = repair_correlation(bad)
    assert repaired and np.allclose(np.diag(fixed), 1.0) and np.linalg.eigvalsh(fixed).min() > 0
    np.linalg.cholesky(fixed)
