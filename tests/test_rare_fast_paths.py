"""The rare-category warning of a many-category column without needless work on the UI thread: the natural order's
flat string key (exactly the order of the nested key it replaced), the warning naming the first RARE_SHOWN without
sorting every rare category, the dropped column's extra rare warning computed only when needed, and the warnings
of the state before the last edit kept (an undo or redo of it recomputes none)."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from optrr_engine.release import schema
from optrr_engine.release.column_stats import ColumnSummary
from optrr_engine.release.schema import (
    DROPPED,
    RARE_SHOWN,
    RARE_WARNING_START,
    TOO_MANY,
    _alphabetical,
    rare_categories,
    rare_warning,
)
from optrr_gui.state import config_bridge
from optrr_gui.state.config_bridge import category_counts, column_warnings, set_summaries
from optrr_gui.state.session import ColumnState, SessionState

_DIGITS = re.compile(r"(\d+)")


def nested_key(v: str):
    """The natural order's key before it was flattened (the reference): digit runs as numbers, the rest
    case-insensitively, parts compared in turn; ties by the text itself."""
    parts = _DIGITS.split(v.casefold())
    return (tuple((0, int(p), "") if i % 2 else (1, 0, p) for i, p in enumerate(parts)), v)


def reference_rare(counts) -> list[tuple[str, int]]:
    rare = [(str(v), int(c)) for v, c in counts.items() if schema.is_rare(c)]
    rare.sort(key=lambda vc: (vc[1], nested_key(vc[0])))
    return rare


def reference_warning(counts, recoded: bool = False, missing: str | None = None) -> str | None:
    """The warning as it was written before (every rare category sorted, the first RARE_SHOWN named)."""
    rare = reference_rare(counts)
    if not rare:
        return None
    shown = ", ".join(f"{v!r} ({c})" for v, c in rare[:RARE_SHOWN])
    more = f" and {len(rare) - RARE_SHOWN} more" if len(rare) > RARE_SHOWN else ""
    after = " after recoding" if recoded else ""
    way_out = "merge them or set them missing"
    if missing is not None and all(v == missing for v, _c in rare):
        way_out = "it is the missing-value category (a value is missing): allow it at release, or drop the column"
    return (
        f"{RARE_WARNING_START}{after}: {shown}{more}; the codebook lists every category, so their existence is "
        f"disclosed - {way_out}"
    )


def sign(a, b) -> int:
    return (a > b) - (a < b)


#: Texts mixing letters of both cases, digits (leading zeros, other scripts' digits), the characters the flat key
#: escapes or ends its parts with, separators and any other unicode.
TEXTS = st.text(
    alphabet=st.one_of(
        st.sampled_from("aAbBzZ0123456789٠١٢٣९०\x00\x01\x02 -_.ßẞİıǅ"),
        st.characters(codec="utf-8"),
    ),
    max_size=12,
)
CASES = [
    "", "0", "00", "007", "7", "a", "A", "a0", "a00", "a1", "a01", "a1b", "ab", "a\x00", "a\x01", "a\x02", "\x00",
    "\x01", "\x00\x01", "\x01\x00", "5-9", "10-14", "٣", "3", "03", "x٣y", "ß", "SS", "ss", "C00001", "C1", "c1",
    "1a", "1", "1 ", "1\x00", "99999999999999999999", "100000000000000000000",
]


@settings(max_examples=2000, deadline=None)
@given(TEXTS, TEXTS)
@example("", "\x00")
@example("a", "a0")
@example("a\x00", "a0")
@example("a\x01", "a\x00\x00")
@example("a0", "a00")
@example("٣", "3")
def test_the_flat_key_orders_every_pair_as_the_nested_key(a, b):
    assert sign(_alphabetical(a), _alphabetical(b)) == sign(nested_key(a), nested_key(b))
    assert isinstance(_alphabetical(a), str)


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXTS, max_size=40))
def test_sorting_by_the_flat_key_gives_the_nested_keys_order(texts):
    assert sorted(texts, key=_alphabetical) == sorted(texts, key=nested_key)


def test_the_flat_key_on_hand_picked_texts():
    assert sorted(CASES, key=_alphabetical) == sorted(CASES, key=nested_key)
    for a in CASES:
        for b in CASES:
            assert sign(_alphabetical(a), _alphabetical(b)) == sign(nested_key(a), nested_key(b)), (a, b)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(TEXTS, st.integers(min_value=0, max_value=7), max_size=40), st.booleans())
def test_the_rare_list_and_warning_are_unchanged(counts, recoded):
    assert rare_categories(counts) == reference_rare(counts)
    missing = next(iter(counts), None)
    assert rare_warning(counts, recoded, missing) == reference_warning(counts, recoded, missing)


@pytest.mark.parametrize(
    "counts",
    [
        {},
        {"a": 5, "b": 7},
        {"10-14": 3, "5-9": 3, "b": 1, "common": 40, "none": 0},
        {f"C{i:05d}": 1 + i % 4 for i in range(3000)},  # more than RARE_SHOWN of each count
        {f"x{i}": 1 for i in range(RARE_SHOWN)},  # exactly RARE_SHOWN: no "and N more"
        {f"x{i}": 1 for i in range(RARE_SHOWN + 1)},
        {"Missing": 2, "a": 9},  # the missing-value category alone is rare
    ],
)
def test_the_warning_text_is_unchanged_on_examples(counts):
    for missing in (None, "Missing"):
        assert rare_warning(counts, missing=missing) == reference_warning(counts, missing=missing)
        assert rare_warning(counts, True, missing) == reference_warning(counts, True, missing)


def test_the_warning_never_sorts_every_rare_category(monkeypatch):
    """Naming the first RARE_SHOWN of 3,000 rare categories selects them; it does not sort the full list."""
    counts = {f"C{i:05d}": 1 + i % 4 for i in range(3000)}
    expected = reference_warning(counts)

    def refuse(*_a, **_k):
        raise AssertionError("the full list was sorted")

    monkeypatch.setattr(schema, "rare_categories", refuse)
    monkeypatch.setattr(schema, "listed_categories", refuse)
    assert rare_warning(counts) == expected


# -- the GUI's warnings of a column the schema dropped for its many categories, perturbed by the user -------------


def many_column() -> tuple[ColumnState, ColumnSummary]:
    values = [f"C{i:04d}" for i in range(60)]
    counts = [1 if i % 3 else 30 for i in range(60)]
    summary = ColumnSummary("icd", values, counts, missing=0)
    dropped = f"60 {TOO_MANY}{DROPPED} - merge categories to use it"
    col = ColumnState("icd", role="perturb", categories=list(values), warnings=[dropped])
    return col, summary


def test_the_dropped_columns_rare_warning_is_not_read_again_when_the_current_one_names_them(monkeypatch):
    col, summary = many_column()
    expected = column_warnings(col, 60, summary)
    assert sum(w.startswith(RARE_WARNING_START) for w in expected) == 1
    called = []
    monkeypatch.setattr(config_bridge, "read_rare", lambda *a: called.append(a) or "never shown")
    assert column_warnings(col, 60, summary) == expected
    assert called == []  # follow_state named the rare categories already


def test_the_dropped_columns_rare_warning_still_shows_when_the_current_one_has_none():
    col, summary = many_column()
    col.categories = None  # not listed: follow_state gives no rare warning, read_rare does
    warnings = column_warnings(col, None, summary)
    rare = [w for w in warnings if w.startswith(RARE_WARNING_START)]
    assert rare == [config_bridge.read_rare(col, summary)] and rare[0] is not None


def test_an_undo_and_a_redo_of_the_last_edit_recompute_no_warning(monkeypatch):
    col, summary = many_column()
    state = SessionState()
    state.load_columns(None, {}, [col], 60)
    set_summaries(state, {"icd": summary})
    before = category_counts(state).warnings
    grouped = {"recode": {"C0001": ["C0002"]}, "categories": [c for c in col.categories if c != "C0002"]}
    state.set_column_fields(0, grouped)
    after = category_counts(state).warnings
    assert after != before
    computed = []
    original = config_bridge.column_warnings
    monkeypatch.setattr(config_bridge, "column_warnings", lambda *a: computed.append(a[0].name) or original(*a))
    state.set_column_fields(0, {"recode": None, "categories": list(col.categories)})  # the undo
    assert category_counts(state).warnings == before
    assert computed == []
    state.set_column_fields(0, grouped)  # the redo
    assert category_counts(state).warnings == after
    assert computed == []
    # only the current and the last state's are kept
    state.set_column_fields(0, {"recode": None, "categories": list(col.categories)})
    assert category_counts(state).warnings == before and computed == []
    state.set_column_fields(0, {"recode": {"C0003": ["C0004"]}, "categories": list(col.categories[:-1])})
    category_counts(state)
    assert computed == ["icd"]
    cache = config_bridge._cache(state)
    assert len(cache.warnings) == 1 and len(cache.previous_warnings) == 1
