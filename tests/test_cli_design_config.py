"""``optrr design --config``: the request read from a release configuration (category counts as ``optrr perturb``
derives them, bins included; names; epsilons or weights and target_total; needed_marginals; the row count), and
``-o``, which writes the configuration that ``optrr perturb`` releases exactly as designed (a sampling design
included); the line saying when a configuration's "auto" releases another design than the recommended one; the
progress of a long design."""

import json
import re

import numpy as np
import pytest

from optrr_engine.cli import design_cmd
from optrr_engine.cli.main import main
from optrr_engine.release.manifest import manifest_path
from optrr_engine.release.risk import strength
from tests.conftest import TEST_DATA

CAR = TEST_DATA / "car.csv"
HEART = TEST_DATA / "heart_cleveland.csv"
#: Relative tolerance of an epsilon read back from a release's manifest.
RTOL = 1e-9


def schema(tmp_path, capsys, data, roles: dict, **top) -> str:
    """The configuration optrr schema writes for ``data`` (its template of epsilon per column), with the perturbed
    columns and their epsilons (None: budget mode, no epsilon) of ``roles`` and the other columns dropped, plus the
    top-level keys ``top``."""
    path = tmp_path / "schema.json"
    assert main(["schema", str(data), "-o", str(path), "--quiet", "--force", "--epsilon-per-column"]) == 0
    capsys.readouterr()
    cfg = json.loads(path.read_text())
    for c in cfg["columns"]:
        c.pop("epsilon", None)
        c["role"] = "perturb" if c["name"] in roles else "drop"
        if roles.get(c["name"]) is not None:
            c["epsilon"] = roles[c["name"]]
    cfg.update(top)
    out = tmp_path / "release.json"
    out.write_text(json.dumps(cfg))
    return str(out)


