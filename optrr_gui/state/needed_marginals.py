"""The marginals the user needs from a release (issue 13), Qt-free.

Stored in the session (and the project file) as ``{"orders": [1, 2], "sets": [["age", "sex"], ...]}``: whole
orders ("all 2-way") of the perturbed columns and/or named column sets; ``None`` means the default, the CLI's
(``optrr_engine.cli.design_utility``): all 1- and 2-way marginals when there are at most
``DEFAULT_PAIR_LIMIT`` of them, else all 1-way. The design worker predicts the error of exactly these marginals;
the release configuration's ``needed_marginals`` lists them by column name (the release refuses a design that
erases one of them, ``optrr_engine.utility.release_check``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from difflib import get_close_matches
from itertools import combinations
from math import comb

from optrr_engine.cli.design_utility import DEFAULT_PAIR_LIMIT
from optrr_engine.utility.identifiability import way_out
from optrr_engine.utility.marginals import MAX_MARGINALS, column_set_text

#: Orders offered in the editor.
ORDERS = (1, 2, 3)
#: Most marginals predicted or checked at once.
MAX_NEEDED = MAX_MARGINALS
#: The way out when a needed table cannot be estimated: the engine's text in the window's words.
WAY_OUT = way_out(epsilon="ε", kronecker="Kronecker", utility="Utility", marginals="tables")


def default_orders(k: int) -> list[int]:
    """The CLI's default: 1- and 2-way when k + C(k, 2) <= DEFAULT_PAIR_LIMIT, else 1-way."""
    return [1, 2] if k + comb(k, 2) <= DEFAULT_PAIR_LIMIT else [1]


def normalised(value) -> dict | None:
    """A stored value checked and in canonical form (None = the default). Raises ValueError."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError('needed marginals must be {"orders": [...], "sets": [[names], ...]}')
    orders = sorted({int(o) for o in value.get("orders") or []})
    if any(o not in ORDERS for o in orders):
        raise ValueError(f"marginal orders must be among {ORDERS}; got {orders}")
    sets = []
    for s in value.get("sets") or []:
        names = [str(n) for n in s]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"a needed marginal names distinct columns; got {names}")
        if names not in sets:
            sets.append(names)
    return {"orders": orders, "sets": sets}


def parse_sets(text: str) -> list[list[str]]:
    """ "age, sex; bmi" -> [["age", "sex"], ["bmi"]] (column names, ';' between sets). Raises ValueError."""
    out = []
    for part in text.split(";"):
        names = [n.strip() for n in part.split(",") if n.strip()]
        if not names:
            continue
        if len(set(names)) != len(names):
            raise ValueError(f"a needed marginal names distinct columns; got {', '.join(names)}")
        out.append(names)
    return out


def format_sets(sets) -> str:
    return "; ".join(", ".join(s) for s in sets)


def label_index_sets(sets, names, most: int) -> str:
    """"(a, b), (c, d) and 3 more": the first ``most`` of 1-based column index sets, by the columns' names."""
    shown = ", ".join(
        column_set_text(names[i - 1] if i - 1 < len(names) else str(i) for i in a) for a in sets[:most]
    )
    return shown + (f" and {len(sets) - most} more" if len(sets) > most else "")


def effective(value, k: int) -> dict:
    """The stored value with the default filled in for k perturbed columns."""
    v = normalised(value)
    return v if v is not None else {"orders": default_orders(k), "sets": []}


def describe(value, k: int) -> str:
    """ "all 1-way and 2-way marginals and 2 named column sets" (for the panel and the undo history)."""
    v = effective(value, k)
    parts = []
    if v["orders"]:
        parts.append("all " + " and ".join(f"{o}-way" for o in v["orders"]) + " marginals")
    if v["sets"]:
        parts.append(
            column_set_text(v["sets"][0]) if len(v["sets"]) == 1 else f"{len(v['sets'])} named column sets"
        )
    text = " and ".join(parts) or "no marginals"
    return text + (" (default)" if value is None else "")


def needed_summary(value, names) -> str:
    """What is counted as needed, in one line under the editor ("Counted as needed: all 1-way, all 2-way and 4 named
    tables (19 tables; ...)"): the named tables are added to the ticked orders, which a reviewer did not see when
    typing four pairs with 1-way and 2-way still ticked; it says how many named tables a ticked order holds already."""
    k = len(names)
    v = effective(value, k)
    n = len(v["sets"])
    parts = [f"all {o}-way" for o in v["orders"]] + ([f"{n} named table{'s' if n != 1 else ''}"] if n else [])
    if not parts:
        return "Counted as needed: no tables."
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if not n:
        listed += " tables"
    try:
        total = len(index_sets(value, names))
        inside = [f"{total:,} table{'s' if total != 1 else ''}"]
    except ValueError:  # too many to count (the editor says so)
        inside = []
    if n and v["orders"]:
        known = set(names)
        within = sum(1 for s in v["sets"] if len(s) in v["orders"] and set(s) <= known)
        added = "the named ones are added to the ticked ones"
        if within:
            added += f", and {within} of them {'is' if within == 1 else 'are'} among those already"
        inside.append(added)
    return f"Counted as needed: {listed}" + (f" ({'; '.join(inside)})" if inside else "") + "."


