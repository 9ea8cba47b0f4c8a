"""``optrr schema --merge-rare`` (optrr_engine.release.merge_rare): the rare categories of perturbed nominal columns
go into "Other", those of ordinal columns into the group of the nearest common category at or below them (ranges
placed by the common values, tests/test_merge_rare_labels.py), never the missing-value category, and a column keeps
two categories; perturb's refusal names at most 10 columns and this way out."""

import json
import os

from optrr_engine.cli.main import main
from optrr_engine.release.config import ColumnConfig, ReleaseConfig
from optrr_engine.release.merge_rare import (
    LEFT_RARE_NOTE,
    MERGED_NOTE_START,
    NEIGHBOURS_MARK,
    NEIGHBOURS_NOTE,
    OTHER_MERGED,
    merge_rare,
)
from optrr_engine.release.schema import RARE_WARNING_START, rare_refusal

CENSUS = os.path.join(os.path.dirname(__file__), "data", "uscensus1990_first99.csv")


def merged(kind: str, rows: dict, **fields) -> tuple[ColumnConfig, list[str]]:
    """Column 'c' of ``kind`` with the categories of ``rows`` (in that order) after merge_rare; the columns still
    rare."""
    categories = list(fields.pop("categories", rows))
    col = ColumnConfig(name="c", role="perturb", type=kind, epsilon=1.0, categories=list(categories), **fields)
    out = merge_rare(ReleaseConfig(columns=[col]), {"c": rows})
    assert (col.recode, col.categories) == (fields.get("recode"), categories)  # the configuration given is unchanged
    return out.config.columns[0], out.still_rare


def rare_warnings(col: ColumnConfig) -> list[str]:
    return [w for w in col.warnings if w.startswith(RARE_WARNING_START)]


def test_nominal_rare_categories_go_into_other_and_the_smallest_joins_while_it_is_rare():
    col, still = merged("nominal", {"A": 20, "B": 10, "C": 1, "D": 2, "E": 30})
    # 'B' has rows of its own: the label says it holds them (a reviewer saw 2,115 'Male' released as 'Other')
    assert col.recode == {"B or other": ["C", "D", "B"]}
    assert col.categories == ["A", "E", "B or other"]
    assert col.warnings == [
        "merged rare categories 'C' (1), 'D' (2) with 'B' (10) into 'B or other' (the label tells recipients that some "
        "rows hold another value: drop the column if even that must not be known)"
    ] and still == []
    col, _ = merged("nominal", {"A": 20, "B": 10, "C": 1, "D": 4, "E": 30})  # enough together: plain 'Other'
    assert col.recode == {"Other": ["C", "D"]}
    col.validate()


def test_the_category_count_warning_follows_the_merge():
    rows = {f"v{i:02}": 10 for i in range(33)} | {"v00": 1, "v01": 4}
    many = "33 categories: estimates will need many rows; consider merging"
    col, _ = merged("nominal", rows, warnings=[many])
    assert col.warnings == [
        "32 categories: estimates will need many rows; consider merging",
        "merged rare categories 'v00' (1), 'v01' (4) into 'Other'",
    ]
    col, _ = merged("nominal", {k: v for k, v in rows.items() if k < "v31"}, warnings=[many])
    assert not any("categories: estimates" in w for w in col.warnings)


def test_an_existing_other_takes_them_and_a_taken_other_gives_other_merged():
    col, _ = merged("nominal", {"A": 20, "Other": 8, "X": 1})
    assert col.recode == {"Other": ["Other", "X"]} and col.categories == ["A", "Other"]
    # the text "Other" is released as "Misc": the merged category must not share its name
    col, _ = merged("nominal", {"A": 20, "B": 10, "Misc": 30, "Z": 2, "Y": 3}, recode={"Misc": ["Other"]})
    assert col.recode == {"Misc": ["Other"], OTHER_MERGED: ["Z", "Y"]}
    assert col.categories == ["A", "B", "Misc", OTHER_MERGED]
    # "Other" is treated as missing
    col, _ = merged("nominal", {"A": 20, "B": 10, "Z": 2, "Y": 3, "NA": 6}, missing_values=["Other"])
    assert col.recode == {OTHER_MERGED: ["Z", "Y"]} and col.categories == ["A", "B", OTHER_MERGED, "NA"]


