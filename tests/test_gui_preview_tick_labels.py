"""The Release preview's category names under the bars (optrr_gui.compare.view.tick_labels): at 1280 px a
column of 11 age groups showed "1…", "2…", "3…" under its bars; now every other name is shown in full."""

from __future__ import annotations

from optrr_gui.compare.view import MAX_LABEL_STEP, tick_labels

GROUPS = ["0-4", "5-9", "10-14", "15-19", "20-24", "25-29", "30-34", "35-39", "40-44", "45-49", "50-54"]


def test_names_that_fit_are_all_shown(qapp):
    assert tick_labels(GROUPS, 200) == tuple(GROUPS)


def test_names_too_wide_for_one_bar_are_shown_in_full_under_every_other_bar(qapp):
    shown = tick_labels(GROUPS, 26)  # the room of a bar of tumor-size in the 1280-px window
    assert "…" not in "".join(shown)
    assert [t for t in shown if t] == GROUPS[::2] and all(t == "" for t in shown[1::2])


def test_names_far_too_wide_are_shortened_only_beyond_the_largest_step(qapp):
    long = [f"a category named at length {i}" for i in range(6)]
    shown = tick_labels(long, 20)
    assert [i for i, t in enumerate(shown) if t] == list(range(0, 6, MAX_LABEL_STEP))
    assert all(t.endswith("…") for t in shown if t)
