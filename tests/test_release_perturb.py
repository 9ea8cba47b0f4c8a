"""perturb_file end to end: real files, dropped columns, shuffling, seeds, formats, budgets, the honesty rule,
and that cancel / errors / a full disk leave no output and an untouched input."""

import errno
import hashlib
import json
import os

import numpy as np
import pandas as pd
import pytest

from optrr_engine.errors import Cancelled, InputError
from optrr_engine.io.readers import ReaderOptions, iter_chunks
from optrr_engine.release import shuffle as shuffle_mod
from optrr_engine.release.codec import Codec
from optrr_engine.release.config import ColumnConfig, ReleaseConfig, save_config
from optrr_engine.release.manifest import load_manifest, mechanism_from_manifest
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.randomness import NOT_PRIVATE_COLUMN
from optrr_engine.release.schema import infer_schema
from tests.conftest import TEST_DATA


def digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def read(path, **opts) -> pd.DataFrame:
    frames = list(iter_chunks(path, ReaderOptions(**opts) if opts else None))
    return pd.concat(frames, ignore_index=True)


def make_data(path, n=3000, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "id": [f"R{i:06d}" for i in range(n)],
            "a": rng.choice(["x", "y", "z"], n),
            "b": rng.choice(["p", "q", "r", "s"], n),
            "secret": [f"SECRET-{i}" for i in range(n)],
            "c": rng.choice(["0", "1"], n),
        }
    )
    df.to_csv(path, index=False)
    return df


def base_config(eps=1.0, **kw) -> ReleaseConfig:
    cols = [
        ColumnConfig(name="id", role="drop"),
        ColumnConfig(name="a", role="perturb", epsilon=eps, categories=["x", "y", "z"]),
        ColumnConfig(name="b", role="perturb", epsilon=eps, categories=["p", "q", "r", "s"]),
        ColumnConfig(name="c", role="perturb", epsilon=eps, categories=["0", "1"]),
    ]  # "secret" is not listed at all
    return ReleaseConfig(method=kw.pop("method", "kronecker"), columns=cols, **kw)


def assert_nothing_written(folder, before: set):
    assert set(os.listdir(folder)) == before, set(os.listdir(folder)) ^ before


@pytest.mark.parametrize("name", ["breast_cancer.csv", "heart_cleveland.csv", "nursery.csv"])
def test_real_files_schema_perturb_manifest(tmp_path, name, developer, audit_dir):
    src = TEST_DATA / name
    before = digest(src)
    cfg = infer_schema(src)
    save_config(cfg, tmp_path / "release.json")
    out = tmp_path / "release.csv"
    rare = {"allow_rare_categories": True}  # the files have rare categories (not this test's subject)
    manifest = perturb_file(src, tmp_path / "release.json", out, insecure_test_seed=11, **rare).manifest
    assert digest(src) == before
    loaded = load_manifest(str(out) + ".manifest.json")
    assert loaded == manifest
    df = read(out)
    names = [c.name for c in cfg.perturbed()]
    assert list(df.columns) == [NOT_PRIVATE_COLUMN, *names] and names == [a["name"] for a in manifest["attributes"]]
    assert set(df[NOT_PRIVATE_COLUMN]) == {"yes"}  # the file itself says NOT PRIVATE (test seed)
    audit = json.loads((audit_dir / "optrr-audit.json").read_text())
    entry = audit["releases"][-1]
    assert manifest["rows"] == len(df) == entry["rows_read"] == entry["rows"]
    for a in manifest["attributes"]:
        assert set(df[a["name"]]) <= set(a["categories"]), a["name"]
    mech = mechanism_from_manifest(manifest)
    np.testing.assert_allclose([a["achieved_epsilon"] for a in manifest["attributes"]], mech.attribute_epsilons())
    assert manifest["overall_epsilon"] == pytest.approx(mech.overall_epsilon())
    assert entry["input"]["sha256"] == before and manifest["output_sha256"] == digest(out) == entry["output_sha256"]
    assert manifest["shuffled"] is True and manifest["randomness"]["private"] is False
    assert manifest["randomness"] == {**entry["randomness"]} and manifest["randomness"]["test_seed"] == 11
    assert entry["dropped_columns"] == [c.name for c in cfg.columns if c.role == "drop"]
    assert "input" not in manifest and "dropped_columns" not in manifest and "rows_read" not in manifest
    report = (tmp_path / "release.csv.report.html").read_text()
    assert report.startswith("<!DOCTYPE html>") and f"{manifest['overall_epsilon']:.6g}" in report


