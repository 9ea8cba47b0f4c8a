"""The AVD comparison with the Bloom-filter schemes: both epsilon axes, CSV columns, CLI end to end."""

import os

import numpy as np
import pandas as pd
import pytest

from optrr_engine.cli.main import main
from optrr_engine.compare import avd_sweep, avd_table, prepare_frame

COLUMNS = [
    "dataset",
    "method",
    "way",
    "epsilon_axis",
    "epsilon",
    "target_epsilon",
    "overall_epsilon",
    "stated_overall_epsilon",
    "mean_attribute_epsilon",
    "mean_avd",
    "sd_avd",
    "mean_r2",
    "sd_r2",
    "estimates",
    "r2_estimates",
    "subsets",
    "repetitions",
    "error",
]


def small_data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < 0.3)) % 3
    c = rng.integers(0, 2, n)
    d = (c * 2 + rng.integers(0, 2, n)) % 4
    frame = pd.DataFrame({"a": a, "b": b, "c": c, "d": d}).astype(str)
    return prepare_frame(frame, "small")


def test_avd_table_with_bloom_methods_on_both_axes():
    data = small_data()
    for axis, target in (("whole_record", 4.0), ("per_attribute", 1.0)):
        rows, designs = avd_table(
            data, target, ("kronecker", "auto", "lopub", "brr", "locop"), (2, 3), subsets=3, seed=1, axis=axis
        )
        assert list(rows.columns) == COLUMNS and len(rows) == 10
        assert rows.mean_avd.between(0, 1).all() and (rows.estimates == 3).all()
        by = {d["method"]: d for d in designs}
        limit = target if axis == "whole_record" else target * 4
        for m in ("kronecker", "auto", "lopub", "brr", "locop"):
            assert by[m]["overall_epsilon"] <= limit * (1 + 1e-9)
        assert by["brr"]["stated_overall_epsilon"] == pytest.approx(limit, rel=1e-9)
        if axis == "per_attribute":
            assert by["kronecker"]["mean_attribute_epsilon"] == pytest.approx(1.0, rel=1e-9)


def test_avd_sweep_one_row_per_method_way_axis_epsilon_on_shared_subsets():
    rows, _ = avd_sweep(small_data(), [0.5, 2.0], methods=("kronecker", "brr"), ways=(2,), subsets=2, seed=3)
    assert len(rows) == 2 * 1 * 2 * 2
    assert not rows.duplicated(["dataset", "method", "way", "epsilon_axis", "epsilon"]).any()
    assert set(rows.epsilon_axis) == {"whole_record", "per_attribute"}


def test_cli_compare_avd_with_bloom_methods(tmp_path, capsys):
    path = tmp_path / "small.csv"
    df = pd.DataFrame({c: small_data().codes[:, i] for i, c in enumerate("abcd")})
    df.to_csv(path, index=False)
    out = tmp_path / "out"
    args = ["compare", "avd", "--data", str(path), "--epsilons", "0.5,2", "--methods", "lopub,locop,brr,kronecker"]
    assert main(args + ["--ways", "2,3", "--subsets", "2", "--seed", "4", "--out", str(out)]) == 0
    frame = pd.read_csv(out / "avd_small.csv")
    assert list(frame.columns) == COLUMNS and len(frame) == 4 * 2 * 2 * 2
    pngs = [f"{kind}_small_{axis}.png" for kind in ("avd", "r2") for axis in ("per_attribute", "whole_record")]
    assert sorted(os.listdir(out)) == sorted(pngs + ["avd_small.csv"])
    capsys.readouterr()
    assert main(["compare", "avd", "--data", str(path), "--epsilons", "1", "--methods", "lopub,bogus"]) == 2
    assert main(["compare", "avd", "--data", str(path), "--epsilons", "1", "--axis", "sideways"]) == 2
    assert main(["compare", "avd", "--data", str(path), "--epsilons", "1", "--target", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "bogus" in err[0]


def test_the_utility_design_joins_on_both_axes_within_the_budget():
    data = small_data()
    rows, designs = avd_table(data, 4.0, ("utility", "brr"), (2,), subsets=2, seed=2, axis="whole_record")
    by = {d["method"]: d for d in designs}
    assert by["utility"]["overall_epsilon"] <= 4.0 * (1 + 1e-9)
    assert rows.set_index("method").loc["utility", "mean_avd"] <= 1
    rows, designs = avd_table(data, 1.0, ("utility",), (2,), subsets=2, seed=2, axis="per_attribute")
    assert {d["method"]: d for d in designs}["utility"]["max_attribute_epsilon"] <= 1.0 * (1 + 1e-9)