def single_column_note(value) -> str:
    """A plain note when named sets hold one column each: a set of one column is a 1-way table, which may not be
    what was meant ("AGE; SMOKING; LUNG_CANCER" typed for one 3-way table became three 1-way tables); "" else."""
    v = normalised(value)
    single = [s[0] for s in (v["sets"] if v else []) if len(s) == 1]
    if not single:
        return ""
    named = ", ".join(f"“{n}”" for n in single)
    each = "a set of one column is" if len(single) == 1 else "each set of one column is"
    return (
        f"{named}: {each} a 1-way table. The columns of one table are separated by commas (age, sex), tables by "
        "semicolons (age, sex; bmi)."
    )


def unknown_names(value, names) -> list[str]:
    """Names in the named sets that are not perturbed columns (they cannot be needed from the release)."""
    known = set(names)
    return sorted({n for s in (effective(value, len(names))["sets"]) for n in s if n not in known})


ROLE_WORDS = {"keep": "published as it is (role keep)", "drop": "dropped (role drop)"}


def name_problem(name: str, perturbed: Sequence[str], roles: Mapping[str, str] | None = None) -> str:
    """Why ``name`` cannot be needed, in words ("" when it is a perturbed column): dropped or kept, two names
    without the comma between them, or not a column at all (with the closest perturbed column, if any)."""
    if name in perturbed:
        return ""
    roles = roles or {}
    if name in roles:
        return f"“{name}” is {ROLE_WORDS.get(roles[name], 'not perturbed')}; only perturbed columns can be needed"
    words = name.split()
    if len(words) > 1 and all(w in perturbed for w in words):
        return f"“{name}” is not a column: a comma is missing between {', '.join(words)}"
    close = get_close_matches(name, list(perturbed), n=1, cutoff=0.6)
    hint = f" (did you mean “{close[0]}”?)" if close else ""
    return f"“{name}” is not a perturbed column{hint}"


def sets_error(text: str, perturbed: Sequence[str], roles: Mapping[str, str] | None = None) -> str:
    """What is wrong with typed column sets ("age, sex; bmi"), in words, "" when every set parses and names only
    perturbed columns ``perturbed``; ``roles`` (name -> role of every column) tells dropped and kept ones apart."""
    try:
        sets = parse_sets(text)
    except ValueError as exc:
        return f"{exc}."
    problems = []
    for name in dict.fromkeys(n for s in sets for n in s):
        problem = name_problem(name, perturbed, roles)
        if problem:
            problems.append(problem)
    return ("Not applied: " + "; ".join(problems) + ".") if problems else ""


def applied_error(value, perturbed: Sequence[str], roles: Mapping[str, str] | None = None) -> str:
    """The problem of needed sets already in the session that name columns no longer perturbed (a role changed
    or a column renamed after they were applied), in words; "" when there is none. Such sets are left out of the
    release's ``needed_marginals``, so the release could not answer them."""
    unknown = unknown_names(value, list(perturbed))
    if not unknown:
        return ""
    problems = "; ".join(name_problem(n, perturbed, roles) for n in unknown)
    return f"A needed column set names a column that is not perturbed: {problems}. Edit the needed sets (Design tab)."


def index_sets(value, names) -> list[tuple[int, ...]]:
    """Every needed marginal as sorted 0-based positions among the perturbed columns ``names``; orders above k
    and sets naming other columns are left out. Raises ValueError above MAX_NEEDED marginals."""
    k = len(names)
    v = effective(value, k)
    total = sum(comb(k, o) for o in v["orders"] if o <= k)
    if total > MAX_NEEDED:
        raise ValueError(f"{total} marginals (all {'/'.join(map(str, v['orders']))}-way of {k} columns); name sets")
    out = [c for o in v["orders"] if o <= k for c in combinations(range(k), o)]
    index = {n: i for i, n in enumerate(names)}
    seen = set(out)
    for s in v["sets"]:
        if all(n in index for n in s):
            t = tuple(sorted(index[n] for n in s))
            if t not in seen:
                seen.add(t)
                out.append(t)
    return out


def spec(value, names) -> dict:
    """The engine's marginal spec (optrr_engine.utility.resolve_marginals) for the predicted error."""
    v = effective(value, len(names))
    if not v["sets"] and all(o <= len(names) for o in v["orders"]):
        return {"orders": list(v["orders"])}
    return {"sets": index_sets(value, names)}


def name_lists(value, names) -> list[list[str]]:
    """The release configuration's ``needed_marginals``: every needed marginal as a list of column names."""
    return [[names[i] for i in t] for t in index_sets(value, names)]