def test_receivers_can_estimate_from_a_release(tmp_path, developer):
    from optrr_engine.estimation import estimate_release

    src = TEST_DATA / "nursery.csv"
    cfg = infer_schema(src)
    out = tmp_path / "nursery_release.csv"
    perturb_file(src, cfg, out, insecure_test_seed=5, audit_dir=tmp_path, allow_rare_categories=True)  # 'recommend' (2)
    est = estimate_release(str(out), ["finance"])
    truth = read(src)["finance"].value_counts(normalize=True)
    for label, value in zip(est.categories[0], est.estimate, strict=True):
        assert abs(value - truth[label]) < 0.05


def test_dropped_and_unlisted_columns_never_reach_the_output(tmp_path, developer, audit_dir):
    make_data(tmp_path / "in.csv", 500)
    for fmt in ("csv", "parquet", "xlsx"):
        out = tmp_path / f"out.{fmt}"
        perturb_file(tmp_path / "in.csv", base_config(), out, insecure_test_seed=1, allow_repeat=True)
        assert list(read(out).columns) == [NOT_PRIVATE_COLUMN, "a", "b", "c"]
        for path in (out, str(out) + ".manifest.json", str(out) + ".report.html"):
            data = open(path, "rb").read()
            assert b"SECRET" not in data and b"R000123" not in data, path
            assert b"in.csv" not in data and b"secret" not in data, path  # nothing about the raw file
        entry = json.loads((audit_dir / "optrr-audit.json").read_text())["releases"][-1]
        assert entry["dropped_columns"] == ["id", "secret"] and entry["input"]["file"] == "in.csv"


def test_a_column_named_like_the_test_seed_marker_is_refused_in_every_release(tmp_path, audit_dir):
    """A source column named NOT_PRIVATE_insecure_test_seed, kept, would make a private release read as NOT PRIVATE
    to its recipient (estimate warns on that column): refused before the pass, whatever the randomness."""
    df = make_data(tmp_path / "in.csv", 300)
    df.rename(columns={"secret": NOT_PRIVATE_COLUMN}).to_csv(tmp_path / "in.csv", index=False)
    cfg = base_config()
    cfg.columns.append(ColumnConfig(name=NOT_PRIVATE_COLUMN, role="keep"))
    before = set(os.listdir(tmp_path))
    with pytest.raises(InputError, match="marker of a test-seed release; rename it"):
        perturb_file(tmp_path / "in.csv", cfg, tmp_path / "out.csv", allow_flagged_kept=True)
    assert_nothing_written(tmp_path, before)


def test_kept_columns_stay_with_their_records_through_the_shuffle(tmp_path, monkeypatch, developer):
    src = make_data(tmp_path / "in.csv", 4000)
    monkeypatch.setattr(shuffle_mod, "TARGET_BUCKET_BYTES", 4 << 10)  # many buckets ...
    monkeypatch.setattr(shuffle_mod, "MAX_BUCKET_BYTES", 8 << 10)  # ... and re-split oversized ones
    cfg = base_config(eps=50.0)  # eps 50: P(change) ~ e^-50, so each record must keep its values
    cfg.columns[0].role = "keep"
    # the kept 'id' (a value per row) follows its record: kept on purpose, not the kept-column gate's test
    manifest = perturb_file(
        tmp_path / "in.csv", cfg, tmp_path / "out.csv", insecure_test_seed=3, allow_flagged_kept=True
    ).manifest
    out = read(tmp_path / "out.csv")
    assert list(out.columns) == [NOT_PRIVATE_COLUMN, "id", "a", "b", "c"] and manifest["kept_columns"] == ["id"]
    assert sorted(out["id"]) == sorted(src["id"]) and out["id"].tolist() != src["id"].tolist()
    merged = out.merge(src, on="id", suffixes=("_out", "_in"))
    for col in ("a", "b", "c"):
        assert (merged[f"{col}_out"] == merged[f"{col}_in"]).all()
    position = out["id"].str[1:].astype(int).to_numpy()
    assert abs(np.corrcoef(position, np.arange(len(position)))[0, 1]) < 0.1
    unshuffled = perturb_file(
        tmp_path / "in.csv", cfg, tmp_path / "keep.csv", insecure_test_seed=3, shuffle=False, allow_repeat=True,
        allow_flagged_kept=True,
    ).manifest
    assert read(tmp_path / "keep.csv")["id"].tolist() == src["id"].tolist() and unshuffled["shuffled"] is False


