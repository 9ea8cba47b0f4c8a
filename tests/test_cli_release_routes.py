"""Command-line routes from a design to a release and from a release to an estimate: method utility released
through ``optrr design --with-mechanism``, the predicted error of sampling designs, and the errors a recipient
meets (a kept column, a re-saved file, a renamed release, columns released as noise) naming what to do."""

import json
import re
import shlex
import shutil

import numpy as np
import pandas as pd

from optrr_engine.cli.main import main
from optrr_engine.mechanism import Mechanism
from optrr_engine.sampling import make_sampling_design
from optrr_engine.utility import parse_marginals
from optrr_engine.utility.sampling import SamplingCandidate
from tests.conftest import TEST_DATA

CAR = TEST_DATA / "car.csv"


def error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("optrr: error: ")]
    assert len(lines) == 1, err
    return lines[0]


def car_config(tmp_path, capsys, perturb=("buying", "safety", "class"), keep=(), **top) -> dict:
    """The schema of car.csv with only ``perturb`` randomized (and ``keep`` copied), in budget mode."""
    path = tmp_path / "schema.json"
    assert main(["schema", str(CAR), "-o", str(path), "--quiet"]) == 0
    capsys.readouterr()
    cfg = json.loads(path.read_text())
    for c in cfg["columns"]:
        c.pop("epsilon", None)
        c["role"] = "perturb" if c["name"] in perturb else "keep" if c["name"] in keep else "drop"
    cfg.update(top)
    return cfg


