"""CSV to CSV end to end: read throughput, perturb throughput and peak memory, on generated files.

Targets (issue 4): input read at >= 50 MB/s; peak memory <= 400 MB for a 2 GB CSV. This script generates
CSV files of the given sizes (an identifier and a free-text column that are dropped, 10 categorical
columns with 2-30 categories, two numeric columns binned into 4 bins), then for each file measures, each
in a fresh subprocess so that peak memory (ru_maxrss) belongs to that step alone:

- read:     one pass of the reader over every column (Arrow string chunks)
- records:  the same pass plus the privacy ledger's column fingerprints, records multiset hash and records
            similarity sketch (their cost: records minus read)
- schema:   optrr schema's inference pass (statistics of every column)
- perturb:  optrr's perturb_file, CSV to CSV, Kronecker design, shuffled (the default)
- no-shuf:  the same without shuffling
- kept:     perturb with the identifier and q0 kept, the identifier approved by name: the kept-column checks
            count q0's values, the identifier's by key and their combination (the worst case: one key per row;
            its cost: kept minus perturb)
- baseline: the interpreter with numpy, pandas and pyarrow imported (memory floor)

Peak memory that does not grow from the small file to the large one shows that memory is bounded by the
chunk and bucket sizes, not by the file. The generated files are deleted at the end.

    python bench/csv_pipeline.py --sizes 100,300 [--keep] [--dir /tmp]

``--categories N`` instead times the checks of one column with N categories (issue 11: duplicates, codec;
target: 100,000 categories checked in <= 1 s; ICD-10 has about 70,000 codes).

``--wide COLUMNS,ROWS`` instead times reading a few columns of a wide file (perturb of 3 of 77 columns, the GUI's
column reads): the reader for 3 columns, for all columns, and pyarrow alone reading the 3 columns (the floor),
best of ``--repeat`` runs, on a generated file with one fully empty row in 1,000 (which every pass must skip).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def generate(path: str, megabytes: float, seed: int = 0) -> int:
    """Write a CSV of about ``megabytes`` MB; returns its number of rows."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(seed)
    sizes = [2, 3, 4, 5, 6, 8, 10, 12, 20, 30]
    block = 200_000
    rows = 0
    with open(path, "wb") as fh:
        names = ["patient_id", *[f"q{i}" for i in range(10)], "age", "bmi", "note"]
        fh.write((",".join(names) + "\n").encode())
        while fh.tell() < megabytes * 1e6:
            cols = [pa.array([f"P{rows + i:09d}" for i in range(block)])]
            for j, a in enumerate(sizes):
                labels = pa.array([f"cat{j}_{v}" for v in range(a)])
                cols.append(
                    pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, a, block).astype(np.int16)), labels)
                )
            cols.append(pa.array(rng.integers(18, 95, block).astype(str)))
            cols.append(pa.array(np.round(rng.normal(26, 4, block), 1).astype(str)))
            cols.append(pa.array(np.where(rng.random(block) < 0.5, "no remarks", "follow up later").astype(object)))
            table = pa.table(cols, names=names)
            pcsv.write_csv(table, fh, write_options=pcsv.WriteOptions(include_header=False, quoting_style="none"))
            rows += block
    return rows


def config() -> dict:
    sizes = [2, 3, 4, 5, 6, 8, 10, 12, 20, 30]
    cols = [{"name": "patient_id", "role": "drop"}]
    for j, a in enumerate(sizes):
        cols.append(
            {"name": f"q{j}", "role": "perturb", "epsilon": 1.0, "categories": [f"cat{j}_{v}" for v in range(a)]}
        )
    for name, edges in (("age", ["-inf", 35, 55, 75, "inf"]), ("bmi", ["-inf", 22, 26, 30, "inf"])):
        cols.append({"name": name, "role": "perturb", "type": "numeric", "epsilon": 1.0, "bins": {"edges": edges}})
    cols.append({"name": "note", "role": "drop"})
    return {"method": "kronecker", "columns": cols}


