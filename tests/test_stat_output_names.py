"""SPSS (.sav) and Stata (.dta) output: column names that pyreadstat would refuse or silently alter (or that SPSS
itself takes as one name) are refused up front, naming every column and the way out; the names that pass
round-trip exactly; perturb_file / `optrr perturb` refuse before reading the data or writing anything."""

import json
import os
import re

import pandas as pd
import pyarrow as pa
import pyreadstat
import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.io.writers import check_stat_names, open_writer
from optrr_engine.release.perturb import perturb_file

WRITE = {"sav": pyreadstat.write_sav, "dta": pyreadstat.write_dta}
READ = {"sav": pyreadstat.read_sav, "dta": pyreadstat.read_dta}


def round_trip(fmt, names, folder):
    """The names pyreadstat reads back after writing them (None: the writer refused them)."""
    path = os.path.join(folder, f"names.{fmt}")
    frame = pd.DataFrame({str(i): ["a", "b"] for i in range(len(names))}, dtype=object)
    frame.columns = list(names)
    try:
        WRITE[fmt](frame, path)
    except Exception:
        return None
    return list(READ[fmt](path)[0].columns)


# (format, name, why): every kind of name the writer refuses or alters, found by experiment (pyreadstat 1.3.7)
WRITER_REFUSES = [
    ("sav", "my col", "cannot contain spaces"),
    ("dta", "my col", "cannot contain spaces"),
    ("sav", "1abc", "must begin with a letter"),
    ("dta", "1abc", "must begin with a letter or an underscore"),
    ("sav", "_abc", "must begin with a letter"),
    ("sav", "@abc", "must begin with a letter"),
    ("dta", "$abc", "must begin with a letter"),
    ("sav", "", "cannot be empty"),
    ("dta", "", "cannot be empty"),
    ("sav", "a-b", "only letters, digits and @ # $ . _ (not '-')"),
    ("dta", "a-b", "only letters, digits and _ (not '-')"),
    ("dta", "a.b", "(not '.')"),
    ("dta", "a@b", "(not '@')"),
    ("sav", "a,b", "(not ',')"),
    ("sav", "a\tb", "(not '\\t')"),
    ("sav", "x" * 65, "at most 64 bytes"),
    ("sav", "é" * 33, "at most 64 bytes"),  # 33 characters, 66 bytes
    ("dta", "x" * 33, "at most 32 characters"),
    ("dta", "é" * 33, "at most 32 characters"),
    ("sav", "ALL", "SPSS reserves the word ALL"),
    ("sav", "WITH", "SPSS reserves the word WITH"),
    ("dta", "int", "Stata reserves the name int"),
    ("dta", "_n", "Stata reserves the name _n"),
    ("dta", "strL", "Stata reserves the name strL"),
    ("dta", "str5", "Stata reserves the name str5"),
    ("dta", "str2045", "Stata reserves the name str2045"),
]

WRITER_ALTERS = [
    ("sav", "a\x00b", "(not '\\x00')"),  # written as "a"
    ("dta", "a\x00b", "(not '\\x00')"),
]

# SPSS's own rules, which readstat does not enforce: names and keywords ignore case
SPSS_REFUSES = [
    ("sav", "all", "SPSS reserves the word ALL (in any case)"),
    ("sav", "With", "SPSS reserves the word WITH"),
]

# names each format takes as they are (pyreadstat writes and reads them back unchanged)
ACCEPTED = {
    "sav": ["ok", "café", "Straße", "日本", "a.b", "a.", "ab$", "a@b", "a#b", "x" * 64, "é" * 32, "all_x", "str5"],
    "dta": ["ok", "café", "Straße", "日本", "_abc", "x" * 32, "é" * 32, "日" * 32, "ALL", "TO", "str0", "str2046"],
}


@pytest.mark.parametrize(("fmt", "name", "why"), WRITER_REFUSES + WRITER_ALTERS)
def test_a_name_the_writer_refuses_or_alters_is_refused_first(tmp_path, fmt, name, why):
    assert round_trip(fmt, [name], tmp_path) != [name]  # the writer really refuses (None) or alters it
    with pytest.raises(InputError) as refused:
        check_stat_names(fmt, ["fine", name])
    message = str(refused.value)
    assert f"column {name!r}: " in message and why in message, message
    assert "'fine'" not in message and ".csv, .parquet or .xlsx" in message and "rename" in message
    assert "\n" not in message


@pytest.mark.parametrize(("fmt", "name", "why"), SPSS_REFUSES)
def test_spss_keywords_are_refused_in_any_case(fmt, name, why):
    with pytest.raises(InputError, match=re.escape(f"column {name!r}: {why}")):
        check_stat_names(fmt, [name])


