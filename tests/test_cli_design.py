"""`optrr design`: JSON contract, readable table, budget mode, spec files and one-line errors."""

import json
import subprocess
import sys

import numpy as np
import pytest


def run(*args):
    proc = subprocess.run(
        [sys.executable, "-m", "optrr_engine.cli.main", *args], capture_output=True, text=True, timeout=120
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("method", ["kronecker", "optimal", "heuristic", "family"])
def test_json_contract(method):
    code, out, err = run("design", "--method", method, "--sizes", "3,4,2", "--epsilons", "1,2,0.5", "--json")
    if method == "family" and code == 2:
        assert "infeasible" in err
        return
    assert code == 0, err
    obj = json.loads(out)
    for key in ("method", "sizes", "requested_epsilons", "attribute_epsilons", "overall_epsilon", "design_seconds"):
        assert key in obj
    assert obj["sizes"] == [3, 4, 2] and obj["method"] == method
    x = np.asarray(obj["pattern_probabilities"])
    assert x.size == 8
    t = np.array([np.prod([[2, 3, 1][i] for i in range(3) if s >> i & 1]) for s in range(8)])
    assert abs((t * x).sum() - 1) < 1e-12
    assert abs(np.log(x.max() / x.min()) - obj["overall_epsilon"]) < 1e-9


def test_table_output_and_spec_file(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"sizes": [2] * 60, "epsilons": [1.5] * 60}))
    code, out, err = run("design", "--method", "heuristic", "--spec", str(spec))
    assert code == 0, err
    assert "whole-record epsilon" in out and "..." in out
    code, out, err = run("design", "--method", "heuristic", "--spec", str(spec), "--json")
    assert "pattern_probabilities" not in json.loads(out)


def test_a_table_too_large_to_predict_is_named_not_allocated():
    """Two columns of 25,000 categories: the 2-way table (6.25e8 cells, 4.7 GB as floats) is not predicted; the
    design and the 1-way prediction still come out, and the text says why the rest is missing."""
    code, out, err = run("design", "--sizes", "25000,25000", "--epsilons", "1,1")
    assert code == 0, err
    assert "predicted error: not computed: a marginal of 2 attributes with 6.25e+08 cells is too large" in out
    code, out, err = run("design", "--sizes", "25000,25000", "--epsilons", "1,1", "--marginals", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["predicted_error"]["by_order"]["1"]["marginals"] == 2


def test_budget_mode_meets_target():
    for method in ("kronecker", "optimal", "heuristic", "family"):
        code, out, err = run(
            "design", "--method", method, "--sizes", "3,4,2,5", "--target-total", "4", "--weights", "1,2,1,1", "--json"
        )
        assert code == 0, (method, err)
        obj = json.loads(out)
        assert obj["overall_epsilon"] <= 4 + 1e-9
        assert obj["overall_epsilon"] >= 4 * 0.999  # the largest scale that fits
        if method != "heuristic":
            eps = np.asarray(obj["attribute_epsilons"])
            np.testing.assert_allclose(eps / eps[0], [1, 2, 1, 1], rtol=1e-6)


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--sizes", "3,1,2", "--epsilons", "1,1,1"], "at least 2"),
        (["--sizes", "3,4", "--epsilons", "1,0"], "greater than 0"),
        (["--sizes", "3,4", "--epsilons", "1,-2"], "greater than 0"),
        (["--sizes", "3,4", "--epsilons", "1,nan"], "finite"),
        (["--sizes", "3,4", "--epsilons", "1,inf"], "finite"),
        (["--sizes", "3,4,5", "--epsilons", "1,2"], "2 epsilon values for 3 attributes"),
        (["--sizes", "3,x", "--epsilons", "1,2"], "not a number"),
        (
            ["--sizes", ",".join(["2"] * 25), "--epsilons", ",".join(["1"] * 25), "--method", "optimal"],
            "at most k = 20",
        ),
        (["--sizes", "3,4", "--epsilons", "1,2", "--method", "bogus"], "unknown method"),
        (["--spec", "/nonexistent/spec.json"], "does not exist"),
        (["--sizes", "3,4"], "give --epsilons"),
    ],
)
def test_bad_input_one_line_exit_2(args, fragment):
    code, out, err = run("design", *args)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], err
    assert out == ""


def test_version():
    code, out, _ = run("--version")
    assert code == 0 and out.startswith("optrr ")


def test_a_target_the_design_cannot_reach_is_noted_on_stderr_and_in_the_json():
    code, out, err = run(
        "design", "--method", "optimal", "--sizes", "3,4,2,2,2,5,4,4,4,2", "--target-total", "40", "--json"
    )
    assert code == 0, err
    obj = json.loads(out)
    assert obj["overall_epsilon"] < 32 and obj["target_not_reached"].startswith("whole-record ε 31.06 of the target 40")
    assert f"optrr: note: {obj['target_not_reached']}" in err