def write(tmp_path, cfg, name="release.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(cfg))
    return str(path)


def perturb(tmp_path, capsys, cfg, name="rel.csv") -> str:
    out = tmp_path / name
    args = ["perturb", str(CAR), "--config", write(tmp_path, cfg), "-o", str(out), "--quiet"]
    assert main([*args, "--insecure-test-seed", "7", "--allow-repeat"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    return str(out)


def utility_release(tmp_path, capsys) -> str:
    """car.csv's buying, safety, class released by the utility design for the table (safety, class): buying is
    left as pure noise (epsilon 0)."""
    cfg = car_config(tmp_path, capsys, method="utility", target_total=2.0, needed_marginals=[["safety", "class"]])
    out = json.loads(design_json(capsys, "--sizes", "4,3,4", "--target-total", "2", "--marginals", "2,3;"))
    cfg["mechanism"] = out["mechanism"]
    return perturb(tmp_path, capsys, cfg)


def design_json(capsys, *args) -> str:
    assert main(["design", "--method", "utility", *args, "--json", "--with-mechanism"]) == 0
    return capsys.readouterr().out


def test_utility_release_route_from_the_error_to_an_estimate(tmp_path, capsys, developer, audit_dir):
    """perturb refuses method utility without a mechanism and names the design command; that command, run on this
    configuration, writes one with the mechanism, which is released as it is, and the needed table is estimated."""
    cfg = car_config(tmp_path, capsys, method="utility", target_total=2.0, needed_marginals=[["safety", "class"]])
    out = tmp_path / "rel.csv"
    config = write(tmp_path, cfg)
    assert main(["perturb", str(CAR), "--config", config, "-o", str(out), "--quiet"]) == 2
    line = error_line(capsys)
    assert not out.exists()
    command = shlex.split(re.search(r"run `([^`]*)`", line).group(1))
    assert command[:2] == ["optrr", "design"] and "--config" in command and "-o" in command
    designed = str(tmp_path / "designed.json")
    command = [{"CONFIG": config, "NEW.json": designed}.get(c, c) for c in command]
    assert main([*command[1:], "--json"]) == 0
    design = json.loads(capsys.readouterr().out)
    assert design["method"] == "utility" and design["names"] == ["buying", "safety", "class"]
    args = ["perturb", str(CAR), "--config", designed, "-o", str(out), "--quiet"]
    assert main([*args, "--insecure-test-seed", "3"]) == 0
    capsys.readouterr()
    manifest = json.loads((tmp_path / "rel.csv.manifest.json").read_text())
    assert manifest["design"]["method"] == "utility"
    assert manifest["mechanism"]["blocks"] == json.loads(open(designed).read())["mechanism"]["blocks"]  # as designed
    np.testing.assert_allclose(
        [a["achieved_epsilon"] for a in manifest["attributes"]], design["attribute_epsilons"], rtol=1e-9
    )
    assert main(["estimate", str(out), "--marginal", "safety,class", "--json"]) == 0
    cells = json.loads(capsys.readouterr().out)["cells"]
    truth = pd.read_csv(CAR, dtype=str).groupby(["safety", "class"]).size() / 1728
    est = np.array([c["estimate"] for c in cells])
    true = np.array([truth.get(tuple(c["values"]), 0.0) for c in cells])
    assert abs(est.sum() - 1) < 1e-9 and 0.5 * np.abs(est - true).sum() < 0.15


def test_design_mechanism_only_on_request(capsys):
    """--with-mechanism adds the mechanism (rebuilding to the reported epsilons); without it the JSON stays small
    (a pattern table has 2^k entries); it needs --json; sampling designs have none to give."""
    base = ["design", "--method", "utility", "--sizes", "3,4,2,5", "--target-total", "2", "--marginals", "1,2;3,4"]
    assert main([*base, "--json"]) == 0
    assert "mechanism" not in json.loads(capsys.readouterr().out)
    assert main([*base, "--json", "--with-mechanism"]) == 0
    out = json.loads(capsys.readouterr().out)
    mech = Mechanism.from_dict(out["mechanism"])
    assert np.allclose(mech.attribute_epsilons(), out["attribute_epsilons"])
    assert abs(mech.overall_epsilon() - out["overall_epsilon"]) < 1e-9
    assert main([*base, "--with-mechanism"]) == 2
    assert "--with-mechanism needs --json" in error_line(capsys)
    smp = ["design", "--method", "smp", "--sizes", "3,4", "--target-total", "1", "--json"]
    assert main([*smp, "--with-mechanism"]) == 2
    assert "a sampling design has no mechanism" in error_line(capsys)


def test_a_single_marginal_set_ends_with_a_semicolon():
    """ "1,2" means orders 1 and 2; "1,2;" the one table of attributes 1 and 2."""
    assert parse_marginals("1,2") == {"orders": [1, 2]}
    assert parse_marginals("1,2;") == {"sets": [(0, 1)]}
    assert parse_marginals("1,3;2;") == {"sets": [(0, 2), (1,)]}


def test_sampling_design_reports_its_predicted_error(capsys):
    """sample-m with --marginals / --rows: predicted_error as for a mechanism design (the SamplingCandidate's),
    and in the text output."""
    args = ["design", "--method", "sample-m", "--m", "2", "--sizes", "2,6,3,11", "--target-total", "2"]
    args += ["--marginals", "1,2;3", "--rows", "286"]
    assert main([*args, "--json"]) == 0
    pe = json.loads(capsys.readouterr().out)["predicted_error"]
    expected = SamplingCandidate(make_sampling_design("sample-m", [2, 6, 3, 11], 2.0, m=2)).predicted_error(
        286, parse_marginals("1,2;3")
    )
    assert pe["rows"] == 286 and pe["marginals_requested"] == "1,2;3" and pe["prior"] == "uniform"
    assert set(pe["by_order"]) == {"1", "2"}
    assert abs(pe["mean_expected_avd"] - expected.unbiased_score()) < 1e-12
    assert main(args) == 0
    assert "predicted error at 286 rows" in capsys.readouterr().out
    assert main(["design", "--method", "rsfd", "--sizes", "2,3", "--target-total", "2", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["predicted_error"]["erased"] == [[1, 2]]  # RS+FD's pairs: erased, and said
    assert "cannot be estimated from this release at any number of rows" in captured.err


def test_a_kept_column_is_named_as_copied_unchanged(tmp_path, capsys, developer, audit_dir):
    cfg = car_config(tmp_path, capsys, ("safety", "class"), ("doors",), method="kronecker", target_total=2.0)
    rel = perturb(tmp_path, capsys, cfg)
    for cmd in (["estimate", rel, "--marginal", "doors,class"], ["analyze", rel, "--chi2", "doors,class"]):
        assert main(cmd) == 2
        line = error_line(capsys)
        assert "'doors' is a column copied unchanged (kept, not randomized); tabulate it directly" in line
    assert main(["estimate", rel, "--marginal", "maint"]) == 2  # dropped: not in the release at all
    assert "attribute 'maint' is not in the release" in error_line(capsys)


def test_a_resaved_release_names_the_option_that_skips_the_hash_check(tmp_path, capsys, developer, audit_dir):
    """A file re-saved with other line endings fails the hash check, naming --no-hash-check (an option of
    estimate and analyze), which then opens it."""
    rel = perturb(tmp_path, capsys, car_config(tmp_path, capsys, method="kronecker", target_total=2.0))
    resaved = tmp_path / "resaved.csv"
    resaved.write_bytes(open(rel, "rb").read().replace(b"\n", b"\r\n"))
    shutil.copy(rel + ".manifest.json", str(resaved) + ".manifest.json")
    commands = (["estimate", str(resaved), "--marginal", "safety"], ["analyze", str(resaved), "--chi2", "safety,class"])
    for cmd in commands:
        assert main(cmd) == 2
        line = error_line(capsys)
        assert "SHA-256 differs" in line and "re-saved by a spreadsheet" in line and "--no-hash-check" in line
        assert main([*cmd, "--no-hash-check"]) == 0
        capsys.readouterr()


def test_a_renamed_release_names_the_manifest_option(tmp_path, capsys, developer, audit_dir):
    """A release renamed by its recipient has no manifest under the default name: the error names --manifest PATH,
    which opens it."""
    rel = perturb(tmp_path, capsys, car_config(tmp_path, capsys, method="kronecker", target_total=2.0))
    renamed = tmp_path / "from_hospital.csv"
    shutil.copy(rel, renamed)
    assert main(["estimate", str(renamed), "--marginal", "safety"]) == 2
    line = error_line(capsys)
    assert "from_hospital.csv.manifest.json does not exist" in line and "--manifest PATH" in line
    assert main(["estimate", str(renamed), "--marginal", "safety", "--manifest", rel + ".manifest.json"]) == 0


def test_no_hash_check_is_the_real_option_name(capsys):
    """The option the hash-mismatch error names exists in both commands that read a release."""
    for command in ("estimate", "analyze"):
        try:
            main([command, "--help"])
        except SystemExit:
            pass
        assert "--no-hash-check" in capsys.readouterr().out


def test_analyze_says_columns_released_as_noise_cannot_be_analysed(tmp_path, capsys, developer, audit_dir):
    """The utility design for (safety, class) leaves buying as noise (epsilon 0): analyze says so, and offers no
    estimation method (none recovers it); the needed pair is tested."""
    rel = utility_release(tmp_path, capsys)
    manifest = json.loads(open(rel + ".manifest.json").read())
    assert [a["achieved_epsilon"] for a in manifest["attributes"]][0] == 0.0
    assert main(["analyze", rel, "--chi2", "buying,safety"]) == 2
    line = error_line(capsys)
    assert "'buying' is released as noise" in line and "cannot be analysed" in line
    assert "ibu" not in line and "instead" not in line
    assert main(["analyze", rel, "--chi2", "safety,class"]) == 0


def test_analyze_says_an_erased_joint_table_cannot_be_analysed(tmp_path, capsys, developer, audit_dir):
    """The optimal design of three binary columns at whole-record epsilon 1.5 erases every pair's joint table
    while each column keeps epsilon > 0: analyze says the association cannot be analysed, naming no method."""
    rng = np.random.default_rng(5)
    src = tmp_path / "three.csv"
    pd.DataFrame({n: rng.choice(["x", "y"], 400) for n in ("a", "b", "c")}).to_csv(src, index=False)
    columns = [{"name": n, "role": "perturb", "categories": ["x", "y"]} for n in ("a", "b", "c")]
    cfg = {"method": "optimal", "target_total": 1.5, "columns": columns}
    rel = tmp_path / "rel.csv"
    args = ["perturb", str(src), "--config", write(tmp_path, cfg), "-o", str(rel), "--quiet"]
    assert main([*args, "--insecure-test-seed", "2"]) == 0
    capsys.readouterr()
    assert main(["analyze", str(rel), "--chi2", "a,b"]) == 2
    line = error_line(capsys)
    assert "the association of 'a' and 'b' cannot be analysed" in line and "erased their joint table" in line
    assert "ibu" not in line


def test_inverting_a_noise_column_points_to_the_default_not_to_ibu(tmp_path, capsys, developer, audit_dir):
    """Unbiased and clip refuse a table with a zero eigenvalue and name the default method, which gives the prior's
    guess there and says so (ibu recovers it no better, so it is not offered as the way out)."""
    rel = utility_release(tmp_path, capsys)
    for method in ("unbiased", "clip"):
        assert main(["estimate", rel, "--marginal", "buying,safety", "--method", method]) == 2
        line = error_line(capsys)
        assert "cannot be estimated by inversion" in line and "map" in line and "prior's guess" in line, line
        assert "ibu" not in line and "instead" not in line
    assert main(["estimate", rel, "--marginal", "buying,safety"]) == 0
    assert "cannot be estimated from the release" in capsys.readouterr().err
