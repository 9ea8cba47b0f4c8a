"""Kept columns checked in combination: columns copied in the clear that each pass the kept rule alone
(:func:`optrr_engine.release.schema.kept_too_unique`) can together single out a record (age, gender and smoking of a
survey). ``perturb`` refuses the combination when more than KEPT_UNIQUE_SHARE of the released rows hold a combination
of the kept columns' values (as released: recoded, a missing value counting as one) that no other row has, and more
rows than any kept column alone, unless approved: the tuple of the kept columns' names, or True (--allow-flagged-kept).
"""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from optrr_engine.cli.main import main
from optrr_engine.io.readers import ReaderOptions
from optrr_engine.release.perturb import KeptUniqueGuard, PublishRefusal, perturb_file
from optrr_engine.release.recode import recode_arrow
from optrr_engine.release.schema import kept_too_unique
from tests.test_perturb_rare_and_unique_kept import error_line, write_csv

ABC = ("a", "b", "c")


def together_rows(n: int = 200, c=None) -> list[str]:
    """a,b,c,sex: 'a' and 'b' give each (a, b) pair to exactly 2 rows (i and i + n/2); 'c' (``c(i)``, default
    'c{i // 20}': 20 rows each) tells those two apart, so every row's (a, b, c) is unique; alone each column has
    20 rows per value."""
    c = c or (lambda i: f"c{i // 20}")
    return [f"a{i % 10},b{(i // 10) % 10},{c(i)},{'FM'[i % 2]}" for i in range(n)]


def config(kept=ABC, recodes: dict | None = None) -> dict:
    recodes = recodes or {}
    columns = [{"name": n, "role": "keep", **({"recode": recodes[n]} if n in recodes else {})} for n in kept]
    columns.append({"name": "sex", "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": ["F", "M"]})
    return {"method": "kronecker", "columns": columns}


def source(tmp_path, rows=None) -> str:
    return write_csv(tmp_path, "in.csv", "a,b,c,sex", together_rows() if rows is None else rows)


def refusal(tmp_path, src, cfg, **kw) -> PublishRefusal:
    with pytest.raises(PublishRefusal) as refused:
        perturb_file(src, cfg, tmp_path / "rel.csv", force=True, allow_repeat=True, **kw)
    return refused.value


def released(tmp_path, src, cfg, **kw) -> dict:
    return perturb_file(src, cfg, tmp_path / "rel.csv", force=True, allow_repeat=True, **kw).manifest


def test_columns_passing_alone_but_unique_together_are_refused_naming_them_and_nothing_is_written(tmp_path, audit_dir):
    src = source(tmp_path)
    before, audit_before = set(os.listdir(tmp_path)), set(os.listdir(audit_dir))
    exc = refusal(tmp_path, src, config())
    assert exc.combination == (ABC, 200, 200) and exc.kept == [] and exc.rare == []
    text = str(exc)
    assert text.startswith("kept columns 'a', 'b', 'c' together would be published as they are, in the clear")
    assert "200 of 200 rows have a combination of these values that no other row has" in text
    assert "link that record to the person" in text and "Coarsen one of these columns (recode its values" in text
    assert "--allow-flagged-kept" in text
    assert set(os.listdir(tmp_path)) == before and set(os.listdir(audit_dir)) == audit_before
    again = pickle.loads(pickle.dumps(exc))  # the GUI's worker process sends it back
    assert type(again) is PublishRefusal and (again.combination, str(again)) == (exc.combination, text)
    assert exc.reworded("other words").combination == exc.combination


def test_the_combination_is_released_when_approved_by_its_tuple_or_by_true_not_by_its_columns_alone(tmp_path):
    src = source(tmp_path)
    assert refusal(tmp_path, src, config(), allow_flagged_kept={"a", "b", "c"}).combination == (ABC, 200, 200)
    assert refusal(tmp_path, src, config(), allow_flagged_kept={("c", "b", "a")}).combination is not None  # order
    assert released(tmp_path, src, config(), allow_flagged_kept={ABC})["kept_columns"] == list(ABC)
    assert released(tmp_path, src, config(), allow_flagged_kept=[["a", "b", "c"]])["kept_columns"] == list(ABC)
    assert released(tmp_path, src, config(), allow_flagged_kept=True)["kept_columns"] == list(ABC)


def test_a_combination_adding_nothing_to_a_flagged_column_is_only_that_columns_entry(tmp_path):
    """'a' unique in 30 rows; (a, b, c) unique in those 30 rows only: the single entry says it all."""
    rows = [f"{f'u{i}' if i < 30 else f'a{i % 5}'},b{i % 2},c{i % 2},{'FM'[i % 2]}" for i in range(200)]
    src = source(tmp_path, rows)
    exc = refusal(tmp_path, src, config())
    assert exc.kept == [("a", 30, 200)] and exc.combination is None and "together" not in str(exc)
    # 'a' approved alone: the combination, no more unique than 'a', is not refused either
    assert released(tmp_path, src, config(), allow_flagged_kept={"a"})["kept_columns"] == list(ABC)


def test_one_kept_column_has_no_combination_check(tmp_path):
    """'c' kept alone (20 rows per value) is released, whatever the other columns would add to it."""
    assert released(tmp_path, source(tmp_path), config(kept=("c",)))["kept_columns"] == ["c"]
    codec = type("Codec", (), {"kept": ["c"], "kept_recode": {"c": None}})()
    assert KeptUniqueGuard.for_release(codec, frozenset(), frozenset()).together == ()


