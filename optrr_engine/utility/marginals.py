"""Which marginals a user needs: whole orders ("all 2-way") or named attribute sets.

A spec is either ``{"orders": [1, 2]}`` (every attribute set of those sizes) or ``{"sets": [(0, 3), (2,)]}``
(0-based attribute indices). :func:`parse_marginals` reads the CLI / configuration text form.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

from ..errors import InputError, TooLargeError

#: Most marginals evaluated one by one (all 3-way marginals of 100 attributes would be 161,700).
MAX_MARGINALS = 20_000


def parse_marginals(text, names=None) -> dict:
    """ "1,2" -> orders 1 and 2; "a,b;c" -> the sets {a, b} and {c}; "1,2;" -> the one set {1, 2} (empty parts
    are skipped). Attributes are names (when ``names`` is given) or 1-based indices. A list of lists
    (configuration files) is read as sets."""
    if isinstance(text, (list, tuple)):
        return {"sets": [_resolve_set(s, names) for s in text]}
    text = str(text).strip()
    if not text:
        raise InputError('the marginals list is empty: use e.g. 1,2 (all 1- and 2-way) or "a,b;c"')
    if ";" not in text and all(t.strip().isdigit() and 1 <= int(t) <= 3 for t in text.split(",")):
        return {"orders": sorted({int(t) for t in text.split(",")})}
    parts = [part for part in text.split(";") if part.strip()]
    if not parts:
        raise InputError('the marginals list is empty: use e.g. 1,2 (all 1- and 2-way) or "a,b;c"')
    return {"sets": [_resolve_set([t.strip() for t in part.split(",")], names) for part in parts]}


def _resolve_set(items, names) -> tuple[int, ...]:
    out = []
    for item in items:
        if names is not None and str(item) in names:
            out.append(list(names).index(str(item)))
            continue
        try:
            idx = int(item)
        except (TypeError, ValueError):
            raise InputError(f"unknown attribute {item!r} in the marginals list") from None
        out.append(idx - 1)
    if not out or len(set(out)) != len(out):
        raise InputError(f"a marginal must name distinct attributes; got {list(items)}")
    return tuple(out)


def resolve_marginals(spec, k: int) -> list[tuple[int, ...]]:
    """The attribute tuples (0-based, sorted) of a spec for k attributes."""
    if spec is None:
        spec = {"orders": [1, 2]}
    if isinstance(spec, dict) and "orders" in spec:
        orders = [int(o) for o in spec["orders"]]
        if any(o < 1 or o > k for o in orders):
            raise InputError(f"marginal orders must be between 1 and {k}; got {orders}")
        total = sum(comb(k, o) for o in orders)
        if total > MAX_MARGINALS:
            raise TooLargeError(
                f"{total} marginals of orders {orders} for k = {k}; at most {MAX_MARGINALS}: name the attribute sets"
            )
        return [c for o in orders for c in combinations(range(k), o)]
    sets = spec["sets"] if isinstance(spec, dict) else spec
    out = []
    for s in sets:
        t = tuple(sorted(int(i) for i in s))
        if not t or any(i < 0 or i >= k for i in t) or len(set(t)) != len(t):
            raise InputError(f"invalid marginal {[i + 1 for i in s]} for {k} attributes (1-based)")
        out.append(t)
    if len(out) > MAX_MARGINALS:
        raise TooLargeError(f"{len(out)} marginals; at most {MAX_MARGINALS}")
    return out


def describe(spec) -> str:
    """A parsed spec in words: orders -> "the 1- and 2-way marginals"; sets -> "the tables 1,2; 3,4" (1-based)."""
    if isinstance(spec, dict) and "orders" in spec:
        orders = [f"{o}-" for o in spec["orders"]]
        joined = orders[0] if len(orders) == 1 else ", ".join(orders[:-1]) + " and " + orders[-1]
        return f"the {joined}way marginals"
    sets = spec["sets"] if isinstance(spec, dict) else spec
    return "the tables " + "; ".join(",".join(str(i + 1) for i in s) for s in sets)


def column_set_text(columns) -> str:
    """One table's columns for people to read: "(gender, age)" (a Python set's "{gender, age}" reads as code)."""
    return "(" + ", ".join(str(c) for c in columns) + ")"