def test_external_shuffle_gives_uniform_permutations(tmp_path):
    """4 records, 3 buckets, 2400 shuffles: every one of the 24 orders equally likely (chi-square)."""
    import pyarrow as pa
    from scipy.stats import chisquare

    rng = np.random.default_rng(8)
    table = pa.table({"v": pa.array([0, 1, 2, 3], pa.int16())})
    counts: dict = {}
    for _ in range(2400):
        sh = shuffle_mod.ExternalShuffle(str(tmp_path), 3, rng)
        sh.add(table.slice(0, 2))
        sh.add(table.slice(2))
        order = tuple(v for t in sh.tables(10) for v in t.column("v").to_pylist())
        sh.cleanup()
        counts[order] = counts.get(order, 0) + 1
    assert len(counts) == 24 and all(sorted(k) == [0, 1, 2, 3] for k in counts)
    assert chisquare(list(counts.values())).pvalue > 1e-3
    assert os.listdir(tmp_path) == []


def test_pipeline_is_exactly_the_mechanism_applied_to_the_codes(tmp_path, audit_dir):
    """A keyed release = the mechanism applied chunk by chunk to the codes with AES-128-CTR keyed by
    HMAC-SHA256(key, "optrr-stream-2\\0perturb\\0" + SHA-256(context)) (docs/security.md), recomputed here."""
    import hmac

    from randomgen.aes import AESCounter

    from optrr_engine.release.randomness import context_digest

    make_data(tmp_path / "in.csv", 2500)
    key = bytes(range(32))
    cfg = base_config(method="optimal")
    perturb_file(
        tmp_path / "in.csv",
        cfg,
        tmp_path / "out.csv",
        key=key,
        shuffle=False,
        reader_options=ReaderOptions(chunk_rows=1000),
    )
    codec = Codec(base_config(method="optimal"))
    mech = mechanism_from_manifest(load_manifest(tmp_path / "out.csv.manifest.json"))
    entry = json.loads((audit_dir / "optrr-audit.json").read_text())["releases"][-1]
    context = context_digest(
        input_sha256=digest(tmp_path / "in.csv"),
        config=entry["configuration"],
        reader_options=entry["input"]["reader"],
        codebook=codec.codebook(),
        mechanism=mech.to_dict(),
        kept=[],
        shuffle=False,
        chunk_rows=entry["chunk_rows"],
    )
    stream_key = hmac.new(key, b"optrr-stream-2\0perturb\0" + context, "sha256").digest()[:16]
    rng = np.random.Generator(AESCounter(key=int.from_bytes(stream_key, "little"), counter=0))
    expected = []
    for frame in iter_chunks(tmp_path / "in.csv", ReaderOptions(chunk_rows=entry["chunk_rows"])):
        expected.append(codec.decode(mech.sample(codec.encode(frame), rng)))
    pd.testing.assert_frame_equal(read(tmp_path / "out.csv"), pd.concat(expected, ignore_index=True))


