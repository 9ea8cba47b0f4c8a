"""``ColumnCodec.released_labels``: the label each source text is released as, by the codec's own rule (missing-value
texts, recodes, bins, listed categories), with a preview wording for bins whose edges are computed at release time.
The Data tab's "Released as" column calls it (one rule, in the engine): the view follows the codec."""

from __future__ import annotations

import math

import pytest

from optrr_engine.errors import InputError
from optrr_engine.release.codec import BIN_AT_RELEASE, ROW_LEFT_OUT, ColumnCodec
from optrr_engine.release.column_stats import OUTSIDE_BINS, ColumnSummary
from optrr_engine.release.config import ColumnConfig

EDGES = [-math.inf, 18.0, 65.0, math.inf]


def column(categories=None, **kw) -> ColumnConfig:
    """A perturbed column's configuration, validated as a release validates it (once its categories are known)."""
    cfg = ColumnConfig(name="c", role="perturb", epsilon=1.0, categories=categories, **kw)
    if categories is not None:
        cfg.validate()
    return cfg


def age(**kw) -> ColumnConfig:
    kw.setdefault("bins", {"method": "edges", "edges": EDGES})
    kw.setdefault("categories", ["?", "NA"])
    return column(type="numeric", **kw)


def encoded_labels(codec: ColumnCodec, texts: list[str]) -> list[str]:
    """What the release writes for each text: encode, then the labels of the codes."""
    import pyarrow as pa

    codes, excluded = codec.encode(pa.chunked_array([pa.array(texts, type=pa.string())]))
    return [ROW_LEFT_OUT if x else codec.labels[c] for c, x in zip(codes.tolist(), excluded.tolist(), strict=True)]


# -- each kind of text ------------------------------------------------------------------------------------------


def test_missing_value_texts_are_released_as_the_missing_category_or_leave_the_row_out():
    codec = ColumnCodec(column(["F", "M", "NA"], missing_values=["?", "-"]))
    assert codec.released_labels(["?", "-", "F"]) == ["NA", "NA", "F"]
    recoded = ColumnCodec(column(["F", "M", "Unknown"], missing_values=["?"], recode={"Unknown": ["NA"]}))
    assert recoded.released_labels(["?", "F"]) == ["Unknown", "F"]  # the missing label follows the recoding
    excluded = ColumnCodec(column(["F", "M"], missing_values=["?"], missing="exclude"))
    assert excluded.released_labels(["?", "M"]) == [ROW_LEFT_OUT, "M"]
    numeric = ColumnCodec(age(missing_values=["-9"]))
    assert numeric.released_labels(["-9", "30"]) == ["NA", "[18, 65)"]  # a missing "-9" is not binned


def test_recoded_texts_are_released_as_their_label_before_any_bin():
    codec = ColumnCodec(column(["Female", "M"], recode={"Female": ["F", "f"]}))
    assert codec.released_labels(["F", "f", "M"]) == ["Female", "Female", "M"]
    numeric = ColumnCodec(age(categories=["?", "NA", "refused"], recode={"refused": ["-1"]}))
    assert numeric.released_labels(["-1", "-2"]) == ["refused", "< 18"]  # recoded before it is read as a number
    # a recode label the categories lack: the release refuses it, the preview still says where the text goes
    unlisted = ColumnCodec(column(None, recode={"Other": ["x"]}), check=False)
    assert unlisted.released_labels(["x", "F"]) == ["Other", "F"]
    strict = ColumnCodec(ColumnConfig(name="c", role="perturb", categories=["F", "M"], recode={"Other": ["x"]}))
    with pytest.raises(InputError, match="recode label 'Other' is not among its categories"):
        strict.not_listed(["x"])


