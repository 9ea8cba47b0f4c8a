"""What a release's test of independence can detect (analysis.power): the weakest association (Cohen's w) found
with 80 % power, checked against simulated releases; and that analyze says it, warning when the test has little
power (a review: a heart-disease release answered "p = 0.961" for two strongly associated columns, every interval
[0, 1], with no word that the test could not have found the association)."""

import json

import numpy as np
import pytest

from optrr_engine.analysis.chi_square import wald_independence
from optrr_engine.analysis.power import (
    MEDIUM_W,
    detectable_association,
    detectable_w_uniform,
    low_power_warning,
    noncentrality_for_power,
    power_sentence,
)
from optrr_engine.cli.main import main
from optrr_engine.designs import run_design
from optrr_engine.designs.kronecker import kronecker
from optrr_engine.estimation import StructuredOperator
from optrr_engine.estimation.covariance import covariance_matrix
from tests.test_analysis_cli import write_files


def test_the_noncentrality_gives_the_power_asked():
    from scipy.stats import chi2, ncx2

    for dof in (1, 4, 12):
        lam = noncentrality_for_power(dof)
        assert ncx2.sf(chi2.isf(0.05, dof), dof, lam) == pytest.approx(0.8, abs=1e-9)
    assert noncentrality_for_power(1) == pytest.approx(7.849, abs=1e-3)  # the textbook value for df 1


def test_without_randomization_the_release_detects_what_the_records_do():
    mech, _ = kronecker([3, 4], [40.0, 40.0])  # practically the identity
    table = np.random.default_rng(3).dirichlet(np.ones(12)).reshape(3, 4)
    power = detectable_association(StructuredOperator.from_mechanism(mech), table, 500)
    assert power["detectable_w"] == pytest.approx(power["detectable_w_original"], rel=1e-6)
    assert power["detectable_w_every_direction"] == pytest.approx(power["detectable_w_original"], rel=1e-6)
    assert power["detectable_w_original"] == pytest.approx(np.sqrt(noncentrality_for_power(6) / 500))
    assert power["largest_w"] == pytest.approx(np.sqrt(2))


def rejection_rate(mech, table: np.ndarray, rows: int, runs: int, rng) -> float:
    """Share of simulated releases of ``rows`` records drawn from ``table`` whose Wald test rejects at 5 %."""
    op = StructuredOperator.from_mechanism(mech)
    cells = table.size
    dense = op.apply(np.eye(cells).reshape(table.shape + (cells,))).reshape(cells, cells)  # M, C order
    perturbed_law = dense @ table.reshape(-1)
    rejected = 0
    for _ in range(runs):
        counts = rng.multinomial(rows, perturbed_law / perturbed_law.sum())
        unbiased = op.solve((counts / rows).reshape(table.shape))
        cov = covariance_matrix(op, counts / rows, unbiased, rows)
        rejected += wald_independence(unbiased, cov).p_value < 0.05
    return rejected / runs


@pytest.mark.parametrize("eps, rows", [(2.0, 1000), (1.0, 3000)])
def test_an_association_of_the_detectable_w_is_found_about_80_percent_of_the_time(eps, rows):
    mech, _ = kronecker([2, 2], [eps, eps])
    row, col = np.array([0.4, 0.6]), np.array([0.5, 0.5])
    p0 = np.outer(row, col)
    w = detectable_association(StructuredOperator.from_mechanism(mech), p0, rows)["detectable_w"]
    # a 2 x 2 deviation +-delta has w^2 = delta^2 sum 1/p0
    delta = w / np.sqrt(np.sum(1.0 / p0))
    table = p0 + delta * np.array([[1, -1], [-1, 1]])
    rng = np.random.default_rng(11)
    assert rejection_rate(mech, table, rows, 600, rng) == pytest.approx(0.8, abs=0.06)
    assert rejection_rate(mech, p0, rows, 600, rng) == pytest.approx(0.05, abs=0.03)  # the level, for contrast