def test_keys_reproduce_test_seeds_are_marked_and_os_entropy_is_the_default(tmp_path, developer, audit_dir):
    make_data(tmp_path / "in.csv", 3000)
    again = {"allow_repeat": True}
    key, other = bytes(range(32)), bytes(range(1, 33))
    k1 = perturb_file(tmp_path / "in.csv", base_config(), tmp_path / "k1.csv", key=key).manifest
    perturb_file(tmp_path / "in.csv", base_config(), tmp_path / "k2.csv", key=key, **again)
    perturb_file(tmp_path / "in.csv", base_config(), tmp_path / "k3.csv", key=other, **again)
    assert digest(tmp_path / "k1.csv") == digest(tmp_path / "k2.csv") != digest(tmp_path / "k3.csv")
    assert k1["randomness"] == {"source": "secret-key", "generator": k1["randomness"]["generator"], "private": True}
    audit = json.loads((audit_dir / "optrr-audit.json").read_text())["releases"]
    fingerprints = [r["randomness"].get("key_fingerprint") for r in audit]
    assert fingerprints[0] == fingerprints[1] != fingerprints[2] and len(fingerprints[0]) == 16
    assert {r["randomness"]["stream_scheme"] for r in audit} == {"optrr-stream-2"}  # what reproduces it
    # k2 reproduced k1 byte for byte (the same noise): the ledger counts that information once, k3 anew
    from optrr_engine.release.audit import accumulated_epsilon

    eps = [r["overall_epsilon"] for r in audit]
    assert accumulated_epsilon(audit) == pytest.approx(eps[0] + eps[2]) and eps[0] > 0
    for name in ("k1.csv", "k1.csv.manifest.json", "k1.csv.report.html"):
        data = (tmp_path / name).read_bytes()
        assert key.hex().encode() not in data and fingerprints[0].encode() not in data, name

    t1 = perturb_file(tmp_path / "in.csv", base_config(), tmp_path / "s1.csv", insecure_test_seed=7, **again).manifest
    t2 = perturb_file(tmp_path / "in.csv", base_config(), tmp_path / "s2.csv", insecure_test_seed=7, **again).manifest
    assert digest(tmp_path / "s1.csv") == digest(tmp_path / "s2.csv")
    assert t1["output_sha256"] == t2["output_sha256"]
    assert t1["randomness"]["private"] is False and t1["randomness"]["test_seed"] == 7
    assert "NOT PRIVATE" in t1["randomness"]["warning"]
    assert "NOT PRIVATE" in (tmp_path / "s1.csv.report.html").read_text()
    assert (tmp_path / "s1.csv").read_text().splitlines()[1].startswith("yes,")  # the data file says it too
    assert t1["columns"][0] == NOT_PRIVATE_COLUMN and list(read(tmp_path / "s1.csv").columns)[0] == NOT_PRIVATE_COLUMN

    u1 = perturb_file(tmp_path / "in.csv", base_config(), tmp_path / "u1.csv", **again).manifest
    perturb_file(tmp_path / "in.csv", base_config(), tmp_path / "u2.csv", **again)
    assert u1["randomness"]["source"] == "os-entropy" and u1["randomness"]["private"] is True
    assert digest(tmp_path / "u1.csv") != digest(tmp_path / "u2.csv")
    assert "NOT PRIVATE" not in (tmp_path / "u1.csv.report.html").read_text()
    for name in ("k1.csv", "u1.csv"):  # private releases carry no marker column
        assert list(read(tmp_path / name).columns) == ["a", "b", "c"], name


def test_output_formats_follow_the_input_or_the_request(tmp_path, developer):
    make_data(tmp_path / "in.csv", 300)
    pd.read_csv(tmp_path / "in.csv", dtype=str).to_parquet(tmp_path / "in.parquet")
    m = perturb_file(tmp_path / "in.parquet", base_config(), tmp_path / "from_parquet", insecure_test_seed=1).manifest
    assert m["output"]["format"] == "parquet" and len(read_parquet(tmp_path / "from_parquet")) == 300
    for fmt in ("csv", "xlsx", "sav", "dta", "parquet"):
        out = tmp_path / f"r.{fmt}"
        m = perturb_file(tmp_path / "in.csv", base_config(), out, insecure_test_seed=1, allow_repeat=True).manifest
        assert m["output"]["format"] == fmt
        df = read(out)
        assert list(df.columns) == [NOT_PRIVATE_COLUMN, "a", "b", "c"] and len(df) == 300
        assert set(df[NOT_PRIVATE_COLUMN]) == {"yes"}
        assert set(df["b"]) <= {"p", "q", "r", "s"}
    m = perturb_file(
        tmp_path / "in.csv", base_config(), tmp_path / "noext", output_format="parquet", insecure_test_seed=1,
        allow_repeat=True,
    ).manifest
    assert m["output"]["format"] == "parquet" and len(read_parquet(tmp_path / "noext")) == 300
    with pytest.raises(InputError, match="ends in .csv but format parquet"):
        perturb_file(tmp_path / "in.csv", base_config(), tmp_path / "x.csv", output_format="parquet")


