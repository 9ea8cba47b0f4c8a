"""``optrr perturb`` asks before publishing what the window's release dialog lists in orange and needs a tick for:
rare released categories (fewer than RARE_COUNT rows: the codebook discloses that they exist) unless
--allow-rare-categories, and kept columns whose values are unique to one row in more than KEPT_UNIQUE_SHARE of the
rows (a linkage key) unless --allow-flagged-kept. Both are refused after the pass, before any file gets its final
name; the window's release job passes what the dialog's tick approved: the rare (column, category) pairs and kept
columns its orange list names (:class:`PublishRefusal` says what else was found)."""

import json
import os

import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.schema import KEPT_UNIQUE_SHARE, RARE_COUNT, kept_too_unique
from tests.test_gui_support import SAMPLE, SAMPLE_ORANGE

OUTPUTS = ("rel.csv", "rel.csv.manifest.json", "rel.csv.report.html")


def write_csv(folder, name: str, header: str, rows: list[str]) -> str:
    path = folder / name
    path.write_text("\n".join([header, *rows]) + "\n")
    return str(path)


def schema_config(tmp_path, src: str, roles: dict | None = None) -> str:
    """``optrr schema`` of ``src`` with the ``roles`` changed as a user would, saved as release.json."""
    cfg_path = tmp_path / "release.json"
    assert main(["schema", src, "-o", str(cfg_path), "--quiet"]) == 0
    cfg = json.loads(cfg_path.read_text())
    for col in cfg["columns"]:
        col["role"] = (roles or {}).get(col["name"], col["role"])
    cfg_path.write_text(json.dumps(cfg))
    return str(cfg_path)


def error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("optrr: error: ")]
    assert len(lines) == 1, err
    return lines[0]


def perturb(tmp_path, src: str, cfg: str, *flags: str) -> int:
    return main(["perturb", src, "--config", cfg, "-o", str(tmp_path / "rel.csv"), "--quiet", *flags])


def gender_rows(other: int, n: int = 60) -> list[str]:
    """``n`` rows of sex,smoker with ``other`` rows of sex 'Other'."""
    return [f"{'Other' if i < other else 'FM'[i % 2]},{['yes', 'no'][i % 3 == 0]}" for i in range(n)]


def test_a_rare_category_is_refused_naming_it_and_nothing_is_left_then_released_with_the_flag(
    tmp_path, capsys, audit_dir
):
    src = write_csv(tmp_path, "in.csv", "sex,smoker", gender_rows(2))
    cfg = schema_config(tmp_path, src)
    before, audit_before = set(os.listdir(tmp_path)), set(os.listdir(audit_dir))
    assert perturb(tmp_path, src, cfg) == 2
    line = error_line(capsys)
    assert f"rare categories (fewer than {RARE_COUNT} rows)" in line and "'sex': 'Other' (2 rows)" in line
    assert "'smoker'" not in line and "existence is disclosed" in line
    assert "recode" in line and "drop the column" in line and "--allow-rare-categories" in line
    assert set(os.listdir(tmp_path)) == before  # no release, manifest, report, nor any hidden temporary
    assert set(os.listdir(audit_dir)) == audit_before  # no audit entry, no internal report
    assert perturb(tmp_path, src, cfg, "--allow-rare-categories") == 0
    for name in OUTPUTS:
        assert (tmp_path / name).exists(), name
    manifest = json.loads((tmp_path / "rel.csv.manifest.json").read_text())
    assert "Other" in next(c for c in manifest["codebook"] if c["name"] == "sex")["categories"]


def test_a_category_of_rare_count_rows_is_not_refused(tmp_path, capsys):
    src = write_csv(tmp_path, "in.csv", "sex,smoker", gender_rows(RARE_COUNT))
    assert perturb(tmp_path, src, schema_config(tmp_path, src)) == 0, capsys.readouterr().err
    assert (tmp_path / "rel.csv").exists()


