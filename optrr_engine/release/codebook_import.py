"""Categories declared by a data dictionary instead of read from the data (``optrr schema --codebook``).

When the domain of a column comes from the data, every value that occurs, however rare or odd, is
published in the codebook. A declared domain publishes only what the dictionary lists. Three sources:

- a table (.csv .tsv .txt .xlsx .parquet) with the columns ``column`` and ``category``: one row per
  category, in the order wanted (read with the same readers as data files);
- JSON: ``{"column": ["category", ...], ...}`` or a list of ``{"column": ..., "category": ...}`` objects;
- SPSS (.sav) or Stata (.dta) value labels (metadata only, no data read): each labelled variable's labels in
  the order of their codes (OptRR reads such files with the labels as values).
"""

from __future__ import annotations

import os

from ..errors import InputError


def read_codebook(path) -> dict[str, list[str]]:
    """{column: [categories in order]} from a data dictionary (see the module docstring)."""
    from ..io.formats import format_of

    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError(f"data dictionary {path} does not exist")
    if path.lower().endswith(".json"):
        pairs = _json_pairs(path)
    else:
        fmt = format_of(path)
        pairs = _labels(path, fmt) if fmt in ("sav", "dta") else _table_pairs(path)
    out: dict[str, list[str]] = {}
    for column, category in pairs:
        cats = out.setdefault(column, [])
        if category in cats:
            raise InputError(f"data dictionary {os.path.basename(path)} lists {category!r} twice for {column!r}")
        cats.append(category)
    if not out:
        raise InputError(f"data dictionary {os.path.basename(path)} declares no categories")
    return out


def _json_pairs(path):
    from ..io.json_file import read_json

    data = read_json(path, "data dictionary")
    if isinstance(data, dict):
        for column, cats in data.items():
            if not isinstance(cats, list) or not all(isinstance(c, str) for c in cats):
                raise InputError(f"data dictionary {os.path.basename(path)}: {column!r} must map to a list of texts")
            yield from ((str(column), c) for c in cats)
    elif isinstance(data, list):
        for item in data:
            if not isinstance(item, dict) or not isinstance(item.get("column"), str) or "category" not in item:
                raise InputError(
                    f"data dictionary {os.path.basename(path)}: every entry needs a 'column' and a 'category'"
                )
            yield item["column"], str(item["category"])
    else:
        raise InputError(f"data dictionary {os.path.basename(path)} must be a JSON object or list")


def _table_pairs(path):
    from ..io.readers import iter_chunks

    for frame in iter_chunks(path):
        lower = {str(c).strip().lower(): c for c in frame.columns}
        if "column" not in lower or "category" not in lower:
            raise InputError(f"data dictionary {os.path.basename(path)} needs the columns 'column' and 'category'")
        for column, category in zip(frame[lower["column"]], frame[lower["category"]], strict=True):
            if isinstance(column, str) and isinstance(category, str):
                yield column, category


def _labels(path, fmt: str):
    import pyreadstat

    reader = pyreadstat.read_sav if fmt == "sav" else pyreadstat.read_dta
    try:
        _, meta = reader(path, metadataonly=True)
    except Exception as exc:
        raise InputError(f"cannot read the value labels of {os.path.basename(path)}: {exc}") from None
    for column, labels in (meta.variable_value_labels or {}).items():
        for _code, label in sorted(labels.items(), key=lambda kv: kv[0]):
            yield column, str(label)
