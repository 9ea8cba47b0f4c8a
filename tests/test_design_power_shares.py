"""Before a release, what the tests of association on the needed 2-way tables will detect is evaluated at the
data manager's own 1-way shares when they are known (a review: stroke, 4.9 % of the rows, x hypertension at
whole-record epsilon 3: the design said w >= 0.12 at uniform margins, the release's test then needed w >= 0.37), at
uniform margins without data; the shares serve only that statement: nothing computed from them is released."""

from __future__ import annotations

import csv
import json
import os
import re

import numpy as np
import pytest

from optrr_engine.analysis.power import (
    design_power,
    detectable_association,
    detectable_w_at_shares,
    detectable_w_uniform,
)
from optrr_engine.cli.main import main
from optrr_engine.designs.kronecker import kronecker
from optrr_engine.estimation import StructuredOperator
from optrr_engine.sampling import make_sampling_design

ROWS = 5000
#: the rare outcome (5 % yes), a 10 % exposure and a 3-category column, in the order the codec gives them
OUTCOME = np.array([0.95, 0.05])
EXPOSURE = np.array([0.9, 0.1])
REGION = np.array([0.4, 0.35, 0.25])


def test_a_rare_outcome_makes_the_test_much_weaker_than_uniform_margins_say():
    mech, _ = kronecker([2, 2, 3], [1.0, 1.0, 1.0])
    uniform = detectable_w_uniform(mech, (0, 1), ROWS)
    at_shares = detectable_w_at_shares(mech, (0, 1), ROWS, OUTCOME, EXPOSURE)
    assert uniform is not None and at_shares is not None
    assert at_shares[0] > 2.5 * uniform[0]  # the uniform margins are far too optimistic for a rare outcome
    assert at_shares[1:] == pytest.approx(uniform[1:])  # the original records' w and the largest w do not change
    # exactly what the release's test (optrr analyze) computes at the independence table of these shares
    op = StructuredOperator.from_mechanism(mech.marginal([0, 1]))
    direct = detectable_association(op, np.outer(OUTCOME, EXPOSURE), ROWS)
    assert at_shares[0] == pytest.approx(direct["detectable_w"])
    # at uniform shares it is the uniform figure
    assert detectable_w_at_shares(mech, (0, 1), ROWS, [1, 1], [1, 1])[0] == pytest.approx(uniform[0])
    # the whole statement
    pairs = [(0, 1), (0, 2)]
    shares = [OUTCOME, EXPOSURE, REGION]
    power = design_power(mech, ROWS, pairs, shares)
    base = design_power(mech, ROWS, pairs)
    expected = [detectable_w_at_shares(mech, p, ROWS, shares[p[0]], shares[p[1]])[0] for p in pairs]
    assert power["margins"] == "file" and power["median_w"] == pytest.approx(np.median(expected))
    assert power["weakest_w"] == pytest.approx(max(expected)) and power["median_w"] > 2 * base["median_w"]
    assert "at your file's shares" in power["statement"] and "not released" in power["statement"]
    assert base["margins"] == "uniform" and "uniform margins" in base["statement"]
    assert "file's shares" not in base["statement"].split(";")[0]
    # a column whose shares are unknown: its tables at uniform margins, and the sentence says so
    mixed = design_power(mech, ROWS, pairs, [OUTCOME, EXPOSURE, None])
    assert mixed["margins"] == "mixed" and "else uniform margins" in mixed["statement"]
    assert mixed["weakest_w"] == pytest.approx(max(expected[0], detectable_w_uniform(mech, (0, 2), ROWS)[0]))


def test_a_sampling_design_is_evaluated_at_the_shares_for_the_rows_reporting_the_table():
    from optrr_engine.estimation.sampled import marginal_operator

    design = make_sampling_design("sample-m", [2, 2, 3], 3.0, m=2)
    at_shares = detectable_w_at_shares(design, (0, 1), ROWS, OUTCOME, EXPOSURE)
    uniform = detectable_w_uniform(design, (0, 1), ROWS)
    op = marginal_operator(design, (0, 1), np.asarray(design.probs, dtype=float) * design.holding((0, 1)))
    direct = detectable_association(op, np.outer(OUTCOME, EXPOSURE), ROWS * design.coverage((0, 1)), ROWS)
    assert at_shares[0] == pytest.approx(direct["detectable_w"]) and at_shares[0] > 2 * uniform[0]
    assert at_shares[1] == pytest.approx(uniform[1])
    # SMP never reports two columns together: no test, shares or not
    smp = make_sampling_design("smp", [2, 2, 3], 3.0)
    assert design_power(smp, ROWS, [(0, 1)], [OUTCOME, EXPOSURE, REGION]) is None