def test_the_rule_is_the_dialogs_a_rare_missing_value_category_counts_an_empty_one_not_nor_numeric_bins(tmp_path):
    """The categories the release dialog lists (dialog.rare_categories): a missing-value category of 1..4 rows is
    rare; a listed category with no rows is not; of a numeric column only the categories listed beside its bins are
    watched (here '?' in 1 row, published by name in the codebook like any category), never its bins."""
    rows = [f"{'' if i < 2 else 'FM'[i % 2]},{'?' if i == 2 else 20 + i}" for i in range(60)]
    src = write_csv(tmp_path, "in.csv", "sex,age", rows)
    config = {
        "method": "kronecker",
        "columns": [
            {
                "name": "sex",
                "role": "perturb",
                "type": "nominal",
                "epsilon": 1.0,
                "categories": ["F", "M", "U", "NA"],
                "missing": "category",
            },
            {
                "name": "age",
                "role": "perturb",
                "type": "numeric",
                "epsilon": 1.0,
                "categories": ["?"],
                "bins": {"edges": [0, 40, 60, 100]},
            },
        ],
    }
    with pytest.raises(InputError, match=r"in 'sex': 'NA' \(2 rows\); 'age': '\?' \(1 row\); the codebook") as refused:
        perturb_file(src, config, tmp_path / "rel.csv")
    assert refused.value.rare == [("sex", "NA", 2), ("age", "?", 1)]  # not 'U' (no rows), not a bin of age
    assert os.listdir(tmp_path) == ["in.csv"]


def test_the_engine_names_the_rare_categories_the_release_dialog_lists_for_the_sample(tmp_path):
    """The sample (breast_cancer.csv) as the window proposes it: the same columns, categories and rows as the dialog's
    orange list (tests/test_gui_support.SAMPLE_ORANGE), in the same order."""
    from optrr_engine.release.schema import infer_schema

    with pytest.raises(InputError) as refused:
        perturb_file(SAMPLE, infer_schema(SAMPLE), tmp_path / "rel.csv")
    entries = (e.split(": ", 1) for e in SAMPLE_ORANGE["rare_categories"])  # "age: '20-29' (1 row)"
    expected = "; ".join(f"'{name}': {rest}" for name, rest in entries)
    assert f"would be released by name in {expected}; the codebook" in str(refused.value)


def kept_rows(unique: int, n: int = 100) -> list[str]:
    """``n`` rows of code,site,sex: ``unique`` codes held by one row each, the others shared by 10 rows each; 3
    sites."""
    return [
        f"{f'U{i}' if i < unique else f'S{i % 7}'},{['north', 'south', 'east'][i % 3]},{'FM'[i % 2]}" for i in range(n)
    ]


def test_a_near_unique_kept_column_is_refused_naming_the_count_then_released_with_the_flag(tmp_path, capsys, audit_dir):
    src = write_csv(tmp_path, "in.csv", "code,site,sex", kept_rows(30))
    cfg = schema_config(tmp_path, src, {"code": "keep", "site": "keep"})
    before, audit_before = set(os.listdir(tmp_path)), set(os.listdir(audit_dir))
    assert perturb(tmp_path, src, cfg) == 2
    line = error_line(capsys)
    assert "kept column(s) 'code' (30 of 100 rows have a value no other row has)" in line, line
    assert "'site'" not in line and "another data set" in line
    assert "Drop the column" in line and "bins" in line and "--allow-flagged-kept" in line
    assert set(os.listdir(tmp_path)) == before and set(os.listdir(audit_dir)) == audit_before
    assert perturb(tmp_path, src, cfg, "--allow-flagged-kept") == 0
    manifest = json.loads((tmp_path / "rel.csv.manifest.json").read_text())
    assert manifest["kept_columns"] == ["code", "site"]