def test_ordinal_rare_categories_go_to_the_common_category_below_as_ranges():
    rows = {"0-11": 30, "12-14": 3, "15-17": 6, "18-23": 4, "24-26": 1, "27+": 20}
    col, still = merged("ordinal", rows)
    # the common '0-11', '15-17' and '27+' place the groups; the first is open below, the last open above
    assert col.recode == {"<=14": ["0-11", "12-14"], "15-26": ["15-17", "18-23", "24-26"]}
    assert col.categories == ["<=14", "15-26", "27+"]
    assert col.warnings == [
        "merged rare categories '12-14' (3) with '0-11' (30) into '<=14'; '24-26' (1), '18-23' (4) with '15-17' (6) "
        "into '15-26'"
    ]
    assert still == []
    col.validate()


def test_ordinal_labels_open_ranges_numbers_and_texts():
    col, _ = merged("ordinal", {"0-49": 30, "50-64": 3, "65+": 20})
    assert col.recode == {"<=64": ["0-49", "50-64"]} and col.categories == ["<=64", "65+"]
    col, _ = merged("ordinal", {"1": 10, "2": 2, "3": 10})  # the common value below takes it, whatever the rows
    assert col.recode == {"<=2": ["1", "2"], "3+": ["3"]} and col.categories == ["<=2", "3+"]
    # texts: every group named by its common category and marked, never by the rare one
    col, _ = merged("ordinal", {"low": 10, "mid": 2, "high": 8})
    assert col.recode == {"low (and neighbours)": ["low", "mid"], "high (and neighbours)": ["high"]}
    assert col.categories == ["low (and neighbours)", "high (and neighbours)"]
    assert col.warnings[-1].endswith(f"into 'low (and neighbours)' ({NEIGHBOURS_NOTE})")
    # not in increasing order ('2-3' after '3'): labelled as texts ('2|3' named the rare '2')
    col, _ = merged("ordinal", {"1": 10, "2": 2, "3": 8, "2-3": 9})
    assert col.recode == {
        f"1 {NEIGHBOURS_MARK}": ["1", "2"],
        f"3 {NEIGHBOURS_MARK}": ["3"],
        f"2-3 {NEIGHBOURS_MARK}": ["2-3"],
    }
    col.validate()


def test_a_rare_extreme_value_is_not_named_by_its_range():
    """A reviewer's census release published '112-222' where 222 was one record's value (the column's largest): the
    ranges are placed by the common values only, the first always open below and the last always open above
    (tests/test_merge_rare_labels.py)."""
    col, _ = merged("ordinal", {"0": 40, "112": 30, "222": 1})
    assert col.recode == {"<=111": ["0"], "112+": ["112", "222"]} and col.categories == ["<=111", "112+"]
    assert "'222' (1) with '112' (30) into '112+'" in col.warnings[0]  # the hospital's own note still says what
    col, _ = merged("ordinal", {"0": 2, "1": 30, "5": 30})
    assert col.recode == {"<=4": ["0", "1"], "5+": ["5"]} and col.categories == ["<=4", "5+"]
    col, _ = merged("ordinal", {"1-8": 3, "9-10": 30, "11-20": 30, "21-30": 4})
    assert col.categories == ["<=10", "11+"]  # '1-8' (3) goes to the first group, '21-30' (4) to the last
    col, _ = merged("ordinal", {"1": 40, "8": 30, "9": 30})  # nothing rare: no range at all
    assert col.recode is None and col.categories == ["1", "8", "9"]
    # an interior rare value: the common '1' takes it ('8-9' named the rare 8)
    col, _ = merged("ordinal", {"1": 40, "8": 3, "9": 30})
    assert col.categories == ["<=8", "9+"]
    col.validate()