def write_rare_csv(path) -> dict:
    """5,000 rows: outcome 5 % yes, exposure 10 % yes, region in three groups; returns the counts per column."""
    rng = np.random.default_rng(7)
    outcome = np.array(["no"] * 4750 + ["yes"] * 250)
    exposure = np.array(["no"] * 4500 + ["yes"] * 500)
    region = np.array(["north"] * 2000 + ["south"] * 1750 + ["west"] * 1250)
    columns = {"outcome": rng.permutation(outcome), "exposure": rng.permutation(exposure), "region": region}
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(list(columns))
        w.writerows(zip(*columns.values(), strict=True))
    return {name: dict(zip(*np.unique(v, return_counts=True), strict=True)) for name, v in columns.items()}


def config_for(tmp_path, capsys, data) -> str:
    """optrr schema's configuration of ``data``, with a whole-record target and the outcome's tables needed."""
    cfg = str(tmp_path / "cfg.json")
    assert main(["schema", str(data), "-o", cfg]) == 0
    capsys.readouterr()
    with open(cfg, encoding="utf-8") as fh:
        d = json.load(fh)
    for c in d["columns"]:
        c["role"] = "perturb"
    d["target_total"] = 2.0
    d["needed_marginals"] = [["outcome", "exposure"], ["outcome", "region"]]
    with open(cfg, "w", encoding="utf-8") as fh:
        json.dump(d, fh)
    return cfg


def statement_line(out: str) -> str:
    (line,) = [s for s in out.splitlines() if "tests of association on these tables" in s]
    return line