def test_the_values_counted_are_the_recoded_ones(tmp_path):
    """Merging c{k} with c{k+5} gives rows i and i + 100 the same released (a, b, c): no combination is unique."""
    src = source(tmp_path)
    recode = {"c": {f"g{k}": [f"c{k}", f"c{k + 5}"] for k in range(5)}}
    assert released(tmp_path, src, config(recodes=recode))["kept_columns"] == list(ABC)
    halves = {"c": {"low": [f"c{k}" for k in range(5)], "high": [f"c{k}" for k in range(5, 10)]}}  # still apart
    assert refusal(tmp_path, src, config(recodes=halves)).combination == (ABC, 200, 200)


def test_a_missing_value_is_a_value_of_its_own(tmp_path):
    """'c' is 'x' in rows 0-99 and empty in rows 100-199: the missing value tells rows i and i + 100 apart."""
    exc = refusal(tmp_path, source(tmp_path, together_rows(c=lambda i: "x" if i < 100 else "")), config())
    assert exc.combination == (ABC, 200, 200)
    same = together_rows(c=lambda i: "x" if i % 20 < 10 else "")  # rows i and i + 100 alike, missing or not
    assert released(tmp_path, source(tmp_path, same), config())["kept_columns"] == list(ABC)


def random_kept(n: int, seed: int) -> tuple[list[str], pd.DataFrame]:
    """Rows of a random file (a, b, c share their values, so the order of the columns counts; about 8 % missing),
    and the released (a, b, c) as pandas reads them."""
    rng = np.random.default_rng(seed)
    sizes = dict(zip(ABC, (12, 15, 20), strict=True))
    frame = pd.DataFrame({name: [f"v{k}" for k in rng.integers(0, size, n)] for name, size in sizes.items()})
    frame = frame.mask(rng.random(frame.shape) < 0.08)
    rows = [f"{r.a if isinstance(r.a, str) else ''},{r.b if isinstance(r.b, str) else ''},"
            f"{r.c if isinstance(r.c, str) else ''},{'FM'[i % 2]}" for i, r in enumerate(frame.itertuples())]
    return rows, frame


def joint_unique(frame: pd.DataFrame) -> tuple[int, int]:
    counts = frame.value_counts(dropna=False)
    return int((counts == 1).sum()), int(counts.size)


def test_counts_over_many_chunks_equal_pandas_value_counts_of_the_tuples(tmp_path):
    rows, frame = random_kept(3000, 5)
    expected, _distinct = joint_unique(frame)
    alone = max(int((frame[n].value_counts() == 1).sum()) for n in ABC)
    assert kept_too_unique(expected, 3000) and expected > alone  # the data does what the test needs
    src = source(tmp_path, rows)
    for chunk in (97, 1000, 100_000):
        exc = refusal(tmp_path, src, config(), reader_options=ReaderOptions(chunk_rows=chunk))
        assert exc.combination == (ABC, expected, 3000), chunk


def test_the_guard_counts_recoded_combinations_like_pandas_whatever_the_chunk():
    """KeptUniqueGuard fed slices of a table (1 row at a time up to all at once), a recoding of 'b' merging values:
    its (unique, distinct) combinations equal pandas' value_counts of the released tuples (missing as a value)."""
    _rows, frame = random_kept(2000, 8)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    recode = {"b": {"v0": ["v1", "v2"]}}
    released_b = recode_arrow(table.column("b"), recode["b"]).to_pylist()
    expected = joint_unique(frame.assign(b=released_b))
    assert expected != joint_unique(frame)  # the recoding counts
    for size in (1, 97, 2000):
        guard = KeptUniqueGuard([], recode, together=ABC)
        for start in range(0, 2000, size):
            guard.add(table.slice(start, size))
        assert guard.joint.unique_and_distinct() == expected, size


@pytest.mark.parametrize("missing", [200, 400])  # the first chunk, or every row, has no value of 'c'
def test_chunks_without_rows_or_with_a_column_all_missing_count_like_any_other(missing):
    _rows, frame = random_kept(400, 9)
    frame.loc[: missing - 1, "c"] = None
    table = pa.Table.from_pandas(frame, preserve_index=False)
    expected = joint_unique(frame)
    for names in ([], list(ABC)):  # 'c' counted alone by key (approved alone), or exactly (watched alone)
        guard = KeptUniqueGuard(names, together=ABC)
        for part in (table.slice(0, 0), table.slice(0, 200), table.slice(200, 0), table.slice(200)):
            guard.add(part)
        assert guard.joint.unique_and_distinct() == expected
        assert guard.combination(400) == (ABC, expected[0], 400)


def test_the_command_line_says_it_and_allow_flagged_kept_approves_it(tmp_path, capsys):
    src = source(tmp_path)
    cfg = tmp_path / "release.json"
    cfg.write_text(json.dumps(config()))
    out = ["perturb", src, "--config", str(cfg), "-o", str(tmp_path / "rel.csv"), "--quiet"]
    assert main(out) == 2
    line = error_line(capsys)
    assert "kept columns 'a', 'b', 'c' together" in line
    assert "200 of 200 rows have a combination of these values that no other row has" in line
    assert "--allow-flagged-kept" in line and not (tmp_path / "rel.csv").exists()
    assert main([*out, "--allow-flagged-kept"]) == 0
    assert json.loads((tmp_path / "rel.csv.manifest.json").read_text())["kept_columns"] == list(ABC)


def test_the_help_of_allow_flagged_kept_says_it_approves_the_combination(capsys):
    with pytest.raises(SystemExit):
        main(["perturb", "--help"])
    assert "combination" in " ".join(capsys.readouterr().out.split())