def test_the_sentences():
    strong = {"detectable_w": 0.12, "detectable_w_every_direction": 0.2, "detectable_w_original": 0.09,
              "largest_w": 1.0, "alpha": 0.05, "power": 0.8}
    assert power_sentence(strong) == (
        "power: at the 5 % level this test detects, with 80 % power, associations of w >= 0.12 in the pattern of "
        "association the release keeps best (w >= 0.2 in every pattern); the original records: w >= 0.09 (Cohen's "
        "w: 0.1 small, 0.3 medium, 0.5 large)"
    )
    assert low_power_warning(strong) is None
    # a newcomer's review: p = 0.157 and no warning, although some patterns needed w >= 0.89
    patchy = {**strong, "detectable_w_every_direction": 0.89}
    assert low_power_warning(patchy) == (
        f"this test detects a medium association (Cohen's w = {MEDIUM_W:g}) only in some patterns: others need "
        "w >= 0.89 for 80 % power; a large p-value does not show independence"
    )
    assert "others need more than the strongest possible association" in low_power_warning(
        {**strong, "detectable_w_every_direction": 2.0}
    )
    weak = {**strong, "detectable_w": 0.45, "detectable_w_every_direction": 2.0}
    assert "some patterns not at all" in power_sentence(weak)
    assert low_power_warning(weak) == (
        "this test has little power: it detects (80 % power) only associations stronger than Cohen's w = 0.45, "
        f"above a medium one ({MEDIUM_W:g}); a large p-value says little about independence"
    )
    none = {**weak, "detectable_w": 6.9, "largest_w": 1.7}
    assert "cannot detect any association" in power_sentence(none)
    assert low_power_warning(none).startswith("this test has no power here: even the strongest possible")


def test_the_original_records_are_all_the_releases_rows():
    """An adversarial review: for a sampling release (a table reported by 1,045 of 3,000 rows) "the original
    records" were counted as the 1,045, hiding what the sampling costs."""
    mech, _ = kronecker([3, 3], [2.0, 2.0])
    table = np.full((3, 3), 1 / 9)
    op = StructuredOperator.from_mechanism(mech)
    sampled = detectable_association(op, table, 1045, 3000)
    assert sampled["detectable_w_original"] == pytest.approx(np.sqrt(noncentrality_for_power(4) / 3000))
    assert sampled["detectable_w"] == pytest.approx(detectable_association(op, table, 1045)["detectable_w"])


CATS = {"a": ["x", "y", "z"], "b": ["p", "q", "r"]}


def release(tmp_path, eps: float, rows: int, stem: str):
    import pandas as pd

    rng = np.random.default_rng(5)
    a = rng.integers(0, 3, rows)
    b = np.where(rng.random(rows) < 0.6, a, rng.integers(0, 3, rows))  # strongly associated (w about 0.6)
    mech = run_design("kronecker", [3, 3], [eps, eps]).mechanism
    out = mech.sample(np.stack([a, b], axis=1), rng)
    frame = pd.DataFrame({n: np.asarray(c)[out[:, i]] for i, (n, c) in enumerate(CATS.items())})
    return write_files(tmp_path, stem, frame, mech, CATS, eps)


