"""The exported recipe (configuration + optrr perturb command) makes the release it describes: the same
columns, categories (recoded), design and epsilons as a release made directly."""

import json
import shlex

import numpy as np
import pandas as pd
import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.release.config import ColumnConfig, ReleaseConfig
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.recipe import script_path, write_recipe


def test_recipe_command_makes_the_same_release(tmp_path):
    rng = np.random.default_rng(0)
    data = tmp_path / "my data.csv"  # a space: the command must quote it
    pd.DataFrame({"a": rng.choice(["x", "y", "w"], 500), "b": rng.choice(["p", "q"], 500)}).to_csv(data, index=False)
    cfg = ReleaseConfig(method="auto", columns=[
        ColumnConfig(name="a", role="perturb", epsilon=1.0, categories=["x", "Other"], recode={"Other": ["y", "w"]}),
        ColumnConfig(name="b", role="perturb", epsilon=0.5, categories=["p", "q"]),
    ])
    direct = tmp_path / "direct.csv"
    perturb_file(data, cfg, direct)
    config_path, out = tmp_path / "release.json", tmp_path / "again.csv"
    command = write_recipe(cfg, data, config_path, out)
    args = shlex.split(command)
    assert args[:3] == ["optrr", "perturb", str(data)]
    assert command in open(script_path(config_path)).read()
    assert main([*args[1:], "--quiet", "--allow-repeat"]) == 0  # the direct release above was the first

    def described(path):
        m = json.loads(open(str(path) + ".manifest.json").read())
        return [(a["name"], a["categories"], a["achieved_epsilon"]) for a in m["attributes"]], m["overall_epsilon"]

    assert described(out) == described(direct)
    assert set(pd.read_csv(out, dtype=str)["a"]) <= {"x", "Other"}
    with pytest.raises(InputError, match="exists"):
        write_recipe(cfg, data, config_path, out)
    write_recipe(cfg, data, config_path, out, force=True)


def test_recipe_never_replaces_the_input_and_names_the_existing_file(tmp_path):
    data = tmp_path / "in.csv"
    pd.DataFrame({"a": ["x", "y"] * 10}).to_csv(data, index=False)
    before = data.read_bytes()
    cfg = ReleaseConfig(method="auto", columns=[ColumnConfig(name="a", role="perturb", epsilon=1.0,
                                                             categories=["x", "y"])])
    with pytest.raises(InputError, match=r"recipe file .*in\.csv is the input file"):
        write_recipe(cfg, data, tmp_path / "in.csv", tmp_path / "out.csv", force=True)
    assert data.read_bytes() == before and not (tmp_path / "in.perturb.sh").exists()
    (tmp_path / "r.perturb.sh").write_text("mine")
    with pytest.raises(InputError, match=r"recipe file .*r\.perturb\.sh exists"):
        write_recipe(cfg, data, tmp_path / "r.json", tmp_path / "out.csv")
    assert not (tmp_path / "r.json").exists() and (tmp_path / "r.perturb.sh").read_text() == "mine"