def test_a_kept_identifier_is_said_to_look_like_one(tmp_path):
    src = write_csv(tmp_path, "in.csv", "code,site,sex", kept_rows(100))
    config = {
        "method": "kronecker",
        "columns": [
            {"name": "code", "role": "keep"},
            {"name": "sex", "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": ["F", "M"]},
        ],
    }
    with pytest.raises(InputError, match=r"'code' \(100 of 100 rows have a value no other row has; it looks like an "):
        perturb_file(src, config, tmp_path / "rel.csv")


def test_a_kept_column_of_few_values_or_recoded_into_few_is_released(tmp_path, capsys):
    """'site' (3 values) passes; so does 'code' once its unique values are recoded into one label: the values
    counted are the ones released."""
    src = write_csv(tmp_path, "in.csv", "code,site,sex", kept_rows(30))
    cfg_path = schema_config(tmp_path, src, {"code": "keep", "site": "keep"})
    cfg = json.loads(open(cfg_path).read())
    code = next(c for c in cfg["columns"] if c["name"] == "code")
    code["recode"] = {"rare": [f"U{i}" for i in range(30)]}
    code["categories"] = [f"S{i}" for i in range(7)] + ["rare"]  # the released labels
    open(cfg_path, "w").write(json.dumps(cfg))
    assert perturb(tmp_path, src, cfg_path) == 0, capsys.readouterr().err


def test_the_kept_rule_refuses_more_than_its_share():
    at_most = round(KEPT_UNIQUE_SHARE * 1000)
    assert not kept_too_unique(at_most, 1000) and kept_too_unique(at_most + 1, 1000)


def test_the_windows_release_job_passes_the_dialogs_tick(tmp_path, audit_dir):
    """optrr_gui.workers.jobs.release.run_release (the release dialog's job) passes ``allow_rare_categories`` and
    ``allow_flagged_kept`` as given (True here: approve all, as the command line's flags); without them the engine
    refuses, in the window's words."""
    from optrr_gui.workers.jobs.release import run_release

    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    src = write_csv(tmp_path / "in", "in.csv", "code,site,sex", kept_rows(30, 99) + ["U99,north,X"])
    config = {
        "method": "kronecker",
        "columns": [
            {"name": "code", "role": "keep"},
            {"name": "sex", "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": ["F", "M", "X"]},
        ],
    }
    out = str(tmp_path / "out" / "rel.csv")
    with pytest.raises(InputError, match=r"'sex': 'X' \(1 row\)"):
        run_release(src, config, out, {"allow_rare_categories": False, "allow_flagged_kept": True})
    with pytest.raises(InputError, match=r"'code' \(31 of 100 rows"):
        run_release(src, config, out, {"allow_rare_categories": True, "allow_flagged_kept": False})
    with pytest.raises(InputError, match="or tick the box under the orange list if that is intended"):
        run_release(src, config, out, {})  # no tick given: refused, worded for the window
    assert os.listdir(tmp_path / "out") == []
    made = run_release(src, config, out, {"allow_rare_categories": True, "allow_flagged_kept": True})  # the tick
    assert made["manifest"]["kept_columns"] == ["code"] and os.path.exists(out)


# -- approvals by name, the structured refusal, the counting ------------------------------------------------------
def job_file(tmp_path) -> tuple[str, dict]:
    """The job test's file: 'code' kept (31 of 100 rows unique), 'sex' perturbed with 'X' in 1 row, 'site' kept (3
    values)."""
    src = write_csv(tmp_path, "in.csv", "code,site,sex", kept_rows(30, 99) + ["U99,north,X"])
    config = {
        "method": "kronecker",
        "columns": [
            {"name": "code", "role": "keep"},
            {"name": "site", "role": "keep"},
            {"name": "sex", "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": ["F", "M", "X"]},
        ],
    }
    return src, config


