"""Goodness of fit of the samplers: empirical transition frequencies against the exact mechanism.

Every test draws at least 10^6 perturbed records with a fixed seed and applies a chi-square test at
significance ALPHA (Bonferroni-corrected when one test makes several comparisons). Small domains are
checked cell by cell on the full (input, output) table against the dense matrix; k >= 50 is checked on
the per-category structure: the distribution of the number of changed attributes, every attribute's
offset distribution and a few attribute pairs, all computed exactly from the block parameters.
"""

import numpy as np
import pytest
from scipy.stats import chi2

from optrr_engine.blocks import IndependentBlock, PatternBlock, SinglesBlock
from optrr_engine.dense import dense_matrix, enumerate_records
from optrr_engine.designs import METHODS, run_design
from optrr_engine.designs.product import joint_grr_clusters, product_of
from optrr_engine.mechanism import Mechanism

ALPHA = 1e-3
DRAWS = 1_000_000


def chi2_pvalue(observed, expected, groups: int = 1, min_expected: float = 5.0) -> float:
    """Pearson chi-square p-value; cells with expected < min_expected are pooled into one bin."""
    observed = np.asarray(observed, dtype=float).ravel()
    expected = np.asarray(expected, dtype=float).ravel()
    assert observed[expected == 0].sum() == 0, "an impossible transition was drawn"
    keep = expected >= min_expected
    obs, exp = list(observed[keep]), list(expected[keep])
    if (~keep).any() and expected[~keep].sum() > 0:
        obs.append(observed[~keep].sum())
        exp.append(expected[~keep].sum())
    obs, exp = np.array(obs), np.array(exp)
    stat = float(np.sum((obs - exp) ** 2 / exp))
    dof = max(1, obs.size - groups)
    return float(chi2.sf(stat, dof))


def record_index(codes: np.ndarray, sizes) -> np.ndarray:
    """Mixed-radix index of each record (attribute 0 fastest), as in optrr_engine.dense."""
    idx = np.zeros(len(codes), dtype=np.int64)
    mult = 1
    for i, a in enumerate(sizes):
        idx += codes[:, i].astype(np.int64) * mult
        mult *= int(a)
    return idx