def test_the_missing_value_category_is_never_merged_and_keeps_its_warning():
    rows = {"F": 30, "M": 30, "X": 2, "Y": 3, "NA": 2}
    col, still = merged("nominal", rows)
    assert col.recode == {"Other": ["X", "Y"]} and col.categories == ["F", "M", "Other", "NA"]
    assert rare_warnings(col) == [
        f"{RARE_WARNING_START} after recoding: 'NA' (2); the codebook lists every category, so their existence is "
        "disclosed - it is the missing-value category (a value is missing): allow it at release, or drop the column"
    ]  # not 'merge them or set them missing', which cannot apply to it
    assert LEFT_RARE_NOTE not in col.warnings and still == ["c"]
    col, _ = merged("ordinal", {"1": 30, "2": 20, "NA": 1, "3": 2}, categories=["1", "2", "NA", "3"])
    assert col.recode == {"<=1": ["1"], "2+": ["2", "3"]} and col.categories == ["<=1", "2+", "NA"]  # 3 unnamed
    col, _ = merged("ordinal", {"a": 30, "NA": 1, "b": 2, "c": 20})  # nor counted among the common categories
    assert col.categories == [f"a {NEIGHBOURS_MARK}", "NA", f"c {NEIGHBOURS_MARK}"]


def test_merging_never_leaves_one_category():
    col, still = merged("nominal", {"A": 50, "B": 2, "C": 1})  # "Other" stays rare: only 'A' is left besides it
    assert col.recode == {"Other": ["C", "B"]} and col.categories == ["A", "Other"]
    assert rare_warnings(col)[0].startswith(f"{RARE_WARNING_START} after recoding: 'Other' (3)")
    assert LEFT_RARE_NOTE in col.warnings and still == ["c"]
    for kind, rows in (
        ("nominal", {"A": 2, "B": 1, "NA": 30}),
        ("ordinal", {"0": 98, "1": 1}),
        ("ordinal", {"0": 98, "1": 1, "2": 4, "3": 0}),  # one common category: it could only be told apart by...
        ("ordinal", {"low": 3, "mid": 98, "high": 0, "top": 1}),  # ...a rare value or one without rows
    ):
        col, still = merged(kind, rows)
        assert col.recode is None and col.categories == list(rows), kind
        assert rare_warnings(col) and LEFT_RARE_NOTE in col.warnings and still == ["c"], kind


def test_the_schema_counts_empty_cells_in_na_and_never_merges_it(tmp_path, capsys):
    rows = [f"{'FM'[i % 2]},{i % 7}" for i in range(60)] + ["X,1", "X,2", "Y,3", "Y,4", "Y,5", ",6"]
    src = tmp_path / "in.csv"
    src.write_text("sex,code\n" + "\n".join(rows) + "\n")
    cfg = tmp_path / "release.json"
    assert main(["schema", str(src), "-o", str(cfg), "--merge-rare"]) == 0
    out = capsys.readouterr().out
    assert "merged rare categories in 1 column; rare categories left in 1 column ('sex'; see their notes)" in out
    sex = json.loads(cfg.read_text())["columns"][0]
    assert sex["recode"] == {"Other": ["X", "Y"]} and sex["categories"] == ["F", "M", "Other", "NA"]
    assert any("'NA' (1)" in w for w in sex["warnings"])


def test_census_sample_merged_then_released_without_allowing_rare_categories(tmp_path, capsys):
    cfg_path = tmp_path / "release.json"
    assert main(["schema", CENSUS, "-o", str(cfg_path), "--merge-rare"]) == 0
    summary = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("merged rare categories in "))
    cfg = json.loads(cfg_path.read_text())
    left = [c["name"] for c in cfg["columns"] if any(w == LEFT_RARE_NOTE for w in c.get("warnings", []))]
    assert left and f"rare categories left in {len(left)} columns ({', '.join(map(repr, left))};" in summary
    merged_count = sum(bool(c.get("recode")) for c in cfg["columns"])
    assert merged_count > 30 and summary.startswith(f"merged rare categories in {merged_count} columns;")
    (tmp_path / "audit").mkdir()
    args = ["perturb", CENSUS, "--config", str(cfg_path), "--quiet", "--audit-dir", str(tmp_path / "audit")]
    assert main([*args, "-o", str(tmp_path / "rel.csv")]) == 2  # refused for exactly the columns still rare
    err = capsys.readouterr().err
    assert f"would be released by name in {left[0]!r}" in err and f"and {len(left) - 10} more columns;" in err
    for c in cfg["columns"]:  # what the summary says to do with the columns still rare (two values, one rare)
        if c["name"] in left:
            c["role"] = "drop"
    cfg_path.write_text(json.dumps(cfg))
    assert main([*args, "-o", str(tmp_path / "rel.csv")]) == 0, capsys.readouterr().err
    text = (tmp_path / "rel.csv.manifest.json").read_text()
    manifest = json.loads(text)
    age = next(c for c in manifest["codebook"] if c["name"] == "dAge")
    assert age["categories"] == ["<=2", "3", "4", "5", "6", "7+"]  # '2' (4 rows) with '1'; '7' the last: open
    # the merge note names rare values with their rows: for the data owner (the configuration), never published
    notes = [w for c in cfg["columns"] for w in c.get("warnings", []) if w.startswith(MERGED_NOTE_START)]
    assert len(notes) == merged_count and "merged rare categories '2' (4) with '1' (20) into '<=2'" in notes
    assert MERGED_NOTE_START not in text and "warnings" not in text and "(4)" not in text and "' with '" not in text