def test_optrr_design_states_the_power_at_the_files_shares_and_uniform_without_data(tmp_path, capsys):
    data = tmp_path / "rare.csv"
    write_rare_csv(data)
    cfg = config_for(tmp_path, capsys, data)  # the data file lies beside the configuration
    assert main(["design", "--config", cfg, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    power = out["predicted_error"]["test_power"]
    assert power["margins"] == "file" and "rare.csv, 5,000 rows" in out["predicted_error"]["shares_source"]
    assert main(["design", "--config", cfg]) == 0
    text = capsys.readouterr().out
    line = statement_line(text)
    assert "at your file's shares" in line and "these figures are for your file's own margins (not released)" in line
    assert f"detect Cohen's w >= {power['median_w']:.2g}" in line
    assert "margins: your file's shares: rare.csv, 5,000 rows (for you only, not released)" in text
    # the same numbers as the engine at the file's shares in the design's category order (no < yes; north ...)
    names = out["names"]
    shares = [
        {"outcome": OUTCOME, "exposure": EXPOSURE, "region": REGION}[n] for n in names
    ]
    pairs = [(names.index("outcome"), names.index("exposure")), (names.index("outcome"), names.index("region"))]
    cfg_json = json.loads(open(cfg, encoding="utf-8").read())
    assert main(["design", "--config", cfg, "--json", "--with-mechanism"]) == 0
    designed = json.loads(capsys.readouterr().out)
    from optrr_engine.mechanism import Mechanism

    mech = Mechanism.from_dict(designed["mechanism"])  # the recommended design is a mechanism here
    expected = design_power(mech, int(cfg_json["source"]["rows"]), pairs, shares)
    assert power["median_w"] == pytest.approx(expected["median_w"])
    assert power["weakest_w"] == pytest.approx(expected["weakest_w"])
    # much weaker than the uniform margins said before
    uniform_cfg = tmp_path / "elsewhere" / "cfg.json"
    uniform_cfg.parent.mkdir()
    uniform_cfg.write_text(json.dumps(cfg_json), encoding="utf-8")
    assert main(["design", "--config", str(uniform_cfg), "--json"]) == 0
    far = json.loads(capsys.readouterr().out)["predicted_error"]
    assert far["test_power"]["margins"] == "uniform" and "give --data FILE" in far["shares_source"]
    assert power["median_w"] > 2 * far["test_power"]["median_w"]
    # --data names the file: its shares again
    assert main(["design", "--config", str(uniform_cfg), "--data", str(data), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)["predicted_error"]["test_power"]
    assert again["margins"] == "file" and again["median_w"] == pytest.approx(power["median_w"])
    # no data at all (--sizes): uniform margins, and the sentence says so
    assert main(["design", "--sizes", "2,2,3", "--target-total", "2", "--marginals", "1,2;1,3;", "--rows", "5000"]) == 0
    line = statement_line(capsys.readouterr().out)
    assert "uniform margins" in line and "file's shares" not in line.split(";")[0]
    assert main(["design", "--sizes", "2,2", "--epsilons", "1,1", "--data", str(data)]) != 0  # --data needs --config
    capsys.readouterr()


def test_a_release_made_after_designing_holds_none_of_the_shares_based_numbers(tmp_path, capsys):
    data = tmp_path / "rare.csv"
    write_rare_csv(data)
    cfg = config_for(tmp_path, capsys, data)
    designed = str(tmp_path / "designed.json")
    assert main(["design", "--config", cfg, "-o", designed, "--json"]) == 0
    power = json.loads(capsys.readouterr().out)["predicted_error"]["test_power"]
    assert power["margins"] == "file"
    out_dir = tmp_path / "release"
    out_dir.mkdir()
    assert main(["perturb", str(data), "--config", designed, "-o", str(out_dir / "r.csv"), "--quiet"]) == 0
    capsys.readouterr()
    numbers = [power[k] for k in ("median_w", "weakest_w")]
    needles = {repr(w) for w in numbers} | {f"{w:.6f}" for w in numbers} | {f"{w:.4g}" for w in numbers}
    needles |= {"test_power", "file's shares", "median_w"}
    written = [designed, *(str(p) for p in out_dir.rglob("*") if p.is_file())]
    assert any(p.endswith(".csv") for p in written) and len(written) > 2, written  # the release and its companions
    assert any("manifest" in p for p in written), written
    for path in written:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for needle in needles:
            assert needle not in text, (os.path.basename(path), needle)
    # the configuration perturb reads has no room for them: an unknown key is refused
    with open(designed, encoding="utf-8") as fh:
        d = json.load(fh)
    assert not re.search(r"test_power|shares", json.dumps(d))


def test_the_design_table_and_the_ranking_say_one_thing_each(tmp_path, capsys):
    """A review: a utility design's per-column epsilons read "from target" where the Design tab says "ε chosen by
    design", and SMP / RS+FD rows read "erased 4" and then "no information: ranked last"."""
    data = tmp_path / "rare.csv"
    write_rare_csv(data)
    cfg = config_for(tmp_path, capsys, data)
    assert main(["design", "--config", cfg]) == 0
    out = capsys.readouterr().out
    assert "recommended: utility" in out and "from target" not in out and "set from the target" not in out
    assert "(sum of the per-column epsilons chosen by the design: " in out
    assert re.search(r"column +size +chosen by design +achieved", out)
    for method in ("smp", "rsfd"):  # every needed table erased (never reported together): one cause
        (row,) = [line for line in out.splitlines() if line.split() and line.split()[0] == method]
        assert row.split()[4] == "2" and row.endswith("every needed table erased: ranked last")
        assert "no information" not in row
    # a budget design scales the weights: said so
    assert main(["design", "--config", cfg, "--method", "kronecker"]) == 0
    out = capsys.readouterr().out
    assert "(sum of the per-column epsilons from the weights" in out and re.search(r"size +from weights", out)
    assert main(["design", "--sizes", "2,2", "--epsilons", "1,1"]) == 0
    assert re.search(r"size +requested", capsys.readouterr().out)


def test_a_ranking_row_without_information_but_nothing_erased_says_so():
    from optrr_engine.cli.design_utility import ranked_last

    row = {"no_information": True, "erased": [], "by_order": {"2": {"marginals": 3}}}
    assert ranked_last(row) == "  no information at these rows: ranked last"
    row = {"no_information": True, "erased": [[1, 2]], "by_order": {"2": {"marginals": 3}}}
    assert ranked_last(row) == "  the other 2 needed table(s) without information at these rows: ranked last"
    assert ranked_last({"no_information": False, "erased": [[1, 2]], "by_order": {}}) == ""
