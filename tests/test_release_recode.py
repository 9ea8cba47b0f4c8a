"""Recoding (merge, rename, group rare into Other, reorder): the edit functions, the configuration key with
its one-line errors, and ``optrr perturb`` releasing the recoded domain."""

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.release import recode as rc
from optrr_engine.release.config import ColumnConfig, ReleaseConfig, load_config, save_config


def test_merge_rename_group_and_reorder():
    cats = ["a", "b", "c", "d"]
    recode, out = rc.merge(None, cats, ["b", "d"], "bd")
    assert out == ["a", "bd", "c"] and rc.source_map(recode) == {"b": "bd", "d": "bd"}
    recode, out = rc.rename(recode, out, "a", "A")
    assert out == ["A", "bd", "c"] and rc.source_map(recode) == {"b": "bd", "d": "bd", "a": "A"}
    # merging a merged label folds its texts in; the old label is gone
    recode, out = rc.merge(recode, out, ["bd", "c"], "Other")
    assert out == ["A", "Other"]
    assert rc.source_map(recode) == {"a": "A", "b": "Other", "d": "Other", "c": "Other", "bd": "Other"}
    assert rc.reorder(out, ["Other", "A"]) == ["Other", "A"]
    with pytest.raises(InputError, match="every category exactly once"):
        rc.reorder(out, ["A"])
    with pytest.raises(InputError, match="already a category"):
        rc.merge(recode, out, ["A"], "Other")


def test_group_rare_merges_labels_under_the_threshold_at_the_end():
    cats = ["x", "y", "z", "w"]
    counts = {"x": 50, "y": 2, "z": 4, "w": 9}
    recode, out, merged = rc.group_rare(None, cats, counts, 5)
    assert merged == ["y", "z"] and out == ["x", "w", "Other"]
    assert rc.recode_counts(list(counts), list(counts.values()), recode) == {"x": 50, "Other": 6, "w": 9}
    # an existing "Other" takes the new rare labels in
    recode2, out2, merged2 = rc.group_rare(recode, out, {"x": 50, "Other": 6, "w": 9}, 10)
    assert merged2 == ["w"] and out2 == ["x", "Other"]
    assert rc.recode_counts(list(counts), list(counts.values()), recode2) == {"x": 50, "Other": 15}
    with pytest.raises(InputError, match="at least 1"):
        rc.group_rare(None, cats, counts, 0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=2, max_size=12), st.data())
def test_random_edits_keep_every_row_and_a_valid_configuration(counts, data):
    values = [f"v{i}" for i in range(len(counts))]
    recode, cats = None, list(values)
    for _ in range(data.draw(st.integers(1, 4))):
        if len(cats) < 2:
            break
        chosen = data.draw(st.lists(st.sampled_from(cats), min_size=1, max_size=len(cats), unique=True))
        name = data.draw(st.sampled_from(["Other", "M", chosen[0]]))
        if name in cats and name not in chosen:
            continue
        recode, cats = rc.merge(recode, cats, chosen, name)
    by_label = rc.recode_counts(values, counts, recode)
    assert sum(by_label.values()) == sum(counts)
    assert set(by_label) <= set(cats)
    col = ColumnConfig(name="c", role="perturb", epsilon=1.0, categories=cats, recode=recode)
    col.validate()  # the edited pair is always a valid configuration
    # brute force: each input text's label is the one the recode gives it
    mapping = rc.source_map(recode)
    for v, n in zip(values, counts, strict=True):
        assert by_label[mapping.get(v, v)] >= n


def test_a_renamed_label_frees_its_name_for_a_new_category():
    """Found by the property test above in a repeated full run: "Other" renamed to "M", then a new "Other"
    (and merging "Other" into itself) must keep raw "Other" texts under "M" and stay a valid configuration."""
    values, counts = ["v0", "v1", "Other"], [3, 4, 5]
    recode, cats = rc.merge(None, ["v0", "v1", "Other"][:2], ["v0"], "Other")
    recode, cats = rc.merge(recode, cats, ["Other"], "M")
    recode, cats = rc.merge(recode, cats, ["v1"], "Other")
    assert cats == ["M", "Other"]
    ColumnConfig(name="c", role="perturb", epsilon=1.0, categories=cats, recode=recode).validate()
    assert rc.recode_counts(values, counts, recode) == {"M": 3 + 5, "Other": 4}
    recode2, cats2 = rc.merge(recode, cats, ["Other"], "Other")
    assert (recode2, cats2) == (recode, cats)
    ColumnConfig(name="c", role="perturb", epsilon=1.0, categories=cats2, recode=recode2).validate()


