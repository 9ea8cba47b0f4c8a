"""The privacy ledger recognises a near repeat: the same records in the same order with a few rows appended, one
deleted or a few edited (a monthly re-export of the same patients) is refused at the commit point (nothing under the
final names) unless allowed, by the records' similarity sketch (content-defined chunks, bottom-K) kept in the
hospital's audit record. Unrelated files with the same low-entropy columns (independent samples of one file, files
sorted by their columns, random binary columns) are not, and the sketch does not depend on the read chunk size."""

import os
import pickle

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from optrr_engine.io.readers import ReaderOptions
from optrr_engine.release.audit import (
    AUDIT_NAME,
    NEAR_REPEAT_SHARE,
    SKETCH_K,
    ColumnFingerprints,
    RepeatReleaseError,
    load_audit,
    near_shares,
    repeat_message,
    sketch_of,
)
from optrr_engine.release.perturb import perturb_file

DATA = os.path.join(os.path.dirname(__file__), "data", "nursery.csv")
#: Five categorical columns of nursery.csv (a full factorial over them: every category frequent, none rare).
COLUMNS = ["parents", "has_nurs", "form", "children", "housing"]


@pytest.fixture(scope="module")
def nursery() -> pd.DataFrame:
    return pd.read_csv(DATA, dtype=str, keep_default_na=False)[COLUMNS]


def config(frame: pd.DataFrame) -> dict:
    return {
        "method": "kronecker",
        "columns": [
            {"name": n, "role": "perturb", "epsilon": 1.0, "categories": sorted(frame[n].unique())}
            for n in frame.columns
        ],
    }


def samples(nursery: pd.DataFrame, n: int = 1000, parts: int = 1, seed: int = 1) -> list[pd.DataFrame]:
    """``parts`` samples of ``n`` rows each, no row in two of them, in random order (a patient export)."""
    rows = np.random.default_rng(seed).choice(len(nursery), n * parts, replace=False)
    return [nursery.iloc[rows[i * n : (i + 1) * n]].reset_index(drop=True) for i in range(parts)]


def write(path, frame: pd.DataFrame):
    frame.to_csv(path, index=False)
    return path


def release_names(folder, name: str) -> list[str]:
    """Files in ``folder`` that belong to the release ``name``: its final names and any temporary."""
    return sorted(f for f in os.listdir(folder) if name in f or f.endswith(".optrr-tmp"))


def appended(frame, extra):
    return pd.concat([frame, extra], ignore_index=True)


