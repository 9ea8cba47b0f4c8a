"""Bins of numeric columns: edges, labels, assignment, and edges computed from data.

A column's bins are ``{"method": "quantile" | "equal_width" | "edges", "count": n, "edges": [e_0, ..., e_m]}``
(strictly increasing edges; "-inf" / "inf" allowed). Bin j holds e_j <= v < e_{j+1}; the last bin also
holds v = e_m. Labels: "< e_1" for an open first bin (e_0 = -inf), ">= e_{m-1}" for an open last bin,
"[a, b)" inside and "[a, b]" for a closed last bin. Edges computed from data are rounded to two
significant digits and the outer bins are left open, so the release does not print the data's exact
minimum, maximum or quantiles; they are still derived from the data and published as they are.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError

BIN_METHODS = ("quantile", "equal_width", "edges")
#: Bin methods whose edges are computed from the data (published as they are, rounded); "edges" are typed.
DATA_BIN_METHODS = ("quantile", "equal_width")


def bins_from_data(column) -> bool:
    """Whether ``column`` (anything with ``type`` and ``bins``: a configuration's column, the window's) is numeric
    with bin edges computed from the data (DATA_BIN_METHODS), which the release publishes outside the epsilons;
    False once its edges are typed, and for a column of categories (its bins are not used)."""
    bins = column.bins
    return column.type == "numeric" and isinstance(bins, dict) and bins.get("method") in DATA_BIN_METHODS
DEFAULT_BIN_COUNT = 4
MAX_BIN_COUNT = 1000


def format_edge(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == math.floor(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def _edge_value(v, column: str) -> float:
    if isinstance(v, bool):
        raise InputError(f"column {column!r}: bin edge {v!r} is not a number")
    if isinstance(v, str):
        text = v.strip().lower()
        if text in ("inf", "+inf", "infinity"):
            return math.inf
        if text in ("-inf", "-infinity"):
            return -math.inf
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise InputError(f"column {column!r}: bin edge {v!r} is not a number") from None
    if math.isnan(x):
        raise InputError(f"column {column!r}: a bin edge is NaN")
    return x


def normalize_bins(bins, column: str) -> dict | None:
    """Validate a bins specification (a dict, or a plain list of edges) into the dict form."""
    if bins is None:
        return None
    if isinstance(bins, (list, tuple)):
        bins = {"method": "edges", "edges": list(bins)}
    if not isinstance(bins, dict):
        raise InputError(f"column {column!r}: bins must be an object with method, count and edges, or a list of edges")
    unknown = set(bins) - {"method", "count", "edges"}
    if unknown:
        raise InputError(f"column {column!r}: unknown key {sorted(unknown)[0]!r} in bins (known: method, count, edges)")
    method = bins.get("method", "edges" if bins.get("edges") is not None else "quantile")
    if method not in BIN_METHODS:
        raise InputError(f"column {column!r}: bins method {method!r} is unknown; choose {', '.join(BIN_METHODS)}")
    out: dict = {"method": method}
    count = bins.get("count")
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, (int, float)) or count != int(count):
            raise InputError(f"column {column!r}: bins count must be a whole number; got {count!r}")
        if not 2 <= int(count) <= MAX_BIN_COUNT:
            raise InputError(f"column {column!r}: bins count must be between 2 and {MAX_BIN_COUNT}; got {count}")
        out["count"] = int(count)
    edges = bins.get("edges")
    if edges is not None:
        if not isinstance(edges, (list, tuple)):
            raise InputError(f"column {column!r}: bin edges must be a list of numbers")
        vals = [_edge_value(v, column) for v in edges]
        if len(vals) < 3:
            raise InputError(f"column {column!r}: give at least 3 bin edges (2 bins); got {len(vals)}")
        if any(b <= a for a, b in zip(vals, vals[1:], strict=False)):
            raise InputError(f"column {column!r}: bin edges must be strictly increasing")
        out["edges"] = vals
    elif method == "edges":
        raise InputError(f"column {column!r}: bins method 'edges' needs the list of edges")
    if "count" not in out and method != "edges":
        out["count"] = DEFAULT_BIN_COUNT
    return out


def bins_to_json(bins: dict | None) -> dict | None:
    if bins is None:
        return None
    out = dict(bins)
    if "edges" in out:
        out["edges"] = [format_edge(e) if math.isinf(e) else e for e in out["edges"]]
    return out


def bin_labels(edges) -> list[str]:
    m = len(edges) - 1
    labels = []
    for j in range(m):
        lo, hi = edges[j], edges[j + 1]
        if math.isinf(lo) and math.isinf(hi):
            labels.append("any value")
        elif math.isinf(lo):
            labels.append(f"< {format_edge(hi)}")
        elif math.isinf(hi):
            labels.append(f">= {format_edge(lo)}")
        elif j == m - 1:
            labels.append(f"[{format_edge(lo)}, {format_edge(hi)}]")
        else:
            labels.append(f"[{format_edge(lo)}, {format_edge(hi)})")
    return labels


def assign(values: np.ndarray, edges) -> tuple[np.ndarray, np.ndarray]:
    """(bin index, outside mask) for finite or infinite float values (no NaN)."""
    e = np.asarray(edges, dtype=float)
    idx = np.searchsorted(e, values, side="right") - 1
    idx[values == e[-1]] = len(e) - 2
    outside = (values < e[0]) | (values > e[-1])
    return np.clip(idx, 0, len(e) - 2), outside


def round_significant(x: float, digits: int = 2) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    scale = 10 ** (digits - 1 - math.floor(math.log10(abs(x))))
    return round(x * scale) / scale


def _open_edges(inner) -> list[float]:
    inner = sorted({round_significant(float(v)) for v in inner if math.isfinite(v)})
    return [-math.inf, *inner, math.inf]


def quantile_edges(sample: np.ndarray, count: int) -> list[float]:
    """Open outer bins and rounded interior quantiles (duplicates merged; may give fewer bins)."""
    if sample.size == 0:
        return [-math.inf, math.inf]
    qs = np.quantile(sample, np.arange(1, count) / count)
    edges = _open_edges(qs)
    lo, hi = float(np.min(sample)), float(np.max(sample))
    return [e for e in edges if math.isinf(e) or lo < e <= hi] if len(edges) > 2 else edges


def equal_width_edges(lo: float, hi: float, count: int) -> list[float]:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [-math.inf, math.inf]
    width = (hi - lo) / count
    return _open_edges([lo + width * j for j in range(1, count)])
