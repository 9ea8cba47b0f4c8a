"""The privacy ledger recognises a near repeat in another order: a released file re-sorted by a column with new
patients appended, or with some removed, is refused at the commit point unless allowed, and the accumulated epsilon
counts the earlier release, by the sketch of the set of records (bottom-K of the distinct records' hashes) kept in the
hospital's audit record. It is compared only when both files' records are distinctive (at least 90 % of the rows
distinct): disjoint halves of one file (other patients) are not matched, and samples of a population of few distinct
records (which share most of them) are not compared this way. In-order near repeats:
tests/test_ledger_near_repeat.py."""

import functools
import json
import os

import numpy as np
import pandas as pd
import pytest

from optrr_engine.release.audit import (
    AUDIT_NAME,
    DISTINCT_K,
    NEAR_REPEAT_SHARE,
    SET_MIN_DISTINCT_SHARE,
    SKETCH_K,
    RepeatReleaseError,
    load_audit,
    near_shares,
    set_shares,
    set_sketch_of,
    sketch_of,
)
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.schema import infer_schema
from tests.conftest import TEST_DATA

RARE = {"allow_rare_categories": True}  # the real files have rare categories (not this test's subject)
SENT = ("", ".manifest.json", ".report.html")


@functools.cache
def real(name: str) -> pd.DataFrame:
    return pd.read_csv(TEST_DATA / name, dtype=str, keep_default_na=False)


@functools.cache
def schema(name: str) -> dict:
    """The configuration optrr schema proposes for the whole file (identifiers dropped, numeric columns binned)."""
    return infer_schema(TEST_DATA / name).to_dict()


def write(path, frame: pd.DataFrame):
    frame.to_csv(path, index=False)
    return path


def release_names(folder, name: str) -> list[str]:
    """Files in ``folder`` that belong to the release ``name``: its final names and any temporary."""
    return sorted(f for f in os.listdir(folder) if name in f or f.endswith(".optrr-tmp"))