def design(capsys, *args) -> tuple[int, str, str]:
    code = main(["design", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def design_json(capsys, *args) -> dict:
    code, out, err = design(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def released(tmp_path, capsys, data, config: str) -> dict:
    """The manifest of ``optrr perturb data --config config``."""
    out = tmp_path / "release.csv"
    args = ["perturb", str(data), "--config", config, "-o", str(out), "--quiet", "--force"]
    assert main([*args, "--allow-repeat"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    return json.loads(open(manifest_path(str(out))).read())


def heart_config(tmp_path, capsys) -> str:
    """heart_cleveland.csv with age (numeric, 4 quantile bins: "categories": [] in the configuration), sex and
    cp (4 categories, as age) perturbed at different epsilons."""
    return schema(tmp_path, capsys, HEART, {"age": 0.5, "sex": 1.0, "cp": 2.0})


def car_budget(tmp_path, capsys, columns, target=2.0, **top) -> str:
    return schema(tmp_path, capsys, CAR, dict.fromkeys(columns), target_total=target, **top)


def test_config_gives_the_sizes_of_a_binned_column_the_names_epsilons_and_rows(tmp_path, capsys):
    cfg = heart_config(tmp_path, capsys)
    out = design_json(capsys, "--config", cfg, "--method", "optimal")
    assert out["sizes"] == [4, 2, 4] and out["names"] == ["age", "sex", "cp"]
    assert out["requested_epsilons"] == [0.5, 1.0, 2.0]
    np.testing.assert_allclose(out["attribute_epsilons"], [0.5, 1.0, 2.0], rtol=RTOL)
    pe = out["predicted_error"]
    assert pe["rows"] == 303 and "counted by optrr schema" in pe["rows_source"]


def test_text_output_names_the_columns(tmp_path, capsys):
    code, out, err = design(capsys, "--config", heart_config(tmp_path, capsys), "--method", "optimal")
    assert code == 0, err
    rows = [line.split() for line in out.splitlines()]
    assert ["column", "size", "requested", "achieved"] in rows
    assert [r[:2] for r in rows if r and r[0] in ("age", "sex", "cp")] == [["age", "4"], ["sex", "2"], ["cp", "4"]]
    assert "attr" not in out.split()
    code, out, err = design(capsys, "--config", heart_config(tmp_path, capsys), "--method", "optimal", "--rows", "50")
    assert "predicted error at 50 rows (prior" in out


def test_a_row_count_the_configuration_does_not_know_is_called_an_assumption(tmp_path, capsys):
    cfg = heart_config(tmp_path, capsys)
    data = json.loads(open(cfg).read())
    del data["source"]
    open(cfg, "w").write(json.dumps(data))
    code, out, err = design(capsys, "--config", cfg, "--method", "optimal")
    assert code == 0, err
    assert "predicted error at 10000 rows (an assumption: " in out and "give --rows" in out


def test_bins_computed_at_release_are_named(tmp_path, capsys):
    cfg = heart_config(tmp_path, capsys)
    data = json.loads(open(cfg).read())
    age = next(c for c in data["columns"] if c["name"] == "age")
    del age["bins"]["edges"]
    open(cfg, "w").write(json.dumps(data))
    code, out, err = design(capsys, "--config", cfg)
    assert code == 2 and "column 'age'" in err and "edges" in err and out == ""


def test_o_writes_the_design_that_perturb_releases_per_column(tmp_path, capsys):
    """Two columns of 4 categories at different epsilons: the written mechanism keeps each epsilon on its column."""
    cfg = heart_config(tmp_path, capsys)
    new = str(tmp_path / "designed.json")
    out = design_json(capsys, "--config", cfg, "--method", "optimal", "-o", new)
    assert out["configuration_written"] == new
    written = json.loads(open(new).read())
    assert written["method"] == "optimal" and "mechanism" in written
    manifest = released(tmp_path, capsys, HEART, new)
    assert [a["name"] for a in manifest["attributes"]] == ["age", "sex", "cp"]
    achieved = [a["achieved_epsilon"] for a in manifest["attributes"]]
    np.testing.assert_allclose(achieved, out["attribute_epsilons"], rtol=RTOL)
    np.testing.assert_allclose(manifest["overall_epsilon"], out["overall_epsilon"], rtol=RTOL)


def test_o_writes_the_recommendation_that_perturb_releases(tmp_path, capsys):
    """Budget mode, default method: the recommended design (utility here, not the row "auto") is what perturb
    releases from the written configuration."""
    cfg = car_budget(tmp_path, capsys, ["buying", "maint", "safety", "class"], 2.5)
    new = str(tmp_path / "designed.json")
    out = design_json(capsys, "--config", cfg, "-o", new)
    assert out["recommended"] == "utility" and out["names"] == ["buying", "maint", "safety", "class"]
    written = json.loads(open(new).read())
    assert written["method"] == "utility" and written["mechanism"]["method"] == "utility"
    assert written["target_total"] == 2.5
    manifest = released(tmp_path, capsys, CAR, new)
    assert any("it was designed by method 'utility', as recorded in it" in n for n in manifest["design"]["notes"])
    achieved = [a["achieved_epsilon"] for a in manifest["attributes"]]
    np.testing.assert_allclose(achieved, out["attribute_epsilons"], rtol=RTOL)
    np.testing.assert_allclose(manifest["overall_epsilon"], out["overall_epsilon"], rtol=RTOL)


def test_a_sampling_recommendation_round_trips_through_o_and_perturb(tmp_path, capsys):
    """Every column's 1-way table needed at whole-record epsilon 4: sample-2 is recommended; the written
    configuration is its method and sample_m (no mechanism), and perturb releases the same epsilons."""
    names = ["buying", "maint", "doors", "persons", "lug_boot", "safety", "class"]
    cfg = car_budget(tmp_path, capsys, names, 4.0, needed_marginals=[[n] for n in names])
    new = str(tmp_path / "designed.json")
    out = design_json(capsys, "--config", cfg, "-o", new)
    assert out["recommended"] == "sample-2"
    written = json.loads(open(new).read())
    assert (written["method"], written["sample_m"], "mechanism" in written) == ("sample-m", 2, False)
    manifest = released(tmp_path, capsys, CAR, new)
    assert manifest["design"]["method"] == "sample-m"
    achieved = [a["achieved_epsilon"] for a in manifest["attributes"]]
    np.testing.assert_allclose(achieved, out["attribute_epsilons"], rtol=RTOL)
    np.testing.assert_allclose(manifest["overall_epsilon"], out["overall_epsilon"], rtol=RTOL)


def test_o_never_replaces_a_file_without_force(tmp_path, capsys):
    cfg = heart_config(tmp_path, capsys)
    new = tmp_path / "designed.json"
    new.write_text("my edits\n")
    code, out, err = design(capsys, "--config", cfg, "--method", "kronecker", "-o", str(new))
    assert code == 2 and "exists" in err and "--force" in err
    assert new.read_text() == "my edits\n"
    code, out, err = design(capsys, "--config", cfg, "--method", "kronecker", "-o", str(new), "--force")
    assert code == 0, err
    assert json.loads(new.read_text())["method"] == "kronecker"
    before = open(cfg).read()
    code, out, err = design(capsys, "--config", cfg, "--method", "kronecker", "-o", cfg, "--force")
    assert code == 2 and "never overwritten" in err and open(cfg).read() == before


@pytest.mark.parametrize(
    "extra", [["--sizes", "4,2,4"], ["--spec", "spec.json"], ["--epsilons", "1,1,1"], ["--target-total", "2"]]
)
def test_config_with_a_request_of_its_own_is_refused(tmp_path, capsys, extra):
    code, out, err = design(capsys, "--config", heart_config(tmp_path, capsys), *extra)
    assert code == 2 and f"leave out {extra[0]}" in err and out == ""


def test_o_needs_config(capsys):
    code, out, err = design(capsys, "--sizes", "2,2", "--epsilons", "1,1", "-o", "x.json")
    assert code == 2 and "--config" in err


def test_the_line_when_a_configurations_auto_releases_another_design(tmp_path, capsys):
    cfg = car_budget(tmp_path, capsys, ["buying", "maint", "safety", "class"], 2.5)
    code, out, err = design(capsys, "--config", cfg)
    assert code == 0, err
    lines = [line for line in out.splitlines() if '"method": "auto" releases' in line]
    assert len(lines) == 1 and "recommended utility printed below" in lines[0]
    assert f"optrr design --config {cfg} -o " in lines[0]
    # said before the recommended design's epsilons, which are not what the configuration releases as it is
    assert out.splitlines()[0] == lines[0] and out.splitlines()[1].startswith("method: utility")
    code, out, err = design(capsys, "--sizes", "2,4,2,2", "--target-total", "2")
    assert code == 0, err
    assert "recommended: utility" in out and 'a configuration with "method": "auto" releases the row "auto"' in out


def test_no_such_line_when_auto_is_recommended(tmp_path, capsys):
    cfg = car_budget(tmp_path, capsys, ["buying", "safety", "class"])
    code, out, err = design(capsys, "--config", cfg)
    assert code == 0, err
    assert "recommended: auto" in out and "releases the row" not in out


def test_a_long_design_reports_progress_unless_quiet_or_json(capsys, monkeypatch):
    monkeypatch.setattr(design_cmd, "PROGRESS_DELAY", 0.0)  # every design counts as long
    request = ["--method", "optimal", "--sizes", "3,4,2", "--epsilons", "1,2,0.5"]
    code, out, err = design(capsys, *request)
    assert code == 0 and "%] " in err
    for quiet in ("--quiet", "--json"):
        code, out, err = design(capsys, *request, quiet)
        assert code == 0 and "%]" not in err


def test_the_progress_timer_draws_nothing_once_closed(capsys):
    """The delayed first line (a timer thread) may fire while close() runs: it then draws nothing, so no stray
    progress line appears among the results."""
    from types import SimpleNamespace

    progress = design_cmd.DesignProgress(SimpleNamespace(quiet=False, json=False, method="optimal"))
    progress(0.5, "solving")
    progress.close()
    capsys.readouterr()
    progress._show()  # the timer's call, arriving late
    progress(0.9, "later step")
    assert capsys.readouterr().err == ""


def test_columns_a_design_leaves_at_epsilon_0_are_named_by_design_and_perturb(tmp_path, capsys):
    """The utility design for one named table gives the other columns epsilon 0: design says they are released as
    pure noise and what to do; perturb repeats it on stderr."""
    cfg = car_budget(tmp_path, capsys, ["buying", "maint", "safety", "class"], needed_marginals=[["buying", "safety"]])
    new = str(tmp_path / "designed.json")
    code, out, err = design(capsys, "--config", cfg, "-o", new)
    assert code == 0, err
    assert "recommended: utility" in out and "sum of the per-column epsilons chosen by the design" in out
    eps = float(re.search(r"whole-record epsilon: ([0-9.]+) \((\w+(?: weak)?)\)", out).group(1))
    assert f"whole-record epsilon: {eps:.6f} ({strength(eps)})" in out  # the strength said beside the number
    assert "warning: 2 column(s) get epsilon 0 (maint, class): their released values are pure noise" in out
    assert "maint      4         0.000000     0.000000  epsilon 0: released as pure noise" in out
    args = ["perturb", str(CAR), "--config", new, "-o", str(tmp_path / "r.csv"), "--quiet"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "optrr: warning: released as pure noise (epsilon 0; no needed table uses them): maint, class" in err


def test_a_utility_configuration_without_mechanism_names_the_design_command(tmp_path, capsys):
    cfg = car_budget(tmp_path, capsys, ["buying", "safety"], method="utility")
    args = ["perturb", str(CAR), "--config", cfg, "-o", str(tmp_path / "r.csv"), "--quiet"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "run `optrr design --config CONFIG -o NEW.json --method utility` (CONFIG: this configuration" in err
    assert not (tmp_path / "r.csv").exists()
