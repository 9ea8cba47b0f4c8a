"""What the sampling designs (smp, sample-m, rsfd) refuse in one line instead of ignoring: weights for sample-m
(optrr design and a release configuration), a sampling manifest's "mechanism" copied into a configuration, and a
sample_m that is not a whole number from 1 to the number of perturbed columns; and the grammar of the estimate
refusal for SMP."""

import json

import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.release.config import ColumnConfig, ReleaseConfig
from optrr_engine.sampling import make_sampling_design
from tests.conftest import TEST_DATA
from tests.test_cli_release_routes import car_config as routes_car_config
from tests.test_cli_release_routes import error_line

CAR = TEST_DATA / "car.csv"


@pytest.fixture(autouse=True)
def _developer(developer):
    """The insecure test seed (reproducible releases) is accepted."""


CAR_COLUMNS = ("buying", "maint", "doors", "persons", "lug_boot", "safety", "class")


def car_config(tmp_path, capsys, method, **top) -> dict:
    """car.csv's schema with every column perturbed, in budget mode (target_total 1.5) with ``method``."""
    return routes_car_config(tmp_path, capsys, perturb=CAR_COLUMNS, method=method, target_total=1.5, **top)


def perturb(tmp_path, cfg, name):
    """optrr perturb of car.csv with ``cfg`` (a reproducible test seed: the tests enable developer mode)."""
    cfg_path = tmp_path / f"{name}.json"
    cfg_path.write_text(json.dumps(cfg))
    out = tmp_path / f"{name}.csv"
    args = ["perturb", str(CAR), "--config", str(cfg_path), "-o", str(out), "--quiet", "--allow-repeat"]
    return main([*args, "--insecure-test-seed", "3", "--audit-dir", str(tmp_path)]), out


# -- A. sample-m takes no weights --------------------------------------------------------------------------------
DESIGN = ["design", "--method", "sample-m", "--m", "2", "--sizes", "3,4,2", "--target-total", "1", "--json"]


def test_design_sample_m_refuses_unequal_weights(capsys):
    assert main([*DESIGN, "--weights", "1,2,1"]) == 2
    line = error_line(capsys)
    assert "sample-m" in line and "weights" in line and "smp or rsfd" in line, line


def test_design_sample_m_refuses_unequal_weights_of_a_spec(tmp_path, capsys):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"sizes": [3, 4, 2], "weights": [1, 2, 1], "target_total": 1}))
    assert main(["design", "--method", "sample-m", "--m", "2", "--spec", str(spec), "--json"]) == 2
    assert "weights" in error_line(capsys)


def test_design_sample_m_accepts_equal_weights(capsys):
    assert main(DESIGN) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main([*DESIGN, "--weights", "2,2,2"]) == 0
    assert json.loads(capsys.readouterr().out) == plain


def test_engine_sample_m_refuses_only_unequal_weights():
    plain = make_sampling_design("sample-m", [3, 4, 2], 1.0, m=2)
    equal = make_sampling_design("sample-m", [3, 4, 2], 1.0, m=2, weights=[1.0, 1.0, 1.0])
    assert equal.to_dict() == plain.to_dict()
    with pytest.raises(InputError, match="smp or rsfd"):
        make_sampling_design("sample-m", [3, 4, 2], 1.0, m=2, weights=[1.0, 2.0, 1.0])


def test_configuration_sample_m_refuses_an_unequal_weight(tmp_path, capsys):
    cfg = car_config(tmp_path, capsys, "sample-m", sample_m=2)
    cfg["columns"][0]["weight"] = 5
    code, out = perturb(tmp_path, cfg, "weighted")
    assert code == 2 and not out.exists()
    line = error_line(capsys)
    assert "sample-m" in line and "'buying'" in line and "weight" in line and "smp or rsfd" in line, line


