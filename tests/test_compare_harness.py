"""The comparison harness: paper figures' data, AVD table, data preparation, CSV/PNG output, CLI."""

import os

import numpy as np
import pandas as pd
import pytest
from conftest import TEST_DATA
from scipy.stats import chi2_contingency

from optrr_engine.cli.main import main
from optrr_engine.compare import avd_table, load_dataset, prepare_frame, ratio_curves, snp_chi2_curve, summarize_snp
from optrr_engine.compare.count_queries import count_query_errors, epsilon_from_p
from optrr_engine.compare.output import plot_avd, plot_ratios, write_csv
from optrr_engine.compare.snp_chi2 import column_counts, records_from_tables, snp_tables, statistic

CAR = os.path.join(TEST_DATA, "car.csv")


def test_ratio_curves_basic_facts():
    frame = ratio_curves(ks=(3, 4), sets=4, mode="fixed_sizes", seed=1)
    kron = frame[frame.method == "kronecker"]
    np.testing.assert_allclose(kron.ratio_to_sum, 1.0, atol=1e-12)
    opt = frame[frame.method == "optimal"].set_index(["k", "set"])
    heur = frame[frame.method == "heuristic"].set_index(["k", "set"])
    assert np.all(opt.ratio_to_sum < 1.0)
    assert np.all(heur.overall_epsilon >= opt.overall_epsilon * (1 - 1e-9))  # the optimum is optimal
    assert np.all(heur.ratio_to_optimal >= 1 - 1e-9)
    fe = ratio_curves(ks=(3,), sets=3, mode="fixed_epsilons", seed=2)
    assert fe.sum_a.between(6, 45).all()


def test_snp_records_are_each_snps_own_table():
    rng = np.random.default_rng(0)
    tables = snp_tables(5, 2000, rng)
    assert np.all(tables.sum(axis=1) == 2000)
    codes = records_from_tables(tables, rng)
    np.testing.assert_array_equal(column_counts(codes), tables)
    assert not np.array_equal(codes[:, 0], codes[:, 1])
    for t, s in zip(tables, statistic(tables.astype(float)), strict=True):
        assert s == pytest.approx(chi2_contingency(t.reshape(2, 2), correction=False)[0], rel=1e-10)


def test_snp_curve_heuristic_beats_kronecker_and_unbiased_beats_raw():
    frame = snp_chi2_curve(ks=(20,), runs=2, seed=4)
    s = summarize_snp(frame).set_index(["method", "estimator"])["mean_abs_error"]
    assert s[("heuristic", "raw")] < 0.5 * s[("kronecker", "raw")]
    assert s[("kronecker", "unbiased")] < s[("kronecker", "raw")]
    eps = frame.groupby("method")["whole_record_epsilon"].mean()
    assert eps["kronecker"] == pytest.approx(eps["heuristic"], rel=1e-5)  # same whole-record budget


def test_prepare_frame_rules():
    rng = np.random.default_rng(1)
    n = 60
    frame = pd.DataFrame(
        {
            "id": [str(i) for i in range(n)],
            "age": [str(x) for x in rng.normal(50, 10, n).round(1)],
            "const": ["x"] * n,
            "colour": [f"c{i % 15}" for i in range(n)],
            "smoker": rng.choice(["yes", "no", "?"], n),
        }
    )
    frame.loc[3, "age"] = "NA"
    data = prepare_frame(frame, "t", max_categories=12, bins=4)
    assert data.columns == ["age", "colour", "smoker"]
    assert data.categories[0] == ["missing", "q1", "q2", "q3", "q4"]
    assert len(data.categories[1]) == 12 and "other" in data.categories[1]
    assert "?" in data.categories[2]
    assert data.codes.shape == (n, 3) and data.codes.min() >= 0


def test_epsilon_from_p_is_the_grr_epsilon():
    # keep with probability p else uniform: P(same) = p + (1-p)/a, P(other) = (1-p)/a
    for a, p in ((2, 0.3), (5, 0.7)):
        same, other = p + (1 - p) / a, (1 - p) / a
        assert epsilon_from_p(p, [a])[0] == pytest.approx(np.log(same / other))


def test_count_queries_small_run():
    data = load_dataset(CAR)
    queries, summary, info = count_query_errors(data, ps=(0.5,), sigmas=(0.2, 0.8), runs=3, seed=5)
    assert set(summary.method) >= {"rr_independent", "rr_clusters_adjusted", "kronecker_structured"}
    assert np.isfinite(queries.relative_error).all() and (queries.relative_error >= 0).all()
    total = queries.epsilon_total.iloc[0]
    opt = [i for i in info if i.get("method") == "auto"][0]
    assert opt["overall_epsilon"] <= total * (1 + 1e-6)


def test_avd_optimized_designs_beat_kronecker_at_equal_budget(tmp_path):
    data = load_dataset(CAR)
    rows, designs = avd_table(data, 7.0, methods=("kronecker", "optimal"), ways=(2, 3), subsets=15, seed=6)
    two = rows[rows.way == 2].set_index("method")
    assert two.loc["optimal", "mean_avd"] < two.loc["kronecker", "mean_avd"]
    assert all(d["overall_epsilon"] <= 7.0 * (1 + 1e-6) for d in designs)
    paths = [write_csv(rows, str(tmp_path / "a.csv")), plot_avd(rows, str(tmp_path / "a.png"))]
    assert pd.read_csv(paths[0]).shape[0] == 4
    assert open(paths[1], "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert sorted(os.listdir(tmp_path)) == ["a.csv", "a.png"]  # no temporary files left


def test_plot_ratios_writes_png(tmp_path):
    frame = ratio_curves(ks=(3,), sets=3, seed=1)
    path = plot_ratios(frame, str(tmp_path / "r.png"), "ratio_to_optimal")
    assert open(path, "rb").read(4) == b"\x89PNG"


def test_cli_compare(tmp_path, capsys):
    assert main(["compare", "ratios", "--ks", "3", "--sets", "2", "--seed", "1", "--out", str(tmp_path), "--csv"]) == 0
    text = capsys.readouterr().out
    assert "seed 1 (fixed)" in text and (tmp_path / "ratios_fixed_sizes.csv").exists()
    assert not (tmp_path / "ratios_fixed_sizes_to_sum.png").exists()
    assert main(["compare", "avd", "--data", str(tmp_path / "missing.csv"), "--target", "3"]) == 2
    assert main(["compare", "ratios", "--ks", "40", "--sets", "1"]) == 2
    assert main(["compare"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("optrr: error:") for line in err)


def test_harness_reports_progress_and_can_be_cancelled():
    from optrr_engine.errors import Cancelled

    seen = []
    ratio_curves(ks=(3,), sets=3, seed=1, progress=lambda f, msg: seen.append(f))
    assert seen and seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    with pytest.raises(Cancelled):
        snp_chi2_curve(ks=(10,), runs=2, seed=1, cancel=lambda: True)
