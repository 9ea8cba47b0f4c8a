"""The codec: texts -> codes -> labels, bins, missing values, and errors for values the configuration lacks."""

import numpy as np
import pandas as pd
import pytest

from optrr_engine.errors import InputError
from optrr_engine.release.codec import Codec
from optrr_engine.release.config import ColumnConfig, ReleaseConfig


def config(*columns, **kw) -> ReleaseConfig:
    return ReleaseConfig(columns=list(columns), **kw)


def perturb(name, categories=None, **kw) -> ColumnConfig:
    return ColumnConfig(name=name, role="perturb", epsilon=1.0, categories=categories, **kw)


def frame(**cols) -> pd.DataFrame:
    return pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in cols.items()})


def test_nominal_round_trip_with_missing_category():
    codec = Codec(config(perturb("sex", ["F", "M", "NA"]), ColumnConfig(name="id", role="drop")))
    assert codec.attributes == ["sex"] and codec.sizes.tolist() == [3] and codec.columns == ["sex"]
    df = frame(sex=["M", "F", np.nan, "M"], id=["1", "2", "3", "4"])
    codes = codec.encode(df)
    assert codes.tolist() == [[1], [0], [2], [1]] and codes.dtype == np.int16
    assert codec.decode(codes)["sex"].tolist() == ["M", "F", "NA", "M"]


def test_numeric_bins_extras_decimal_comma_and_missing_codes():
    age = perturb(
        "age",
        ["?", "NA"],
        type="numeric",
        bins={"method": "edges", "edges": ["-inf", 18, 65, "inf"]},
        missing_values=["-9"],
    )
    codec = Codec(config(age, input={"decimal": ","}))
    assert codec.specs[0].labels == ["< 18", "[18, 65)", ">= 65", "?", "NA"]
    df = frame(age=["3,5", "18", "64,99", "65", "1e3", " 70 ", "?", np.nan, "-9"])
    assert codec.encode(df)[:, 0].tolist() == [0, 1, 1, 2, 2, 2, 3, 4, 4]


def test_closed_edges_reject_values_outside():
    age = perturb("age", [], type="numeric", bins=[0, 50, 100])
    codec = Codec(config(age))
    assert codec.specs[0].labels == ["[0, 50)", "[50, 100]"]
    assert codec.encode(frame(age=["0", "100", "50"]))[:, 0].tolist() == [0, 1, 1]
    with pytest.raises(InputError, match="'age': value '120' lies outside its bin edges \\[0, 100\\]"):
        codec.encode(frame(age=["5", "120"]))


def test_exclude_drops_rows_and_reports_positions():
    codec = Codec(config(perturb("a", ["x", "y"], missing="exclude"), perturb("b", ["p", "q", "NA"])))
    codes, rows = codec.encode_rows(frame(a=["x", np.nan, "y", "y"], b=[np.nan, "p", "q", "p"]))
    assert rows.tolist() == [0, 2, 3] and codes.tolist() == [[0, 2], [1, 1], [1, 0]]


def test_output_table_keeps_configuration_order_and_kept_columns():
    import pyarrow as pa

    cfg = config(ColumnConfig(name="site", role="keep"), perturb("a", ["x", "y"]), ColumnConfig(name="z"))
    codec = Codec(cfg)
    table = codec.output_table(np.array([[1], [0]], dtype=np.int16), pa.table({"site": ["s1", None]}))
    assert table.column_names == ["site", "a"]
    assert table.column("site").to_pylist() == ["s1", None]
    assert table.column("a").to_pylist() == ["y", "x"]


@pytest.mark.parametrize(
    ("cfg", "df", "pattern"),
    [
        (
            config(perturb("color", ["red", "blue"])),
            frame(color=["red", "green", "teal", "green"]),
            "'color' has values that are not among its categories: 'green', 'teal'",
        ),
        (
            config(perturb("color", ["red", "blue"])),
            frame(color=["red", np.nan]),
            "'color' has missing values .* 'NA', its missing-value category, is not among its categories",
        ),
        (config(perturb("one", ["only"])), frame(one=["only"]), "'one' has only one category \\('only'\\)"),
        (
            config(perturb("n", ["a"], type="numeric", bins={"method": "quantile", "count": 3})),
            frame(n=["1"]),
            "'n': numeric bins need edges",
        ),
        (config(ColumnConfig(name="k", role="keep")), frame(k=["1"]), "no column has role 'perturb'"),
        (config(perturb("a", ["x", "y"])), frame(b=["x"]), "the data has no column 'a'"),
    ],
)
def test_codec_errors(cfg, df, pattern):
    with pytest.raises(InputError, match=pattern) as info:
        Codec(cfg).encode(df)
    assert "\n" not in str(info.value)


def test_unknown_value_reports_its_own_rows():
    """The rows holding the value, counted from the file's first data row (it named the whole chunk: "rows 1 to
    286" for a value in rows 1-3)."""
    import pyarrow as pa

    codec = Codec(config(perturb("c", ["a", "b"])))
    with pytest.raises(InputError, match=r"'zz' \(in data row 1,002\)"):
        codec.encode_table(pa.table({"c": ["a", "zz"]}), first_row=1000)
    with pytest.raises(InputError, match=r"'yy', 'zz' \(in data rows 2, 4, 5, 6, 7 and 2 more in this part"):
        codec.encode_table(pa.table({"c": ["a", "zz", "b", "yy", "zz", "zz", "zz", "zz", "zz"]}))
