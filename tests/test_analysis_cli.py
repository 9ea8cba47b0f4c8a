"""``optrr analyze --chi2``: tests of association on a release, each saying what it assumes."""

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from optrr_engine.cli.main import main
from optrr_engine.designs import run_design

CATS = {"allele": ["0", "1"], "status": ["control", "case"], "sex": ["F", "M"]}


def write_release(tmp_path, method, codes, rng):
    names = list(CATS)
    mech = run_design(method, [2, 2, 2], [1.5, 1.5, 1.0]).mechanism
    perturbed = mech.sample(codes, rng)
    frame = pd.DataFrame({n: np.asarray(CATS[n])[perturbed[:, i]] for i, n in enumerate(names)})
    return write_files(tmp_path, method, frame, mech, CATS, 1.0)


def write_files(tmp_path, stem: str, frame, mech, cats: dict, requested: float):
    """The release ``frame`` (already perturbed) and a version-1 manifest of ``mech`` for it."""
    data = tmp_path / f"{stem}.csv"
    frame.to_csv(data, index=False)
    manifest = {
        "format_version": 1,
        "attributes": [
            {"name": n, "categories": c, "requested_epsilon": requested, "achieved_epsilon": float(e)}
            for (n, c), e in zip(cats.items(), mech.attribute_epsilons(), strict=True)
        ],
        "overall_epsilon": mech.overall_epsilon(),
        "mechanism": mech.to_dict(),
        "rows": len(frame),
        "input_sha256": "0" * 64,
        "output_sha256": hashlib.sha256(data.read_bytes()).hexdigest(),
        "shuffled": False,
        "seeded": True,
    }
    path = tmp_path / f"{stem}.manifest.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return data, path