def read_parquet(path):
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pandas()


def test_semicolon_input_gives_semicolon_output_and_bom_is_kept(tmp_path, developer):
    src = tmp_path / "eu.csv"
    src.write_bytes("\ufeffa;c\nx;1\ny;0\nz;1\n".encode())
    cfg = base_config()
    cfg.columns = [c for c in cfg.columns if c.name in ("a", "c")]
    m = perturb_file(  # 3 rows: every category is rare (not this test's subject)
        src, cfg, tmp_path / "out.csv", insecure_test_seed=1, shuffle=False, allow_rare_categories=True
    ).manifest
    data = (tmp_path / "out.csv").read_bytes()
    assert data.startswith(b"\xef\xbb\xbfNOT_PRIVATE_insecure_test_seed;a;c\nyes;") and m["output"]["delimiter"] == ";"


def test_budget_mode_meets_the_target(tmp_path, developer):
    make_data(tmp_path / "in.csv", 300)
    cfg = base_config(method="family", target_total=2.0)
    cfg.columns[1].weight = 2.0
    m = perturb_file(tmp_path / "in.csv", cfg, tmp_path / "out.csv", insecure_test_seed=1).manifest
    assert m["overall_epsilon"] <= 2.0 + 1e-9 and m["design"]["budget"]["target_total"] == 2.0
    eps = [a["achieved_epsilon"] for a in m["attributes"]]
    assert eps[0] == pytest.approx(2 * eps[1], rel=1e-6)


def heuristic_data(tmp_path):
    rng = np.random.default_rng(0)
    cats = ["v0", "v1", "v2", "v3", "v4"]
    pd.DataFrame({f"q{i}": rng.choice(cats, 200) for i in range(4)}).to_csv(tmp_path / "h.csv", index=False)
    cols = [
        ColumnConfig(name=f"q{i}", role="perturb", epsilon=e, categories=cats)
        for i, e in enumerate([5.5, 2.9, 1.3, 1.1])
    ]
    return ReleaseConfig(method="heuristic", columns=cols)


def test_heuristic_raising_an_epsilon_needs_explicit_acceptance(tmp_path):
    cfg = heuristic_data(tmp_path)
    before = set(os.listdir(tmp_path))
    with pytest.raises(InputError, match="raise the epsilon of column 'q3' from 1.1 to 5.5.*accept_changed_epsilons"):
        perturb_file(tmp_path / "h.csv", cfg, tmp_path / "out.csv")
    assert_nothing_written(tmp_path, before)
    cfg.accept_changed_epsilons = True
    m = perturb_file(tmp_path / "h.csv", cfg, tmp_path / "out.csv").manifest
    q3 = m["attributes"][3]
    assert q3["requested_epsilon"] == 1.1 and q3["achieved_epsilon"] == pytest.approx(5.5, abs=0.01)
    assert m["design"]["epsilon_changes"][0]["name"] == "q3" and m["design"]["accept_changed_epsilons"]


