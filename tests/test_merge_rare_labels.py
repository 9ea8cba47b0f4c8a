"""``optrr schema --merge-rare`` on ordinal columns: the released categories are a partition placed by the common
categories alone, so they do not depend on where the rare values are or how many rows they have (a review: the
census codebook published '2-8' where 8 was one record's value; then '1-2' from 1, a rare 2 and 3, where without
the rare row the codebook would read '1', '3'; labels that changed when two rare counts were swapped; '08-9';
'-1 (and neighbours)' next to an unmarked '1', pinning the rare 0). Every category goes to the group of the nearest
common category at or below it; integer groups are ranges from their common category to one below the next, the
first open below and the last open above, always; other ordinal columns mark every group '(and neighbours)'. The
one thing the codebook tells of the rare values: that the column had at least one."""

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
_NUM = r"\d+(?:\.0+)?"
_SPAN = re.compile(rf"^(?:<=(?P<upto>{_NUM})|(?P<low>{_NUM})(?:-(?P<high>{_NUM})|(?P<open>\+))?)$")


def merge_ordinal(rows: dict) -> tuple[ColumnConfig, bool]:
    """The ordinal column 'c' of the categories of ``rows`` ({value: rows}, in that order) after merge_column."""
    categories = [str(v) for v in rows]
    col = ColumnConfig(name="c", role="perturb", type="ordinal", epsilon=1.0, categories=categories)
    return merge_column(col, {str(v): n for v, n in rows.items()})


def numbers(label: str) -> tuple[str | None, str | None]:
    """(lowest, highest) of a released integer label as written, None where open."""
    found = _SPAN.match(label)
    assert found, f"not an integer label: {label!r}"
    if found["upto"] is not None:
        return None, found["upto"]
    return found["low"], None if found["open"] else found["high"] or found["low"]


def span(label: str) -> tuple[int | None, int | None]:
    """(lowest, highest) whole number of a released integer label, None where open."""
    low, high = numbers(label)
    return (None if low is None else int(float(low))), (None if high is None else int(float(high)))


def released_of(col: ColumnConfig) -> dict[str, str]:
    """{source text: released label} (a text not recoded is released as itself)."""
    out = {c: c for c in col.categories or []}
    out.update({s: label for label, sources in (col.recode or {}).items() for s in sources})
    return out


def common_of(rows: dict) -> list:
    """The categories that place the groups: those of at least RARE_COUNT rows, in their order."""
    return [v for v, n in rows.items() if n >= RARE_COUNT]


def expected_ranges(common: list[int]) -> list[tuple[int | None, int | None]]:
    """The module's rule: from each common value to one below the next; the first open below, the last above."""
    last = len(common) - 1
    return [(None if i == 0 else c, None if i == last else common[i + 1] - 1) for i, c in enumerate(common)]


def written_like(number: int, like: str) -> str:
    whole, dot, decimals = like.partition(".")
    return f"{str(number).zfill(len(whole))}{dot}{decimals}"


def check_integer_column(rows: dict, col: ColumnConfig, changed: bool) -> None:
    """``rows``: {category text: rows} in order, whole numbers (padded, '.0' or not; the first may be '<=a', the
    last 'a+'), at least one rare. Merged: the partition by the common values, each range written as its common
    value writes its numbers, every value in the one category whose range holds it, nothing released rare; else
    the column is left as it was, rare, with fewer than two common values."""
    assert any(is_rare(n) for n in rows.values())
    common = common_of(rows)
    if len(common) < 2:
        assert not changed and col.recode is None and col.categories == list(rows), (rows, col.categories)
        assert LEFT_RARE_NOTE in col.warnings
        return
    assert changed and LEFT_RARE_NOTE not in col.warnings, (rows, col.warnings)
    ranges = [span(c) for c in col.categories]
    value = {c: span(c) for c in rows}  # a source category's own (lowest, highest)
    assert ranges == expected_ranges([value[c][0] if value[c][0] is not None else value[c][1] for c in common])
    assert len(col.categories) == len(common) >= 2
    released = released_of(col)
    for label, c in zip(col.categories, common, strict=True):  # written as its common value writes its numbers
        low, high = numbers(label)
        like = numbers(c)[0] or numbers(c)[1]
        assert like is not None
        for text in (low, high):
            assert text is None or text == written_like(int(float(text)), like), (label, c)
        if ranges[col.categories.index(label)] == value[c]:
            assert released[c] == c  # a category whose range is its own keeps its text
    totals: Counter = Counter()
    for c, n in rows.items():
        lo, hi = value[c]
        holding = [
            label
            for label, (a, b) in zip(col.categories, ranges, strict=True)
            if (a is None or (lo is not None and a <= lo)) and (b is None or (hi is not None and hi <= b))
        ]
        assert holding == [released[c]], (c, holding, released[c])  # exactly one, the one it is released as
        totals[released[c]] += n
    assert not any(is_rare(n) for n in totals.values()), (rows, totals)


