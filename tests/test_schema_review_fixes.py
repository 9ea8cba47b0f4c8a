"""Review fixes of the schema: free text found by a column's name or by any long value (never copied into the
configuration), values that differ only by spaces, case or number format named in a warning, column names that
differ only by surrounding spaces refused (a leading space warned about), and SPSS / Stata value labels listed in
the order of their codes, with unlabelled codes, user-missing values and blank strings handled."""

import json

import numpy as np
import pandas as pd
import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.io.readers import open_source
from optrr_engine.release.config import ReleaseConfig
from optrr_engine.release.schema import DROPPED, infer_schema


def by_name(cfg):
    return {c.name: c for c in cfg.columns}


def write_csv(path, columns: dict) -> None:
    pd.DataFrame(columns).to_csv(path, index=False)


def cycle(values, n=60):
    return [values[i % len(values)] for i in range(n)]


# -- 1. free text ----------------------------------------------------------------------------------------------


FREE_TEXT_NAMES = [
    "comment",
    "Comments",
    "patient_note",
    "Notes",
    "remarks",
    "free text",
    "freeText",
    "description",
    "Bemerkung",
    "Kommentar",
    "Notiz",
    "Anmerkungen",
    "Arztbemerkung",
    "commentaire",
    "remarque",
    "observación",
    "comentario",
]
NOT_FREE_TEXT_NAMES = ["denote", "keynote", "comment_type", "has_notes", "note_count", "remarkable", "descriptive"]


def test_free_text_names_are_dropped_by_whole_words_and_their_values_are_not_copied(tmp_path):
    path = tmp_path / "names.csv"
    values = cycle(["nothing", "call back"])
    write_csv(path, {name: values for name in FREE_TEXT_NAMES + NOT_FREE_TEXT_NAMES})
    cols = by_name(infer_schema(path))
    for name in FREE_TEXT_NAMES:
        assert cols[name].role == "drop", name
        assert cols[name].categories is None
        assert cols[name].warnings[0].startswith(f"likely free text (its name){DROPPED} - "), name
    for name in NOT_FREE_TEXT_NAMES:
        assert cols[name].role == "perturb", name
        assert cols[name].categories == ["call back", "nothing"]
    cfg_text = json.dumps(infer_schema(path).to_dict())
    assert "nothing" in cfg_text  # from the columns judged by their values
    # notebook_id is no free text by its name (the identifier rule drops it for its name)
    write_csv(tmp_path / "nb.csv", {"notebook_id": values})
    warning = by_name(infer_schema(tmp_path / "nb.csv"))["notebook_id"].warnings[0]
    assert warning.startswith("likely identifier (its name)")


def test_a_few_long_texts_among_short_values_drop_the_column_without_copying_them(tmp_path):
    path = tmp_path / "longcell.csv"
    code = cycle(["A", "B", "C"], 100)
    code[5] = code[50] = "Patient Müller, call back"
    code[70] = "x" * 41  # one long word
    write_csv(
        path,
        {
            "code": code,
            "job": cycle(["Self-employed", "Private practice", "Retired"], 100),
            "smoking": cycle(["Never smoked", "Smoker", "Former smoker"], 100),
            "opinion": cycle(["Agree", "Neither agree nor disagree", "Disagree"], 100),  # a survey's label
        },
    )
    cfg = infer_schema(path)
    cols = by_name(cfg)
    assert cols["code"].role == "drop" and cols["code"].categories == ["A", "B", "C"]
    assert cols["code"].warnings == [
        f"likely free text (2 values of 3 or more words or over 40 characters in fewer than 5 rows each, not copied "
        f"here){DROPPED} - set role to perturb only if they are category labels (the other values are listed as "
        "categories; perturb names the long ones to add or recode)"
    ]
    assert "Müller" not in json.dumps(cfg.to_dict())
    assert cols["job"].role == "perturb" and cols["job"].categories == ["Private practice", "Retired", "Self-employed"]
    assert cols["smoking"].role == "perturb" and cols["smoking"].warnings == []
    assert cols["opinion"].role == "perturb" and cols["opinion"].warnings == []  # long, but in many rows: a label


