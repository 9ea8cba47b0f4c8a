"""A test-seed release says NOT PRIVATE in the data file itself (its first column), in every output format; the
readers of a release ignore that column as data and warn loudly; the test seed is hidden and needs
OPTRR_DEVELOPER=1."""

import json
import os

import pandas as pd
import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.estimation.release_source import not_private_warning
from optrr_engine.io.readers import ReaderOptions, iter_chunks
from optrr_engine.release.perturb import perturb_file

MARKER = "NOT_PRIVATE_insecure_test_seed"  # the documented name (docs/security.md), spelled out independently
CATS = {"a": ["x", "y"], "b": ["p", "q", "r"]}


def setup(folder) -> tuple[str, str]:
    src = folder / "in.csv"
    src.write_text("a,b\n" + "x,p\ny,q\nx,r\ny,p\n" * 50)
    cols = [{"name": n, "role": "perturb", "epsilon": 2.0, "categories": c} for n, c in CATS.items()]
    cfg = folder / "release.json"
    cfg.write_text(json.dumps({"method": "kronecker", "columns": cols}))
    return str(src), str(cfg)


def read(path) -> pd.DataFrame:
    return pd.concat(list(iter_chunks(path, ReaderOptions())), ignore_index=True)


def test_the_test_seed_is_hidden_and_needs_developer_mode(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPTRR_DEVELOPER", raising=False)
    with pytest.raises(SystemExit) as ended:
        main(["perturb", "--help"])
    assert ended.value.code == 0
    text = capsys.readouterr().out
    assert "--key-file" in text and "insecure" not in text and "seed" not in text
    src, cfg = setup(tmp_path)
    before = sorted(os.listdir(tmp_path))
    for value in (None, "0", "yes"):
        if value is not None:
            monkeypatch.setenv("OPTRR_DEVELOPER", value)
        out = str(tmp_path / "out.csv")
        assert main(["perturb", src, "--config", cfg, "-o", out, "--quiet", "--insecure-test-seed", "1"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("optrr: error: ") and "OPTRR_DEVELOPER=1" in err, err
        assert sorted(os.listdir(tmp_path)) == before
        with pytest.raises(InputError, match="OPTRR_DEVELOPER=1"):
            perturb_file(src, cfg, out, insecure_test_seed=1)
        assert sorted(os.listdir(tmp_path)) == before


@pytest.mark.parametrize("fmt", ["csv", "parquet", "xlsx", "sav", "dta"])
def test_the_data_file_alone_says_not_private(tmp_path, fmt, developer):
    src, cfg = setup(tmp_path)
    out = str(tmp_path / f"out.{fmt}")
    manifest = perturb_file(src, cfg, out, insecure_test_seed=3).manifest
    df = read(out)
    assert list(df.columns) == [MARKER, "a", "b"] and len(df) == 200
    assert set(df[MARKER]) == {"yes"}
    os.remove(out + ".manifest.json")  # the recipient got the data file only
    warning = not_private_warning(out)
    assert warning is not None and "NOT PRIVATE" in warning and MARKER in warning
    assert manifest["columns"] == [MARKER, "a", "b"] and manifest["randomness"]["private"] is False


def test_a_private_release_has_no_marker_and_no_warning(tmp_path):
    src, cfg = setup(tmp_path)
    out = str(tmp_path / "out.csv")
    perturb_file(src, cfg, out)
    assert list(read(out).columns) == ["a", "b"]
    assert not_private_warning(out) is None
    assert main(["estimate", out, "--marginal", "a"]) == 0


def test_estimate_and_analyze_ignore_the_marker_as_data_and_warn(tmp_path, capsys, developer):
    src, cfg = setup(tmp_path)
    out = str(tmp_path / "out.csv")
    assert main(["perturb", src, "--config", cfg, "-o", out, "--quiet", "--insecure-test-seed", "5"]) == 0
    assert "NOT PRIVATE" in capsys.readouterr().err
    released = read(out)

    assert main(["estimate", out, "--marginal", "a", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith("optrr: WARNING: this release is NOT PRIVATE") and MARKER in captured.err
    result = json.loads(captured.out)
    assert result["attributes"] == ["a"] and "NOT PRIVATE" in result["info"]["not_private"]
    counts = released["a"].value_counts()  # the perturbed counts, read independently with pandas
    observed = {c["values"][0]: c["observed"] for c in result["cells"]}
    assert observed == {c: int(counts.get(c, 0)) for c in CATS["a"]} and result["rows"] == 200

    assert main(["analyze", out, "--chi2", "a,b"]) == 0
    captured = capsys.readouterr()
    assert "optrr: WARNING: this release is NOT PRIVATE" in captured.err and "association of a" in captured.out

    assert main(["estimate", out, "--marginal", MARKER]) == 2  # never an attribute
    assert f"attribute {MARKER!r} is not in the release" in capsys.readouterr().err