def test_numbers_are_released_as_their_bin_once_the_edges_exist():
    codec = ColumnCodec(age())
    assert codec.released_labels(["3", "18", "64.5", "80"]) == ["< 18", "[18, 65)", "[18, 65)", ">= 65"]
    comma = ColumnCodec(age(), decimal=",")
    assert comma.released_labels(["17,5", "18,0", "1e2"]) == ["< 18", "[18, 65)", ">= 65"]
    closed = ColumnCodec(age(bins={"method": "edges", "edges": [0, 10, 20]}))
    assert closed.released_labels(["25", "5"]) == [OUTSIDE_BINS, "[0, 10)"]  # (the release refuses 25)
    with pytest.raises(InputError, match="outside its bin edges"):
        closed.not_listed(["25"])


def test_numbers_before_the_edges_are_computed_say_so_and_the_release_still_needs_edges():
    pending = age(bins={"method": "quantile", "count": 4})
    with pytest.raises(InputError, match="numeric bins need edges"):
        ColumnCodec(pending)
    preview = ColumnCodec(pending, check=False)
    assert preview.edges is None and preview.labels == ["?", "NA"]
    assert preview.released_labels(["78", "0.08", "?", "note"]) == [BIN_AT_RELEASE, BIN_AT_RELEASE, "?", "NA"]
    with pytest.raises(InputError, match="numeric bins need edges"):
        preview.not_listed(["78"])  # a preview never encodes


def test_listed_categories_are_themselves_and_unlisted_texts_are_missing_or_refused():
    numeric = ColumnCodec(age())
    assert numeric.released_labels(["?", "see notes"]) == ["?", "NA"]  # unlisted in a numeric column: missing
    assert ColumnCodec(age(missing="exclude")).released_labels(["see notes"]) == [ROW_LEFT_OUT]
    nominal = ColumnCodec(column(["F", "M"]))
    assert nominal.released_labels(["F", "X"]) == ["F", "X"]  # X: the release refuses it (not_listed says so)
    assert nominal.not_listed(["F", "X"]) == ["X"]
    # a preview of a column whose categories are not known yet: every text is itself
    assert ColumnCodec(column(None), check=False).released_labels(["a", "b"]) == ["a", "b"]


def test_the_labels_are_what_the_release_writes():
    """For every text the release accepts, released_labels is what encode + the labels give (one rule)."""
    cfg = age(
        categories=["?", "Unknown", "refused"],
        missing_values=["-9", "."],
        recode={"Unknown": ["NA"], "refused": ["-1", "no"]},
    )
    texts = ["3", "18", "64,5", "80", "-9", ".", "-1", "no", "?", "see notes", "-2"]
    for missing in ("category", "exclude"):
        cfg.missing = missing
        codec = ColumnCodec(cfg, decimal=",")
        assert codec.released_labels(texts) == encoded_labels(codec, texts)
    nominal = ColumnCodec(column(["F", "M", "NA"], missing_values=["?"], recode={"F": ["f", "female"]}))
    texts = ["F", "f", "female", "M", "?"]
    assert nominal.released_labels(texts) == encoded_labels(nominal, texts)


# -- the Data tab's "Released as" follows the codec --------------------------------------------------------------


def released_column(view) -> dict[str, str]:
    m = view.model
    return {m.index(r, 0).data(): m.index(r, 3).data() for r in range(m.rowCount())}