def test_configuration_sample_m_accepts_equal_weights(tmp_path, capsys):
    cfg = car_config(tmp_path, capsys, "sample-m", sample_m=2)
    for c in cfg["columns"]:
        c["weight"] = 3
    code, out = perturb(tmp_path, cfg, "equal")
    assert code == 0 and out.exists(), capsys.readouterr().err
    manifest = json.loads(out.with_name(out.name + ".manifest.json").read_text())
    assert manifest["mechanism"]["probabilities"] == pytest.approx([1 / 21] * 21)


def test_in_memory_sample_m_configuration_writes_no_weights():
    """The GUI's sample-2 / sample-3 rows are uniform whatever the session's weights (docs/gui.md) and build the
    configuration in memory; what it writes (recipe, audit record) states no weights, so it reads back."""
    cols = [
        ColumnConfig(f"c{i}", role="perturb", categories=["a", "b"], weight=w) for i, w in enumerate([4.0, 1.0, 1.0])
    ]
    cfg = ReleaseConfig(method="sample-m", sample_m=2, columns=cols, target_total=1.0).validate()
    written = cfg.to_dict()
    assert all("weight" not in c for c in written["columns"])
    assert ReleaseConfig.from_dict(json.loads(json.dumps(written))).sample_m == 2


# -- B. a sampling manifest's mechanism in a configuration -------------------------------------------------------
def test_sampling_mechanism_in_a_configuration_is_explained(tmp_path, capsys):
    cfg = car_config(tmp_path, capsys, "smp")
    code, out = perturb(tmp_path, cfg, "first")
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    mechanism = json.loads(out.with_name(out.name + ".manifest.json").read_text())["mechanism"]
    code, again = perturb(tmp_path, {**cfg, "mechanism": mechanism}, "again")
    assert code == 2 and not again.exists()
    line = error_line(capsys)
    assert "KeyError" not in line and "malformed" not in line, line
    assert "a sampling design has no mechanism to copy" in line and "remove 'mechanism'" in line, line
    # the same explanation as optrr design --with-mechanism (one message)
    design = ["design", "--method", "smp", "--sizes", "3,4", "--target-total", "1", "--json", "--with-mechanism"]
    assert main(design) == 2
    design_line = error_line(capsys)
    shared = "a sampling design has no mechanism to copy; a configuration with method smp"
    assert shared in design_line and shared in line


def test_sampling_method_with_a_mechanism_is_refused(tmp_path, capsys):
    """A mechanism design's "mechanism" under method smp was ignored silently; now it is refused."""
    cfg = car_config(tmp_path, capsys, "smp")
    cfg["mechanism"] = {"sizes": [2], "blocks": []}
    with pytest.raises(InputError, match="a sampling design has no mechanism to copy"):
        ReleaseConfig.from_dict(cfg)


# -- C. sample_m -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0, "2", 2.5, 8, True])
def test_sample_m_must_be_a_whole_number_up_to_the_perturbed_columns(tmp_path, capsys, bad):
    cfg = car_config(tmp_path, capsys, "sample-m", sample_m=bad)
    with pytest.raises(InputError) as err:
        ReleaseConfig.from_dict(cfg)
    text = str(err.value)
    assert "sample_m must be a whole number from 1 to 7 (the number of perturbed columns)" in text, text
    assert repr(bad) in text


def test_missing_sample_m_names_the_range(tmp_path, capsys):
    cfg = car_config(tmp_path, capsys, "sample-m")
    with pytest.raises(InputError, match=r"needs sample_m.*a whole number from 1 to 7"):
        ReleaseConfig.from_dict(cfg)


# -- D. grammar --------------------------------------------------------------------------------------------------
def test_smp_estimate_refusal_says_one_attribute(tmp_path, capsys):
    """The message is built in optrr_engine/estimation/sampled.py (no_rows_message)."""
    cfg = car_config(tmp_path, capsys, "smp")
    code, out = perturb(tmp_path, cfg, "smp")
    assert code == 0
    capsys.readouterr()
    assert main(["estimate", str(out), "--marginal", "buying,maint"]) == 2
    line = error_line(capsys)
    assert line.endswith("so choose 1 attribute") and "1 attributes" not in line, line