@st.composite
def integer_layouts(draw) -> tuple[dict[str, int], dict[str, int]]:
    """Two integer ordinal columns ({text: rows} in order) with the same common categories (texts and rows) and at
    least one rare category each, whose rare categories (and those without rows) lie anywhere, with any rows and
    written any way: values with gaps, zero-padded or with '.0', the first maybe '<=a', the last maybe 'a+'."""

    def text(v: int) -> str:
        return draw(st.sampled_from([str(v), str(v).zfill(2), str(v).zfill(3), f"{v}.0", f"{v:02}.00"]))

    values = sorted(draw(st.sets(st.integers(0, 150), min_size=3, max_size=24)))
    ncommon = draw(st.integers(0, 1) | st.integers(2, min(6, len(values) - 1)))  # mostly merged
    common = sorted(draw(st.permutations(values))[:ncommon])
    common_rows = {v: draw(st.integers(RARE_COUNT, 200)) for v in common}
    common_text = {v: text(v) for v in common}
    others = [v for v in values if v not in common]
    open_low = bool(common) and common[0] == values[0] and draw(st.booleans())
    open_high = bool(common) and common[-1] == values[-1] and draw(st.booleans())

    def layout() -> dict[str, int]:
        chosen = draw(st.lists(st.sampled_from(others), min_size=1, max_size=len(others), unique=True))
        if open_low:
            chosen = [v for v in chosen if v > common[0]] or [v for v in others if v > common[0]][:1]
        if open_high:
            chosen = [v for v in chosen if v < common[-1]] or [v for v in others if v < common[-1]][:1]
        rare = draw(st.sampled_from(chosen))  # at least one rare; the others rare or without rows
        counts = {
            v: draw(st.integers(1, RARE_COUNT - 1)) if v == rare else draw(st.integers(0, RARE_COUNT - 1))
            for v in chosen
        }
        out = {}
        for v in sorted([*common, *chosen]):
            t = common_text[v] if v in common_rows else text(v)
            if open_low and v == common[0]:
                t = f"<={t}"
            if open_high and v == common[-1]:
                t = f"{t}+"
            out[t] = common_rows[v] if v in common_rows else counts[v]
        return out

    return layout(), layout()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(pair=integer_layouts())
def test_integer_categories_depend_only_on_the_common_ones(pair):
    first, second = pair
    col, changed = merge_ordinal(first)
    check_integer_column(first, col, changed)
    again, changed_again = merge_ordinal(second)
    check_integer_column(second, again, changed_again)
    if changed:  # the same common categories, any rare ones: the same codebook
        assert changed_again and again.categories == col.categories, (first, second)


