"""What is shown is what is released (issue 11): a configuration's ``mechanism`` is released exactly as it is."""

import json

import numpy as np
import pytest

from optrr_engine.designs import run_design
from optrr_engine.errors import InputError
from optrr_engine.mechanism import Mechanism
from optrr_engine.release.config import ReleaseConfig
from optrr_engine.release.perturb import perturb_file

CATS = {"a": ["x", "y"], "b": ["p", "q", "r"], "c": ["u", "v", "w", "z"]}


def data(path, n=600):
    rng = np.random.default_rng(0)
    lines = ["a,b,c"] + [",".join(rng.choice(c) for c in CATS.values()) for _ in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path


def config(mechanism=None, eps=(1.0, 2.0, 0.5), method="auto", **top) -> ReleaseConfig:
    pairs = zip(CATS.items(), eps, strict=True)
    cols = [{"name": n, "role": "perturb", "epsilon": e, "categories": c} for (n, c), e in pairs]
    doc = {"method": method, "columns": cols, **top}
    if mechanism is not None:
        doc["mechanism"] = mechanism
    return ReleaseConfig.from_dict(json.loads(json.dumps(doc)))  # through JSON, as a saved file would be


def released(manifest) -> dict:
    mech = dict(manifest["mechanism"])
    mech.pop("method", None)
    return mech


def test_the_given_mechanism_is_released_exactly(tmp_path):
    shown = run_design("kronecker", [2, 3, 4], [0.9, 1.7, 0.4]).mechanism  # deliberately not what auto would give
    cfg = config(shown.to_dict(), eps=(0.9, 1.7, 0.4))
    manifest = perturb_file(data(tmp_path / "in.csv"), cfg, tmp_path / "o.csv").manifest
    assert released(manifest) == json.loads(json.dumps(shown.to_dict()))
    assert manifest["overall_epsilon"] == pytest.approx(shown.overall_epsilon(), rel=1e-12)
    redesigned = run_design("auto", [2, 3, 4], [0.9, 1.7, 0.4]).mechanism
    assert redesigned.overall_epsilon() < shown.overall_epsilon()  # a recomputation would have released another


def test_the_configuration_keeps_its_mechanism_through_save_and_load(tmp_path):
    from optrr_engine.release.config import load_config, save_config

    shown = run_design("auto", [2, 3, 4], [1.0, 2.0, 0.5]).mechanism
    save_config(config(shown.to_dict()), tmp_path / "r.json")
    again = load_config(tmp_path / "r.json").given_mechanism()
    assert again.to_dict() == Mechanism.from_dict(shown.to_dict()).to_dict()


def test_a_mechanism_for_other_columns_is_refused(tmp_path):
    other = run_design("kronecker", [2, 3, 5], [1.0, 2.0, 0.5]).mechanism
    with pytest.raises(InputError, match=r"category counts \[2, 3, 5\] but the perturbed columns have \[2, 3, 4\]"):
        perturb_file(data(tmp_path / "in.csv"), config(other.to_dict()), tmp_path / "o.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_a_mechanism_above_the_request_is_refused(tmp_path):
    weaker = run_design("kronecker", [2, 3, 4], [1.0, 2.5, 0.5]).mechanism
    with pytest.raises(InputError, match="the mechanism in the configuration gives column 'b' epsilon 2.5, above"):
        perturb_file(data(tmp_path / "in.csv"), config(weaker.to_dict()), tmp_path / "o.csv")


def test_budget_mode_checks_the_target(tmp_path):
    shown = run_design("kronecker", [2, 3, 4], [1.0, 1.0, 1.0]).mechanism  # whole-record 3
    cols_ok = config(shown.to_dict(), target_total=3.0)
    manifest = perturb_file(data(tmp_path / "in.csv"), cols_ok, tmp_path / "o.csv").manifest
    assert released(manifest) == json.loads(json.dumps(shown.to_dict()))
    with pytest.raises(InputError, match="above target_total 2.5"):
        perturb_file(data(tmp_path / "in.csv"), config(shown.to_dict(), target_total=2.5), tmp_path / "o2.csv")


@pytest.mark.parametrize("bad", [[], "x", {"sizes": [2, 3, 4]}, {"sizes": [2, 3], "blocks": []}])
def test_a_malformed_mechanism_is_a_one_line_error(bad):
    with pytest.raises(InputError, match="mechanism") as info:
        config(bad)
    assert "\n" not in str(info.value)