def test_a_label_column_dropped_for_one_long_value_lists_its_other_values_and_perturb_names_the_long_one(
    tmp_path, capsys
):
    """A diagnosis column with one rare long label: dropped, its other values listed, so setting role perturb needs
    no typing; perturb then names the long value (never copied into the configuration) to add or recode."""
    path = tmp_path / "diag.csv"
    diag = cycle(["asthma", "covid", "flu"], 200)
    diag[7] = "chronic obstructive pulmonary disease"
    write_csv(path, {"diag": diag, "sex": cycle(["M", "F"], 200)})
    cfg_path = tmp_path / "c.json"
    assert main(["schema", str(path), "-o", str(cfg_path), "--quiet"]) == 0
    cfg = json.loads(cfg_path.read_text())
    col = cfg["columns"][0]
    assert col["role"] == "drop" and col["categories"] == ["asthma", "covid", "flu"]
    assert "chronic" not in cfg_path.read_text()
    col["role"] = "perturb"
    cfg_path.write_text(json.dumps(cfg))
    capsys.readouterr()
    assert main(["perturb", str(path), "--config", str(cfg_path), "-o", str(tmp_path / "r.csv"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "'chronic obstructive pulmonary disease' (in data row 8); add them to its categories (or recode" in err
    assert not (tmp_path / "r.csv").exists()


# -- 2. near-duplicate values and names --------------------------------------------------------------------


def test_values_that_differ_only_by_spaces_case_or_number_format_are_named(tmp_path):
    path = tmp_path / "mix.csv"
    children = cycle(["0", "0.0", "1", "1.0", "2", "2.0", " 3", "3", "N/A"])
    smoker = cycle([" no", "no", "YES", "Yes", "yes", "yes "])
    write_csv(path, {"children": children, "smoker": smoker, "sex": cycle(["F", "M", "f "])})
    cols = by_name(infer_schema(path))
    start = "values that differ only by spaces or letter case (or are equal as numbers): "
    end = " - merge them (recode), or each is released as its own category"
    assert cols["children"].categories == ["0", "0.0", "1", "1.0", "2", "2.0", " 3", "3", "N/A"]
    assert cols["children"].warnings[-1] == f"{start}'0'/'0.0'; '1'/'1.0'; '2'/'2.0'; ' 3'/'3'{end}"
    assert cols["smoker"].warnings == [f"{start}' no'/'no'; 'YES'/'Yes'/'yes'/'yes '{end}"]
    assert cols["sex"].warnings == [f"{start}'F'/'f '{end}"]


def test_names_that_differ_only_by_surrounding_spaces_are_refused_and_a_spaced_name_is_warned(tmp_path):
    import openpyxl

    csv = tmp_path / "dup.csv"
    csv.write_text("Smoker,Smoker \nyes,no\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"'Smoker' and 'Smoker ' \(columns 1 and 2\) differ only by spaces"):
        infer_schema(csv)
    book = openpyxl.Workbook()
    book.active.append(["age", " Smoker", "Smoker"])
    book.active.append([30, "yes", "no"])
    book.save(tmp_path / "dup.xlsx")
    with pytest.raises(InputError, match="differ only by spaces at their start or end; rename one"):
        open_source(tmp_path / "dup.xlsx")
    spaced = tmp_path / "spaced.csv"
    write_csv(spaced, {" sex": cycle(["F", "M"]), "Age\n(years)": cycle(["1", "2"])})
    cols = by_name(infer_schema(spaced))
    assert cols[" sex"].role == "perturb" and cols[" sex"].warnings[0].startswith(
        "the column name ' sex' has spaces at its start or end; they are part of the name"
    )
    assert cols["Age\n(years)"].warnings[0].startswith("the column name 'Age\\n(years)' contains a line break")


# -- 3. SPSS / Stata value labels ------------------------------------------------------------------------------


def labelled_frame(n=60):
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "sex": rng.choice([1.0, 2.0], n),
            "level": [[1.0, 2.0, 3.0, np.nan][i % 4] for i in range(n)],
            "educ": [[1.0, 2.0, 3.0, 4.0][i % 4] for i in range(n)],
            "smoker": [[0.0, 1.0, 9.0][i % 3] for i in range(n)],
            "answer": [["", "yes", "no", " "][i % 4] for i in range(n)],
        }
    )


LABELS = {
    "sex": {1: "female", 2: "male"},
    "level": {1: "low", 2: "mid", 3: "high"},
    "educ": {1: "primary", 2: "secondary", 3: "tertiary"},
    "smoker": {0: "no", 1: "yes", 9: "refused"},
}


def test_spss_labels_keep_the_order_of_their_codes_and_user_missing_and_blanks_are_handled(tmp_path):
    import pyreadstat

    path = tmp_path / "labels.sav"
    pyreadstat.write_sav(labelled_frame(), str(path), variable_value_labels=LABELS, missing_ranges={"smoker": [9]})
    cfg = infer_schema(path)
    cols = by_name(cfg)
    assert cols["sex"].type == "nominal" and cols["sex"].categories == ["female", "male"]
    assert cols["level"].type == "ordinal" and cols["level"].categories == ["low", "mid", "high", "NA"]
    assert cols["level"].warnings == [
        "categories in the order of their codes in the file (1 = 'low', 2 = 'mid', 3 = 'high'), proposed as "
        "ordinal - set type nominal if that order means nothing"
    ]
    assert cols["educ"].type == "ordinal" and cols["educ"].categories == ["primary", "secondary", "tertiary", "4"]
    assert cols["educ"].warnings[0] == (
        "codes without a value label in the file: '4' (15) - recode them to a label, or set them missing if they "
        "mean missing"
    )
    assert cols["smoker"].type == "nominal" and cols["smoker"].categories == ["no", "yes", "NA"]
    assert cols["smoker"].warnings == [
        "user-missing values declared in the file (9 = 'refused') are read as missing, like empty cells: they are "
        "released together with them and cannot be told apart"
    ]
    assert cols["answer"].categories == ["no", "yes", "NA"]  # "" and " " are missing, not a category ""
    ReleaseConfig.from_dict(cfg.to_dict()).validate()


def test_stata_labels_keep_the_order_of_their_codes(tmp_path):
    import pyreadstat

    path = tmp_path / "labels.dta"
    frame = labelled_frame()[["sex", "level"]]
    pyreadstat.write_dta(frame, str(path), variable_value_labels={k: LABELS[k] for k in ("sex", "level")})
    cols = by_name(infer_schema(path))
    assert cols["level"].type == "ordinal" and cols["level"].categories == ["low", "mid", "high", "NA"]
    assert cols["sex"].categories == ["female", "male"]


def test_blank_spss_strings_are_released_as_missing(tmp_path):
    import pyreadstat

    path = tmp_path / "blank.sav"
    frame = pd.DataFrame({"answer": [["", "yes", "no", " "][i % 4] for i in range(60)]})
    pyreadstat.write_sav(frame, str(path))
    cfg, out = tmp_path / "c.json", tmp_path / "rel.csv"
    assert main(["schema", str(path), "-o", str(cfg)]) == 0
    assert json.loads(cfg.read_text())["columns"][0]["categories"] == ["no", "yes", "NA"]
    assert main(["perturb", str(path), "--config", str(cfg), "-o", str(out), "--quiet", "--no-shuffle"]) == 0
    released = pd.read_csv(out, dtype=str, keep_default_na=False)["answer"]
    assert set(released) <= {"no", "yes", "NA"}


def test_the_near_duplicate_warning_follows_the_columns_categories_in_the_window():
    """After the variants are merged (recoded into one category) the window's warning goes; before, it names them."""
    from optrr_engine.release.schema import near_duplicate_warning
    from optrr_gui.state.config_bridge import follow_state
    from optrr_gui.state.session import ColumnState

    before = near_duplicate_warning([" no", "no", "yes"])
    assert before is not None
    col = ColumnState(name="smoker", role="perturb", categories=[" no", "no", "yes"])
    assert follow_state([before], col, None) == [before]
    merged = ColumnState(name="smoker", role="perturb", categories=["no", "yes"], recode={"no": [" no", "no"]})
    assert follow_state([before], merged, None) == []


def test_a_new_configuration_starts_as_the_window_does_with_a_shared_whole_record_budget(tmp_path, capsys):
    """A reviewer followed the README on the census file and released 23 columns at whole-record epsilon 22.9 (the
    template's epsilon 1 per column; perturb only warned). optrr schema now writes the window's safe start: the
    perturbed columns share a whole-record epsilon of 3 (target_total), each column's epsilon 3 / k for a switch to
    epsilon per column; --epsilon-per-column keeps the old template."""
    from optrr_engine.release.risk import SAFE_START_TARGET
    from optrr_gui.state import session
    from tests.conftest import ROOT

    assert session.SAFE_START_TARGET == SAFE_START_TARGET == 3.0  # one safe start, the window's and the CLI's
    data = ROOT / "tests" / "data" / "car.csv"
    out = tmp_path / "c.json"
    assert main(["schema", str(data), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    cfg = json.loads(out.read_text())
    perturbed = [c for c in cfg["columns"] if c["role"] == "perturb"]
    assert cfg["target_total"] == 3.0 and len(perturbed) == 7
    assert all(c["epsilon"] == pytest.approx(3.0 / 7) for c in perturbed)
    assert "share a whole-record epsilon of 3 (target_total" in said
    assert main(["perturb", str(data), "--config", str(out), "-o", str(tmp_path / "r.csv"), "--audit-dir",
                 str(tmp_path), "--quiet"]) == 0
    manifest = json.loads((tmp_path / "r.csv.manifest.json").read_text())
    assert manifest["overall_epsilon"] <= 3.0 * (1 + 1e-9)
    old = tmp_path / "old.json"
    assert main(["schema", str(data), "-o", str(old), "--epsilon-per-column", "--quiet"]) == 0
    cfg = json.loads(old.read_text())
    assert cfg["target_total"] is None and {c["epsilon"] for c in cfg["columns"] if c["role"] == "perturb"} == {1.0}


def test_the_summary_counts_every_columns_categories_alike_and_names_a_numeric_columns_bins(tmp_path, capsys):
    """A review: the summary counted a numeric column's categories as "4+1" (bins + listed texts) but a nominal
    one's with its missing-value category as "5". Every column now counts its released categories; a binned
    column's bins are named: "4 bins", or "5 (4 bins)" with its missing-value category beside them."""
    path = tmp_path / "mixed.csv"
    write_csv(path, {
        "age": [str(20 + i % 30) for i in range(60)],
        "weight": ["" if i % 6 == 0 else str(50 + i % 20) for i in range(60)],
        "group": cycle(["a", "b", "c", "d", ""]),
    })
    assert main(["schema", str(path), "-o", str(tmp_path / "c.json")]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:] if line.strip()}
    cfg = by_name(ReleaseConfig.from_dict(json.loads((tmp_path / "c.json").read_text())))
    assert cfg["age"].categories in (None, []) and rows["age"].split()[3:5] == ["4", "bins"]
    assert len(cfg["weight"].categories) == 1 and rows["weight"].split()[3:6] == ["5", "(4", "bins)"]
    assert len(cfg["group"].categories) == 5 and rows["group"].split()[3] == "5"
    assert "+" not in "".join(line.split("  notes")[0][:60] for line in rows.values())