def test_the_reviews_integer_cases():
    # '1-2' told that some record holds 2: without the rare row nothing is merged ('1', '3', '5')
    col, changed = merge_ordinal({1: 100, 2: 1, 3: 100, 5: 100})
    assert col.categories == ["<=2", "3-4", "5+"] and col.recode == {"<=2": ["1", "2"], "3-4": ["3"], "5+": ["5"]}
    assert not merge_ordinal({1: 100, 3: 100, 5: 100})[1]
    for rare in ({2: 1}, {4: 3}, {0: 2}, {6: 1}, {2: 1, 4: 2, 9: 4}):  # wherever the rare rows are
        rows = dict(sorted(({1: 100, 3: 100, 5: 100} | rare).items()))
        assert merge_ordinal(rows)[0].categories == ["<=2", "3-4", "5+"], rare
    assert merge_ordinal({5: 10, 6: 1, 7: 10})[0].categories == ["<=6", "7+"]  # was '5-6'
    # the rare rows' counts swapped: the same labels (were ['1', '2-4', '5'] and ['1-2', '3-4', '5'])
    a = merge_ordinal({1: 101, 2: 1, 3: 100, 4: 2, 5: 102})[0]
    b = merge_ordinal({1: 101, 2: 2, 3: 100, 4: 1, 5: 102})[0]
    assert a.categories == b.categories == ["<=2", "3-4", "5+"] and a.recode == b.recode
    # zero padding and decimals written as the common value writes them, on both ends (were '08-9', '1.0-2.00')
    assert merge_ordinal({"07": 10, "08": 2, "09": 10})[0].categories == ["<=08", "09+"]
    assert merge_ordinal({"08": 10, "09": 2, "10": 10, "11": 10})[0].categories == ["<=09", "10", "11+"]
    col, _ = merge_ordinal({"05": 10, "06": 10, "07": 2, "09": 10, "10": 10})
    assert col.categories == ["<=05", "06-08", "09", "10+"]
    assert merge_ordinal({"1.0": 10, "2.0": 1, "3.0": 10})[0].categories == ["<=2.0", "3.0+"]
    col, _ = merge_ordinal({"1.0": 10, "2.00": 10, "3": 1, "5.0": 10})
    assert col.categories == ["<=1.0", "2.00-4.00", "5.0+"]
    assert merge_ordinal({"66.0": 10, "67.0": 2, "70.0": 10})[0].categories == ["<=69.0", "70.0+"]


def test_ranges_are_placed_by_the_common_values_and_open_at_both_ends():
    assert merge_ordinal({0: 10, 1: 10, 2: 2, 5: 10})[0].categories == ["<=0", "1-4", "5+"]
    assert merge_ordinal({1: 40, 8: 3, 9: 30})[0].categories == ["<=8", "9+"]
    assert merge_ordinal({0: 2, 1: 30, 5: 30})[0].categories == ["<=4", "5+"]
    assert merge_ordinal({0: 40, 112: 30, 222: 1})[0].categories == ["<=111", "112+"]
    assert merge_ordinal({0: 40, 111: 30, 222: 1, 223: 2})[0].categories == ["<=110", "111+"]
    col, _ = merge_ordinal({0: 30, 1: 30, 2: 4, 3: 3, 4: 4, 5: 3, 6: 30})
    assert col.categories == ["<=0", "1-5", "6+"] and col.recode["1-5"] == ["1", "2", "3", "4", "5"]
    # ranges and open ranges as categories: one whose range is its own keeps its text ('27+', '<=4')
    col, _ = merge_ordinal({"0-11": 30, "12-14": 3, "15-17": 6, "18-23": 4, "24-26": 1, "27+": 20})
    assert col.categories == ["<=14", "15-26", "27+"]
    col, _ = merge_ordinal({"<=4": 30, "5-9": 2, "10-14": 30, "15+": 1})
    assert col.categories == ["<=9", "10+"] and col.recode == {"<=9": ["<=4", "5-9"], "10+": ["10-14", "15+"]}
    col, _ = merge_ordinal({"<=4": 30, "5-9": 30, "10-14": 2, "15+": 30})
    assert col.categories == ["<=4", "5-14", "15+"] and col.recode == {"5-14": ["5-9", "10-14"]}
    # a listed category without rows places nothing: it goes with the rare ones
    assert merge_ordinal({0: 30, 1: 0, 2: 2, 3: 30})[0].categories == ["<=2", "3+"]