def joint_table_pvalue(mech: Mechanism, seed: int, dtype=np.int64, draws: int = DRAWS) -> float:
    """Every input record equally often; compare counts of (input, output) with n_x * P(y | x)."""
    sizes = mech.sizes
    records = enumerate_records(sizes)
    domain = len(records)
    per = -(-draws // domain)
    x = np.repeat(records, per, axis=0).astype(dtype)
    y = mech.sample(x, np.random.default_rng(seed))
    assert y.dtype == x.dtype and y.shape == x.shape
    assert np.all((y >= 0) & (y < sizes))
    xi, yi = record_index(x, sizes), record_index(y, sizes)
    counts = np.bincount(xi * domain + yi, minlength=domain * domain).reshape(domain, domain)
    expected = per * dense_matrix(mech).T  # row x, column y
    return chi2_pvalue(counts, expected, groups=domain)


def single(block) -> Mechanism:
    return Mechanism.single(block)


# -- small domains: the full transition table ------------------------------------------------------------


def test_kronecker_full_table():
    d = run_design("kronecker", [2, 3, 4], [0.5, 1.0, 2.0])
    assert isinstance(d.mechanism.parts[0][1], IndependentBlock)
    assert joint_table_pvalue(d.mechanism, 1, np.int16) > ALPHA


def test_optimal_pattern_table_full_table():
    d = run_design("optimal", [2, 3, 4], [1.0, 0.7, 1.5])
    assert any(isinstance(b, PatternBlock) for _, b in d.mechanism.parts)
    assert joint_table_pvalue(d.mechanism, 2, np.int8) > ALPHA


@pytest.mark.parametrize(
    ("sizes", "eps", "dense"),
    [([3, 2, 4], [0.4, 0.3, 0.5], True), ([3, 3, 3], [4.0, 4.0, 4.0], False), ([2, 2], [0.8, 1.2], None)],
)
def test_heuristic_singles_full_table(sizes, eps, dense):
    d = run_design("heuristic", sizes, eps)
    block = d.mechanism.parts[0][1]
    assert isinstance(block, SinglesBlock)
    assert joint_table_pvalue(d.mechanism, 3, np.int64) > ALPHA
    p_uniform = block._mixture[1]
    if dense is not None:  # both sampling paths (dense rows / sparse rows) are exercised
        assert (p_uniform >= 0.25) == dense


def test_family_full_table():
    d = run_design("family", [3, 3, 2], [1.0, 2.0, 1.5])
    assert isinstance(d.mechanism.parts[0][1], SinglesBlock)
    assert joint_table_pvalue(d.mechanism, 4, np.uint8) > ALPHA


def test_joint_grr_clusters_full_table():
    mech = joint_grr_clusters([2, 3, 2, 3], [1.5, 0.8, 1.0], [[0, 2], [1], [3]])
    kinds = sorted(type(b).__name__ for _, b in mech.parts)
    assert kinds == ["IndependentBlock", "IndependentBlock", "SinglesBlock"]
    assert joint_table_pvalue(mech, 5, np.int32) > ALPHA


def test_mixed_product_full_table():
    pattern = run_design("optimal", [2, 3], [1.0, 0.5]).mechanism
    singles = run_design("heuristic", [2, 2], [0.7, 0.9]).mechanism
    mech = product_of([2, 2, 2, 3], [[0, 3], [1, 2]], [pattern, singles])
    assert joint_table_pvalue(mech, 6, np.int16) > ALPHA


@pytest.mark.parametrize("method", METHODS)
def test_every_method_full_table(method):
    """Whatever block a method builds (including ones added later, e.g. symmetric classes) samples exactly."""
    d = run_design(method, [3, 3, 2, 2], [1.0, 1.0, 0.6, 0.6])
    assert joint_table_pvalue(d.mechanism, 20 + METHODS.index(method), np.int16) > ALPHA


# -- attribute offsets: (y_i - x_i) mod a_i, exact from the induced one-attribute mechanism -----------------


def offset_counts(x: np.ndarray, y: np.ndarray, a: int) -> np.ndarray:
    return np.bincount((y.astype(np.int64) - x.astype(np.int64)) % a, minlength=a)


def attribute_pvalues(mech: Mechanism, x: np.ndarray, y: np.ndarray) -> list[float]:
    """Per attribute: counts of offsets 0..a_i-1 against P(same) and P(one specific other value)."""
    out = []
    for i, a in enumerate(mech.sizes):
        lx = mech.marginal([i]).log_pattern_probs()  # [log P(same), log P(specific other)]
        expected = len(x) * np.exp(np.concatenate(([lx[0]], np.full(int(a) - 1, lx[1]))))
        out.append(chi2_pvalue(offset_counts(x[:, i], y[:, i], int(a)), expected))
    return out


def pair_pvalue(mech: Mechanism, x: np.ndarray, y: np.ndarray, i: int, j: int) -> float:
    ai, aj = (int(v) for v in mech.sizes[[i, j]])
    lx = mech.marginal([i, j]).log_pattern_probs()
    di = (y[:, i].astype(np.int64) - x[:, i]) % ai
    dj = (y[:, j].astype(np.int64) - x[:, j]) % aj
    counts = np.bincount(di * aj + dj, minlength=ai * aj)
    pattern = (np.arange(ai)[:, None] != 0).astype(int) + 2 * (np.arange(aj)[None, :] != 0)
    return chi2_pvalue(counts, len(x) * np.exp(lx[pattern]).ravel())


def test_large_categories_use_wider_work_types():
    """a_i > 128 needs 16-bit arithmetic inside the samplers; offsets must stay uniform."""
    rng = np.random.default_rng(7)
    for mech in (
        run_design("kronecker", [300, 3], [2.0, 1.0]).mechanism,
        run_design("heuristic", [150, 4, 2], [0.5, 0.5, 0.5]).mechanism,
        run_design("optimal", [200, 2], [1.0, 1.0]).mechanism,
    ):
        x = np.column_stack([rng.integers(0, a, DRAWS) for a in mech.sizes]).astype(np.int16)
        y = mech.sample(x, rng)
        assert np.all((y >= 0) & (y < mech.sizes))
        p = attribute_pvalues(mech, x, y) + [pair_pvalue(mech, x, y, 0, 1)]
        assert min(p) > ALPHA / len(p), p


# -- k >= 50: per-category structure ---------------------------------------------------------------------


def poly_from_roots(weights: np.ndarray) -> np.ndarray:
    """Coefficients c_m of prod_i (1 + w_i z): elementary symmetric polynomials of w."""
    coef = np.array([1.0])
    for w in weights:
        coef = np.concatenate((coef, [0.0])) + np.concatenate(([0.0], coef * w))
    return coef


def singles_changed_count_probs(block: SinglesBlock) -> np.ndarray:
    """P(|S| = m), exactly from the block: X_b (1 + y_0) for m = 0, X_b sum_i (a_i-1)(1 + y_i) for m = 1,
    X_b e_m(a_1 - 1, ..., a_k - 1) for m >= 2 (e_m: elementary symmetric polynomial)."""
    a1 = block.sizes - 1.0
    log_xb = -block.log_norm()
    e = poly_from_roots(a1)
    probs = np.exp(np.log(np.maximum(e, 1e-300)) + log_xb)
    probs[0] = np.exp(log_xb + np.logaddexp(0.0, block.log_y0))
    probs[1] = np.sum(a1 * np.exp(log_xb + np.logaddexp(0.0, block.log_y)))
    return probs


def independent_changed_count_probs(block: IndependentBlock) -> np.ndarray:
    """Poisson-binomial distribution of the number of moved attributes, P(move_i) = 1 - p_i."""
    m = -np.expm1(block.log_keep)
    coef = np.array([1.0])
    for mi in m:
        coef = np.concatenate((coef * (1 - mi), [0.0])) + np.concatenate(([0.0], coef * mi))
    return coef


def draw_in_batches(mech: Mechanism, seed: int, batches: int = 4):
    """DRAWS records in batches (bounded test memory); yields (x, y)."""
    rng = np.random.default_rng(seed)
    per = DRAWS // batches
    for _ in range(batches):
        x = np.column_stack([rng.integers(0, a, per) for a in mech.sizes]).astype(np.int8)
        yield x, mech.sample(x, rng)


def check_many_attributes(mech: Mechanism, count_probs: np.ndarray, seed: int, pairs) -> None:
    k = mech.k
    assert abs(count_probs.sum() - 1.0) < 1e-9
    changed = np.zeros(k + 1)
    offsets = [np.zeros(int(a)) for a in mech.sizes]
    pair_x, pair_y = [], []
    for x, y in draw_in_batches(mech, seed):
        assert np.all((y >= 0) & (y < mech.sizes))
        changed += np.bincount(np.count_nonzero(x != y, axis=1), minlength=k + 1)
        for i, a in enumerate(mech.sizes):
            offsets[i] += offset_counts(x[:, i], y[:, i], int(a))
        cols = sorted({c for p in pairs for c in p})
        pair_x.append(x[:, cols])
        pair_y.append(y[:, cols])
    assert changed.sum() == DRAWS
    pvalues = [chi2_pvalue(changed, DRAWS * count_probs)]
    for i, a in enumerate(mech.sizes):
        lx = mech.marginal([i]).log_pattern_probs()
        expected = DRAWS * np.exp(np.concatenate(([lx[0]], np.full(int(a) - 1, lx[1]))))
        pvalues.append(chi2_pvalue(offsets[i], expected))
    cols = sorted({c for p in pairs for c in p})
    sub = mech.marginal(cols)
    px, py = np.concatenate(pair_x), np.concatenate(pair_y)
    for i, j in pairs:
        pvalues.append(pair_pvalue(sub, px, py, cols.index(i), cols.index(j)))
    assert min(pvalues) > ALPHA / len(pvalues), (int(np.argmin(pvalues)), min(pvalues))


def random_case(seed: int, k: int):
    rng = np.random.default_rng(seed)
    return rng.integers(2, 7, k), rng.uniform(0.5, 2.5, k)


def test_heuristic_k60_structure():
    sizes, eps = random_case(11, 60)
    block = run_design("heuristic", sizes, eps).mechanism.parts[0][1]
    assert isinstance(block, SinglesBlock)
    check_many_attributes(single(block), singles_changed_count_probs(block), 12, [(0, 1), (5, 40), (58, 59)])


def test_family_k50_sparse_path_structure():
    """High epsilons: most records are kept, so the sampler takes its sparse path."""
    rng = np.random.default_rng(13)
    sizes, eps = rng.integers(2, 5, 50), rng.uniform(6.0, 8.0, 50)
    block = run_design("family", sizes, eps).mechanism.parts[0][1]
    assert isinstance(block, SinglesBlock)
    check_many_attributes(single(block), singles_changed_count_probs(block), 14, [(0, 1), (10, 49)])
    assert block._mixture[1] < 0.25


def test_joint_grr_k50_structure():
    sizes = np.random.default_rng(15).integers(2, 4, 50)
    block = SinglesBlock.joint_grr(sizes, 40.0)
    check_many_attributes(single(block), singles_changed_count_probs(block), 16, [(0, 1), (20, 30)])


def test_kronecker_k64_structure():
    sizes, eps = random_case(17, 64)
    block = run_design("kronecker", sizes, eps).mechanism.parts[0][1]
    check_many_attributes(single(block), independent_changed_count_probs(block), 18, [(0, 63), (3, 4)])


@pytest.mark.parametrize("method", ["kronecker", "pattern", "heuristic", "family"])
def test_extreme_epsilons_keep_every_value(method):
    """eps_i = 50: p_i rounds to 1 in float64; the sampler must keep x (no NaN / sign trouble in the arithmetic)."""
    if method == "pattern":  # the Kronecker mechanism as a full pattern table
        kron = run_design("kronecker", [3, 4, 2], [50.0, 50.0, 50.0]).mechanism
        mech = single(PatternBlock([3, 4, 2], kron.log_pattern_probs()))
    else:
        mech = run_design(method, [3, 4, 2], [50.0, 50.0, 50.0]).mechanism
    x = np.random.default_rng(0).integers(0, 2, (DRAWS, 3)).astype(np.int16)
    with np.errstate(all="raise"):
        y = mech.sample(x, np.random.default_rng(1))
    assert np.array_equal(x, y)


def test_sampler_is_reproducible_with_a_seed_and_keeps_input():
    d = run_design("heuristic", [3, 4, 5], [1.0, 1.0, 1.0])
    x = np.random.default_rng(0).integers(0, 3, (1000, 3))
    before = x.copy()
    a = d.mechanism.sample(x, np.random.default_rng(42))
    b = d.mechanism.sample(x, np.random.default_rng(42))
    assert np.array_equal(a, b)
    assert np.array_equal(x, before)
    assert d.mechanism.sample(x[:0], np.random.default_rng(1)).shape == (0, 3)