def test_analyze_states_the_power_and_warns_when_the_test_cannot_find_a_medium_association(tmp_path, capsys):
    # eps 1 per column, 300 rows: informative enough for no other warning, yet p = 0.29 for w about 0.85
    data, manifest = release(tmp_path, 1.0, 300, "weak")
    assert main(["analyze", str(data), "--manifest", str(manifest), "--chi2", "a,b"]) == 0
    captured = capsys.readouterr()
    assert "power: at the 5 % level this test" in captured.out
    assert captured.err.startswith("optrr: warning: this test has little power: it detects (80 % power) only ")
    assert main(["analyze", str(data), "--manifest", str(manifest), "--chi2", "a,b", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["power"]["detectable_w"] > MEDIUM_W and out["power"]["statement"].startswith("power: ")
    assert out["tests"][0]["p_value"] > 0.05 and out["low_power_warning"].startswith("this test has little power")
    # a warning of the same kind already given (too noisy for the unbiased estimate) is not repeated
    data, manifest = release(tmp_path, 0.3, 300, "noisy")
    assert main(["analyze", str(data), "--manifest", str(manifest), "--chi2", "a,b", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["too_noisy_warning"] and "low_power_warning" not in out and out["power"]["detectable_w"] > 1
    # a release that keeps the association: the statement, no warning
    data, manifest = release(tmp_path, 4.0, 3000, "strong")
    assert main(["analyze", str(data), "--manifest", str(manifest), "--chi2", "a,b", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["power"]["detectable_w"] < MEDIUM_W and "low_power_warning" not in out


def test_before_a_release_the_design_says_what_tests_on_the_needed_pairs_will_detect(capsys):
    """A review: the Design side was quiet (predicted error 0.22) for a release whose tests could find nothing.
    `optrr design` now states, for the needed 2-way tables, the w their tests detect at uniform margins."""
    from itertools import combinations

    from optrr_engine.analysis.power import MAX_DESIGN_TABLES, design_power
    from optrr_engine.sampling import make_sampling_design

    sizes = [4, 5, 3]
    pairs = list(combinations(range(3), 2))
    mech, _ = kronecker(sizes, [0.66] * 3)
    power = design_power(mech, 303, pairs)
    one = [detectable_association(StructuredOperator.from_mechanism(mech.marginal(list(p))),
                                  np.full((sizes[p[0]], sizes[p[1]]), 1 / (sizes[p[0]] * sizes[p[1]])), 303)
           for p in pairs]
    assert power["tables"] == 3 and power["median_w"] == pytest.approx(np.median([o["detectable_w"] for o in one]))
    assert power["weakest_w"] == pytest.approx(max(o["detectable_w"] for o in one))
    assert power["no_power"] == 3 and "with_power" not in power
    # a w above the largest possible one (sqrt(min(r, c) - 1) <= 2 here) is not quoted as if it were detectable
    assert "none detects any association, not even the strongest possible" in power["statement"]
    assert "Cohen's w >=" not in power["statement"]
    # some tables with power, some without: the sentence quotes the w of those that can detect something
    mixed, _ = kronecker([2, 2, 6], [4.0, 0.05, 4.0])  # the pairs with the nearly pure-noise column have no power
    part = design_power(mixed, 2000, pairs)
    able = [w for w, _o, top in (detectable_w_uniform(mixed, p, 2000) for p in pairs) if w <= top]
    assert 0 < part["no_power"] < part["tables"] == 3 and len(able) == 3 - part["no_power"]
    assert part["with_power"] == {"median_w": pytest.approx(np.median(able)), "weakest_w": pytest.approx(max(able))}
    assert f"detect Cohen's w >= {np.median(able):.2g} (median of those that can" in part["statement"]
    assert f"{part['no_power']} of them detect no association at all" in part["statement"]
    # sampling designs: a pair no record reports together has no test; sample-2's pairs by the rows reporting them
    assert design_power(make_sampling_design("smp", sizes, 3.0), 3000, pairs) is None
    assert design_power(make_sampling_design("rsfd", sizes, 3.0), 3000, pairs) is None
    sampled = design_power(make_sampling_design("sample-m", sizes, 3.0, m=2), 3000, pairs)
    assert sampled["original_w"] == pytest.approx(np.sqrt(noncentrality_for_power(12) / 3000), rel=0.2)
    assert sampled["median_w"] > sampled["original_w"]
    many = [4] * 25  # 300 pairs: at most MAX_DESIGN_TABLES computed, spread over them
    wide, _ = kronecker(many, [1.0] * 25)
    assert design_power(wide, 1000, list(combinations(range(25), 2)))["tables"] == MAX_DESIGN_TABLES
    request = ["design", "--sizes", "4,5,3", "--epsilons", "0.66,0.66,0.66", "--rows", "303"]
    assert main([*request, "--marginals", "2"]) == 0
    out = capsys.readouterr().out
    assert "    tests of association on these tables (3 computed, uniform margins, 80 % power at 5 %)" in out
    assert main([*request, "--marginals", "1,2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["predicted_error"]["test_power"]["tables"] == 3
    assert main(["design", "--sizes", "4,5,3", "--target-total", "3", "--marginals", "1", "--rows", "303"]) == 0
    assert "tests of association" not in capsys.readouterr().out  # no 2-way table needed: no statement