def test_bins_without_edges_are_computed_and_missing_rows_excluded(tmp_path, developer, audit_dir):
    rng = np.random.default_rng(2)
    ages = rng.integers(20, 80, 400).astype(str).astype(object)
    ages[::40] = ""
    pd.DataFrame({"age": ages, "c": rng.choice(["0", "1"], 400)}).to_csv(tmp_path / "in.csv", index=False)
    cols = [
        ColumnConfig(
            name="age",
            role="perturb",
            type="numeric",
            epsilon=1.0,
            bins={"method": "equal_width", "count": 3},
            missing="exclude",
        ),
        ColumnConfig(name="c", role="perturb", epsilon=1.0, categories=["0", "1"]),
    ]
    cfg = ReleaseConfig(method="kronecker", columns=cols)
    m = perturb_file(tmp_path / "in.csv", cfg, tmp_path / "o.csv", insecure_test_seed=1).manifest
    book = m["codebook"][0]
    assert book["bins"]["edges"][0] == "-inf" and len(book["bins"]["edges"]) == 4
    assert m["attributes"][0]["categories"] == book["bin_labels"]
    entry = json.loads((audit_dir / "optrr-audit.json").read_text())["releases"][-1]
    assert m["rows"] == 390 and entry["rows_excluded"] == 10 and entry["rows_excluded_by_column"] == {"age": 10}
    assert "rows_excluded" not in m  # the raw file's row count stays with the hospital
    # the recipient is told that rows were selected by a raw value, which no epsilon protects (manifest, report)
    note = next(n for n in m["design"]["notes"] if "left out" in n)
    assert "missing value in age" in note and "no epsilon protects" in note
    report = (tmp_path / "o.csv.report.html").read_text()
    assert "missing value in age are left out" in report
    assert "bin edges of age (equal width) were computed from the data" in report  # published, outside epsilon


def test_unknown_category_in_a_later_chunk_leaves_nothing(tmp_path):
    make_data(tmp_path / "in.csv", 3000)
    text = (tmp_path / "in.csv").read_text().splitlines()
    text[2500] = text[2500].replace(",x,", ",w,").replace(",y,", ",w,").replace(",z,", ",w,")
    (tmp_path / "in.csv").write_text("\n".join(text) + "\n")
    before, files = digest(tmp_path / "in.csv"), set(os.listdir(tmp_path))
    refused = "'a' has values that are not among its categories: 'w' \\(in data row 2,500\\)"
    with pytest.raises(InputError, match=refused):
        perturb_file(
            tmp_path / "in.csv", base_config(), tmp_path / "out.csv", reader_options=ReaderOptions(chunk_rows=1000)
        )
    assert_nothing_written(tmp_path, files)
    assert digest(tmp_path / "in.csv") == before


def test_cancel_mid_run_leaves_nothing(tmp_path):
    make_data(tmp_path / "in.csv", 5000)
    files = set(os.listdir(tmp_path))
    calls = {"n": 0}

    def cancel():
        calls["n"] += 1
        return calls["n"] > 4  # after the design and the first chunks

    with pytest.raises(Cancelled):
        perturb_file(
            tmp_path / "in.csv",
            base_config(),
            tmp_path / "out.csv",
            cancel=cancel,
            reader_options=ReaderOptions(chunk_rows=500),
        )
    assert calls["n"] == 5
    assert_nothing_written(tmp_path, files)


@pytest.mark.parametrize("shuffle", [True, False])
def test_full_disk_mid_write_leaves_nothing(tmp_path, monkeypatch, shuffle):
    from optrr_engine.io import writers

    make_data(tmp_path / "in.csv", 3000)
    files, before = set(os.listdir(tmp_path)), digest(tmp_path / "in.csv")
    real_write = writers.CsvWriter.write
    state = {"calls": 0}

    def failing_write(self, table):
        state["calls"] += 1
        if state["calls"] == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, table)

    monkeypatch.setattr(writers.CsvWriter, "write", failing_write)
    with pytest.raises(InputError, match="could not write .*out.csv: the disk is full") as info:
        perturb_file(
            tmp_path / "in.csv",
            base_config(),
            tmp_path / "out.csv",
            shuffle=shuffle,
            reader_options=ReaderOptions(chunk_rows=1000),
        )
    assert "\n" not in str(info.value) and state["calls"] == 2
    assert_nothing_written(tmp_path, files)
    assert digest(tmp_path / "in.csv") == before