def test_the_refusal_carries_what_it_names_and_survives_a_worker_process(tmp_path):
    import pickle

    from optrr_engine.release.perturb import PublishRefusal

    src, config = job_file(tmp_path)
    with pytest.raises(PublishRefusal) as refused:
        perturb_file(src, config, tmp_path / "rel.csv")
    exc = refused.value
    assert isinstance(exc, InputError)
    assert exc.rare == [("sex", "X", 1)] and exc.kept == [("code", 31, 100)]
    lines = str(exc).splitlines()  # the same text as before: one line per rule
    assert lines[0].startswith(f"rare categories (fewer than {RARE_COUNT} rows) would be released by name in 'sex'")
    assert lines[1].startswith("kept column(s) 'code' (31 of 100 rows have a value no other row has)")
    again = pickle.loads(pickle.dumps(exc))
    assert type(again) is PublishRefusal and (again.rare, again.kept, str(again)) == (exc.rare, exc.kept, str(exc))
    assert os.listdir(tmp_path) == ["in.csv"]


def test_only_what_was_approved_by_name_is_published(tmp_path):
    """A collection approves exactly its (column, category) pairs and kept columns; anything else found is refused,
    naming only that."""
    from optrr_engine.release.perturb import PublishRefusal

    src, config = job_file(tmp_path)
    out = tmp_path / "rel.csv"
    with pytest.raises(PublishRefusal) as refused:  # another category of 'sex', and 'site' instead of 'code'
        perturb_file(src, config, out, allow_rare_categories={("sex", "F")}, allow_flagged_kept={"site"})
    assert refused.value.rare == [("sex", "X", 1)] and refused.value.kept == [("code", 31, 100)]
    with pytest.raises(PublishRefusal) as refused:
        perturb_file(src, config, out, allow_rare_categories=[("sex", "X")], allow_flagged_kept=set())
    assert refused.value.rare == [] and refused.value.kept == [("code", 31, 100)]
    assert "rare categories" not in str(refused.value)
    with pytest.raises(PublishRefusal) as refused:
        perturb_file(src, config, out, allow_rare_categories=False, allow_flagged_kept=["code"])
    assert refused.value.rare == [("sex", "X", 1)] and refused.value.kept == []
    assert not out.exists()
    made = perturb_file(src, config, out, allow_rare_categories={("sex", "X")}, allow_flagged_kept=frozenset({"code"}))
    assert made.manifest["kept_columns"] == ["code", "site"] and out.exists()


def test_one_count_per_category_gives_both_the_identifier_and_the_rare_refusals():
    """CategoryGuard, counted chunk by chunk, against a count of all the codes at once: the identifier-like columns
    (distinct categories released) and the rare categories (1..RARE_COUNT-1 rows) are the same."""
    import numpy as np

    from optrr_engine.release.config import ReleaseConfig
    from optrr_engine.release.perturb import CategoryGuard
    from optrr_engine.release.schema import identifier_like

    ids = [f"P{i:03d}" for i in range(400)]
    config = ReleaseConfig.from_dict({"method": "kronecker", "columns": [
        {"name": "pid", "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": ids},
        {"name": "grade", "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": list("ABCDEFG")},
    ]})
    from optrr_engine.release.codec import Codec

    codec = Codec(config)
    rng = np.random.default_rng(3)
    codes = np.stack([rng.permutation(400)[:300], rng.choice(7, 300, p=[0.5, 0.3, 0.17, 0.01, 0.01, 0.01, 0.0])], 1)
    codes = codes.astype(codec.dtype)
    for size in (1, 7, 300):
        guard = CategoryGuard(codec)
        for start in range(0, 300, size):
            guard.add(codes[start:start + size])
        assert guard.identifiers(300) == [("pid", 300)] and identifier_like(300, 300)
        grade = np.bincount(codes[:, 1], minlength=7)
        expected = sorted((("grade", "ABCDEFG"[c], int(n)) for c, n in enumerate(grade) if 0 < n < RARE_COUNT),
                          key=lambda t: (t[2], t[1]))
        assert [r for r in guard.rare() if r[0] == "grade"] == expected and expected
        approved = {expected[0][:2]}
        assert guard.rare(None) == [] and expected[0][:2] not in {r[:2] for r in guard.rare(approved)}


