"""`optrr perturb` refuses a release in which a marginal marked as needed cannot be estimated (issue 13)."""

import json

import numpy as np
import pytest

from optrr_engine.errors import InputError
from optrr_engine.release.config import ReleaseConfig
from optrr_engine.utility.identifiability import way_out
from tests.test_cli_design import run


def _write(tmp_path, method="optimal", needed=(("a", "b"),), allow=None):
    rng = np.random.default_rng(3)
    rows = ["a,b,c"] + [",".join(rng.choice(["x", "y"], 3)) for _ in range(300)]
    data = tmp_path / "data.csv"
    data.write_text("\n".join(rows) + "\n")
    cfg = {
        "method": method,
        "target_total": 1.5,
        "columns": [
            {"name": n, "role": "perturb", "type": "nominal", "weight": 1.0, "categories": ["x", "y"]} for n in "abc"
        ],
        "needed_marginals": [list(s) for s in needed],
    }
    if allow is not None:
        cfg["allow_unidentifiable"] = allow
    path = tmp_path / "release.json"
    path.write_text(json.dumps(cfg))
    return data, path


def test_refuses_non_identifiable_needed_marginal(tmp_path):
    data, cfg = _write(tmp_path)
    out = tmp_path / "out.csv"
    code, _, err = run("perturb", str(data), "--config", str(cfg), "-o", str(out), "--quiet")
    assert code == 2
    assert "refusing to release" in err and "(a, b)" in err and "--allow-unidentifiable" in err
    assert f"the way out: {way_out()}; or override" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "release.json"]  # nothing left behind


@pytest.mark.parametrize("how", ["flag", "config"])
def test_override_releases_and_reports(tmp_path, how):
    data, cfg = _write(tmp_path, allow=True if how == "config" else None)
    out = tmp_path / "out.csv"
    extra = ["--allow-unidentifiable"] if how == "flag" else []
    code, _, err = run("perturb", str(data), "--config", str(cfg), "-o", str(out), "--quiet", *extra)
    assert code == 0, err
    manifest = json.loads((tmp_path / "out.csv.manifest.json").read_text())
    notes = " ".join(manifest["design"]["notes"])
    assert "override given" in notes and "3 marginal(s) cannot be estimated" in notes
    assert "cannot be estimated" in (tmp_path / "out.csv.report.html").read_text()


def test_identifiable_design_releases_without_notes(tmp_path):
    data, cfg = _write(tmp_path, method="kronecker")
    out = tmp_path / "out.csv"
    code, _, err = run("perturb", str(data), "--config", str(cfg), "-o", str(out), "--quiet")
    assert code == 0, err
    manifest = json.loads((tmp_path / "out.csv.manifest.json").read_text())
    assert not any("cannot be estimated" in n for n in manifest["design"]["notes"])


def test_config_keys_validated_and_round_trip():
    base = {"method": "auto", "columns": [{"name": "a", "role": "perturb", "epsilon": 1.0, "categories": ["x", "y"]}]}
    cfg = ReleaseConfig.from_dict({**base, "needed_marginals": [["a"]], "allow_unidentifiable": True})
    assert cfg.to_dict()["needed_marginals"] == [["a"]] and cfg.to_dict()["allow_unidentifiable"] is True
    with pytest.raises(InputError, match="needed_marginals"):
        ReleaseConfig.from_dict({**base, "needed_marginals": ["a"]})
    with pytest.raises(InputError, match="allow_unidentifiable"):
        ReleaseConfig.from_dict({**base, "allow_unidentifiable": "yes"})
