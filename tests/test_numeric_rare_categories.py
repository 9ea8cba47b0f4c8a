"""A numeric column's categories listed beside its bins (a text such as a note, its missing-value category) are
published by name in the codebook like any category: a rare one is refused as in a nominal column (a reviewer
published 'deceased 2019-03-04 (Mrs J. Smith)' this way); its bins are not (they publish ranges)."""

import os

import numpy as np
import pandas as pd
import pytest

from optrr_engine.release.config import ColumnConfig, ReleaseConfig
from optrr_engine.release.perturb import PublishRefusal, perturb_file

NOTE = "deceased 2019-03-04 (Mrs J. Smith)"


def data(tmp_path, missing: int = 0):
    rng = np.random.default_rng(3)
    n = 400
    age = [str(a) for a in rng.integers(20, 90, n)]
    age[7] = NOTE
    for i in range(missing):
        age[20 + i] = ""
    frame = pd.DataFrame({"age": age, "sex": rng.choice(["f", "m"], n)})
    frame.to_csv(tmp_path / "in.csv", index=False)
    return tmp_path / "in.csv"


def config(extras) -> ReleaseConfig:
    age = ColumnConfig(name="age", role="perturb", type="numeric", epsilon=1.0, categories=extras,
                       bins={"edges": [float("-inf"), 40.0, 60.0, float("inf")]})
    return ReleaseConfig(method="kronecker", columns=[age, ColumnConfig(name="sex", role="perturb", epsilon=1.0,
                                                                         categories=["f", "m"])])


def test_a_rare_text_listed_in_a_numeric_column_is_refused(tmp_path, audit_dir):
    src = data(tmp_path)
    before = set(os.listdir(tmp_path))
    with pytest.raises(PublishRefusal) as refused:
        perturb_file(src, config([NOTE]), tmp_path / "out.csv")
    assert refused.value.rare == [("age", NOTE, 1)]  # the bins (hundreds of rows each) are not named
    assert set(os.listdir(tmp_path)) == before  # nothing under the final names
    made = perturb_file(src, config([NOTE]), tmp_path / "out.csv", allow_rare_categories=[("age", NOTE)])
    assert NOTE in made.manifest["codebook"][0]["categories"]  # published only when approved by name


def test_a_rare_missing_category_of_a_numeric_column_is_refused_and_bins_never_are(tmp_path, audit_dir):
    src = data(tmp_path, missing=2)
    with pytest.raises(PublishRefusal) as refused:
        perturb_file(src, config([NOTE, "NA"]), tmp_path / "out.csv")
    assert refused.value.rare == [("age", NOTE, 1), ("age", "NA", 2)]  # rarest first
    # a bin with a single row is not a category of the source: not refused
    single = pd.read_csv(src, dtype=str, keep_default_na=False)
    single.loc[single["age"] != NOTE, "age"] = "50"
    single.loc[0, "age"] = "30"
    single.loc[single["age"] == NOTE, "age"] = "51"
    single.to_csv(src, index=False)
    made = perturb_file(src, config([]), tmp_path / "out2.csv")
    assert made.manifest["rows"] == 400


def test_a_rare_missing_value_category_gets_its_own_way_out():
    from optrr_engine.release.schema import rare_refusal

    missing = {"Prothrombin": "NA", "Drug": "NA"}  # each column's missing-value category
    text = rare_refusal([("Prothrombin", [("NA", 2)])], missing)  # only 'NA': merging and missing do not apply
    assert "'NA' is the missing-value category: it only says that a value is missing" in text
    assert "Drop the column, or give --allow-rare-categories" in text
    assert "--merge-rare" not in text and "missing values with" not in text  # a reviewer followed those in vain
    mixed = rare_refusal([("Prothrombin", [("NA", 2)]), ("Drug", [("Other", 2)])], missing)
    assert "'NA', the missing-value category, only says that a value is missing and is not merged" in mixed
    assert "--merge-rare" in mixed and "helps only when the missing-value category then holds enough rows" in mixed
    assert "'NA'" not in rare_refusal([("Drug", [("Other", 2)])], missing)


def test_schema_and_merge_rare_say_what_perturb_will_refuse_in_a_numeric_column(tmp_path, capsys, audit_dir):
    """A review: a numeric column with 2 empty cells made schema --merge-rare print 'no rare categories left' and
    perturb then refused its 'NA' (2 rows). The schema warns about it, and --merge-rare lists it as left."""
    import json

    from optrr_engine.cli.main import main

    rng = np.random.default_rng(5)
    ages = [str(a) for a in rng.integers(20, 90, 400)]
    ages[3] = ages[9] = ""
    pd.DataFrame({"age": ages, "sex": rng.choice(["f", "m"], 400)}).to_csv(tmp_path / "in.csv", index=False)
    cfg = tmp_path / "c.json"
    assert main(["schema", str(tmp_path / "in.csv"), "-o", str(cfg), "--merge-rare"]) == 0
    out = capsys.readouterr().out
    age = json.loads(cfg.read_text())["columns"][0]
    assert age["type"] == "numeric" and any("'NA' (2)" in w for w in age["warnings"]), age["warnings"]
    assert "rare categories left in 1 column ('age'" in out, out
    # optrr design -o says it too, beside the command it offers (perturb refuses only after its whole pass)
    assert main(["design", "--config", str(cfg), "-o", str(tmp_path / "d.json")]) == 0
    written = capsys.readouterr().out.split("\nwrote ")[1]
    assert "release it with: optrr perturb" in written
    assert "\nwarning: rare categories in 1 column ('age'; see their notes): perturb refuses them as written" in written
    assert main(["perturb", str(tmp_path / "in.csv"), "--config", str(cfg), "-o", str(tmp_path / "r.csv")]) == 2
    assert "'age': 'NA' (2 rows)" in capsys.readouterr().err
    # without --merge-rare the schema's summary names the column perturb will refuse, before the user designs
    assert main(["schema", str(tmp_path / "in.csv"), "-o", str(tmp_path / "plain.json")]) == 0
    assert "rare categories in 1 column ('age'; see their notes): perturb refuses them as written" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize("rows", [1, 4])
def test_a_release_of_fewer_rows_than_the_rare_count_says_so_first(tmp_path, audit_dir, rows):
    """With fewer than RARE_COUNT rows every value is rare: the refusal's first line names the cause (the file),
    not only each column's categories (a one-row file got a long list of columns and no word of its single row)."""
    frame = pd.DataFrame({"age": ["30"] * rows, "sex": ["f"] * rows})
    frame.to_csv(tmp_path / "few.csv", index=False)
    with pytest.raises(PublishRefusal) as refused:
        perturb_file(tmp_path / "few.csv", config([]), tmp_path / "out.csv")
    first, *rest = str(refused.value).splitlines()
    plural = "row" if rows == 1 else "rows"
    assert first == (
        f"the release would hold only {rows} {plural}, fewer than 5: every value in it is rare, so every column below "
        "is named; a release needs more rows"
    )
    assert rest and rest[0].startswith("rare categories")
    assert not (tmp_path / "out.csv").exists()
