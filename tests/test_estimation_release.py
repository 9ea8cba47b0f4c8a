"""Estimation straight from a release (perturbed CSV + manifest), streamed; and ``optrr estimate``."""

import hashlib
import json

import numpy as np
import pytest

from optrr_engine.cli.main import main
from optrr_engine.designs import run_design
from optrr_engine.errors import InputError
from optrr_engine.estimation import count_codes, estimate_from_counts, estimate_release, release_source

NAMES = ["sex", "smoker", "region"]
CATS = [["F", "M"], ["no", "yes", "former"], ["N", "E", "S", "W"]]


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_release(tmp_path, mech, codes, rng, extra_column=True, cats=CATS):
    """A release as the release writer makes it: perturbed labels + manifest (keys of the documented interface)."""
    import pandas as pd

    perturbed = mech.sample(codes, rng)
    frame = pd.DataFrame({n: np.asarray(c)[perturbed[:, i]] for i, (n, c) in enumerate(zip(NAMES, cats, strict=True))})
    if extra_column:
        frame.insert(0, "kept_id", np.arange(len(frame)).astype(str))
    data = tmp_path / "OUTPUT.csv"
    frame.to_csv(data, index=False)
    eps = mech.attribute_epsilons()
    manifest = {
        "format_version": 1,
        "attributes": [
            {"name": n, "categories": c, "requested_epsilon": float(e), "achieved_epsilon": float(e)}
            for n, c, e in zip(NAMES, cats, eps, strict=True)
        ],
        "overall_epsilon": mech.overall_epsilon(),
        "mechanism": mech.to_dict(),
        "rows": int(len(frame)),
        "input_sha256": "0" * 64,
        "output_sha256": sha256(data),
        "shuffled": False,
        "seeded": True,
    }
    path = tmp_path / "OUTPUT.manifest.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return data, path, perturbed


@pytest.fixture
def release(tmp_path):
    rng = np.random.default_rng(5)
    mech = run_design("optimal", [2, 3, 4], [1.0, 1.5, 2.0]).mechanism
    n = 3000
    codes = np.stack([rng.integers(0, a, n) for a in (2, 3, 4)], axis=1)
    codes[:, 1] = np.where(rng.random(n) < 0.6, codes[:, 0], codes[:, 1])
    data, manifest, perturbed = write_release(tmp_path, mech, codes, rng)
    return mech, data, manifest, perturbed


def test_release_estimate_equals_in_memory_estimate(release, monkeypatch):
    mech, data, manifest, perturbed = release
    monkeypatch.setattr(release_source, "CHUNK_ROWS", 257)  # many chunks
    est = estimate_release(str(data), ["region", "sex"], manifest_path=str(manifest), method="clip")
    direct = estimate_from_counts(mech.marginal([2, 0]), count_codes(perturbed[:, [2, 0]], [4, 2]), method="clip")
    np.testing.assert_array_equal(est.observed, direct.observed)
    np.testing.assert_allclose(est.estimate, direct.estimate)
    assert est.attributes == ["region", "sex"] and est.categories[0] == CATS[2]
    assert est.info["whole_record_epsilon"] == pytest.approx(mech.overall_epsilon())


def test_release_errors(release, tmp_path):
    mech, data, manifest, _ = release
    with pytest.raises(InputError, match="not in the release"):
        estimate_release(str(data), ["age"], manifest_path=str(manifest))
    bad = tmp_path / "bad.csv"
    bad.write_text(data.read_text().replace(",F,", ",X,", 1))
    with pytest.raises(InputError):
        estimate_release(str(bad), ["sex"], manifest_path=str(manifest), check_hash=False)


