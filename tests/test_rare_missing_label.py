"""The rare-category advice on the missing-value category follows the column's own missing-value category
(``missing_category``: its ``missing_label`` after recoding, none with ``missing: exclude``), not the text 'NA': a
rare 'Unknown' that holds the missing values is not to be merged, and a rare text 'NA' that is a value is."""

from __future__ import annotations

import pytest

from optrr_engine.release.column_stats import ColumnSummary
from optrr_engine.release.config import ColumnConfig, ReleaseConfig
from optrr_engine.release.merge_rare import merge_column
from optrr_engine.release.perturb import PublishRefusal, perturb_file
from optrr_engine.release.schema import RARE_WARNING_START
from optrr_gui.state.config_bridge import column_warnings
from optrr_gui.state.session import ColumnState

#: the way out of a rare-category warning whose only rare category is the column's missing-value category
MISSING_WAY_OUT = "it is the missing-value category (a value is missing)"
MERGE_WAY_OUT = "merge them or set them missing"


def ward_file(tmp_path, grade_na: int = 0) -> str:
    """60 rows: 'ward' empty in rows 0-1 (its missing values: 2 rows), 'p' or 'q' otherwise; 'grade' the text 'NA'
    (a value, not a missing one) in the first ``grade_na`` rows, 'Y' or 'Z' otherwise."""
    rows = [
        f"{'' if i < 2 else 'pq'[i % 2]},{'NA' if i < grade_na else 'YZ'[i % 2]}" for i in range(60)
    ]
    path = tmp_path / "ward.csv"
    path.write_text("ward,grade\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return str(path)


def ward_config(grade_na: bool) -> ReleaseConfig:
    """'ward' with its missing values in the category 'Unknown'; 'grade' (with its text 'NA' listed when
    ``grade_na``) leaving rows with a missing value out: it has no missing-value category."""
    ward = ColumnConfig(
        name="ward", role="perturb", epsilon=1.0, categories=["p", "q", "Unknown"], missing_label="Unknown"
    )
    grade = ColumnConfig(
        name="grade", role="perturb", epsilon=1.0, categories=["Y", "Z", *(["NA"] if grade_na else [])],
        missing="exclude",
    )
    return ReleaseConfig(method="kronecker", columns=[ward, grade])


def refusal(tmp_path, grade_na: int) -> str:
    with pytest.raises(PublishRefusal) as refused:
        perturb_file(ward_file(tmp_path, grade_na), ward_config(bool(grade_na)), tmp_path / "out.csv")
    return str(refused.value)


def test_perturb_names_the_columns_own_missing_value_category(tmp_path, audit_dir):
    text = refusal(tmp_path, 0)
    assert "'ward': 'Unknown' (2 rows)" in text
    assert "'Unknown' is the missing-value category: it only says that a value is missing" in text
    assert "--merge-rare" not in text and "missing values with" not in text


def test_perturb_offers_to_merge_a_rare_text_na_that_is_a_value(tmp_path, audit_dir):
    text = refusal(tmp_path, 3)
    assert "'grade': 'NA' (3 rows)" in text and "'ward': 'Unknown' (2 rows)" in text
    assert "('Unknown', the missing-value category, only says that a value is missing and is not merged" in text
    assert "'NA', the missing-value category" not in text and "'NA' and" not in text
    assert "--merge-rare" in text


def test_the_schema_rule_after_merging_names_the_missing_value_category_by_its_label():
    ward = ColumnConfig(name="ward", role="perturb", categories=["p", "q", "Unknown"], missing_label="Unknown")
    merged, changed = merge_column(ward, {"p": 30, "q": 28, "Unknown": 2})
    assert not changed  # the missing-value category is never merged
    (rare,) = [w for w in merged.warnings if w.startswith(RARE_WARNING_START)]
    assert "'Unknown' (2)" in rare and rare.endswith(MISSING_WAY_OUT + ": allow it at release, or drop the column")


def summary(values: dict[str, int], missing: int) -> ColumnSummary:
    return ColumnSummary("ward", list(values), list(values.values()), missing=missing)


def rare_of(col: ColumnState, rows: ColumnSummary) -> str:
    (rare,) = [w for w in column_warnings(col, len(col.categories or []), rows) if w.startswith(RARE_WARNING_START)]
    return rare


def test_the_window_follows_the_missing_label_too():
    col = ColumnState("ward", categories=["p", "q", "Unknown"], missing_label="Unknown")
    rare = rare_of(col, summary({"p": 30, "q": 28}, missing=2))
    assert "'Unknown' (2)" in rare and MISSING_WAY_OUT in rare
    # a text 'NA' that is a value of the column: merge it (with missing values excluded, it is no missing category)
    col = ColumnState("ward", categories=["p", "q", "NA"], missing="exclude")
    rare = rare_of(col, summary({"p": 30, "q": 28, "NA": 2}, missing=0))
    assert "'NA' (2)" in rare and MERGE_WAY_OUT in rare and MISSING_WAY_OUT not in rare
