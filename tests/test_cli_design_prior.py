"""`optrr design --prior FILE`: the user's guess of the distributions in the predicted error, and one-line exit-2
errors for a bad prior file. Expectations from the closed form of randomized response on one attribute."""

import json
import math
import os
import threading

import pytest

from tests.test_cli_design import run


def one_way_squared_error(eps: float, a: int, pi: list[float], n: int) -> float:
    """sum_x Var(pi_hat_x) for GRR on a categories: lambda_x (1 - lambda_x) / (n (p - q)^2)."""
    p, q = math.exp(eps) / (math.exp(eps) + a - 1), 1 / (math.exp(eps) + a - 1)
    return sum((q + (p - q) * x) * (1 - q - (p - q) * x) / (n * (p - q) ** 2) for x in pi)


def design(*extra):
    return run("design", "--method", "kronecker", "--sizes", "2,3", "--epsilons", "1,1", "--rows", "1000", *extra)


def design_spec(spec, marginals: str, prior):
    """Kronecker design of a spec file, 1,000 rows, with a prior file, as JSON."""
    return run(
        "design",
        "--method",
        "kronecker",
        "--spec",
        str(spec),
        "--marginals",
        marginals,
        "--rows",
        "1000",
        "--prior",
        str(prior),
        "--json",
    )


def test_prior_by_index_changes_the_predicted_error_as_the_closed_form_says(tmp_path):
    prior = tmp_path / "prior.json"
    prior.write_text(json.dumps({"1": [9, 1]}))  # counts are normalised
    code, out, err = design("--marginals", "1", "--prior", str(prior), "--json")
    assert code == 0, err
    pe = json.loads(out)["predicted_error"]
    assert pe["prior"] == str(prior)
    got = pe["marginals"][0]["expected_squared_error"]
    assert got == pytest.approx(one_way_squared_error(1.0, 2, [0.9, 0.1], 1000), rel=1e-9)
    code, out, _ = design("--marginals", "1", "--json")
    uniform = json.loads(out)["predicted_error"]["marginals"][0]["expected_squared_error"]
    assert uniform == pytest.approx(one_way_squared_error(1.0, 2, [0.5, 0.5], 1000), rel=1e-9) and uniform != got


def test_prior_csv_by_name_and_a_guessed_table(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"sizes": [3, 2], "epsilons": [1, 1], "names": ["age", "sex"]}))
    prior = tmp_path / "prior.csv"
    prior.write_text("age,0.2,0.3,0.5\n")
    code, out, err = design_spec(spec, "1", prior)
    assert code == 0, err
    got = json.loads(out)["predicted_error"]["marginals"][0]["expected_squared_error"]
    assert got == pytest.approx(one_way_squared_error(1.0, 3, [0.2, 0.3, 0.5], 1000), rel=1e-9)
    table = tmp_path / "table.json"
    table.write_text(json.dumps({"tables": [{"columns": ["age", "sex"], "table": [[1, 1], [2, 2], [3, 3]]}]}))
    code, out, err = design_spec(spec, "1,2", table)
    assert code == 0, err
    assert json.loads(out)["predicted_error"]["prior"] == str(table)


def test_prior_used_by_the_recommendation(tmp_path):
    prior = tmp_path / "prior.json"
    prior.write_text(json.dumps({"columns": {"1": [0.95, 0.05]}}))
    code, out, err = run("design", "--sizes", "2,3", "--target-total", "2", "--prior", str(prior), "--json")
    assert code == 0, err
    assert json.loads(out)["predicted_error"]["prior"] == str(prior)


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ({"9": [1, 1]}, "p.json", "unknown column '9'"),
        ({"age": [1, 1]}, "p.json", "unknown column 'age'"),
        ({"1": [0.5, -0.1]}, "p.json", "non-negative"),
        ({"2": [0.5, 0.5]}, "p.json", "has 2 values; it has 3 categories"),
        ({"tables": [{"columns": [1, 2], "table": [[1, 1, 1]]}]}, "p.json", "must have shape (2, 3)"),
        ("1,0.5,abc\n", "p.csv", "must be numbers"),
        ("{not json", "p.json", "is not valid JSON"),
    ],
)
def test_bad_prior_file_exits_2_with_one_line(tmp_path, content, name, message):
    prior = tmp_path / name
    prior.write_text(content if isinstance(content, str) else json.dumps(content))
    before = prior.read_bytes()
    code, out, err = design("--prior", str(prior))
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert prior.read_bytes() == before


def test_missing_prior_file_exits_2(tmp_path):
    code, _, err = design("--prior", str(tmp_path / "absent.json"))
    assert code == 2 and "does not exist" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_spec_given_through_a_pipe_is_read_once(tmp_path):
    """`--spec <(make-spec)` with `--prior` by column name: the spec (sizes and names) is read once, so a pipe
    works (a second read would wait forever for a writer that has gone)."""
    spec = tmp_path / "spec.pipe"
    os.mkfifo(spec)
    body = json.dumps({"sizes": [3, 2], "epsilons": [1, 1], "names": ["age", "sex"]})

    def write_once():
        with open(spec, "w") as fh:  # waits until the command opens the pipe
            fh.write(body)

    writer = threading.Thread(target=write_once, daemon=True)
    writer.start()
    prior = tmp_path / "prior.csv"
    prior.write_text("age,0.2,0.3,0.5\n")
    code, out, err = design_spec(spec, "1", prior)
    writer.join(timeout=60)
    assert code == 0, err
    got = json.loads(out)["predicted_error"]["marginals"][0]["expected_squared_error"]
    assert got == pytest.approx(one_way_squared_error(1.0, 3, [0.2, 0.3, 0.5], 1000), rel=1e-9)