def test_the_refusal_names_at_most_ten_columns_and_the_merge_rare_way_out():
    found = [(f"col{i}", [("x", 1)]) for i in range(13)]
    text = rare_refusal(found)
    assert "'col9': 'x' (1 row); and 3 more columns;" in text and "'col10'" not in text
    assert "`optrr schema INPUT -o CONFIG --merge-rare`" in text
    assert "drop the column" in text and "--allow-rare-categories" in text
    one = rare_refusal(found[:1])
    assert "more column" not in one and "--merge-rare" in one and "'col0': 'x' (1 row);" in one


def test_a_listed_category_without_rows_is_not_pulled_into_other():
    col, _still = merged("nominal", {"A": 50, "Z": 0, "B": 2, "C": 30})
    assert sorted(col.recode["C or other"]) == ["B", "C"]  # 'B' (2) with the smallest category with rows, not 'Z'
    assert col.categories == ["A", "Z", "C or other"]


def test_the_perturb_refusal_quotes_what_merge_rare_would_release_the_rare_value_as(tmp_path, capsys):
    """A reviewer's gender column: 'Other' (1 row) is the rare one, so --merge-rare does not make 'Other' but
    'Male or other' (the smallest category joins it); the refusal says so instead of promising 'Other'."""
    from optrr_engine.release.merge_rare import merged_labels

    data = tmp_path / "people.csv"
    rows = ["Female,1"] * 40 + ["Male,0"] * 30 + ["Other,1"] + ["Male,1"] * 9
    data.write_text("gender,smoker\n" + "\n".join(rows) + "\n")
    config = tmp_path / "r.json"
    assert main(["schema", str(data), "-o", str(config), "--quiet"]) == 0
    capsys.readouterr()
    code = main(["perturb", str(data), "--config", str(config), "-o", str(tmp_path / "out.csv"), "--quiet"])
    err = capsys.readouterr().err
    assert code != 0 and "'gender': 'Other' (1 row)" in err
    assert "--merge-rare` writes a new configuration, inferred from the file again, that merges them; on this " in err
    assert "configuration's columns: 'gender': 'Other' into 'Male or other'; or recode" in err
    assert "into 'Other'" not in err
    # the same code as --merge-rare itself: its configuration releases 'Other' as the label quoted
    cfg = json.loads(config.read_text())
    gender = ColumnConfig(**{k: v for k, v in cfg["columns"][0].items() if k != "warnings"})
    assert merged_labels(gender, {"Female": 40, "Male": 39, "Other": 1}) == {"Other": "Male or other",
                                                                              "Male": "Male or other"}
    merged_config = tmp_path / "m.json"
    assert main(["schema", str(data), "-o", str(merged_config), "--quiet", "--merge-rare"]) == 0
    merged_gender = json.loads(merged_config.read_text())["columns"][0]
    assert merged_gender["recode"] == {"Male or other": ["Other", "Male"]}


def test_the_refusal_without_the_merges_words_merge_rare_in_general_and_names_what_it_leaves():
    text = rare_refusal([("gender", [("Other", 1)])])
    assert "merges them: nominal: into one category with enough rows, 'Other' or, when the smallest other " \
        "categories must join it, named after them ('Male or other'); ordinal: into a neighbour; or recode by hand" \
        in text
    left = rare_refusal([("a", [("x", 1)]), ("b", [("y", 2)])], merges={"a": {"x": "z or other"}, "b": {}})
    assert "on this configuration's columns: 'a': 'x' into 'z or other', 'b' left as it is; or recode by hand" in left