def test_a_recode_label_outside_a_numeric_columns_labels_is_a_clear_error(tmp_path, capsys):
    """A numeric column has no category list, so the label check happens in the codec: one line, exit 2,
    nothing written (it was a KeyError traceback)."""
    data = tmp_path / "in.csv"
    pd.DataFrame({"age": [20, 35, 50, -9] * 5}).to_csv(data, index=False)
    cols = [
        {"name": "age", "role": "perturb", "epsilon": 1, "type": "numeric", "bins": [0, 40, 90],
         "recode": {"NA": ["-9"]}},
    ]
    cfg = tmp_path / "release.json"
    cfg.write_text(json.dumps({"method": "kronecker", "columns": cols}))
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["perturb", str(data), "--config", str(cfg), "-o", str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err
    assert "recode label 'NA' is not among its categories" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_config_round_trip_and_one_line_errors(tmp_path):
    d = {
        "method": "kronecker",
        "columns": [
            {"name": "c", "role": "perturb", "epsilon": 1.0, "categories": ["A", "Other"],
             "recode": {"Other": ["b", "d"], "A": "a"}},
        ],
    }
    cfg = ReleaseConfig.from_dict(d)
    assert cfg.column("c").recode == {"Other": ["b", "d"], "A": ["a"]}
    save_config(cfg, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["columns"][0]["recode"] == {"Other": ["b", "d"], "A": ["a"]}
    assert load_config(tmp_path / "r.json").to_dict() == cfg.to_dict()

    def error(**col) -> str:
        base = {"name": "c", "role": "perturb", "epsilon": 1.0, "categories": ["A", "Other"]}
        with pytest.raises(InputError) as info:
            ReleaseConfig.from_dict({"columns": [{**base, **col}]})
        msg = str(info.value)
        assert "\n" not in msg and "'c'" in msg
        return msg

    assert "not among its categories" in error(recode={"Missing": ["x"]})
    assert "still listed in categories" in error(recode={"Other": ["A"]})
    assert "recoded twice" in error(recode={"Other": ["x"], "A": ["x"]})
    assert "must be an object" in error(recode=["x"])
    assert "as texts" in error(recode={"Other": [3]})


def _survey(path, n=4000, seed=1):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "region": rng.choice(["north", "south", "east", "west", "isle"], n, p=[0.4, 0.3, 0.2, 0.0975, 0.0025]),
            "age": rng.choice([*map(str, range(18, 90)), "-9"], n),
            "sex": rng.choice(["F", "M", ""], n, p=[0.49, 0.49, 0.02]),
            "site": rng.choice(["s1", "s2", "s3"], n),
        }
    )
    df.to_csv(path, index=False)
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def test_perturb_releases_the_recoded_domain(tmp_path, capsys):
    """At epsilon 50 the randomization changes a value with probability ~a e^-50, so the released counts
    are the recoded input counts, computed here with plain Python from the recoding's definition."""
    src = tmp_path / "survey.csv"
    df = _survey(src)
    recode_region = {"Other": ["west", "isle"]}
    columns = [
        {"name": "region", "role": "perturb", "epsilon": 50, "categories": ["north", "south", "east", "Other"],
         "recode": recode_region},
        {"name": "age", "role": "perturb", "epsilon": 50, "type": "numeric", "bins": [18, 40, 65, 90],
         "categories": ["refused"], "recode": {"refused": ["-9"]}},
        {"name": "sex", "role": "perturb", "epsilon": 50, "categories": ["Female", "M", "Unknown"],
         "recode": {"Female": ["F"], "Unknown": ["NA"]}},
        {"name": "site", "role": "keep", "recode": {"s1-2": ["s1", "s2"]}},
    ]
    cfg = tmp_path / "release.json"
    cfg.write_text(json.dumps({"method": "kronecker", "columns": columns}))
    out = tmp_path / "rel.csv"
    assert main(["perturb", str(src), "--config", str(cfg), "-o", str(out), "--quiet"]) == 0
    rel = pd.read_csv(out, dtype=str, keep_default_na=False)
    manifest = json.loads((tmp_path / "rel.csv.manifest.json").read_text())
    cats = {a["name"]: a["categories"] for a in manifest["attributes"]}
    assert cats["region"] == ["north", "south", "east", "Other"]
    assert cats["sex"] == ["Female", "M", "Unknown"]
    assert cats["age"] == ["[18, 40)", "[40, 65)", "[65, 90]", "refused"]

    region = Counter({"west": "Other", "isle": "Other"}.get(v, v) for v in df["region"])
    sex = Counter({"F": "Female", "": "Unknown"}.get(v, v) for v in df["sex"])
    site = Counter({"s1": "s1-2", "s2": "s1-2"}.get(v, v) for v in df["site"])

    def age_label(v):
        if v == "-9":
            return "refused"
        x = int(v)
        return "[18, 40)" if x < 40 else "[40, 65)" if x < 65 else "[65, 90]"

    age = Counter(age_label(v) for v in df["age"])
    assert Counter(rel["region"]) == region
    assert Counter(rel["sex"]) == sex
    assert Counter(rel["age"]) == age
    assert Counter(rel["site"]) == site


def test_perturb_refuses_a_recoded_text_left_in_the_categories(tmp_path, capsys):
    src = tmp_path / "survey.csv"
    _survey(src, n=200)
    cfg = tmp_path / "release.json"
    cols = [{"name": "region", "role": "perturb", "epsilon": 1, "categories": ["north", "south", "east", "west",
             "Other"], "recode": {"Other": ["west", "isle"]}}]
    cfg.write_text(json.dumps({"method": "kronecker", "columns": cols}))
    out = tmp_path / "rel.csv"
    assert main(["perturb", str(src), "--config", str(cfg), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'west' is recoded to 'Other' but is still listed in categories" in err[0]
    assert not out.exists()