def test_spss_names_differing_only_in_case_are_one_name_but_stata_names_are_two(tmp_path):
    with pytest.raises(InputError) as refused:
        check_stat_names("sav", ["sex", "age", "Sex", "SEX"])
    assert "columns 'sex' and 'Sex' and 'SEX': SPSS names ignore case" in str(refused.value)
    assert "'age'" not in str(refused.value)
    check_stat_names("dta", ["sex", "Sex", "SEX"])
    assert round_trip("dta", ["sex", "Sex", "SEX"], tmp_path) == ["sex", "Sex", "SEX"]
    with pytest.raises(InputError, match="columns 'sex': the name appears twice"):
        check_stat_names("dta", ["sex", "sex"])


def test_every_offending_column_is_named_in_one_error():
    with pytest.raises(InputError) as refused:
        check_stat_names("sav", ["my col", "ok", "1abc", "a-b"])
    message = str(refused.value)
    assert all(f"column {n!r}" in message for n in ("my col", "1abc", "a-b")) and "'ok'" not in message


def test_other_formats_take_any_name():
    for fmt in ("csv", "parquet", "xlsx"):
        check_stat_names(fmt, ["my col", "1abc", "", "sex", "Sex"])


@pytest.mark.parametrize("fmt", ["sav", "dta"])
def test_accepted_names_round_trip_exactly(tmp_path, fmt):
    names = ACCEPTED[fmt]
    check_stat_names(fmt, names)
    assert round_trip(fmt, names, tmp_path) == names
    path = tmp_path / f"w.{fmt}"
    writer = open_writer(fmt, path, names)
    writer.write(pa.table({n: pa.array(["a", None]) for n in names}))
    writer.close()
    assert list(READ[fmt](str(path))[0].columns) == names


@pytest.mark.parametrize("fmt", ["sav", "dta"])
def test_the_writer_itself_refuses_before_creating_its_file(tmp_path, fmt):
    with pytest.raises(InputError, match="column 'my col': .* cannot contain spaces"):
        open_writer(fmt, tmp_path / f"w.{fmt}", ["ok", "my col"])
    assert os.listdir(tmp_path) == []


def setup_release(folder, header=("my col", "b"), roles=("perturb", "perturb")):
    src = folder / "in.csv"
    src.write_text(",".join(header) + "\n" + "x,p\ny,q\nx,q\ny,p\n" * 50)
    cats = [["x", "y"], ["p", "q"]]
    cols = [
        {"name": n, "role": r, "epsilon": 2.0, "categories": c} if r == "perturb" else {"name": n, "role": r}
        for n, r, c in zip(header, roles, cats, strict=True)
    ]
    cfg = folder / "release.json"
    cfg.write_text(json.dumps({"method": "kronecker", "columns": cols}))
    out = folder / "out"
    out.mkdir()
    return str(src), str(cfg), out


@pytest.fixture
def no_data_pass(monkeypatch):
    """Reading the data is a failure: the names must be refused before any work."""

    def refuse(*args, **kwargs):
        raise AssertionError("perturb_file opened the data before refusing the output's column names")

    monkeypatch.setattr("optrr_engine.io.readers.open_source", refuse)


@pytest.mark.parametrize(("fmt", "roles"), [("sav", ("perturb", "perturb")), ("dta", ("perturb", "keep"))])
def test_perturb_file_refuses_before_any_work(tmp_path, audit_dir, no_data_pass, fmt, roles):
    header = ("my col", "b") if roles[1] == "perturb" else ("b", "my col")  # a perturbed or a kept column
    src, cfg, out = setup_release(tmp_path, header, roles)
    before = sorted(os.listdir(audit_dir))
    with pytest.raises(InputError) as refused:
        perturb_file(src, cfg, out / f"rel.{fmt}")
    assert "column 'my col': " in str(refused.value) and "cannot contain spaces" in str(refused.value)
    assert os.listdir(out) == [] and sorted(os.listdir(audit_dir)) == before


def test_the_names_checked_are_those_written_with_the_test_seed_marker(tmp_path, developer, no_data_pass):
    src, cfg, out = setup_release(tmp_path, header=("not_private_INSECURE_test_seed", "b"))
    with pytest.raises(InputError, match="'NOT_PRIVATE_insecure_test_seed' and 'not_private_INSECURE_test_seed'"):
        perturb_file(src, cfg, out / "rel.sav", insecure_test_seed=1)
    assert os.listdir(out) == []


def test_a_dropped_column_may_have_any_name(tmp_path):
    src, cfg, out = setup_release(tmp_path, roles=("drop", "perturb"))
    perturb_file(src, cfg, out / "rel.sav")
    assert list(READ["sav"](str(out / "rel.sav"))[0].columns) == ["b"]


def test_the_command_line_refuses_with_one_line_naming_the_column(tmp_path, capsys, no_data_pass):
    src, cfg, out = setup_release(tmp_path)
    assert main(["perturb", src, "--config", cfg, "-o", str(out / "rel.sav"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("optrr: error: "), err
    assert "column 'my col': SPSS names cannot contain spaces" in err and ".csv, .parquet or .xlsx" in err
    assert os.listdir(out) == []
