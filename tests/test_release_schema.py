"""Schema inference from one streaming pass: roles, types, categories, bins and warnings."""

import math

import numpy as np
import pandas as pd
import pytest

from optrr_engine.errors import Cancelled, InputError
from optrr_engine.io.readers import ReaderOptions
from optrr_engine.release.config import ReleaseConfig
from optrr_engine.release.schema import infer_schema
from tests.conftest import TEST_DATA


def by_name(cfg):
    return {c.name: c for c in cfg.columns}


def test_heart_cleveland_numeric_columns_get_open_rounded_bins():
    cfg = infer_schema(TEST_DATA / "heart_cleveland.csv")
    cols = by_name(cfg)
    for name in ("age", "trestbps", "chol", "thalach", "oldpeak"):
        c = cols[name]
        assert c.role == "perturb" and c.type == "numeric", name
        edges = c.bins["edges"]
        assert edges[0] == -math.inf and edges[-1] == math.inf and len(edges) >= 3
        inner = edges[1:-1]
        assert all(float(f"{e:.2g}") == e for e in inner)  # two significant digits
        assert any("bin edges come from the data" in w for w in c.warnings)
    assert cols["ca"].type == "ordinal" and cols["ca"].categories == ["0.0", "1.0", "2.0", "3.0", "?"]
    assert any("missing-value markers ('?')" in w for w in cols["ca"].warnings)
    assert cols["num"].categories == ["0", "1", "2", "3", "4"]
    assert cfg.source == {"file": "heart_cleveland.csv", "format": "csv", "rows": 303}
    assert cfg.input == {"delimiter": ",", "encoding": "utf-8", "decimal": "."}
    ReleaseConfig.from_dict(cfg.to_dict())  # the template is a valid configuration


def test_cirrhosis_identifier_dropped_and_na_text_kept():
    cols = by_name(infer_schema(TEST_DATA / "cirrhosis.csv"))
    assert cols["ID"].role == "drop" and cols["ID"].categories is None  # identifiers are not listed
    assert cols["Drug"].categories == ["D-penicillamine", "NA", "Placebo"]
    assert cols["Cholesterol"].type == "numeric" and cols["Cholesterol"].categories == ["NA"]
    assert cols["Stage"].type == "ordinal" and cols["Stage"].categories[-1] == "NA"
    # the bins' count is the number of bins made: Prothrombin's rounded quartiles merge into 3 bins
    assert cols["Prothrombin"].bins["edges"][1:-1] == [10.0, 11.0]
    assert all(c.bins["count"] == len(c.bins["edges"]) - 1 for c in cols.values() if c.bins)


def test_generated_columns(tmp_path):
    rng = np.random.default_rng(3)
    n = 600
    df = pd.DataFrame(
        {
            "record": np.arange(1, n + 1).astype(str),  # 1..n: a record number
            "code": [f"P{i:05d}" for i in rng.permutation(n)],  # unique texts
            "Date of Birth": ["1970-01-01"] * n,
            "comment": [f"patient said {i} things about the {w}" for i, w in enumerate(rng.integers(0, 9, n))],
            "ward": [f"ward {i % 150:03d}" for i in range(n)],
            "region": [f"r{i % 40:02d}" for i in range(n)],
            "const": ["same"] * n,
            "empty": [""] * n,
            "smoker": rng.choice(["yes", "no", "Former", ""], n),
            "glucose": np.round(rng.normal(100, 15, n), 3).astype(str),
        }
    )
    path = tmp_path / "gen.csv"
    df.to_csv(path, index=False)
    cols = by_name(infer_schema(path))
    for name in ("record", "code"):
        assert cols[name].role == "drop" and "likely identifier" in cols[name].warnings[0], name
    assert cols["Date of Birth"].role == "drop" and "its name" in cols["Date of Birth"].warnings[0]
    assert cols["comment"].role == "drop" and "free text" in cols["comment"].warnings[0]
    assert cols["ward"].role == "drop" and "150 categories" in cols["ward"].warnings[0]
    assert cols["region"].role == "perturb" and any("40 categories" in w for w in cols["region"].warnings)
    assert cols["const"].role == "drop" and "only one value" in cols["const"].warnings[0]
    assert cols["empty"].role == "drop" and "empty column" in cols["empty"].warnings[0]
    assert cols["smoker"].categories == ["Former", "no", "yes", "NA"]  # alphabetical, then the missing category
    assert cols["smoker"].missing == "category" and cols["smoker"].epsilon == 1.0
    assert cols["glucose"].role == "perturb" and cols["glucose"].type == "numeric"  # unique floats: a measure


def test_parquet_and_excel_inputs(tmp_path):
    df = pd.DataFrame({"grade": ["A", "B", "A", None], "n": [1.0, 2.0, 2.0, 1.0]})
    df.to_parquet(tmp_path / "d.parquet")
    cols = by_name(infer_schema(tmp_path / "d.parquet"))
    assert cols["grade"].categories == ["A", "B", "NA"] and cols["n"].categories == ["1", "2"]
    df.to_excel(tmp_path / "d.xlsx", index=False)
    cols = by_name(infer_schema(tmp_path / "d.xlsx", ReaderOptions(sheet=0)))
    assert cols["grade"].categories == ["A", "B", "NA"] and cols["n"].categories == ["1", "2"]


def test_semicolon_decimal_comma_numbers(tmp_path):
    path = tmp_path / "eu.csv"
    rng = np.random.default_rng(1)
    values = [f"{v:.2f}".replace(".", ",") for v in rng.uniform(0, 100, 200)]
    path.write_text("x;y\n" + "".join(f"{v};{i % 2}\n" for i, v in enumerate(values)), encoding="cp1252")
    cfg = infer_schema(path)
    assert cfg.input["decimal"] == "," and by_name(cfg)["x"].type == "numeric"


def test_empty_header_only_and_cancel(tmp_path):
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(InputError, match="is empty"):
        infer_schema(tmp_path / "e.csv")
    (tmp_path / "h.csv").write_text("a,b\n")
    with pytest.raises(InputError, match="has a header but no data rows"):
        infer_schema(tmp_path / "h.csv")
    (tmp_path / "ok.csv").write_text("a\n" + "x\ny\n" * 10)
    with pytest.raises(Cancelled):
        infer_schema(tmp_path / "ok.csv", cancel=lambda: True)


def test_nominal_categories_are_listed_in_natural_order():
    """Bands read as a reader expects ("5-9" before "10-14"; it was text order: 5-9 after 45-49), case-insensitive,
    still independent of the frequencies."""
    from optrr_engine.release.schema import listed_categories

    values = ["0-4", "10-14", "5-9", "45-49", "15-19", "NA", "a10", "a9", "B", "a"]
    assert listed_categories(values, ordinal=False) == [
        "0-4", "5-9", "10-14", "15-19", "45-49", "a", "a9", "a10", "B", "NA"
    ]
