"""The privacy ledger recognises a repeat release of the same records, not only of the same bytes: a copy of a
released file with a blank line appended, saved as .xlsx, or with its rows shuffled, is refused at the commit point
(nothing left under the final names) unless allowed; unrelated files sharing only a constant column, files with other
rows, and a near-duplicate in another order of few distinct records (one row fewer, shuffled) are not (near
repeats in the same order: tests/test_ledger_near_repeat.py; in another order, of distinctive records:
tests/test_ledger_reordered_near_repeat.py). The column fingerprints and the records' multiset hash stay in the
hospital's audit record, never in a file that is sent."""

import json
import os

import numpy as np
import pyarrow as pa
import pytest

from optrr_engine.release.audit import (
    AUDIT_NAME,
    ColumnFingerprints,
    RepeatReleaseError,
    accumulated_epsilon,
    load_audit,
)
from optrr_engine.release.perturb import perturb_file

CATS = {"a": ["x", "y"], "b": ["p", "q", "r"]}
CFG = {
    "method": "kronecker",
    "columns": [
        *({"name": n, "role": "perturb", "epsilon": 1.0, "categories": c} for n, c in CATS.items()),
        {"name": "site", "role": "keep"},
        {"name": "ward", "role": "keep"},
    ],
}
SENT = ("", ".manifest.json", ".report.html")


def rows(seed: int, n: int = 60) -> list[list[str]]:
    """n records (a, b, site, ward): a and b random, site constant, ward random with some cells missing."""
    rng = np.random.default_rng(seed)
    return [
        [str(rng.choice(CATS["a"])), str(rng.choice(CATS["b"])), "A", str(rng.choice(["w1", "w2", ""]))]
        for _ in range(n)
    ]


def write_csv(path, records) -> None:
    path.write_text("a,b,site,ward\n" + "".join(",".join(r) + "\n" for r in records), encoding="utf-8")


def write_xlsx(path, records) -> None:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(["a", "b", "site", "ward"])
    for r in records:
        sheet.append([v or None for v in r])
    book.save(path)


def release_names(folder, name: str) -> list[str]:
    """Files in ``folder`` that belong to the release ``name``: its final names and any temporary."""
    return sorted(f for f in os.listdir(folder) if name in f or f.endswith(".optrr-tmp"))


def test_a_blank_line_appended_is_refused_at_the_commit_point(tmp_path, audit_dir):
    src, copy = tmp_path / "in.csv", tmp_path / "copy.csv"
    write_csv(src, rows(1))
    copy.write_text(src.read_text() + "\n", encoding="utf-8")  # a blank line: skipped, the same records
    first = perturb_file(src, CFG, tmp_path / "r1.csv")
    committed = []
    with pytest.raises(RepeatReleaseError, match=r"column\(s\) 'a', 'b', 'ward' identical") as caught:
        perturb_file(copy, CFG, tmp_path / "r2.csv", at_commit=lambda: committed.append(True))
    assert committed  # after the whole pass, at the commit point (not the same-bytes check before it)
    message = str(caught.value)
    assert "released 1 time(s) before" in message and "in.csv" in message and "--allow-repeat" in message
    assert caught.value.accumulated == pytest.approx(2 * first.manifest["overall_epsilon"])
    assert [r["created"] for r in caught.value.previous] == [first.audit_entry["created"]]
    assert release_names(tmp_path, "r2.csv") == []  # nothing under the final names, no temporaries
    assert load_audit(audit_dir / AUDIT_NAME)["releases"] == [first.audit_entry]
    assert sorted(os.listdir(audit_dir)) == sorted(
        [AUDIT_NAME, AUDIT_NAME + ".lock", os.path.basename(first.audit_entry["files"]["internal_report"])]
    )


