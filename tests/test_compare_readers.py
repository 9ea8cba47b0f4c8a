"""optrr compare reads files through the same readers as schema/perturb (issue 11), and checks stay linear."""

import numpy as np
import pytest

from optrr_engine.compare import load_dataset
from optrr_engine.errors import InputError
from optrr_engine.validation import first_duplicate


def rows(n=80):
    return [("café" if i % 3 else "thé", "pqr"[i % 3], "uv"[i % 2], "xy"[(i // 2) % 2]) for i in range(n)]


def test_cp1252_xlsx_and_utf8_give_the_same_categories(tmp_path):
    import openpyxl

    header = ("drink", "b", "c", "d")
    text = "\n".join(",".join(r) for r in [header, *rows()]) + "\n"
    (tmp_path / "utf8.csv").write_bytes(text.encode("utf-8"))
    (tmp_path / "win.csv").write_bytes(text.encode("cp1252"))
    book = openpyxl.Workbook()
    for r in [header, *rows()]:
        book.active.append(list(r))
    book.save(tmp_path / "book.xlsx")
    loaded = [load_dataset(str(tmp_path / f)) for f in ("utf8.csv", "win.csv", "book.xlsx")]
    for data in loaded:
        assert data.columns == list(header)
        assert data.categories[0] == ["café", "thé"]
        np.testing.assert_array_equal(data.codes, loaded[0].codes)


def test_empty_cells_are_the_missing_category(tmp_path):
    (tmp_path / "m.csv").write_text("a,b\n" + "x,p\n,q\ny,\n" * 10)
    data = load_dataset(str(tmp_path / "m.csv"))
    assert data.categories == [["", "x", "y"], ["", "p", "q"]]


def test_header_only_is_refused(tmp_path):
    (tmp_path / "h.csv").write_text("a,b\n")
    with pytest.raises(InputError, match="no data rows"):
        load_dataset(str(tmp_path / "h.csv"))


def test_first_duplicate_is_linear_and_correct():
    values = [f"C{i:06d}" for i in range(100_000)]
    assert first_duplicate(values) is None
    assert first_duplicate([*values, "C050000", "C000001"]) == "C050000"
    assert first_duplicate(["a", "b", "a", "b"]) == "a"
    assert first_duplicate([]) is None


def test_a_100k_category_column_is_checked(tmp_path):
    from optrr_engine.release.codec import ColumnCodec
    from optrr_engine.release.config import ReleaseConfig

    cats = [f"C{i:06d}" for i in range(100_000)]
    col = {"name": "code", "role": "perturb", "epsilon": 1.0, "categories": cats}
    cfg = ReleaseConfig.from_dict({"method": "kronecker", "columns": [col]})
    assert ColumnCodec(cfg.columns[0]).size == 100_000
    with pytest.raises(InputError, match="lists 'C099999' twice"):
        ReleaseConfig.from_dict({"method": "kronecker", "columns": [{**col, "categories": [*cats, "C099999"]}]})
