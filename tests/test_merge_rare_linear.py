"""Merging rare categories in one pass (recode.merge_many, merge_rare.merge_column): exactly what the former
quadratic code did, a merge per group. The former ``merge`` and ``merge_column`` loop are kept here, as they were,
as the reference (speed: bench/merge_rare.py, not timed here)."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optrr_engine.errors import InputError
from optrr_engine.release import merge_rare as mr
from optrr_engine.release import recode as rc
from optrr_engine.release.config import ColumnConfig
from optrr_engine.release.schema import many_categories_warning

# -- the reference: the code as it was before merge_many ---------------------------------------------------------


def _old_sources_of(label, recode, mapping):
    listed = list((recode or {}).get(label, []))
    if label in listed or mapping.get(label, label) != label:
        return listed
    return [label, *listed]


def old_merge(recode, categories, labels, new_label):
    labels = list(dict.fromkeys(str(x) for x in labels))
    if not labels:
        raise InputError("choose the categories to merge")
    position = {c: i for i, c in enumerate(categories)}
    missing = [x for x in labels if x not in position]
    if missing:
        raise InputError(f"{missing[0]!r} is not a category of this column")
    new_label = str(new_label).strip()
    if not new_label:
        raise InputError("the merged category needs a name")
    chosen = set(labels)
    if new_label in position and new_label not in chosen:
        raise InputError(f"{new_label!r} is already a category; merge it too or choose another name")
    recode = {k: list(v) for k, v in (recode or {}).items()}
    mapping = rc.source_map(recode)
    sources = {}
    for label in labels:
        for s in _old_sources_of(label, recode, mapping):
            sources[s] = None
        recode.pop(label, None)
    ordered = list(sources)
    if new_label in sources:
        ordered = [new_label, *[s for s in ordered if s != new_label]]
    if ordered != [new_label]:
        recode[new_label] = ordered
    first = min(position[x] for x in labels)
    out = [new_label if i == first else c for i, c in enumerate(categories) if i == first or c not in chosen]
    return {k: v for k, v in recode.items() if v and v != [k]}, out


def old_merge_column(col, rows):
    """merge_rare.merge_column as it was: a merge per group, the sets and counts rebuilt per group."""
    from dataclasses import replace

    missing = mr.missing_category(col)
    categories = [str(c) for c in col.categories or []]
    size = {c: int(rows.get(c, 0)) for c in categories}
    values = [c for c in categories if c != missing]
    if col.type == "ordinal" and missing in categories and mr._integer_spans(categories) is not None:
        values = categories
    marked = False
    if col.type == "ordinal":
        groups, marked = mr._ordinal_groups(values, size)
    else:
        groups = mr._nominal_groups(values, size, mr._other_label(col, categories, missing))
    if not groups:
        return replace(col, warnings=mr._warnings(col, [], size, recoded=bool(col.recode))), False
    recode, listed, parts, after = col.recode, categories, [], dict(size)
    for given_label, members in groups:
        label = given_label if col.type != "ordinal" else mr._free(given_label, set(listed) - set(members))
        recode, listed = old_merge(recode, listed, members, label)
        if len(members) > 1:
            part = mr._merged_part(members, size, label)
            if col.type != "ordinal" and label.endswith(" or other"):
                part += f" ({mr.OR_OTHER_NOTE})"
            parts.append(part)
        after = {c: n for c, n in after.items() if c not in members}
        after[label] = sum(size[m] for m in members)
    if marked:
        parts[-1] += f" ({mr.NEIGHBOURS_NOTE})"
    if col.type == "nominal":
        tail = [label] + [c for c in listed if c == missing]
        listed = [c for c in listed if c not in tail] + tail
    warnings = mr._warnings(col, [f"{mr.MERGED_NOTE_START} {'; '.join(parts)}"], after, recoded=True)
    return replace(col, categories=listed, recode=recode, warnings=warnings), True


def outcome(fn, *args):
    """What ``fn`` returns, exactly (dictionaries as their items, in order), or the error it raises."""
    try:
        recode, categories = fn(*args)
    except InputError as e:
        return ("error", str(e))
    return (list((k, list(v)) for k, v in recode.items()), categories)


def sequential(recode, categories, groups):
    for labels, new_label in groups:
        recode, categories = old_merge(recode, categories, labels, new_label)
    return recode, categories


# -- merge_many = merge after merge ---------------------------------------------------------------------------------

TEXTS = ["a", "b", "c", "d", "e", "Other", "M", "NA", "a (and neighbours)", " b ", ""]


@st.composite
def recodes(draw, names):
    """Any recode, valid or not: labels among the categories or not, texts that are categories, labels, the label
    itself (an identity entry), empty lists, a text under two labels."""
    if draw(st.booleans()):
        return None
    keys = draw(st.lists(st.sampled_from(names), max_size=5, unique=True))
    return {k: draw(st.lists(st.sampled_from(names), max_size=4)) for k in keys}


@st.composite
def merges(draw, disjoint: bool):
    categories = draw(st.lists(st.sampled_from(TEXTS[:-1]), min_size=1, max_size=9, unique=draw(st.booleans())))
    recode = draw(recodes(TEXTS[:-1] + ["x", "y"]))
    groups = []
    if disjoint:  # disjoint groups of the categories, named anything (a category, a member, a new text, blank)
        left = list(dict.fromkeys(categories))
        for _ in range(draw(st.integers(1, 4))):
            members = draw(st.lists(st.sampled_from(left), min_size=1, max_size=3, unique=True)) if left else []
            left = [c for c in left if c not in members]
            groups.append((members, draw(st.sampled_from([*TEXTS, "new", " new ", *members]))))
    else:  # anything: texts gone already, earlier groups' labels, empty groups
        for _ in range(draw(st.integers(1, 4))):
            groups.append((draw(st.lists(st.sampled_from([*TEXTS, "new"]), max_size=3)), draw(st.sampled_from(TEXTS))))
    return recode, categories, groups


def check_merge_many(recode, categories, groups):
    before = json.dumps([recode, categories, groups])
    expected = outcome(sequential, recode, categories, groups)
    assert outcome(rc.merge_many, recode, categories, groups) == expected
    assert json.dumps([recode, categories, groups]) == before  # the arguments are left unchanged
    if len(groups) == 1:
        assert outcome(rc.merge, recode, categories, *groups[0]) == expected
    return expected


@settings(max_examples=400, deadline=None)
@given(merges(disjoint=True))
def test_merge_many_equals_merging_each_disjoint_group_in_turn(case):
    check_merge_many(*case)


@settings(max_examples=300, deadline=None)
@given(merges(disjoint=False))
def test_merge_many_equals_merging_any_groups_in_turn_errors_included(case):
    check_merge_many(*case)


def test_merge_many_examples_and_errors():
    # a renamed "Other" frees the name; the merged label can take in earlier merges' labels
    groups = [(["v0"], "Other"), (["Other"], "M"), (["v1"], "Other"), (["M", "Other"], "All")]
    assert check_merge_many(None, ["v0", "v1", "v2"], groups) == ([("All", ["M", "Other", "v0", "v1"])], ["All", "v2"])
    # an identity entry in the recode given is tidied, as merge does
    assert check_merge_many({"a": ["a"], "b": []}, ["a", "b", "c"], [(["c"], "C")]) == ([("C", ["c"])], ["a", "b", "C"])
    # a later merge of texts all recoded elsewhere leaves an empty entry, tidied away as merge does
    assert check_merge_many({"X": ["m"]}, ["X", "m", "c"], [(["c"], "C"), (["m"], "M")]) == (
        [("X", ["m"]), ("C", ["c"])],
        ["X", "M", "C"],
    )
    # the first group merge would refuse gives its error, later groups are not looked at
    for groups, error in [
        ([(["a"], "A"), (["a"], "B")], "'a' is not a category of this column"),
        ([(["a"], "A"), ([], "B")], "choose the categories to merge"),
        ([(["a"], "A"), (["b"], " ")], "the merged category needs a name"),
        ([(["a"], "A"), (["b"], "A")], "'A' is already a category; merge it too or choose another name"),
    ]:
        assert check_merge_many(None, ["a", "b", "c"], groups) == ("error", error)
        with pytest.raises(InputError, match=error):
            rc.merge_many(None, ["a", "b", "c"], groups)
    with pytest.raises(InputError, match="choose the categories to merge"):
        rc.merge_many(None, ["a", "b"], [])


# -- merge_column = the former loop ---------------------------------------------------------------------------------


def ordinal(categories, **fields):
    return ColumnConfig(name="c", role="perturb", type="ordinal", epsilon=1.0, categories=list(categories), **fields)


def nominal(categories, **fields):
    return ColumnConfig(name="c", role="perturb", type="nominal", epsilon=1.0, categories=list(categories), **fields)


def rows_of(n, common_every=3):
    """Rows of n categories: every ``common_every``-th has 20 (an anchor), the others 0-4 (most rare)."""
    return [20 if i % common_every == 0 else i % 5 for i in range(n)]


def check_merge_column(col, rows):
    before = json.dumps(col.to_dict())
    new, changed = mr.merge_column(col, rows)
    ref, ref_changed = old_merge_column(col, rows)
    assert changed == ref_changed
    assert new == ref
    assert json.dumps(new.to_dict()) == json.dumps(ref.to_dict())  # byte for byte: the order of recode's labels too
    assert json.dumps(col.to_dict()) == before
    return new


def integer_column(n):
    names = [str(i) for i in range(n)]
    return ordinal(names, missing="exclude"), dict(zip(names, rows_of(n), strict=True))


@pytest.mark.parametrize(
    "col, rows",
    [
        integer_column(300),
        integer_column(2),
        # padded numbers, ranges and open ends; a rare first and last category
        (
            ordinal(["<=3", "04", "05", "06-07", "08", "09", "10+"], missing="exclude"),
            {"<=3": 2, "04": 30, "05": 1, "06-07": 9, "08": 0, "09": 12, "10+": 1},
        ),
        # the missing values recoded into a number of the order, and a missing-value category of its own
        (
            ordinal(["1", "2", "3", "4"], missing="category", recode={"1": ["1", "NA"]}),
            {"1": 12, "2": 10, "3": 1, "4": 10},
        ),
        (ordinal(["1", "2", "3", "4", "NA"], missing="category"), {"1": 12, "2": 10, "3": 1, "4": 10, "NA": 2}),
        # texts: every group marked, and a label that is already a category is numbered
        (
            ordinal(["a", "a (and neighbours)", "b", "c", "d", "b (and neighbours)", "e"], missing="exclude"),
            {"a": 9, "a (and neighbours)": 1, "b": 7, "c": 2, "d": 8, "b (and neighbours)": 3, "e": 6},
        ),
        (
            ordinal(
                [f"level {i}" for i in range(200)],
                missing="exclude",
                warnings=[many_categories_warning(200), "a warning of its own"],
            ),
            {f"level {i}": n for i, n in enumerate(rows_of(200, common_every=4))},
        ),
        # an existing recode folded into the groups
        (
            ordinal(["low", "mid", "high", "top"], missing="exclude", recode={"low": ["l", "L"], "top": ["t"]}),
            {"low": 10, "mid": 2, "high": 10, "top": 3},
        ),
        # nominal: into Other, into the existing Other, "Other (merged)", a real category taking the rare ones in
        (
            nominal([f"v{i:03}" for i in range(300)], missing="exclude", warnings=[many_categories_warning(300)]),
            {f"v{i:03}": n for i, n in enumerate(rows_of(300))},
        ),
        (nominal(["A", "Other", "B", "C", "NA"]), {"A": 20, "Other": 3, "B": 1, "C": 30, "NA": 2}),
        (nominal(["A", "M", "B", "C"], recode={"M": ["Other"]}), {"A": 20, "M": 9, "B": 1, "C": 30}),
        (nominal(["A", "B", "C", "D", "E"]), {"A": 20, "B": 10, "C": 1, "D": 2, "E": 30}),
        # nothing rare; too few anchors (left rare)
        (nominal(["A", "B"]), {"A": 20, "B": 10}),
        (ordinal(["1", "2", "3"], missing="exclude"), {"1": 20, "2": 1, "3": 2}),
    ],
)
def test_merge_column_gives_what_the_merge_per_group_gave(col, rows):
    check_merge_column(col, rows)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["ordinal int", "ordinal text", "nominal"]),
    st.lists(st.integers(0, 25), min_size=1, max_size=40),
    st.sampled_from([None, "category", "exclude"]),
    st.data(),
)
def test_merge_column_equals_the_former_loop_on_random_columns(kind, counts, missing, data):
    if kind == "ordinal int":
        names = [str(i) for i in range(len(counts))]
    else:  # some texts are another's label ("t1 (and neighbours)"), or "Other", "Other (merged)", "NA"
        names = [f"t{i}" for i in range(len(counts))]
        for i in range(len(names)):
            names[i] = data.draw(
                st.sampled_from([*[names[i]] * 3, f"t{i // 2} {mr.NEIGHBOURS_MARK}", "Other", mr.OTHER_MERGED, "NA"])
            )
        names = list(dict.fromkeys(names))
    rows = dict(zip(names, counts, strict=False))
    fields: dict = {"missing": missing or "category"}
    if data.draw(st.booleans()):  # "Other" recoded to another label
        fields["recode"] = {names[0]: ["Other"]} if names[0] != "Other" else None
    if missing == "category" and "NA" not in names:
        names.append("NA")
        rows["NA"] = counts[-1] % 7
    col = (ordinal if kind.startswith("ordinal") else nominal)(names, **fields)
    check_merge_column(col, rows)