def test_an_xlsx_copy_of_the_same_csv_is_refused(tmp_path):
    src, copy = tmp_path / "in.csv", tmp_path / "copy.xlsx"
    records = rows(2)
    write_csv(src, records)
    write_xlsx(copy, records)
    first = perturb_file(src, CFG, tmp_path / "r1.csv")
    with pytest.raises(RepeatReleaseError, match="identical") as caught:
        perturb_file(copy, CFG, tmp_path / "r2.csv")
    assert caught.value.accumulated == pytest.approx(2 * first.manifest["overall_epsilon"])
    assert release_names(tmp_path, "r2.csv") == []


def test_allow_repeat_releases_and_the_cli_prints_the_accumulated_epsilon(tmp_path, capsys, audit_dir):
    from optrr_engine.cli.main import main

    src, copy, cfg = tmp_path / "in.csv", tmp_path / "copy.xlsx", tmp_path / "release.json"
    records = rows(3)
    write_csv(src, records)
    write_xlsx(copy, records)
    cfg.write_text(json.dumps(CFG))

    def args(data, out) -> list[str]:
        return ["perturb", str(data), "--config", str(cfg), "-o", str(tmp_path / out), "--quiet"]

    assert main(args(src, "r1.csv")) == 0
    assert "accumulated" not in capsys.readouterr().err  # a first release: nothing accumulated
    assert main(args(copy, "r2.csv")) == 2
    err = capsys.readouterr().err
    assert "the same records" in err and "--allow-repeat" in err and release_names(tmp_path, "r2.csv") == []
    assert main([*args(copy, "r2.csv"), "--allow-repeat"]) == 0
    releases = load_audit(audit_dir / AUDIT_NAME)["releases"]
    assert len(releases) == 2
    total = accumulated_epsilon(releases)
    assert total == pytest.approx(2 * releases[0]["overall_epsilon"])
    err = capsys.readouterr().err
    assert "released 2 times" in err and f"accumulated whole-record epsilon {total:.6g}" in err
    report = open(releases[1]["files"]["internal_report"], encoding="utf-8").read()
    assert "released 2 times" in report  # the internal report's ledger holds the earlier release of the records


def test_an_unrelated_file_sharing_only_a_constant_column_is_not_refused(tmp_path):
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    first, second = rows(4), rows(5)
    for r in second:
        r[3] = ""  # ward all missing in the second file
    write_csv(one, first)
    write_csv(two, second)
    perturb_file(one, CFG, tmp_path / "r1.csv")
    made = perturb_file(two, CFG, tmp_path / "r2.csv")  # 'site' is 'A' in both: no evidence of the same people
    assert len(made.ledger) == 1
    assert sorted(made.audit_entry["input"]["column_fingerprints"]) == ["a", "b"]


def test_the_same_columns_with_other_rows_are_not_refused(tmp_path):
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    records = rows(6)
    write_csv(one, records)
    # each column's values in another order (a, b and ward rotated by 1, 2 and 3 rows): other records per row
    write_csv(
        two, [[records[(i + 1) % 60][0], records[(i + 2) % 60][1], "A", records[(i + 3) % 60][3]] for i in range(60)]
    )
    perturb_file(one, CFG, tmp_path / "r1.csv")
    assert len(perturb_file(two, CFG, tmp_path / "r2.csv").ledger) == 1


def test_old_entries_without_fingerprints_keep_working(tmp_path, audit_dir):
    src = tmp_path / "in.csv"
    write_csv(src, rows(7))
    first = perturb_file(src, CFG, tmp_path / "r1.csv")
    audit = load_audit(audit_dir / AUDIT_NAME)
    del audit["releases"][0]["input"]["column_fingerprints"]  # as written by OptRR before fingerprints
    del audit["releases"][0]["input"]["records_multiset"]
    audit["releases"].insert(0, {"created": "2020-01-01T00:00:00Z", "input": {"sha256": "old"}, "overall_epsilon": 1})
    (audit_dir / AUDIT_NAME).write_text(json.dumps(audit), encoding="utf-8")
    with pytest.raises(RepeatReleaseError, match="this input was released 1 time"):  # same bytes: before the pass
        perturb_file(src, CFG, tmp_path / "r2.csv", at_commit=lambda: pytest.fail("reached the commit point"))
    copy = tmp_path / "copy.csv"
    copy.write_text(src.read_text() + "\n", encoding="utf-8")
    made = perturb_file(copy, CFG, tmp_path / "r3.csv")  # no fingerprints to compare with: not recognised
    assert made.ledger == [made.audit_entry] and first.audit_entry not in made.ledger