def test_the_view_shows_what_the_codec_says(qtbot, monkeypatch):
    """Cases the view's own rule got wrong: a recoded missing label, a nominal column's missing-value text; and a
    codec that answers differently is shown as it answers."""
    from optrr_gui.data.summary_view import ColumnSummaryView
    from optrr_gui.state.session import ColumnState

    view = ColumnSummaryView()
    qtbot.addWidget(view)
    summary = ColumnSummary("age", ["78", "12", "?", "-9", "see notes"], [40, 30, 8, 6, 5], 0, ".")
    col = ColumnState(
        name="age", role="perturb", type="numeric", bins={"method": "edges", "edges": EDGES},
        categories=["?", "Unknown"], missing_values=["-9"], recode={"Unknown": ["NA"]},
    )
    view.show_summary(summary, col)
    released = released_column(view)
    assert released == {"78": ">= 65", "12": "< 18", "?": "?", "-9": "Unknown", "see notes": "Unknown"}
    assert list(released.values()) == ColumnCodec(ColumnConfig(**col.copied_fields())).released_labels(
        summary.values
    )
    # a nominal column: its missing-value text is released as the missing category (it showed "?")
    sex = ColumnSummary("sex", ["F", "M", "?"], [50, 40, 9], 0, ".")
    view.show_summary(sex, ColumnState(name="sex", role="perturb", categories=["F", "M", "NA"], missing_values=["?"]))
    assert released_column(view) == {"F": "F", "M": "M", "?": "NA"}
    # a kept column is copied with its recoding only (no missing values, no bins)
    kept = ColumnState(name="sex", role="keep", categories=["F", "M", "NA"], missing_values=["?"],
                       recode={"Male": ["M"]})
    view.show_summary(sex, kept)
    assert released_column(view) == {"F": "F", "M": "Male", "?": "?"}
    # change the codec's rule: the view follows it
    original = ColumnCodec.released_labels
    monkeypatch.setattr(ColumnCodec, "released_labels", lambda self, texts: [f"<{t}>" for t in original(self, texts)])
    view.show_summary(summary, col)
    assert released_column(view)["78"] == "<>= 65>" and released_column(view)["-9"] == "<Unknown>"



def test_a_kept_numeric_column_is_neither_binned_in_released_as_nor_in_its_title(qtbot):
    """A kept column is copied with its recoding only: its numbers are released as they are, and the title and
    the bins line do not speak of bins."""
    from optrr_gui.data.summary_view import ColumnSummaryView
    from optrr_gui.state.session import ColumnState

    view = ColumnSummaryView()
    qtbot.addWidget(view)
    summary = ColumnSummary("age", ["78", "12", "-9"], [40, 30, 6], 0, ".")
    perturbed = ColumnState(name="age", role="perturb", type="numeric", bins={"method": "edges", "edges": EDGES},
                            categories=["Unknown"], missing_values=["-9"], recode={})
    view.show_summary(summary, perturbed)
    assert released_column(view) == {"78": ">= 65", "12": "< 18", "-9": "NA"}  # (the default missing label)
    # the bins line counts rows as released: the missing-value text "-9" is not in the bin "< 18"
    assert view.bins_text.text().startswith("Release bins (red lines): < 18: 30 (43%); [18, 65): 0 (0%); >= 65: 40")
    kept = ColumnState(name="age", role="keep", type="numeric", bins={"method": "edges", "edges": EDGES},
                       categories=["Unknown"], missing_values=["-9"], recode={"unknown": ["-9"]})
    view.show_summary(summary, kept)
    assert released_column(view) == {"78": "78", "12": "12", "-9": "unknown"}
    assert "bin" not in view.title.text().lower() and view.bins_text.text() == ""


def test_the_bins_line_names_numbers_outside_the_edges(qtbot):
    from optrr_gui.data.summary_view import ColumnSummaryView
    from optrr_gui.state.session import ColumnState

    view = ColumnSummaryView()
    qtbot.addWidget(view)
    summary = ColumnSummary("age", ["30", "130", "-9"], [10, 2, 3], 0, ".")
    col = ColumnState(name="age", role="perturb", type="numeric", bins={"method": "edges", "edges": [0, 50, 120]},
                      categories=[], missing_values=["-9"], recode={})
    view.show_summary(summary, col)
    assert released_column(view)["130"] == OUTSIDE_BINS
    assert view.bins_text.text() == (
        "Release bins (red lines): [0, 50): 10 (83%); [50, 120]: 0 (0%); 2 numbers outside the edges "
        "(the release would stop: widen them). Percentages of the 12 rows with a number (not of all rows)."
    )