def test_cli_estimate_json_and_table(release, capsys):
    _, data, manifest, _ = release
    code = main(["estimate", str(data), "--manifest", str(manifest), "--marginal", "sex,smoker", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["attributes"] == ["sex", "smoker"] and out["method"] == "map" and out["rows"] == 3000
    assert len(out["cells"]) == 6
    cell = out["cells"][0]
    assert cell["values"] == ["F", "no"] and cell["ci_low"] <= max(cell["unbiased"], 0) <= cell["ci_high"] + 1e-12
    assert abs(sum(c["estimate"] for c in out["cells"]) - 1) < 1e-9
    assert min(c["estimate"] for c in out["cells"]) >= 0 and out["info"]["converged"]
    code = main(["estimate", str(data), "--manifest", str(manifest), "--marginal", "smoker", "--method", "ibu"])
    text = capsys.readouterr().out
    assert code == 0 and "former" in text and "iterative Bayesian update" in text and "converged in" in text
    code = main(["estimate", str(data), "--manifest", str(manifest), "--marginal", "smoker", "--method", "unbiased"])
    assert code == 0 and "for inference and confidence intervals" in capsys.readouterr().out


def test_cli_estimate_bad_input_is_one_line_exit_2(release, capsys):
    _, data, manifest, _ = release
    assert main(["estimate", str(data), "--manifest", str(manifest), "--marginal", "sex,nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope" in err[0]
    assert main(["estimate", str(data), "--manifest", str(manifest), "--marginal", "sex", "--method", "x"]) == 2
    assert main(["estimate", str(data), "--manifest", str(manifest), "--marginal", "sex", "--confidence", "2"]) == 2
    assert main(["estimate", str(data) + ".missing", "--manifest", str(manifest), "--marginal", "sex"]) == 2


def test_empty_cells_are_the_empty_category(tmp_path):
    """Readers return empty cells as missing; they count as the category "" when the manifest lists it."""
    rng = np.random.default_rng(9)
    mech = run_design("kronecker", [2, 3, 4], [1.0, 1.0, 1.0]).mechanism
    codes = np.stack([rng.integers(0, a, 500) for a in (2, 3, 4)], axis=1)
    cats = [["F", "M"], ["", "no", "yes"], ["N", "E", "S", "W"]]
    data, manifest, perturbed = write_release(tmp_path, mech, codes, rng, extra_column=False, cats=cats)
    est = estimate_release(str(data), ["smoker"], manifest_path=str(manifest))
    np.testing.assert_array_equal(est.observed, np.bincount(perturbed[:, 1], minlength=3))


def test_manifest_found_next_to_the_data_file(release, capsys):
    _, data, manifest, _ = release
    next_to = data.parent / (data.name + ".manifest.json")  # the release writer's OUTPUT.csv.manifest.json
    next_to.write_text(manifest.read_text(), encoding="utf-8")
    manifest.unlink()
    assert main(["estimate", str(data), "--marginal", "region", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["attributes"] == ["region"]


def test_estimate_a_release_written_by_optrr_perturb(tmp_path, capsys):
    """End to end with the real data path: optrr schema -> optrr perturb -> optrr estimate."""
    import pandas as pd

    rng = np.random.default_rng(21)
    n = 4000
    sex = rng.choice(["F", "M"], n)
    smoker = np.where(rng.random(n) < 0.5, np.where(sex == "F", "no", "yes"), rng.choice(["no", "yes"], n))
    pd.DataFrame({"sex": sex, "smoker": smoker}).to_csv(tmp_path / "in.csv", index=False)
    config, out = tmp_path / "cfg.json", tmp_path / "out.csv"
    assert main(["schema", str(tmp_path / "in.csv"), "-o", str(config), "--quiet"]) == 0
    assert main(["perturb", str(tmp_path / "in.csv"), "--config", str(config), "-o", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["estimate", str(out), "--marginal", "sex,smoker", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    # OS randomness: each cell within 6 standard errors (a miss has probability < 1e-8: a bug, not bad luck). The
    # standard errors come from the mechanism's definition, not from the estimator: P[y, x] = X_S with S the
    # attributes where y and x differ; the perturbed counts are sums of independent categorical draws, so
    # Cov(lambda) = sum_x n_x (diag P_x - P_x P_x^T) / n^2 and Cov(unbiased) = P^-1 Cov(lambda) P^-T.
    manifest = json.loads((tmp_path / "out.csv.manifest.json").read_text())
    cats = [manifest["attributes"][i]["categories"] for i in range(2)]
    log_x = release_source.mechanism_from_manifest(manifest).marginal([0, 1]).log_pattern_probs()
    states = [(i, j) for i in range(len(cats[0])) for j in range(len(cats[1]))]
    P = np.array([[np.exp(log_x[(y[0] != x[0]) | (y[1] != x[1]) << 1]) for x in states] for y in states])
    np.testing.assert_allclose(P.sum(axis=0), 1.0, rtol=1e-9)  # a transition matrix
    true_counts = pd.crosstab(sex, smoker).reindex(index=cats[0], columns=cats[1], fill_value=0).to_numpy().ravel()
    cov_lambda = sum(c * (np.diag(P[:, x]) - np.outer(P[:, x], P[:, x])) for x, c in enumerate(true_counts)) / n**2
    inverse = np.linalg.inv(P)
    se = np.sqrt(np.diag(inverse @ cov_lambda @ inverse.T))
    for cell in res["cells"]:
        x = states.index((cats[0].index(cell["values"][0]), cats[1].index(cell["values"][1])))
        assert abs(cell["unbiased"] - true_counts[x] / n) <= 6 * se[x], (cell, se[x])
    assert res["rows"] == n


def test_an_exported_table_keeps_attributes_named_like_its_statistics():
    """A data column called "estimate" or "observed" keeps its labels in the CSV (they were overwritten)."""
    import numpy as np

    from optrr_engine.estimation.result import MarginalEstimate

    est = MarginalEstimate(
        sizes=(2, 2), method="map", estimate=np.full((2, 2), 0.25), unbiased=np.full((2, 2), 0.25),
        std_error=np.full((2, 2), 0.1), ci_low=np.zeros((2, 2)), ci_high=np.full((2, 2), 0.5), confidence=0.95,
        rows=40, observed=np.full((2, 2), 10), attributes=["estimate", "observed"],
        categories=[["lo", "hi"], ["no", "yes"]],
    )
    frame = est.to_frame()
    assert list(frame["estimate (attribute)"]) == ["lo", "lo", "hi", "hi"]
    assert list(frame["observed (attribute)"]) == ["no", "yes", "no", "yes"]
    assert list(frame["estimate"]) == [0.25] * 4 and list(frame["observed"]) == [10] * 4
    assert set(frame["method"]) == {"map"} and set(frame["confidence"]) == {0.95}


def test_cli_json_is_standard_json(tmp_path, capsys):
    """NaN / Infinity are not JSON (JavaScript's JSON.parse refuses them): non-finite numbers print as null."""
    import json
    import math

    from optrr_engine.cli.common import print_json

    print_json({"a": math.nan, "b": [math.inf, 1.5], "c": {"d": -math.inf}})
    out = capsys.readouterr().out
    assert json.loads(out, parse_constant=lambda c: pytest.fail(f"non-standard {c}")) == {
        "a": None, "b": [None, 1.5], "c": {"d": None}
    }


def test_a_table_from_few_records_says_so(tmp_path, capsys):
    """Fewer than 5 records per cell: the estimate carries info few_rows and optrr estimate warns on stderr."""
    from optrr_engine.estimation.estimate import few_rows

    mech = run_design("kronecker", [3, 4], [1.0, 1.0]).mechanism
    small = estimate_from_counts(mech, np.full((3, 4), 4.0))  # 48 records, 12 cells: 4 per cell
    assert small.info["few_rows"] == few_rows(48, 12) and "only 48 records report this table for 12 cells" in (
        small.info["few_rows"]
    )
    assert "few_rows" not in estimate_from_counts(mech, np.full((3, 4), 5.0)).info  # 60 records: 5 per cell
    # optrr estimate prints it on stderr
    frame = tmp_path / "few.csv"
    frame.write_text("a,b\n" + "x,p\ny,q\n" * 3)
    cfg = tmp_path / "few.json"
    cfg.write_text(json.dumps({"method": "kronecker", "columns": [
        {"name": "a", "role": "perturb", "epsilon": 1.0, "categories": ["x", "y"]},
        {"name": "b", "role": "perturb", "epsilon": 1.0, "categories": ["p", "q"]},
    ]}))
    args = ["perturb", str(frame), "--config", str(cfg), "-o", str(tmp_path / "few_rel.csv"), "--quiet"]
    assert main([*args, "--allow-rare-categories"]) == 0  # 3 rows per category: rare, not this test's subject
    capsys.readouterr()
    assert main(["estimate", str(tmp_path / "few_rel.csv"), "--marginal", "a,b"]) == 0
    assert "optrr: warning: only 6 records report this table for 4 cells" in capsys.readouterr().err


def test_the_text_table_shows_an_interval_the_release_cannot_give_as_unknown_not_nan(tmp_path, capsys, developer):
    """A review: ``optrr estimate`` on a table the release cannot estimate (its joint table erased) printed the
    interval as "nan nan"; the JSON gives null, and the text table now says "unknown"."""
    import pandas as pd

    rng = np.random.default_rng(5)
    src = tmp_path / "three.csv"
    pd.DataFrame({n: rng.choice(["x", "y"], 400) for n in ("a", "b", "c")}).to_csv(src, index=False)
    columns = [{"name": n, "role": "perturb", "categories": ["x", "y"]} for n in ("a", "b", "c")]
    cfg = tmp_path / "three.json"  # the optimal design at 1.5 erases every pair's joint table
    cfg.write_text(json.dumps({"method": "optimal", "target_total": 1.5, "columns": columns}))
    rel = tmp_path / "rel.csv"
    args = ["perturb", str(src), "--config", str(cfg), "-o", str(rel), "--quiet"]
    assert main([*args, "--insecure-test-seed", "2"]) == 0
    capsys.readouterr()
    assert main(["estimate", str(rel), "--marginal", "a,b", "--json"]) == 0
    captured = capsys.readouterr()
    assert "cannot be estimated from the release" in captured.err
    cells = json.loads(captured.out)["cells"]
    assert all(c["ci_low"] is None and c["ci_high"] is None and 0 < c["estimate"] < 1 for c in cells)
    assert main(["estimate", str(rel), "--marginal", "a,b"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [ln.split() for ln in lines if ln.split()[:2] in (["x", "x"], ["x", "y"], ["y", "x"], ["y", "y"])]
    assert len(rows) == 4 and not any("nan" in field.lower() for row in rows for field in row)
    for row in rows:  # a, b, estimate, low, high, observed
        assert row[3:5] == ["unknown", "unknown"] and 0 < float(row[2]) < 1 and int(row[5]) >= 0, row
    # an estimable table keeps its numbers
    assert main(["estimate", str(rel), "--marginal", "a"]) == 0
    assert "unknown" not in "".join(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith(("x ", "y ")))