def test_the_fingerprints_are_never_in_a_file_that_is_sent(tmp_path, audit_dir):
    src = tmp_path / "in.csv"
    write_csv(src, rows(8))
    made = perturb_file(src, CFG, tmp_path / "r1.csv")
    prints = load_audit(audit_dir / AUDIT_NAME)["releases"][0]["input"]["column_fingerprints"]
    assert sorted(prints) == ["a", "b", "ward"] and all(len(v) == 64 for v in prints.values())
    assert made.audit_entry["input"]["column_fingerprints"] == prints
    multiset = made.audit_entry["input"]["records_multiset"]
    assert (
        len(multiset) == 32
        and load_audit(audit_dir / AUDIT_NAME)["releases"][0]["input"]["records_multiset"] == multiset
    )
    for suffix in SENT:
        text = (tmp_path / f"r1.csv{suffix}").read_text(encoding="utf-8")
        assert "fingerprints" not in text and not [v for v in prints.values() if v in text], suffix
        assert "multiset" not in text and multiset not in text and multiset[:16] not in text, suffix


def _fingerprints(values: list, chunks: list[int]) -> dict:
    """ColumnFingerprints of one column 'c' of ``values`` fed as slices of one array, ``chunks`` rows at a time."""
    whole = pa.table({"c": pa.array(values, type=pa.string())})
    prints = ColumnFingerprints(["c"])
    start = 0
    for n in chunks:
        part = whole.slice(start, n)
        prints.add(pa.table({"c": pa.chunked_array(part.column("c").chunks[:1] + [pa.array([], pa.string())])}))
        start += n
    assert start == len(values)
    return prints.result()


def test_a_fingerprint_does_not_depend_on_chunking_and_is_unambiguous():
    values = [f"v{i % 7}" if i % 5 else None for i in range(40)]
    whole = _fingerprints(values, [40])
    assert whole and whole == _fingerprints(values, [7, 7, 7, 7, 7, 5]) == _fingerprints(values, [1, 39])
    moved = ["ab", "c"] + values[2:]
    assert _fingerprints(["a", "bc"] + values[2:], [40]) != _fingerprints(moved, [40])  # value boundaries count
    assert _fingerprints([""] + values[1:], [40]) != _fingerprints([None] + values[1:], [40])  # missing is not ''
    filled = pa.array(["x", "y"] * 20, type=pa.string())
    holed = pa.array(["x", None] * 20, type=pa.string())
    # an Arrow array whose missing slots still hold bytes: hashed as its values only
    dirty = pa.StringArray.from_buffers(40, filled.buffers()[1], filled.buffers()[2], holed.buffers()[0])
    prints = ColumnFingerprints(["c"])
    prints.add(pa.table({"c": dirty}))
    assert prints.result() == _fingerprints(["x", None] * 20, [40])


def test_constant_and_short_columns_are_not_compared():
    assert _fingerprints(["A"] * 40, [40]) == {}
    assert _fingerprints([None] * 40, [40]) == {}
    assert _fingerprints(["A", "B"] * 9 + ["A"], [19]) == {}  # fewer than 20 records
    assert _fingerprints(["A"] * 39 + [None], [40])  # missing in one record: two values


def shuffled(records: list[list[str]], seed: int = 99) -> list[list[str]]:
    """The same records in another order (a re-export sorted differently)."""
    order = np.random.default_rng(seed).permutation(len(records))
    return [records[i] for i in order]