def test_output_equal_to_input_and_unwritable_folder(tmp_path):
    make_data(tmp_path / "in.csv", 50)
    before = digest(tmp_path / "in.csv")
    for out in (tmp_path / "in.csv", tmp_path / "." / "in.csv"):
        with pytest.raises(InputError, match="is the input file"):
            perturb_file(tmp_path / "in.csv", base_config(), out)
    assert digest(tmp_path / "in.csv") == before
    locked = unwritable_folder(tmp_path)
    with pytest.raises(InputError, match="cannot write in folder .*permission denied"):
        perturb_file(tmp_path / "in.csv", base_config(), os.path.join(locked, "out.csv"))
    assert not os.path.exists(os.path.join(locked, "out.csv"))


def unwritable_folder(tmp_path) -> str:
    """A folder this process cannot create files in (chmod works for normal users; root needs /sys)."""
    if os.geteuid() != 0:
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(0o500)
        return str(folder)
    return "/sys"


def test_manifest_path_linked_to_the_input_is_refused(tmp_path):
    make_data(tmp_path / "in.csv", 20)
    before = digest(tmp_path / "in.csv")
    os.symlink(tmp_path / "in.csv", tmp_path / "out.csv.manifest.json")
    with pytest.raises(InputError, match="manifest .*out.csv.manifest.json is the input file"):
        perturb_file(tmp_path / "in.csv", base_config(), tmp_path / "out.csv")
    assert digest(tmp_path / "in.csv") == before and not (tmp_path / "out.csv").exists()


def test_epsilons_in_the_configuration_are_checked_before_anything_is_written(tmp_path):
    make_data(tmp_path / "in.csv", 50)
    files = set(os.listdir(tmp_path))
    for bad, pattern in (
        (0, "epsilon is 0"),
        (-1, "epsilon is -1"),
        (float("nan"), "epsilon is NaN"),
        (1e300, "epsilon is 1e\\+300; at most 50 is accepted"),
    ):
        d = base_config().to_dict()
        d["columns"][2]["epsilon"] = bad
        with pytest.raises(InputError, match=f"column 'b': {pattern}"):
            perturb_file(tmp_path / "in.csv", d, tmp_path / "out.csv")
    assert_nothing_written(tmp_path, files)
    assert json.dumps(base_config().to_dict())  # the configuration itself stays JSON


def test_wide_file_with_many_attributes(tmp_path, monkeypatch, developer, audit_dir):
    """k = 60 perturbed columns through the whole pipeline; chunks shrink for wide files (bounded cells)."""
    from optrr_engine.io import source_base

    monkeypatch.setattr(source_base, "CHUNK_CELLS", 60 * 128)
    rng = np.random.default_rng(4)
    k, n = 60, 700
    pd.DataFrame({f"v{i}": rng.choice(["a", "b", "c"], n) for i in range(k)}).to_csv(tmp_path / "w.csv", index=False)
    cols = [ColumnConfig(name=f"v{i}", role="perturb", epsilon=1.0, categories=["a", "b", "c"]) for i in range(k)]
    cfg = ReleaseConfig(method="auto", columns=cols)
    m = perturb_file(tmp_path / "w.csv", cfg, tmp_path / "o.csv", insecure_test_seed=2).manifest
    entry = json.loads((audit_dir / "optrr-audit.json").read_text())["releases"][-1]
    assert entry["chunk_rows"] == 128 and m["rows"] == n and len(m["attributes"]) == k
    assert m["overall_epsilon"] < k  # better than Kronecker's sum of epsilons
    np.testing.assert_allclose([a["achieved_epsilon"] for a in m["attributes"]], 1.0, rtol=1e-9)
    out = read(tmp_path / "o.csv")
    assert list(out.columns)[0] == NOT_PRIVATE_COLUMN and set(out.pop(NOT_PRIVATE_COLUMN)) == {"yes"}
    assert out.shape == (n, k) and set(np.unique(out.to_numpy())) <= {"a", "b", "c"}
    load_manifest(tmp_path / "o.csv.manifest.json")