def test_fewer_than_two_common_values_leave_the_column_rare():
    """Four values of 3 rows: no common value places a group; one common value: one group, no release."""
    for rows in ({1: 3, 2: 3, 3: 3, 4: 3}, {0: 30, 1: 2, 2: 0}, I_RVETSERV, I_AVAIL):
        col, changed = merge_ordinal(rows)
        assert not changed and col.categories == [str(v) for v in rows] and LEFT_RARE_NOTE in col.warnings, rows


def test_the_census_columns():
    col, _ = merge_ordinal(D_ANCSTRY1)  # was ['0', '1', '2-8', '9-10', '11']: '2-8' and '9-10' placed by rare 2, 10
    assert col.categories == ["<=0", "1-2", "3-8", "9-10", "11+"]
    check_integer_column({str(v): n for v, n in D_ANCSTRY1.items()}, col, True)
    for value in (4, 5, 6, 7):  # the record of 8 holding another value of the gap: the same codebook
        moved = {(value if v == 8 else v): n for v, n in D_ANCSTRY1.items()}
        assert merge_ordinal(moved)[0].categories == col.categories, value
    moved = {(12 if v == 10 else v): n for v, n in D_ANCSTRY1.items()}  # the rare 10 above the last common value
    assert merge_ordinal(dict(sorted(moved.items())))[0].categories == col.categories


def test_the_census_sample_merged_by_the_cli(tmp_path):
    cfg_path = tmp_path / "release.json"
    assert main(["schema", str(CENSUS), "-o", str(cfg_path), "--merge-rare"]) == 0
    columns = {c["name"]: c for c in json.loads(cfg_path.read_text())["columns"]}
    assert columns["dAncstry1"]["categories"] == ["<=0", "1-2", "3-8", "9-10", "11+"]
    assert columns["dAge"]["categories"] == ["<=2", "3", "4", "5", "6", "7+"]
    assert columns["iRemplpar"]["categories"] == ["<=110", "111-120", "121+"]
    for name in ("iRvetserv", "iAvail"):  # one common value: left rare, as they were
        assert columns[name]["categories"] == [str(v) for v in (I_RVETSERV if name == "iRvetserv" else I_AVAIL)]
        assert LEFT_RARE_NOTE in columns[name]["warnings"]
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
        check_integer_column({str(v): n for v, n in sorted(rows.items())}, col, True)
        assert not any(NEIGHBOURS_MARK in label for label in c["categories"])
        checked += 1
    assert checked > 30


def merge_text(rows: dict[str, int]) -> tuple[ColumnConfig, bool]:
    col = ColumnConfig(name="c", role="perturb", type="ordinal", epsilon=1.0, categories=list(rows))
    return merge_column(col, rows)