@pytest.mark.parametrize("method", ["kronecker", "optimal"])
def test_analyze_detects_association_and_flags_raw_test_validity(tmp_path, capsys, method):
    rng = np.random.default_rng(1)
    n = 20000
    allele = rng.integers(0, 2, n)
    status = np.where(rng.random(n) < 0.3, allele, rng.integers(0, 2, n))  # associated
    codes = np.stack([allele, status, rng.integers(0, 2, n)], axis=1)
    data, manifest = write_release(tmp_path, method, codes, rng)
    assert main(["analyze", str(data), "--manifest", str(manifest), "--chi2", "allele,status", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    tests = {t["test"]: t for t in out["tests"]}
    assert out["recommended"] == "wald_on_unbiased_estimate" and "warning" not in out
    # p below 1e-16 is null with the bound beside it in the JSON (never 0), else a number
    p, below = tests["wald_on_unbiased_estimate"]["p_value"], tests["wald_on_unbiased_estimate"].get("p_value_below")
    assert (p is None and below == 1e-16) or p < 1e-6
    assert tests["wald_on_unbiased_estimate"]["valid"]
    assert out["table"]["estimate_method"] == "unbiased" and out["rows_in_release"] == n
    wald = tests["wald_on_unbiased_estimate"]
    assert wald["p_value_method"].startswith("simulated") and "p_value_chi2_approximation" in wald
    assert tests["pearson_on_perturbed_counts"]["valid"] is (method == "kronecker")
    assert all(t["assumes"] for t in out["tests"])
    assert main(["analyze", str(data), "--manifest", str(manifest), "--chi2", "allele,sex"]) == 0
    text = capsys.readouterr().out
    assert "H0" in text and "assumes" in text and "(recommended)" in text and "p-value: simulated" in text


def test_analyze_bad_input(tmp_path, capsys):
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 2, (200, 3))
    data, manifest = write_release(tmp_path, "kronecker", codes, rng)
    assert main(["analyze", str(data), "--manifest", str(manifest), "--chi2", "allele"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "two attributes" in err[0]


def test_analyze_with_too_few_records_recommends_no_test(tmp_path, capsys):
    """15 records for a 2 x 2 table (fewer than 5 per cell): every test is marked unreliable, none recommended,
    and the warning reaches stderr and the JSON (a recipient once got "wald (recommended)" from 11 records)."""
    rng = np.random.default_rng(3)
    data, manifest = write_release(tmp_path, "kronecker", rng.integers(0, 2, (15, 3)), rng)
    assert main(["analyze", str(data), "--manifest", str(manifest), "--chi2", "allele,status", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recommended"] is None and "only 15 records report this table for 4 cells" in out["warning"]
    assert all(t["valid"] is False and t["assumes"].startswith("NOT reliable") for t in out["tests"])
    assert main(["analyze", str(data), "--manifest", str(manifest), "--chi2", "allele,status"]) == 0
    captured = capsys.readouterr()
    assert "(recommended)" not in captured.out and "optrr: warning: only 15 records" in captured.err
    assert "tests lean on a normal approximation that does not hold" in out["warning"]
    assert "prior" not in out["warning"]  # the tests use the unbiased table, which has none



def test_a_wald_test_whose_covariance_is_singular_is_not_computable_rather_than_zero(tmp_path, capsys):
    """A review: 7 records reporting a 2 x 3 table, their perturbed values in 2 cells, gave "chi2 = 0, p = 1" beside
    an unbiased estimate far from independence (the pseudo-inverse of a rank-1 covariance). The statistic is now
    not computable, with the rank said, and no test is recommended."""
    from optrr_engine.analysis.chi_square import wald_rank

    cats = {"party": ["d", "r"], "crime": ["?", "n", "y"]}
    mech = run_design("kronecker", [2, 3], [2.0, 2.0]).mechanism
    frame = pd.DataFrame({"party": ["d"] * 4 + ["r"] * 3, "crime": ["n"] * 4 + ["y"] * 3})
    data, path = write_files(tmp_path, "few", frame, mech, cats, 2.0)
    assert main(["analyze", str(data), "--manifest", str(path), "--chi2", "party,crime", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    wald = next(t for t in out["tests"] if t["test"] == "wald_on_unbiased_estimate")
    assert wald["statistic"] is None and wald["p_value"] is None and wald["p_value_text"] == "n/a"
    assert wald["valid"] is False and "NOT computable: the covariance of the estimated table has rank 1 of the 2" in (
        wald["assumes"]
    )
    assert out["recommended"] is None
    assert main(["analyze", str(data), "--manifest", str(path), "--chi2", "party,crime"]) == 0
    assert "wald_on_unbiased_estimate: chi2 = not computable, df = 2, p = n/a" in capsys.readouterr().out
    # a covariance of full rank: the rank is the test's degrees of freedom
    rng = np.random.default_rng(4)
    a = rng.normal(size=(6, 6))
    assert wald_rank(np.full((2, 3), 1 / 6), a @ a.T) == 2


def associated_release(tmp_path, n=20000, seed=1):
    """A Kronecker release of allele, status, sex where allele and status are strongly associated."""
    rng = np.random.default_rng(seed)
    allele = rng.integers(0, 2, n)
    status = np.where(rng.random(n) < 0.3, allele, rng.integers(0, 2, n))
    codes = np.stack([allele, status, rng.integers(0, 2, n)], axis=1)
    return write_release(tmp_path, "kronecker", codes, rng)


def test_a_p_value_beyond_every_simulated_release_is_described_as_the_scaled_chi_square_tail(tmp_path, capsys):
    """A review: "p = 1.054e-14" was described as "the share of 999 simulated releases ... whose statistic is at
    least this one's", a share that cannot go below 1/1000: beyond every simulated statistic the number is the tail
    of the chi-square scaled to them, and the description says so; inside their range the wording is the share's."""
    data, manifest = associated_release(tmp_path)
    base = ["analyze", str(data), "--manifest", str(manifest)]
    assert main([*base, "--chi2", "allele,status", "--json"]) == 0
    wald = next(t for t in json.loads(capsys.readouterr().out)["tests"] if t["test"] == "wald_on_unbiased_estimate")
    how = wald["p_value_method"]
    assert "beyond every one of the 999 simulated releases" in how and "scaled" in how
    assert "the share of 999" not in how
    assert main([*base, "--chi2", "allele,status"]) == 0
    text = capsys.readouterr().out
    assert "p-value: simulated, beyond every one of the 999 simulated releases" in text
    assert "whose statistic is at least this one's" not in text
    # independent attributes: the observed statistic lies among the simulated ones, and p is their share
    assert main([*base, "--chi2", "allele,sex", "--json"]) == 0
    wald = next(t for t in json.loads(capsys.readouterr().out)["tests"] if t["test"] == "wald_on_unbiased_estimate")
    assert wald["p_value"] >= 2 / 1000
    assert wald["p_value_method"].startswith("simulated: the share of 999 simulated releases")
    assert "beyond" not in wald["p_value_method"]


def test_json_never_gives_a_p_value_below_printing_precision_as_0(tmp_path, capsys):
    """A review: a release at high epsilon gave "p_value": 0.0 beside "p_value_text": "< 1e-16". Every p-value the
    JSON reports below 1e-16 is null with the bound beside it; the text output says "< 1e-16"."""
    data, manifest = associated_release(tmp_path)
    base = ["analyze", str(data), "--manifest", str(manifest), "--chi2", "allele,status"]
    assert main([*base, "--json"]) == 0
    tests = {t["test"]: t for t in json.loads(capsys.readouterr().out)["tests"]}
    assert set(tests) == {"wald_on_unbiased_estimate", "pearson_on_perturbed_counts"}
    for t in tests.values():
        assert t["p_value"] is None and t["p_value_below"] == 1e-16 and t["p_value_text"] == "< 1e-16", t
    wald = tests["wald_on_unbiased_estimate"]
    assert wald["p_value_chi2_approximation"] is None and wald["p_value_chi2_approximation_below"] == 1e-16
    assert main(base) == 0
    text = capsys.readouterr().out
    assert text.count("p = < 1e-16") == 2 and "p = 0" not in text
    # a p-value within printing precision stays a number, without a bound
    assert main(["analyze", str(data), "--manifest", str(manifest), "--chi2", "allele,sex", "--json"]) == 0
    for t in json.loads(capsys.readouterr().out)["tests"]:
        assert 0 < t["p_value"] <= 1 and "p_value_below" not in t
