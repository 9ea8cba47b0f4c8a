"""``optrr schema --merge-rare`` on ordinal columns: a merged category's label never depends on which rare values
occur (a review: the census sample's codebook published '2-8' where 8 was one record's value and 4-7 did not occur,
'7+' where 7 was one record's value, 'low|mid' naming a rare 'mid'). Ranges are placed by the common values only
(a rare side of a boundary takes the common side's value +-1; a boundary between two rare values is merged away);
text labels name only the members that are not rare, with '(and neighbours)'."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optrr_engine.cli.main import main
from optrr_engine.release.config import ColumnConfig
from optrr_engine.release.merge_rare import LEFT_RARE_NOTE, NEIGHBOURS_MARK, NEIGHBOURS_NOTE, merge_column
from optrr_engine.release.schema import RARE_COUNT, is_rare
from tests.conftest import TEST_DATA

CENSUS = TEST_DATA / "uscensus1990_first99.csv"
#: rows per value of three columns of the census sample (tests/data/uscensus1990_first99.csv)
D_ANCSTRY1 = {0: 10, 1: 55, 2: 4, 3: 5, 8: 1, 9: 5, 10: 1, 11: 18}
I_RVETSERV = {0: 87, 1: 1, 3: 1, 4: 4, 7: 1, 8: 2, 10: 3}
I_AVAIL = {0: 96, 3: 1, 4: 2}
_SPAN = re.compile(r"^(<=)?(\d+)(?:-(\d+)|(\+))?$")


def merge_ordinal(rows: dict) -> tuple[ColumnConfig, bool]:
    """The ordinal column 'c' of the categories of ``rows`` ({value: rows}, in that order) after merge_column."""
    categories = [str(v) for v in rows]
    col = ColumnConfig(name="c", role="perturb", type="ordinal", epsilon=1.0, categories=categories)
    return merge_column(col, {str(v): n for v, n in rows.items()})


def span(label: str) -> tuple[int | None, int | None]:
    """(lowest, highest) of a released integer label, None where open."""
    found = _SPAN.match(label)
    assert found, f"not an integer label: {label!r}"
    upto, low, high, open_end = found.groups()
    if upto:
        return None, int(low)
    return int(low), None if open_end else int(high or low)


def released_of(col: ColumnConfig) -> dict[str, str]:
    """{source text: released label} (a text not recoded is released as itself)."""
    out = {c: c for c in col.categories or []}
    out.update({s: label for label, sources in (col.recode or {}).items() for s in sources})
    return out


def released_labels(col: ColumnConfig, rows: dict) -> list[str]:
    """The released categories, a rare category left unmerged (the column then says it stays rare) as '(rare)'."""
    recode = col.recode or {}
    return ["(rare)" if c not in recode and is_rare(rows.get(c, 0)) else c for c in col.categories or []]


def check_integer_labels(rows: dict[int, int], col: ColumnConfig, changed: bool) -> None:
    """The merged labels of an integer column name no rare value, each value lies in the one label it is released
    as, and nothing released is rare unless the column says that what is left stays rare."""
    common = {v for v, n in rows.items() if not is_rare(n)}
    released = released_of(col)
    spans = [span(c) for c in col.categories]
    for (_, high), (low, _) in zip(spans, spans[1:], strict=False):  # in increasing order without overlap
        assert high is not None and low is not None and high < low, col.categories
    for v in rows:
        label = released[str(v)]
        low, high = span(label)
        assert (low is None or low <= v) and (high is None or v <= high), (v, label)
        assert sum(1 for lo, hi in spans if (lo is None or lo <= v) and (hi is None or v <= hi)) == 1
    for label in col.recode or {}:  # each end of a merged range is a common value or one beside a common one
        low, high = span(label)
        assert low is None or low in common or low - 1 in common, (label, rows)
        assert high is None or high in common or high + 1 in common, (label, rows)
    counts = Counter()
    for v, n in rows.items():
        counts[released[str(v)]] += n
    left_rare = LEFT_RARE_NOTE in col.warnings
    assert left_rare == any(is_rare(n) for n in counts.values()), (rows, col.categories, col.warnings)
    if changed and left_rare:  # only when merging away would leave one category besides the missing one
        assert len(col.categories) == 2
    assert len(col.categories) >= 2


@st.composite
def integer_columns(draw) -> dict[int, int]:
    """{value: rows} in increasing order: 2..12 values with gaps, some of them rare."""
    n = draw(st.integers(2, 12))
    steps = draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    counts = draw(
        st.lists(st.one_of(st.integers(1, RARE_COUNT - 1), st.integers(RARE_COUNT, 40)), min_size=n, max_size=n)
    )
    values, v = [], draw(st.integers(0, 3))
    for step in steps:
        values.append(v)
        v += step
    return dict(zip(values, counts, strict=True))


def redraw_rare(draw, rows: dict[int, int]) -> dict[int, int]:
    """``rows`` with its rare values moved to other values in the same gap between common values (in the same
    order, with the same rows): which rare values occur changes, nothing a label may depend on does."""
    values = list(rows)
    out: dict[int, int] = {}
    i = 0
    while i < len(values):
        if not is_rare(rows[values[i]]):
            out[values[i]] = rows[values[i]]
            i += 1
            continue
        j = i
        while j < len(values) and is_rare(rows[values[j]]):
            j += 1
        below = values[i - 1] if i else -1
        above = values[j] if j < len(values) else values[-1] + 10
        moved = sorted(draw(st.sets(st.integers(below + 1, above - 1), min_size=j - i, max_size=j - i)))
        out.update({m: rows[values[k]] for m, k in zip(moved, range(i, j), strict=True)})
        i = j
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=integer_columns(), data=st.data())
def test_integer_labels_name_no_rare_value_and_do_not_depend_on_which_occur(rows, data):
    col, changed = merge_ordinal(rows)
    check_integer_labels(rows, col, changed)
    moved = redraw_rare(data.draw, rows)
    again, changed_again = merge_ordinal(moved)
    check_integer_labels(moved, again, changed_again)
    assert changed_again == changed
    if changed:  # (not merged: the rare values stay listed, and the column says so)
        strs = {str(v): n for v, n in rows.items()}
        assert released_labels(again, {str(v): n for v, n in moved.items()}) == released_labels(col, strs), rows


def test_the_census_columns_name_none_of_their_rare_values():
    col, _ = merge_ordinal(I_RVETSERV)  # was ['0', '1-4', '7+']: 7 and 4 are rare
    assert col.categories == ["0", "1+"] and col.recode == {"1+": ["1", "3", "4", "7", "8", "10"]}
    assert LEFT_RARE_NOTE not in col.warnings
    col, _ = merge_ordinal(I_AVAIL)  # was ['0', '3+']: 3 is one record's value; 3 rows in all stay rare
    assert col.categories == ["0", "1+"] and LEFT_RARE_NOTE in col.warnings
    col, _ = merge_ordinal(D_ANCSTRY1)  # '2-8' now ends one below the common 9, not at the rare 8
    assert col.categories == ["0", "1", "2-8", "9-10", "11"]
    for rows in (I_RVETSERV, I_AVAIL, D_ANCSTRY1):
        check_integer_labels(rows, *merge_ordinal(rows))
    for value in (4, 5, 6, 7):  # the record of 8 holding another value of the gap: the same codebook (was '2-4'...)
        moved = {(value if v == 8 else v): n for v, n in D_ANCSTRY1.items()}
        assert merge_ordinal(moved)[0].categories == ["0", "1", "2-8", "9-10", "11"], value


def test_the_census_sample_merged_by_the_cli_names_no_rare_value(tmp_path):
    cfg_path = tmp_path / "release.json"
    assert main(["schema", str(CENSUS), "-o", str(cfg_path), "--merge-rare"]) == 0
    columns = {c["name"]: c for c in json.loads(cfg_path.read_text())["columns"]}
    assert columns["dAncstry1"]["categories"] == ["0", "1", "2-8", "9-10", "11"]
    assert columns["iRvetserv"]["categories"] == ["0", "1+"]
    assert columns["iAvail"]["categories"] == ["0", "1+"]
    with open(CENSUS, newline="", encoding="utf-8") as fh:
        data = list(csv.DictReader(fh))
    checked = 0
    for name, c in columns.items():
        if c.get("type") != "ordinal" or not c.get("recode"):
            continue
        rows = Counter(int(r[name]) for r in data if r[name] != "")
        col = ColumnConfig(
            name=name, type="ordinal", categories=c["categories"], recode=c["recode"], warnings=c.get("warnings", [])
        )
        check_integer_labels(dict(sorted(rows.items())), col, True)
        checked += 1
    assert checked > 30


def test_open_ends_and_interior_ranges_are_placed_by_common_values():
    # a rare interior value: one below the common value above / one above the common value below
    assert merge_ordinal({0: 10, 1: 10, 2: 2, 5: 10})[0].categories == ["0", "1-4", "5"]
    assert merge_ordinal({1: 40, 8: 3, 9: 30})[0].categories == ["1", "2-9"]
    # rare extremes: open, from the common boundary ('<=1' from the common 1; '112+' from the common 112)
    assert merge_ordinal({0: 2, 1: 30, 5: 30})[0].categories == ["<=1", "5"]
    assert merge_ordinal({0: 40, 112: 30, 222: 1})[0].categories == ["0", "112+"]
    assert merge_ordinal({0: 40, 111: 30, 222: 1, 223: 2})[0].categories == ["0", "111+"]
    # two groups meeting between two rare values merge ('2-3', '4-5' would name 3 and 4)
    col, _ = merge_ordinal({0: 30, 1: 30, 2: 4, 3: 3, 4: 4, 5: 3, 6: 30})
    assert col.categories == ["0", "1", "2-5", "6"]
    # ranges and open ranges as categories; zero-padded and '.0' numbers written as their neighbours are
    col, _ = merge_ordinal({"0-11": 30, "12-14": 3, "15-17": 6, "18-23": 4, "24-26": 1, "27+": 20})
    assert col.categories == ["0-11", "12-17", "18-26", "27+"]
    col, _ = merge_ordinal({"<=4": 30, "5-9": 2, "10-14": 30, "15+": 1})
    assert col.categories == ["<=9", "10+"] and col.recode == {"<=9": ["<=4", "5-9"], "10+": ["10-14", "15+"]}
    assert merge_ordinal({"05": 10, "06": 2, "09": 10})[0].categories == ["05-08", "09"]
    assert merge_ordinal({"66.0": 10, "67.0": 2, "70.0": 10})[0].categories == ["66.0-69.0", "70.0"]


def test_a_boundary_only_a_rare_value_could_place_leaves_the_column_rare():
    """Four values of 3 rows: '<=2' and '3+' would name 2 and 3; merging them would leave one category."""
    col, changed = merge_ordinal({1: 3, 2: 3, 3: 3, 4: 3})
    assert not changed and col.categories == ["1", "2", "3", "4"] and LEFT_RARE_NOTE in col.warnings


def merge_text(rows: dict[str, int]) -> tuple[ColumnConfig, bool]:
    col = ColumnConfig(name="c", role="perturb", type="ordinal", epsilon=1.0, categories=list(rows))
    return merge_column(col, rows)


def test_text_labels_name_only_members_that_are_not_rare():
    col, _ = merge_text({"never": 40, "rarely": 2, "sometimes": 20, "often": 1, "always": 30})
    assert col.categories == ["never", "sometimes (and neighbours)", "always"]
    assert col.recode == {"sometimes (and neighbours)": ["rarely", "sometimes", "often"]}
    assert col.warnings[-1].endswith(f"into 'sometimes (and neighbours)' ({NEIGHBOURS_NOTE})")
    col, _ = merge_text({"low": 10, "mid": 2, "high": 8})  # was 'mid|high'
    assert col.categories == ["low", "high (and neighbours)"]
    # a merged group of rare values only ('b' 3, 'c' 3) first joins its neighbour of fewer rows (before on a tie)
    col, _ = merge_text({"a": 30, "b": 3, "c": 3, "d": 30})
    assert col.categories == ["a (and neighbours)", "d"] and col.recode == {"a (and neighbours)": ["a", "b", "c"]}
    # numbers with decimals are labelled as texts; a label already taken is numbered
    assert merge_text({"0.5": 10, "1.5": 2, "2.5": 10})[0].categories == ["0.5 (and neighbours)", "2.5"]
    col, _ = merge_text({"x (and neighbours)": 10, "x": 10, "y": 2, "z": 10})
    assert col.categories == ["x (and neighbours)", "x (and neighbours) 2", "z"]
    # nothing rare: nothing merged, no mark
    col, changed = merge_text({"low": 10, "high": 10})
    assert not changed and NEIGHBOURS_NOTE not in " ".join(col.warnings)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(counts=st.lists(st.one_of(st.integers(1, RARE_COUNT - 1), st.integers(RARE_COUNT, 40)), min_size=2, max_size=10))
def test_text_labels_never_name_a_rare_member_and_do_not_depend_on_its_text(counts):
    rows = {f"level{i}": n for i, n in enumerate(counts)}
    col, changed = merge_text(rows)
    renamed = {(k if not is_rare(n) else f"hidden{i}"): n for i, (k, n) in enumerate(rows.items())}
    again, changed_again = merge_text(renamed)
    assert changed_again == changed
    if not changed:
        return
    assert released_labels(again, renamed) == released_labels(col, rows)  # no rare member's text is in a label
    for label, members in (col.recode or {}).items():
        named = label.removesuffix(f" {NEIGHBOURS_MARK}").split("|")
        assert named and all(m in members and not is_rare(rows[m]) for m in named), (label, members)
        assert label.endswith(NEIGHBOURS_MARK) == any(is_rare(rows[m]) for m in members)
    released = released_of(col)
    totals = Counter()
    for k, n in rows.items():
        totals[released[k]] += n
    assert (LEFT_RARE_NOTE in col.warnings) == any(is_rare(n) for n in totals.values())
    assert len(col.categories) >= 2
