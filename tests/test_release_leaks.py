"""Nothing data-derived is published unless approved (issue 11, item 3): a note with a name in a numeric
column, identifier and free-text columns never reach a file a recipient gets (release, manifest, external
report), nor the configuration; rare categories are named; categories can come from a data dictionary."""

import json
import os

import numpy as np
import pandas as pd
import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.release.config import save_config
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.schema import NON_NUMERIC_FLAG, infer_schema

NOTE = "deceased 2019-03-04 (Mrs J. Smith)"
PLANTED = [NOTE, "Smith", "deceased", "MRN-", "seen by Dr"]
N = 300


def hospital_file(folder) -> str:
    rng = np.random.default_rng(11)
    age = rng.integers(18, 95, N).astype(str)
    age[17] = NOTE
    age[40] = "?"
    outcome = rng.choice(["alive", "dead"], N).astype(object)
    outcome[5] = outcome[6] = "transferred"
    frame = pd.DataFrame(
        {
            "mrn": [f"MRN-{i:06d}" for i in rng.permutation(N)],
            "age": age,
            "sex": rng.choice(["F", "M"], N),
            "notes": [f"patient seen by Dr {rng.choice(['Ames', 'Berg'])} on visit {i} about pain" for i in range(N)],
            "outcome": outcome,
        }
    )
    path = os.path.join(folder, "hospital.csv")
    frame.to_csv(path, index=False)
    return path


def sent_files(out) -> list[str]:
    return [out, out + ".manifest.json", out + ".report.html"]


def assert_nothing_planted(paths) -> None:
    for path in paths:
        data = open(path, "rb").read()
        for text in PLANTED:
            assert text.encode() not in data, (path, text)


def test_schema_flags_and_never_copies_the_note_identifiers_or_free_text(tmp_path):
    src = hospital_file(str(tmp_path))
    cfg = infer_schema(src)
    save_config(cfg, tmp_path / "release.json")
    assert_nothing_planted([tmp_path / "release.json"])
    cols = {c.name: c for c in cfg.columns}
    assert cols["mrn"].role == "drop" and cols["mrn"].categories is None
    assert cols["notes"].role == "drop" and cols["notes"].categories is None
    age = cols["age"]
    assert age.type == "numeric" and age.categories == ["?", "NA"]
    assert any(w.startswith(f"{NON_NUMERIC_FLAG}: 1 cell (1 distinct text, not copied here)") for w in age.warnings)
    rare = [w for w in cols["outcome"].warnings if w.startswith("rare categories")]
    assert rare and "'transferred' (2)" in rare[0]


def test_perturb_releases_the_note_as_missing_and_no_recipient_file_holds_it(tmp_path, capsys, audit_dir):
    src = hospital_file(str(tmp_path))
    save_config(infer_schema(src), tmp_path / "release.json")
    out = str(tmp_path / "release.csv")
    rare = "--allow-rare-categories"  # 'outcome': 'transferred' (2 rows), not this test's subject
    assert main(["perturb", src, "--config", str(tmp_path / "release.json"), "-o", out, "--quiet", rare]) == 0
    assert "column 'age': 1 cell(s) that are not numbers" in capsys.readouterr().err
    assert_nothing_planted(sent_files(out))
    entry = json.loads((audit_dir / "optrr-audit.json").read_text())["releases"][-1]
    assert entry["unlisted_values_as_missing"] == {"age": 1} and entry["rows"] == N
    manifest = json.loads(open(out + ".manifest.json").read())
    assert manifest["codebook"][0]["name"] == "age" and manifest["codebook"][0]["categories"][-2:] == ["?", "NA"]


def test_a_listed_text_is_released_as_a_category(tmp_path):
    """The user approves a text by listing it: then (and only then) it is a category."""
    src = hospital_file(str(tmp_path))
    cfg = infer_schema(src)
    cfg.column("age").categories = ["?", "NA", NOTE]
    perturb_file(src, cfg, tmp_path / "r.csv", audit_dir=tmp_path, allow_rare_categories=True)  # 'transferred' (2)
    assert NOTE in open(str(tmp_path / "r.csv") + ".manifest.json").read()


@pytest.mark.parametrize("column", ["mrn", "notes"])
def test_an_identifier_or_free_text_column_set_to_perturb_is_refused(tmp_path, column):
    src = hospital_file(str(tmp_path))
    cfg = infer_schema(src)
    values = sorted(pd.read_csv(src, dtype=str)[column].unique())
    col = cfg.column(column)
    col.role, col.categories = "perturb", values  # as if every value were copied into the configuration
    before = set(os.listdir(tmp_path))
    with pytest.raises(InputError, match=f"column '{column}' has 300 different values in 300 rows: it looks like"):
        perturb_file(src, cfg, tmp_path / "r.csv", audit_dir=tmp_path)
    assert set(os.listdir(tmp_path)) == before
    col.categories = None
    with pytest.raises(InputError, match="lists no categories"):
        perturb_file(src, cfg, tmp_path / "r.csv", audit_dir=tmp_path)


def test_categories_from_a_data_dictionary(tmp_path, capsys):
    import pyreadstat

    src = hospital_file(str(tmp_path))
    (tmp_path / "dict.csv").write_text("column,category\nsex,M\nsex,F\nsex,X\noutcome,alive\noutcome,dead\n")
    cfg = infer_schema(src, codebook=tmp_path / "dict.csv")
    cols = {c.name: c for c in cfg.columns}
    assert cols["sex"].categories == ["M", "F", "X"] and cols["sex"].role == "perturb"
    assert any("declared by the data dictionary dict.csv" in w for w in cols["sex"].warnings)
    outside = [w for w in cols["outcome"].warnings if "not in the dictionary" in w]
    assert outside and "2 cells (1 distinct values, not copied here)" in outside[0] and "transferred" not in outside[0]
    (tmp_path / "dict.json").write_text(json.dumps({"sex": ["F", "M"]}))
    assert infer_schema(src, codebook=tmp_path / "dict.json").column("sex").categories == ["F", "M"]
    frame = pd.DataFrame({"sex": [1.0, 2.0]})
    pyreadstat.write_sav(frame, str(tmp_path / "labels.sav"), variable_value_labels={"sex": {2.0: "M", 1.0: "F"}})
    assert infer_schema(src, codebook=tmp_path / "labels.sav").column("sex").categories == ["F", "M"]
    (tmp_path / "bad.json").write_text(json.dumps({"weight": ["low", "high"]}))
    with pytest.raises(InputError, match="declares column 'weight'"):
        infer_schema(src, codebook=tmp_path / "bad.json")
    cfg_path = tmp_path / "from_dict.json"
    assert main(["schema", src, "-o", str(cfg_path), "--codebook", str(tmp_path / "dict.csv"), "--quiet"]) == 0
    assert json.loads(cfg_path.read_text())["columns"][2]["categories"] == ["M", "F", "X"]