STEP = textwrap.dedent(
    """
    import json, os, resource, sys, time
    step, path, out, cfg = sys.argv[1:5]
    import numpy, pandas, pyarrow, pyarrow.csv, pyarrow.compute
    from optrr_engine.io.readers import iter_tables
    from optrr_engine.release.perturb import perturb_file
    from optrr_engine.release.schema import infer_schema
    t0 = time.perf_counter()
    rows = 0
    if step == "read":
        for t in iter_tables(path):
            rows += t.num_rows
    elif step == "records":
        from optrr_engine.release.audit import ColumnFingerprints
        prints = None
        for t in iter_tables(path):
            prints = prints or ColumnFingerprints(t.column_names)
            prints.add(t)
            rows += t.num_rows
        prints.result(), prints.multiset(), prints.sketch()
    elif step == "schema":
        rows = infer_schema(path).source["rows"]
    elif step in ("perturb", "no-shuf", "kept"):
        approved = True
        if step == "kept":
            cfg = json.load(open(cfg))
            cfg["columns"][0]["role"] = "keep"  # patient_id, one value per row
            q0 = next(c for c in cfg["columns"] if c["name"] == "q0")
            q0["role"] = "keep"  # and q0: checked alone, and the combination with patient_id (by 64-bit keys)
            approved = {"patient_id"}  # approved by name, as the window does: the checks run (True skips them)
        made = perturb_file(path, cfg, out, shuffle=(step != "no-shuf"), allow_repeat=True, force=True,
                            allow_flagged_kept=approved, audit_dir=os.path.dirname(os.path.abspath(out)))
        rows = made.manifest["rows"]
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "rows": rows, "peak_mb": peak}))
    """
)


