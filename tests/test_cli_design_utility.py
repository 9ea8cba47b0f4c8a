"""`optrr design`: predicted error in the JSON, --method utility, and auto's recommendation by predicted error."""

import json

import numpy as np

from optrr_engine.utility.identifiability import way_out
from tests.test_cli_design import run


def test_predicted_error_in_json_and_warning_for_non_identifiable():
    code, out, err = run("design", "--method", "optimal", "--sizes", "2,2,2", "--target-total", "1.5", "--json")
    assert code == 0, err
    pe = json.loads(out)["predicted_error"]
    assert pe["rows"] == 10000 and pe["marginals_requested"] == "1,2"
    assert pe["by_order"]["2"]["non_identifiable"] == 3
    assert sorted(pe["non_identifiable"]) == [[1, 2], [1, 3], [2, 3]]
    assert sorted(pe["erased"]) == [[1, 2], [1, 3], [2, 3]] and pe["by_order"]["2"]["erased"] == 3
    assert "cannot be estimated from this release at any number of rows" in err and f"the way out: {way_out()}" in err
    assert "standard deviation of 1 or more" not in err


def test_tables_too_noisy_at_these_rows_are_a_warning_not_erased():
    """Car's sizes at whole-record epsilon 1 and its 1,728 rows: the recommended design's unbiased estimate of
    some pairs has a cell sd >= 1 (a warning naming them), but nothing is erased, and the design is ranked by the
    default estimate's predicted error."""
    code, out, err = run(
        "design", "--sizes", "4,4,4,3,3,3,4", "--target-total", "1", "--rows", "1728", "--marginals", "2", "--json"
    )
    assert code == 0, err
    obj = json.loads(out)
    pe = obj["predicted_error"]
    assert pe["erased"] == [] and pe["non_identifiable"]
    assert pe["by_order"]["2"]["erased"] == 0 and pe["by_order"]["2"]["mean_expected_avd_default"] is not None
    assert "standard deviation of 1 or more" in err and "at any number of rows" not in err
    cands = [c for c in obj["recommendation"]["candidates"] if "result" not in c]
    # a design with no information on any needed table ranks as if it erased them all (21 pairs of 7 columns)
    keys = [(21 if c["no_information"] else len(c["erased"]), c["mean_expected_avd_default"] or np.inf) for c in cands]
    assert keys == sorted(keys)
    assert [c["design"] for c in cands if c["no_information"]] == ["smp", "rsfd"]  # (they erase every pair)
    args = ["--sizes", "4,4,4,3,3,3,4", "--target-total", "1", "--rows", "1728", "--marginals", "2"]
    code, out, err = run("design", *args)
    assert code == 0, err
    assert "unbiased estimate: too noisy at these rows; erased: 0;" in out
    code, out, err = run("design", "--method", "optimal", "--sizes", "2,2,2", "--target-total", "1.5")
    assert code == 0, err
    assert "unbiased estimate: not identifiable; erased: 3;" in out


def test_named_marginals_and_rows():
    code, out, err = run(
        "design",
        "--method",
        "kronecker",
        "--sizes",
        "3,4,2",
        "--epsilons",
        "1,1,1",
        "--marginals",
        "1,3;2",
        "--rows",
        "500",
        "--json",
    )
    assert code == 0, err
    pe = json.loads(out)["predicted_error"]
    assert pe["rows"] == 500 and [m["attributes"] for m in pe["marginals"]] == [[1, 3], [2]]
    assert err == ""


def test_utility_method_meets_target_and_beats_kronecker():
    code, out, err = run("design", "--method", "utility", "--sizes", "2,3,4,3", "--target-total", "2", "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["method"] == "utility" and obj["overall_epsilon"] <= 2.0
    assert obj["relative_gap"] < 1e-3
    x = np.asarray(obj["pattern_probabilities"])
    assert abs(np.log(x.max() / x.min()) - obj["overall_epsilon"]) < 1e-9
    code, out2, _ = run("design", "--method", "kronecker", "--sizes", "2,3,4,3", "--target-total", "2", "--json")
    kron = json.loads(out2)["predicted_error"]["by_order"]["2"]["mean_expected_squared_error"]
    assert obj["predicted_error"]["by_order"]["2"]["mean_expected_squared_error"] < kron


def test_auto_with_target_recommends_by_predicted_error():
    code, out, err = run("design", "--sizes", "2,2,2", "--target-total", "1.5", "--json")
    assert code == 0, err
    obj = json.loads(out)
    cands = obj["recommendation"]["candidates"]
    names = [c["design"] for c in cands]
    assert {"kronecker", "auto", "utility"} <= set(names)
    assert obj["recommended"] == names[0]
    keys = [(len(c["erased"]), c["mean_expected_avd_default"] or np.inf) for c in cands if "result" not in c]
    assert keys == sorted(keys)  # fewer erased needed marginals first, then the default estimate's error
    assert all(c["whole_record_epsilon"] <= 1.5 * (1 + 1e-9) for c in cands if "whole_record_epsilon" in c)
    auto = next(c for c in cands if c["design"] == "auto")
    assert len(auto["non_identifiable"]) == 3  # the lowest-eps design erases the pairs here
    assert obj["predicted_error"]["non_identifiable"] == []


def test_bad_input_one_line():
    for args, fragment in [
        (["--method", "utility", "--sizes", "2,3", "--epsilons", "1,1"], "needs --target-total"),
        (["--sizes", "2,3", "--epsilons", "1,1", "--rows", "0"], "--rows"),
        (["--sizes", "2,3", "--epsilons", "1,1", "--marginals", "1,7;2"], "invalid marginal"),
    ]:
        code, out, err = run("design", *args)
        assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1, (args, err)


def test_recommendation_names_the_needed_marginals_in_words_and_a_refused_utility_design():
    code, out, err = run("design", "--sizes", "2,3,4", "--target-total", "2", "--marginals", "1", "--rows", "5000")
    assert code == 0, err
    assert "(by predicted error of the 1-way marginals at 5000 rows)" in out
    # Two named tables among 23 columns: designed on their 4 columns, the 19 others released as noise
    sizes = ",".join(["2"] * 23)
    code, out, err = run("design", "--sizes", sizes, "--target-total", "2", "--marginals", "1,2;3,4", "--rows", "5000")
    assert code == 0, err
    assert "(by predicted error of the tables 1,2; 3,4 at 5000 rows)" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("utility"))
    assert "not available" not in line
    # Twelve tables over 24 of 40 columns: 2^24 grid cells, refused with the reason in the ranking
    tables = ";".join(f"{i},{i + 1}" for i in range(1, 25, 2))
    code, out, err = run("design", "--sizes", ",".join(["2"] * 40), "--target-total", "2", "--marginals", tables)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.strip().startswith("utility"))
    assert "not available: the utility design handles named tables over at most 22 columns; these span 24" in line