def resorted_with_new_rows(frame: pd.DataFrame):
    """(the first 90 % of the rows, the same rows sorted by Age with the other 10 %, new patients, appended)."""
    released, new = frame.iloc[: len(frame) * 9 // 10], frame.iloc[len(frame) * 9 // 10 :]
    return released, pd.concat([released.sort_values("Age", kind="stable"), new], ignore_index=True)


def resorted_with_rows_removed(frame: pd.DataFrame):
    """(all rows, 10 % of them removed and the rest sorted by chol)."""
    gone = np.random.default_rng(1).choice(len(frame), len(frame) // 10, replace=False)
    return frame, frame.drop(index=gone).sort_values("chol", kind="stable", ignore_index=True)


@pytest.mark.parametrize(
    "name, change, larger",
    [
        ("cirrhosis.csv", resorted_with_new_rows, "earlier"),
        ("heart_cleveland.csv", resorted_with_rows_removed, "this"),
    ],
    ids=["cirrhosis re-sorted, 10 % new rows appended", "heart_cleveland re-sorted, 10 % of the rows removed"],
)
def test_a_near_repeat_in_another_order_is_refused_and_counted(tmp_path, audit_dir, name, change, larger):
    released, again = change(real(name))
    cfg = schema(name)
    first = perturb_file(write(tmp_path / "january.csv", released), cfg, tmp_path / "r1.csv", **RARE)
    committed = []
    with pytest.raises(RepeatReleaseError) as caught:
        perturb_file(
            write(tmp_path / "february.csv", again),
            cfg,
            tmp_path / "r2.csv",
            at_commit=lambda: committed.append(1),
            **RARE,
        )
    exc = caught.value
    assert committed and exc.columns == [] and not exc.reordered  # the exact checks found nothing
    assert [r["created"] for r in exc.previous] == [first.audit_entry["created"]]
    [near] = exc.near
    assert near["reordered"] is True and near["file"] == "january.csv"
    shares = {"earlier": near["earlier_share"], "this": near["this_share"]}
    assert shares[larger] >= 0.95 and 0.8 < min(shares.values()) < 0.95  # 10 % added or removed
    release = f"the release of {near['created']} (file january.csv)"
    where = {
        "earlier": f"of the records of {release} are in this file again",
        "this": f"of this file's records were in {release}",
    }
    message = str(exc)
    shown = f"about {round(100 * shares[larger])} % {where[larger]}, found whatever their order: records of this file"
    assert shown in message
    assert "accumulated whole-record epsilon to at most" in message and "--allow-repeat" in message
    assert exc.accumulated == pytest.approx(2 * first.manifest["overall_epsilon"])  # the earlier release counted
    assert release_names(tmp_path, "r2.csv") == []  # nothing under the final names, no temporaries
    assert load_audit(audit_dir / AUDIT_NAME)["releases"] == [first.audit_entry]
    made = perturb_file(tmp_path / "february.csv", cfg, tmp_path / "r2.csv", allow_repeat=True, **RARE)
    assert made.ledger == [first.audit_entry, made.audit_entry]
    ordered = sketch_of(made.audit_entry), sketch_of(first.audit_entry)
    assert None not in ordered and max(near_shares(*ordered)) < NEAR_REPEAT_SHARE  # the in-order sketch missed it
    stored = made.audit_entry["input"]["records_set_sketch"]
    for suffix in SENT:  # the hospital's record only
        text = (tmp_path / f"r2.csv{suffix}").read_text(encoding="utf-8")
        assert "records_set" not in text and stored["hashes"][:16] not in text, suffix


def test_the_closest_near_repeat_says_in_another_order_in_the_release_dialog():
    from optrr_gui.release.dialog import repeat_sentence

    previous = [{"created": "2026-10-01T00:00:00Z", "input": {"file": "october.csv"}}]
    near = [{"created": "2026-10-01T00:00:00Z", "file": "october.csv", "earlier_share": 0.97, "this_share": 0.9}]
    reordered = [{**near[0], "reordered": True}]
    assert repeat_sentence(RepeatReleaseError("m", previous, 2.0, near=reordered)).startswith(
        "At least about 97 % of the records of the release of 2026-10-01T00:00:00Z (file october.csv) are in this "
        "file again, found whatever their order; "
    )
    assert "in the same order" in repeat_sentence(RepeatReleaseError("m", previous, 2.0, near=near))  # older dicts


@pytest.mark.parametrize("name", ["cirrhosis.csv", "nursery.csv"])
def test_disjoint_halves_of_one_file_are_compared_and_not_matched(tmp_path, name):
    """Other patients from the same file: no record in common (cirrhosis: 209 rows, whole sets; nursery: 6,480
    rows each, bottom-K sketches below a threshold and the distinct records estimated), the second half re-sorted."""
    frame = real(name)
    rows = np.random.default_rng(2).permutation(len(frame))
    one, two = frame.iloc[rows[: len(frame) // 2]], frame.iloc[rows[len(frame) // 2 :]]
    two = two.sort_values(list(two.columns[1:3]), kind="stable")
    cfg = schema(name)
    first = perturb_file(write(tmp_path / "one.csv", one), cfg, tmp_path / "r1.csv", **RARE)
    made = perturb_file(write(tmp_path / "two.csv", two), cfg, tmp_path / "r2.csv", **RARE)
    assert made.ledger == [made.audit_entry]
    ours, theirs = set_sketch_of(made.audit_entry), set_sketch_of(first.audit_entry)
    assert ours is not None and theirs is not None  # compared, not skipped: distinctive records
    assert set_shares(ours, theirs) == (0.0, 0.0)


def perturbed(frame: pd.DataFrame) -> dict:
    """Every column perturbed at epsilon 1 with its categories in ``frame``."""
    columns = [
        {"name": n, "role": "perturb", "epsilon": 1.0, "categories": sorted(frame[n].unique())} for n in frame.columns
    ]
    return {"method": "kronecker", "columns": columns}


def released_twice(tmp_path, one: pd.DataFrame, two: pd.DataFrame, cfg: dict):
    """The audit entries of ``one`` and of ``two`` released after it; ``two`` is not refused."""
    first = perturb_file(write(tmp_path / "one.csv", one), cfg, tmp_path / "r1.csv", **RARE)
    made = perturb_file(write(tmp_path / "two.csv", two), cfg, tmp_path / "r2.csv", **RARE)
    assert made.ledger == [made.audit_entry]  # no false alarm
    return first.audit_entry, made.audit_entry


def ungated(entry: dict):
    """An entry's set sketch as :func:`set_sketch_of` would give it without its distinct-records condition."""
    stored = entry["input"]["records_set_sketch"]
    hashes = np.frombuffer(bytes.fromhex(stored["hashes"]), dtype=">u8").astype(np.uint64)
    return hashes, stored["distinct"] / stored["rows"]


def test_samples_of_a_population_of_few_distinct_records_are_not_compared_this_way(tmp_path):
    """mushroom.csv restricted to 3 columns: two random samples of 1,000 different mushrooms share almost all of
    their (few) distinct records; with under 10 % of the rows distinct they are not compared this way."""
    frame = real("mushroom.csv")[["cap-shape", "cap-surface", "cap-color"]]
    rows = np.random.default_rng(3).permutation(len(frame))
    entries = released_twice(tmp_path, frame.iloc[rows[:1000]], frame.iloc[rows[1000:2000]], perturbed(frame))
    stored = [e["input"]["records_set_sketch"] for e in entries]
    assert all(s["rows"] == 1000 and s["distinct"] < 0.1 * s["rows"] for s in stored)
    assert [set_sketch_of(e) for e in entries] == [None, None]
    assert min(near_shares(*(ungated(e) for e in entries))) >= NEAR_REPEAT_SHARE  # distinct records in common


def test_a_small_sample_and_the_rest_of_a_population_of_repeated_records_are_not_matched(tmp_path):
    """car.csv restricted to 5 columns (each record 3 times): 300 cars, then the other 1,428. Nearly every record of
    the 300 is among the others', so 86 % of the rows of the first release would be found again (a false alarm);
    with 86 % of its rows distinct (under SET_MIN_DISTINCT_SHARE) the first is not compared this way."""
    frame = real("car.csv")[["buying", "maint", "doors", "persons", "lug_boot"]]
    rows = np.random.default_rng(5).permutation(len(frame))
    entries = released_twice(tmp_path, frame.iloc[rows[:300]], frame.iloc[rows[300:]], perturbed(frame))
    assert set_sketch_of(entries[0]) is None and 0.8 < ungated(entries[0])[1] < SET_MIN_DISTINCT_SHARE
    earlier, _this = set_shares(*(ungated(e) for e in reversed(entries)))
    assert earlier >= NEAR_REPEAT_SHARE  # what comparing them would have said


def test_old_entries_without_the_set_sketch_are_not_compared_this_way(tmp_path, audit_dir):
    released, again = resorted_with_rows_removed(real("heart_cleveland.csv"))
    cfg = schema("heart_cleveland.csv")
    perturb_file(write(tmp_path / "january.csv", released), cfg, tmp_path / "r1.csv", **RARE)
    write(tmp_path / "february.csv", again)
    with pytest.raises(RepeatReleaseError, match="found whatever their order"):
        perturb_file(tmp_path / "february.csv", cfg, tmp_path / "r2.csv", **RARE)
    audit = load_audit(audit_dir / AUDIT_NAME)
    del audit["releases"][0]["input"]["records_set_sketch"]  # as written by OptRR before set sketches
    (audit_dir / AUDIT_NAME).write_text(json.dumps(audit), encoding="utf-8")
    made = perturb_file(tmp_path / "february.csv", cfg, tmp_path / "r2.csv", **RARE)
    assert len(made.ledger) == 1


def raw_set(frame: pd.DataFrame, chunk_rows: int | None = None) -> dict | None:
    """ColumnFingerprints.record_set of ``frame`` (its columns as strings) fed ``chunk_rows`` at a time."""
    from tests.test_ledger_near_repeat import fingerprints

    return fingerprints(frame, chunk_rows).record_set()


def test_the_set_sketch_ignores_order_chunking_and_repeated_records_and_stays_small():
    frame = real("nursery.csv")  # 12,960 distinct records (more than DISTINCT_K: the count is estimated)
    whole = raw_set(frame)
    assert whole is not None and whole["rows"] == len(frame) and len(whole["hashes"]) == 16 * SKETCH_K
    assert len(json.dumps(whole)) < 4200  # the audit entry's share
    assert abs(whole["distinct"] - len(frame)) < 0.05 * len(frame)
    shuffled = frame.sample(frac=1.0, random_state=4, ignore_index=True)
    assert raw_set(shuffled, 1000) == raw_set(shuffled, 7) == whole
    repeated = raw_set(pd.concat([frame, frame.iloc[:3000]], ignore_index=True), 5000)
    assert repeated["hashes"] == whole["hashes"] and repeated["rows"] == len(frame) + 3000
    assert abs(repeated["distinct"] - len(frame)) < 0.05 * len(frame)
    small = frame.iloc[: DISTINCT_K - 1]
    assert raw_set(pd.concat([small, small[:100]]))["distinct"] == DISTINCT_K - 1  # exact below DISTINCT_K
    assert raw_set(frame.iloc[:19]) is None  # fewer than FINGERPRINT_MIN_ROWS records
