"""``optrr design --prior FILE``: the user's public guess of the distributions, for the predicted error.

JSON, either the 1-way guesses directly or with guessed tables of some marginals::

    {"age": [0.2, 0.5, 0.3], "3": [1, 1]}                      # column name or 1-based index -> probabilities
    {"columns": {"age": [...]}, "tables": [{"columns": ["age", "sex"], "table": [[...], [...]]}]}

CSV, one line per column: the column (name or 1-based index), then its probabilities (or counts; each guess is
normalised). Columns not listed stay uniform. Every guess is checked against the category counts when read
(unknown column, a negative number, the wrong number of values: one-line errors, exit code 2).
"""

from __future__ import annotations

import csv
import os

import numpy as np

from ..errors import InputError


def _column(key, names, k: int, path) -> int:
    text = str(key).strip()
    if names is not None and text in names:
        return list(names).index(text)
    if text.isdigit() and 1 <= int(text) <= k:
        return int(text) - 1
    known = f"a name of {', '.join(names)} or " if names else ""
    raise InputError(f"prior file {path}: unknown column {text!r} (use {known}a 1-based index up to {k})")


def _guess(values, size: int, what: str, path) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"prior file {path}: the guess for {what} must be numbers") from None
    if arr.ndim != 1 or arr.size != size:
        raise InputError(f"prior file {path}: the guess for {what} has {arr.size} values; it has {size} categories")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or arr.sum() <= 0:
        raise InputError(f"prior file {path}: the guess for {what} must be non-negative numbers with a positive sum")
    return arr / arr.sum()


def _read_csv(path) -> dict:
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
    except FileNotFoundError:
        raise InputError(f"prior file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"prior file {path} cannot be read: {exc}") from None
    out = {}
    for r in rows:
        try:
            out[r[0].strip()] = [float(c) for c in r[1:] if c.strip()]
        except ValueError:
            raise InputError(f"prior file {path}: the guess for {r[0].strip()!r} must be numbers") from None
    return {"columns": out}


def load_prior(path, sizes, names=None):
    """An :class:`~optrr_engine.utility.IndependentPrior` / :class:`~optrr_engine.utility.TablePrior` from a
    JSON or CSV file, checked against ``sizes`` (and ``names`` when the columns have names)."""
    from ..io.json_file import read_json
    from ..utility import IndependentPrior, TablePrior

    k = len(sizes)
    if os.fspath(path).lower().endswith(".csv"):
        d = _read_csv(path)
    else:
        d = read_json(path, "prior file")
        if not isinstance(d, dict):
            raise InputError(f"prior file {path} must be a JSON object (column -> probabilities)")
        if "columns" not in d and "tables" not in d:
            d = {"columns": d}
    columns, tables = d.get("columns") or {}, d.get("tables") or []
    if not isinstance(columns, dict) or not isinstance(tables, list):
        raise InputError(f"prior file {path}: 'columns' must map columns to probabilities, 'tables' be a list")
    one_way: list = [None] * k
    for key, values in columns.items():
        i = _column(key, names, k, path)
        one_way[i] = _guess(values, int(sizes[i]), f"column {key}", path)
    if not tables:
        return IndependentPrior(one_way)
    guessed = {(i,): p for i, p in enumerate(one_way) if p is not None}
    for t in tables:
        if not isinstance(t, dict) or "columns" not in t or "table" not in t:
            raise InputError(f"prior file {path}: each table needs 'columns' and 'table'")
        attrs = [_column(c, names, k, path) for c in t["columns"]]
        if len(set(attrs)) != len(attrs):
            raise InputError(f"prior file {path}: a table names the same column twice")
        order = np.argsort(attrs)
        shape = tuple(int(sizes[a]) for a in attrs)
        try:
            arr = np.asarray(t["table"], dtype=float)
        except (TypeError, ValueError):
            arr = np.zeros(0)
        if arr.shape != shape:
            raise InputError(f"prior file {path}: table {t['columns']} must have shape {shape} (category counts)")
        table = _guess(arr.reshape(-1), arr.size, f"table {t['columns']}", path).reshape(shape)
        guessed[tuple(sorted(attrs))] = np.transpose(table, order)
    return TablePrior(guessed, k)
