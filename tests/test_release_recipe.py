"""The exported recipe (configuration + optrr perturb command) reproduces the release it describes."""

import shlex

import numpy as np
import pandas as pd
import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.release.config import ColumnConfig, ReleaseConfig
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.recipe import script_path, write_recipe


def test_recipe_command_reproduces_the_seeded_release(tmp_path):
    rng = np.random.default_rng(0)
    data = tmp_path / "my data.csv"  # a space: the command must quote it
    pd.DataFrame({"a": rng.choice(["x", "y", "w"], 500), "b": rng.choice(["p", "q"], 500)}).to_csv(data, index=False)
    cfg = ReleaseConfig(method="auto", columns=[
        ColumnConfig(name="a", role="perturb", epsilon=1.0, categories=["x", "Other"], recode={"Other": ["y", "w"]}),
        ColumnConfig(name="b", role="perturb", epsilon=0.5, categories=["p", "q"]),
    ])
    direct = tmp_path / "direct.csv"
    perturb_file(data, cfg, direct, seed=11)
    config_path, out = tmp_path / "release.json", tmp_path / "again.csv"
    command = write_recipe(cfg, data, config_path, out, seed=11)
    args = shlex.split(command)
    assert args[:3] == ["optrr", "perturb", str(data)] and "--seed" in args
    assert command in open(script_path(config_path)).read()
    assert main([*args[1:], "--quiet"]) == 0
    assert out.read_bytes() == direct.read_bytes()
    with pytest.raises(InputError, match="exists"):
        write_recipe(cfg, data, config_path, out, seed=11)
    write_recipe(cfg, data, config_path, out, force=True)
    assert "--seed" not in open(script_path(config_path)).read()