def test_text_labels_mark_every_group():
    col, _ = merge_text({"never": 40, "rarely": 2, "sometimes": 20, "often": 1, "always": 30})
    assert col.categories == ["never (and neighbours)", "sometimes (and neighbours)", "always (and neighbours)"]
    assert col.recode == {
        "never (and neighbours)": ["never", "rarely"],
        "sometimes (and neighbours)": ["sometimes", "often"],
        "always (and neighbours)": ["always"],
    }
    assert col.warnings[-1].endswith(f"into 'sometimes (and neighbours)' ({NEIGHBOURS_NOTE})")
    # the review's case: '-1 (and neighbours)' next to a plain '1' pinned the rare 0
    assert merge_text({"-1": 10, "0": 2, "1": 10})[0].categories == ["-1 (and neighbours)", "1 (and neighbours)"]
    assert merge_text({"-1": 10, "1": 10, "2": 2})[0].categories == ["-1 (and neighbours)", "1 (and neighbours)"]
    col, _ = merge_text({"low": 10, "mid": 2, "high": 8})  # was 'mid|high', then 'high (and neighbours)'
    assert col.categories == ["low (and neighbours)", "high (and neighbours)"]
    # rare categories below the first common one go to the first group
    col, _ = merge_text({"a": 3, "b": 3, "c": 30, "d": 30})
    assert col.categories == ["c (and neighbours)", "d (and neighbours)"]
    assert col.recode["c (and neighbours)"] == ["a", "b", "c"]
    # numbers with decimals are labelled as texts; a label that is a category of another group is numbered
    assert merge_text({"0.5": 10, "1.5": 2, "2.5": 10})[0].categories == [
        "0.5 (and neighbours)",
        "2.5 (and neighbours)",
    ]
    col, _ = merge_text({"x": 10, "y": 2, "x (and neighbours)": 10})
    assert col.categories == ["x (and neighbours) 2", "x (and neighbours) (and neighbours)"]
    assert col.recode == {
        "x (and neighbours) 2": ["x", "y"],
        "x (and neighbours) (and neighbours)": ["x (and neighbours)"],
    }
    col.validate()
    # nothing rare: nothing merged, no mark
    col, changed = merge_text({"low": 10, "high": 10})
    assert not changed and NEIGHBOURS_NOTE not in " ".join(col.warnings)
    # fewer than two common categories: left rare
    col, changed = merge_text({"low": 3, "mid": 30, "high": 2})
    assert not changed and col.categories == ["low", "mid", "high"] and LEFT_RARE_NOTE in col.warnings


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(counts=st.lists(st.integers(0, 200), min_size=2, max_size=10), data=st.data())
def test_text_labels_depend_only_on_the_common_categories(counts, data):
    rows = {f"level{i}": n for i, n in enumerate(counts)}
    col, changed = merge_text(rows)
    common = common_of(rows)
    if not any(is_rare(n) for n in counts) or len(common) < 2:
        assert not changed and col.categories == list(rows)
        assert (LEFT_RARE_NOTE in col.warnings) == any(is_rare(n) for n in counts)
        return
    assert changed and col.categories == [f"{c} {NEIGHBOURS_MARK}" for c in common]  # every group marked
    released = released_of(col)
    group = 0
    for k in rows:  # the nearest common category at or below, the first group for those below the first
        if group + 1 < len(common) and k == common[group + 1]:
            group += 1
        assert released[k] == f"{common[group]} {NEIGHBOURS_MARK}", (k, rows)
    totals: Counter = Counter()
    for k, n in rows.items():
        totals[released[k]] += n
    assert not any(is_rare(n) for n in totals.values()) and LEFT_RARE_NOTE not in col.warnings
    # the rare categories (and those without rows) renamed, moved and recounted: the same codebook
    others = data.draw(st.lists(st.integers(0, RARE_COUNT - 1), min_size=1, max_size=8))
    others[0] = data.draw(st.integers(1, RARE_COUNT - 1))
    places = data.draw(st.lists(st.integers(0, len(common)), min_size=len(others), max_size=len(others)))
    moved: dict[str, int] = {}
    for i, c in enumerate(["", *common]):
        if c:
            moved[c] = rows[c]
        moved.update({f"hidden{j}": n for j, (n, p) in enumerate(zip(others, places, strict=True)) if p == i})
    again, changed_again = merge_text(moved)
    assert changed_again and again.categories == col.categories, (rows, moved)


def test_missing_values_recoded_into_a_number_of_the_order_are_placed_like_it():
    """An adversarial review: with 'NA' recoded into '1', the value '1' was left out of the partition as the
    missing-value category and overlapped the first range ('1' beside '<=3'). It is now a value like the others;
    a separate missing-value category ('NA') is still never merged."""
    from optrr_engine.release.config import ColumnConfig
    from optrr_engine.release.merge_rare import merge_column

    into = ColumnConfig(name="x", role="perturb", type="ordinal", categories=["1", "2", "3", "4"],
                        missing="category", recode={"1": ["1", "NA"]})
    merged, changed = merge_column(into, {"1": 12, "2": 10, "3": 1, "4": 10})
    assert changed and merged.categories == ["<=1", "2-3", "4+"]
    assert merged.recode == {"<=1": ["1", "NA"], "2-3": ["2", "3"], "4+": ["4"]}
    apart = ColumnConfig(name="x", role="perturb", type="ordinal", categories=["1", "2", "3", "4", "NA"],
                         missing="category")
    merged, _ = merge_column(apart, {"1": 12, "2": 10, "3": 1, "4": 10, "NA": 7})
    assert merged.categories == ["<=1", "2-3", "4+", "NA"]