@pytest.mark.parametrize("cap", [1_000_000, 50])  # 50: past the cap the values are counted by hash
def test_kept_unique_counts_equal_pandas_value_counts_across_chunk_sizes(cap):
    """KeptUniqueGuard's rows with a value no other row has, and its distinct values, on random data with missing
    cells and a recoding, against pandas' value_counts of the released values; whatever the chunk size."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from optrr_engine.release.perturb import KeptUniqueGuard
    from optrr_engine.release.recode import recode_arrow

    rng = np.random.default_rng(11)
    n = 5000
    values = np.array([f"v{i}" for i in rng.integers(0, 6000, n)], dtype=object)
    values[rng.random(n) < 0.1] = None
    recode = {"merged": [f"v{i}" for i in range(0, 6000, 3)]}
    column = pa.array(values, type=pa.string())
    released = pd.Series(recode_arrow(column, recode).to_pylist()).dropna()
    counts = released.value_counts()
    expected_unique, expected_distinct = int((counts == 1).sum()), int(counts.size)
    assert expected_unique > 0.05 * n  # refused
    for size in (1, 97, 1000, n):
        guard = KeptUniqueGuard(["code"], {"code": recode}, cap=cap)
        for start in range(0, n, size):
            guard.add(pa.table({"code": column[start:start + size]}))
        assert guard.found(n) == [("code", expected_unique, expected_distinct)], size
    plain = KeptUniqueGuard(["code"], cap=cap)
    plain.add(pa.table({"code": column}))
    raw = pd.Series(values).dropna().value_counts()
    assert plain.found(n) == [("code", int((raw == 1).sum()), int(raw.size))]


def test_a_kept_column_that_crosses_the_cap_at_the_last_merge_is_still_counted():
    """The merge that moves a column's counts past the cap to hashing may be the one ``found`` runs (the counts were
    still waiting): 6 chunks of 100 unique values under a cap of 500 are 600 unique values, not none (a review found
    (0, 0) here: a kept ID column of 1.0-1.5M values passed unrefused)."""
    import pyarrow as pa

    from optrr_engine.release.perturb import KeptUniqueGuard

    guard = KeptUniqueGuard(["id"], cap=500)
    for chunk in range(6):
        guard.add(pa.table({"id": pa.array([f"P{chunk}-{i}" for i in range(100)])}))
    assert guard.found(600) == [("id", 600, 600)]
    together = KeptUniqueGuard(["id"], cap=500, together=("id", "site"))  # the combination's keys, past the cap
    for chunk in range(6):
        together.add(pa.table({"id": pa.array([f"P{chunk}-{i}" for i in range(100)]), "site": pa.array(["a"] * 100)}))
    assert together.found(600) == [("id", 600, 600)] and together.combination(600) is None  # adds nothing to 'id'


def test_the_windows_job_passes_the_approved_sets_and_keeps_the_refusals_fields(tmp_path):
    """run_release passes the dialog's approvals as they are; a refusal is worded for the window and stays a
    PublishRefusal with its fields (the dialog adds them to its orange list)."""
    from optrr_engine.release.perturb import PublishRefusal
    from optrr_gui.workers.jobs.release import run_release

    (tmp_path / "out").mkdir()
    src, config = job_file(tmp_path)
    out = str(tmp_path / "out" / "rel.csv")
    with pytest.raises(PublishRefusal, match="or tick the box under the orange list if that is intended") as refused:
        run_release(src, config, out, {"allow_rare_categories": frozenset(), "allow_flagged_kept": frozenset({"code"})})
    assert refused.value.rare == [("sex", "X", 1)] and refused.value.kept == []
    assert "--allow" not in str(refused.value)
    made = run_release(src, config, out, {"allow_rare_categories": {("sex", "X")}, "allow_flagged_kept": {"code"}})
    assert made["manifest"]["kept_columns"] == ["code", "site"]