def run_step(step: str, path: str, out: str, cfg: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", STEP, step, path, out, cfg], capture_output=True, text=True, cwd=ROOT, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"step {step} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_categories(n: int) -> None:
    """Seconds to validate a configuration column of n categories and build its codec (both check duplicates)."""
    import time

    sys.path.insert(0, ROOT)
    from optrr_engine.release.codec import Codec
    from optrr_engine.release.config import ReleaseConfig

    cats = [f"{chr(65 + i % 26)}{i // 26:05d}" for i in range(n)]
    doc = {"method": "kronecker", "columns": [{"name": "code", "role": "perturb", "epsilon": 1.0, "categories": cats}]}
    t0 = time.perf_counter()
    cfg = ReleaseConfig.from_dict(doc)
    t1 = time.perf_counter()
    Codec(cfg)
    t2 = time.perf_counter()
    print(f"{n:,} categories: configuration check {t1 - t0:.3f} s, codec {t2 - t1:.3f} s (target: <= 1 s in all)")


def generate_wide(path: str, columns: int, rows: int, seed: int = 0) -> None:
    """A CSV of ``columns`` categorical columns (2-5 short categories, 5 % empty cells) and ``rows`` rows, one
    in 1,000 of which is fully empty (",,,")."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(seed)
    names = [f"c{j:02d}" for j in range(columns)]
    block = 50_000
    with open(path, "wb") as fh:
        fh.write((",".join(names) + "\n").encode())
        for first in range(0, rows, block):
            n = min(block, rows - first)
            empty = (np.arange(first, first + n) % 1000) == 999
            cols = []
            for j in range(columns):
                a = 2 + j % 4
                codes = rng.integers(0, a, n)
                mask = (rng.random(n) < 0.05) | empty
                cols.append(pa.array([f"v{j % 7}_{c}" for c in codes], mask=mask))
            options = pcsv.WriteOptions(include_header=False, quoting_style="none")
            pcsv.write_csv(pa.table(cols, names=names), fh, write_options=options)


def bench_wide(columns: int, rows: int, repeat: int, folder: str | None) -> None:
    """Seconds to read 3 columns of a wide CSV through the reader, all of them, and pyarrow's floor."""
    import time

    import pyarrow as pa
    import pyarrow.csv as pcsv

    sys.path.insert(0, ROOT)
    from optrr_engine.io.readers import open_source

    work = tempfile.mkdtemp(prefix="optrr-csv-wide-", dir=folder)
    try:
        path = os.path.join(work, "wide.csv")
        generate_wide(path, columns, rows)
        chosen = ["c00", f"c{columns // 2:02d}", f"c{columns - 1:02d}"]

        def reader(cols):
            source = open_source(path)
            n = sum(t.num_rows for t in source.tables(cols))
            return n, source.empty_rows_skipped

        def floor(cols):
            convert = pcsv.ConvertOptions(
                column_types={c: pa.string() for c in cols}, include_columns=cols, strings_can_be_null=True
            )
            n = 0
            for batch in pcsv.open_csv(
                path, read_options=pcsv.ReadOptions(block_size=1 << 20), convert_options=convert
            ):
                n += batch.num_rows
            return n, None

        results = {}
        for label, fn, cols in (
            ("reader, 3 columns", reader, chosen),
            ("reader, all columns", reader, None),
            ("pyarrow alone, 3 columns", floor, chosen),
        ):
            best = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                out = fn(cols)
                best = min(best, time.perf_counter() - t0)
            results[label] = best
            print(f"{label:>26}: {best:6.2f} s  (rows {out[0]:,}, empty rows skipped {out[1]})")
        size = os.path.getsize(path) / 1e6
        print(f"file: {columns} columns x {rows:,} rows, {size:.0f} MB")
        three, every, alone = (
            results[k] for k in ("reader, 3 columns", "reader, all columns", "pyarrow alone, 3 columns")
        )
        print(f"3 columns / pyarrow alone: {three / alone:.2f}x; all columns / 3 columns: {every / three:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,300", help="file sizes in MB, comma-separated")
    parser.add_argument("--dir", default=None, help="folder for the generated files (default: system temp)")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument("--categories", type=int, help="only time the checks of one column of this many categories")
    parser.add_argument("--wide", help="COLUMNS,ROWS: only time reading 3 columns of a wide file (e.g. 77,300000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement of --wide (the best counts)")
    args = parser.parse_args()
    if args.wide:
        columns, rows = (int(x) for x in args.wide.split(","))
        bench_wide(columns, rows, args.repeat, args.dir)
        return
    if args.categories:
        bench_categories(args.categories)
        return
    work = tempfile.mkdtemp(prefix="optrr-csv-pipeline-", dir=args.dir)
    try:
        cfg = os.path.join(work, "release.json")
        with open(cfg, "w", encoding="utf-8") as fh:
            json.dump(config(), fh)
        floor = run_step("baseline", "", "", cfg)["peak_mb"]
        print(f"memory floor (interpreter + numpy/pandas/pyarrow/optrr imported): {floor:.0f} MB")
        print(f"{'file MB':>8} {'rows':>11} {'step':>8} {'seconds':>8} {'input MB/s':>10} {'peak MB':>8}")
        for mb in [float(s) for s in args.sizes.split(",")]:
            path = os.path.join(work, f"gen_{mb:g}MB.csv")
            generate(path, mb)
            size = os.path.getsize(path) / 1e6
            for step in ("read", "records", "schema", "perturb", "no-shuf", "kept"):
                r = run_step(step, path, os.path.join(work, "out.csv"), cfg)
                print(
                    f"{size:>8.0f} {r['rows']:>11,} {step:>8} {r['seconds']:>8.2f} {size / r['seconds']:>10.1f}"
                    f" {r['peak_mb']:>8.0f}"
                )
            if not args.keep:  # one generated file on disk at a time
                for name in os.listdir(work):
                    if name.startswith(("gen_", "out.csv")):
                        os.unlink(os.path.join(work, name))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


if __name__ == "__main__":
    main()