def test_a_shuffled_copy_is_refused_at_the_commit_point_and_allow_repeat_releases_it(tmp_path, audit_dir):
    src, copy = tmp_path / "in.csv", tmp_path / "copy.csv"
    records = rows(9)
    write_csv(src, records)
    write_csv(copy, shuffled(records))
    first = perturb_file(src, CFG, tmp_path / "r1.csv")
    committed = []
    with pytest.raises(RepeatReleaseError, match="the same records in another order were released 1 time") as caught:
        perturb_file(copy, CFG, tmp_path / "r2.csv", at_commit=lambda: committed.append(True))
    assert committed and caught.value.reordered and caught.value.columns == []
    assert "in.csv" in str(caught.value) and "--allow-repeat" in str(caught.value)
    assert caught.value.accumulated == pytest.approx(2 * first.manifest["overall_epsilon"])
    assert release_names(tmp_path, "r2.csv") == []  # nothing under the final names, no temporaries
    assert load_audit(audit_dir / AUDIT_NAME)["releases"] == [first.audit_entry]
    made = perturb_file(copy, CFG, tmp_path / "r2.csv", allow_repeat=True)
    assert made.ledger == [first.audit_entry, made.audit_entry]
    assert made.audit_entry["input"]["records_multiset"] == first.audit_entry["input"]["records_multiset"]
    assert made.audit_entry["input"]["column_fingerprints"] != first.audit_entry["input"]["column_fingerprints"]


def test_a_shuffled_file_with_one_row_fewer_is_not_matched(tmp_path):
    """A near-duplicate in another order of few distinct records (60 rows of 18 possible records) is not detected:
    only the same records (in any order) are, near repeats in the same order (the records sketch; this file is too
    short for it anyway) and in another order when the records are distinctive (the set sketch; not these)."""
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    records = rows(10)
    write_csv(one, records)
    write_csv(two, shuffled(records)[1:])
    first = perturb_file(one, CFG, tmp_path / "r1.csv")
    made = perturb_file(two, CFG, tmp_path / "r2.csv")
    assert len(made.ledger) == 1
    assert made.audit_entry["input"]["records_multiset"] != first.audit_entry["input"]["records_multiset"]


def _multiset(records: list[list], chunks: list[int]) -> str | None:
    """ColumnFingerprints.multiset of ``records`` (columns a, b, ward) fed ``chunks`` rows at a time."""
    names = ["a", "b", "ward"]
    whole = pa.table({n: pa.array([r[i] for r in records], type=pa.string()) for i, n in enumerate(names)})
    prints = ColumnFingerprints(names)
    start = 0
    for n in chunks:
        prints.add(whole.slice(start, n))
        start += n
    assert start == len(records)
    return prints.multiset()


def test_the_multiset_hash_ignores_chunking_and_order_and_sees_every_value():
    records = [[a, b, w or None] for a, b, _site, w in rows(11, 40)]
    whole = _multiset(records, [40])
    assert whole and len(whole) == 32
    assert whole == _multiset(records, [7, 7, 7, 7, 7, 5]) == _multiset(shuffled(records), [1, 39])
    changed = [list(r) for r in records]
    changed[5][1] = "r" if changed[5][1] != "r" else "p"  # one value changed
    assert _multiset(changed, [40]) != whole
    moved = [list(r) for r in records]
    moved[0][:2] = ["xp", ""]  # values moved across a column boundary: not the same records
    assert _multiset(moved, [40]) != _multiset([["x", "p"] + r[2:] for r in records[:1]] + records[1:], [40])
    missing = [list(r) for r in records]
    missing[0][2], missing[1][2] = None, ""  # missing is not ''
    empty = [list(r) for r in missing]
    empty[0][2] = ""
    assert _multiset(missing, [40]) != _multiset(empty, [40])
    assert _multiset(records[:19], [19]) is None  # fewer than 20 records
    assert _multiset([["x", "p", "w1"]] * 40, [40]) is None  # constant records: the same in unrelated files