def deleted(frame):
    return frame.drop(index=len(frame) // 2).reset_index(drop=True)


def edited(frame, rows: int = 10, seed: int = 7):
    """``rows`` rows with one value changed to another category of the column (corrections), every column in
    turn (so no column stays identical, value by value)."""
    rng = np.random.default_rng(seed)
    out = frame.copy()
    for k, i in enumerate(rng.choice(len(frame), rows, replace=False)):
        col = COLUMNS[k % len(COLUMNS)]
        others = sorted(set(frame[col]) - {out.at[i, col]})
        out.at[i, col] = others[int(rng.integers(len(others)))]
    return out


@pytest.mark.parametrize(
    "change",
    [
        lambda f, extra: appended(f, extra[:1]),
        lambda f, extra: appended(f, extra[:50]),
        lambda f, extra: deleted(f),
        lambda f, extra: edited(f),
    ],
    ids=["1 row appended", "50 rows appended", "1 row deleted in the middle", "10 rows edited"],
)
def test_a_near_repeat_is_refused_at_the_commit_point_unless_allowed(tmp_path, audit_dir, nursery, change):
    base, extra = samples(nursery, parts=2)
    cfg = config(nursery)
    src = write(tmp_path / "january.csv", base)
    again = write(tmp_path / "february.csv", change(base, extra))
    first = perturb_file(src, cfg, tmp_path / "r1.csv")
    committed = []
    with pytest.raises(RepeatReleaseError) as caught:
        perturb_file(again, cfg, tmp_path / "r2.csv", at_commit=lambda: committed.append(True))
    exc = caught.value
    assert committed and exc.columns == [] and not exc.reordered  # the exact checks found nothing
    assert [r["created"] for r in exc.previous] == [first.audit_entry["created"]]
    [near] = exc.near
    assert near["file"] == "january.csv" and near["created"] == first.audit_entry["created"]
    assert max(near["earlier_share"], near["this_share"]) >= NEAR_REPEAT_SHARE
    assert near["earlier_share"] >= near["this_share"]  # worded as the earlier release's records found here
    percent = round(100 * near["earlier_share"])
    where = f"of the records of the release of {near['created']} (file january.csv) are in this file again"
    message = str(exc)
    assert f"about {percent} % {where}, in the same order: records of this file were released 1 time(s)" in message
    assert "accumulated whole-record epsilon to at most" in message  # the sum bounds a partial overlap
    assert "--allow-repeat" in message
    assert exc.accumulated == pytest.approx(2 * first.manifest["overall_epsilon"])
    assert release_names(tmp_path, "r2.csv") == []  # nothing under the final names, no temporaries
    assert load_audit(audit_dir / AUDIT_NAME)["releases"] == [first.audit_entry]
    made = perturb_file(again, cfg, tmp_path / "r2.csv", allow_repeat=True)
    assert made.ledger == [first.audit_entry, made.audit_entry]


def test_small_changes_keep_most_chunks(nursery):
    """The shares behind the refusals above: about all of the earlier records found after an append or a deletion,
    more than half of them after ten edits scattered over the file (each changes about one chunk of 32 rows)."""
    base, extra = samples(nursery, parts=2)
    ours = sketch(base)
    for changed, least in ((appended(base, extra[:1]), 0.9), (deleted(base), 0.9), (edited(base), NEAR_REPEAT_SHARE)):
        earlier, this = near_shares(sketch(changed), ours)
        assert min(earlier, this) >= least, (earlier, this)


def sketch(frame: pd.DataFrame, chunk_rows: int | None = None):
    """sketch_of a ColumnFingerprints sketch of ``frame`` (its columns as strings) fed ``chunk_rows`` at a time."""
    return sketch_of({"input": {"records_sketch": raw_sketch(frame, chunk_rows)}})


def raw_sketch(frame: pd.DataFrame, chunk_rows: int | None = None) -> dict | None:
    return fingerprints(frame, chunk_rows).sketch()


def fingerprints(frame: pd.DataFrame, chunk_rows: int | None = None) -> ColumnFingerprints:
    """ColumnFingerprints of ``frame`` (its columns as strings) fed ``chunk_rows`` at a time (all at once: None)."""
    table = pa.Table.from_pandas(frame.astype(str), preserve_index=False)
    prints = ColumnFingerprints(list(frame.columns))
    step = chunk_rows or max(1, len(frame))
    for start in range(0, len(frame), step):
        prints.add(table.slice(start, step))
    return prints


def assert_not_flagged(tmp_path, one: pd.DataFrame, two: pd.DataFrame, cfg: dict) -> None:
    """``two`` released after ``one`` is not refused; both sketches were compared (neither too regular)."""
    first = perturb_file(write(tmp_path / "one.csv", one), cfg, tmp_path / "r1.csv")
    made = perturb_file(write(tmp_path / "two.csv", two), cfg, tmp_path / "r2.csv")
    assert made.ledger == [made.audit_entry]
    ours, theirs = sketch_of(made.audit_entry), sketch_of(first.audit_entry)
    assert ours is not None and theirs is not None  # compared, not skipped
    assert max(near_shares(ours, theirs)) < NEAR_REPEAT_SHARE


def test_two_independent_samples_of_one_file_are_not_flagged(tmp_path, nursery):
    one, two = samples(nursery, parts=2, seed=2)
    assert_not_flagged(tmp_path, one, two, config(nursery))


def test_two_different_files_sorted_by_their_columns_are_not_flagged(tmp_path, nursery):
    one, two = (s.sort_values(COLUMNS, ignore_index=True) for s in samples(nursery, parts=2, seed=3))
    assert_not_flagged(tmp_path, one, two, config(nursery))


def test_two_files_of_random_binary_columns_are_not_flagged(tmp_path):
    one, two = (
        pd.DataFrame(np.random.default_rng(seed).choice(["no", "yes"], (1000, 2)), columns=["x", "y"])
        for seed in (4, 5)
    )
    assert_not_flagged(tmp_path, one, two, config(one))


def test_too_regular_files_are_not_compared():
    """Sorted binary columns: runs of one record, whose chunks do not count (fewer than 4 counting chunks)."""
    frame = pd.DataFrame(np.random.default_rng(6).choice(["no", "yes"], (1000, 2)), columns=["x", "y"])
    raw = raw_sketch(frame.sort_values(["x", "y"], ignore_index=True))
    assert raw is not None and raw["rows"] == 1000 and raw["chunks"] < 4
    assert sketch_of({"input": {"records_sketch": raw}}) is None
    assert raw_sketch(frame.iloc[:19]) is None  # fewer than FINGERPRINT_MIN_ROWS records


def test_the_sketch_does_not_depend_on_the_read_chunk_size(tmp_path, nursery):
    [base] = samples(nursery, seed=8)
    src = write(tmp_path / "in.csv", base)
    cfg = config(nursery)
    sketches = [
        perturb_file(
            src, cfg, tmp_path / f"r{rows}.csv", allow_repeat=True, reader_options=ReaderOptions(chunk_rows=rows)
        ).audit_entry["input"]["records_sketch"]
        for rows in (7, 100, 1000)
    ]
    assert sketches[0] is not None and sketches[0]["rows"] == 1000
    assert sketches[0] == sketches[1] == sketches[2] == raw_sketch(base, 33) == raw_sketch(base, 1)


def test_the_sketch_stays_bounded_on_200000_rows(nursery):
    rows = np.random.default_rng(9).integers(0, len(nursery), 200_000)
    frame = nursery.iloc[rows].reset_index(drop=True)
    raw = raw_sketch(frame, 65_536)
    assert raw == raw_sketch(frame, 50_000)
    assert raw["rows"] == 200_000 and raw["covered"] > 190_000 and 200_000 / 64 < raw["chunks"] < 200_000 / 16
    assert len(raw["hashes"]) == 16 * SKETCH_K  # the K smallest chunk hashes, 16 hex digits each
    hashes, chunks = sketch_of({"input": {"records_sketch": raw}})
    assert len(hashes) == SKETCH_K and chunks == raw["chunks"] and np.all(np.diff(hashes) > 0)
    half = raw_sketch(frame.iloc[:100_000], 30_000)  # the first half: all of it in the whole file
    earlier, this = near_shares(sketch(frame, 65_536), sketch_of({"input": {"records_sketch": half}}))
    assert earlier > 0.8 and 0.35 < this < 0.65


def test_the_same_records_reordered_are_still_found_by_the_multiset(tmp_path, nursery):
    [base] = samples(nursery, seed=10)
    cfg = config(nursery)
    perturb_file(write(tmp_path / "in.csv", base), cfg, tmp_path / "r1.csv")
    shuffled = base.sample(frac=1, random_state=11, ignore_index=True)
    with pytest.raises(RepeatReleaseError, match="the same records in another order were released 1 time") as caught:
        perturb_file(write(tmp_path / "copy.csv", shuffled), cfg, tmp_path / "r2.csv")
    assert caught.value.reordered and caught.value.near == []


def test_the_error_survives_pickling_and_the_message_says_how_many_are_not_named():
    previous = [
        {"created": f"2026-0{m}-01T00:00:00Z", "input": {"file": f"m{m}.csv"}, "overall_epsilon": 1}
        for m in range(1, 6)
    ]
    near = [
        {"created": p["created"], "file": p["input"]["file"], "earlier_share": 0.5 + m / 10, "this_share": 0.4}
        for m, p in enumerate(previous)
    ]
    message = repeat_message(previous, 1.0, near=near)
    assert message.startswith(
        "at least about 90 % of the records of the release of 2026-05-01T00:00:00Z (file m5.csv) are in this file "
        "again, in the same order: records of this file were released 5 time(s) before (2026-03-01T00:00:00Z of "
        "m3.csv, 2026-04-01T00:00:00Z of m4.csv, 2026-05-01T00:00:00Z of m5.csv, and 2 earlier)"
    ), message
    assert "and 1 earlier" in repeat_message(previous[1:], 1.0)
    assert "earlier" not in repeat_message(previous[2:], 1.0)
    exc = pickle.loads(pickle.dumps(RepeatReleaseError(message, previous, 6.0, near=near)))
    assert exc.near == near and str(exc) == message and exc.accumulated == 6.0


def test_the_release_dialog_says_how_much_of_an_earlier_release_is_in_the_file():
    from optrr_gui.release.dialog import repeat_sentence

    previous = [{"created": "2026-10-01T00:00:00Z", "input": {"file": "october.csv"}}]
    near = [{"created": "2026-10-01T00:00:00Z", "file": "october.csv", "earlier_share": 0.97, "this_share": 0.9}]
    assert repeat_sentence(RepeatReleaseError("m", previous, 2.0, near=near)) == (
        "At least about 97 % of the records of the release of 2026-10-01T00:00:00Z (file october.csv) are in this "
        "file again, in the same order; records of this file were released 1 time before (file october.csv)"
    )


def test_the_sketch_is_kept_in_the_audit_record_only(tmp_path, audit_dir, nursery):
    [base] = samples(nursery, seed=12)
    made = perturb_file(write(tmp_path / "in.csv", base), config(nursery), tmp_path / "r1.csv")
    stored = load_audit(audit_dir / AUDIT_NAME)["releases"][0]["input"]["records_sketch"]
    assert stored == made.audit_entry["input"]["records_sketch"] and stored["rows"] == 1000
    first = stored["hashes"][:16]
    for suffix in ("", ".manifest.json", ".report.html"):
        text = (tmp_path / f"r1.csv{suffix}").read_text(encoding="utf-8")
        assert "sketch" not in text and first not in text, suffix


def test_a_small_slice_of_a_large_file_is_found_whole_and_heavy_edits_are_not(nursery):
    """Containment by bottom-K: the whole of a 3,000-row slice is in the 12,960-row file it was cut from (the
    Jaccard-based estimate ranged 0.40-1.0 here); and the documented limit: with 3 % of the rows edited throughout,
    under half of the runs of ~32 rows stay unchanged, so the file is not flagged."""
    whole = nursery.sample(frac=1.0, random_state=3).reset_index(drop=True)
    big = sketch(whole)
    for start in (0, 4000, 9000):
        part = sketch(whole.iloc[start:start + 3000].reset_index(drop=True))
        in_big, _big_in_part = near_shares(part, big)
        assert _big_in_part >= 0.9, start  # all of the slice's chunks but its cut ends are the file's
        assert 0.15 < in_big < 0.35, (start, in_big)  # the slice is about 3,000 / 12,960 of the file
    base = whole.iloc[:3000].reset_index(drop=True)
    heavy = edited(base, rows=90)  # 3 %
    assert max(near_shares(sketch(heavy), sketch(base))) < NEAR_REPEAT_SHARE


def test_the_windows_question_says_at_most_for_a_near_repeat():
    from optrr_gui.release.dialog import accumulated_text

    previous = [{"created": "2026-10-01T00:00:00Z", "input": {"file": "october.csv"}, "overall_epsilon": 1.0}]
    near = [{"created": "2026-10-01T00:00:00Z", "file": "october.csv", "earlier_share": 0.97, "this_share": 0.9}]
    assert accumulated_text(RepeatReleaseError("m", previous, 2.0, near=near)).startswith("at most 2")
    exact = accumulated_text(RepeatReleaseError("m", previous, 2.0))
    assert exact.startswith("2") and "less for records in only some of them" in exact
