"""``optrr schema`` / ``optrr perturb``: happy path, every bad input of the issue (one stderr line, exit code 2,
nothing under the output name, input untouched), and ``kill -9`` in the middle of a run."""

import errno
import hashlib
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from optrr_engine.cli.main import main
from tests.conftest import ROOT, TEST_DATA


def digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("optrr:")]
    assert len(lines) == 1, err
    assert lines[0].startswith("optrr: error: ")
    return lines[0]


def config_file(folder, columns, method="kronecker", name="release.json", **extra) -> str:
    path = folder / name
    path.write_text(json.dumps({"method": method, "columns": columns, **extra}))
    return str(path)


def test_schema_then_perturb(tmp_path, capsys, developer, audit_dir):
    src = TEST_DATA / "breast_cancer.csv"
    cfg = tmp_path / "release.json"
    assert main(["schema", str(src), "-o", str(cfg)]) == 0
    out = capsys.readouterr()
    assert "node-caps" in out.out and cfg.exists()
    assert main(["schema", str(src), "-o", str(cfg)]) == 2  # never replaces edits silently
    assert "use --force" in one_error_line(capsys)
    assert main(["schema", str(src), "-o", str(cfg), "--force", "--quiet"]) == 0
    rel = tmp_path / "rel.csv"
    assert main(["perturb", str(src), "--config", str(cfg), "-o", str(rel), "--seed", "4"]) == 2
    assert "--seed is not accepted" in one_error_line(capsys) and not rel.exists()
    key = tmp_path / "hospital.key"
    assert main(["keygen", "-o", str(key)]) == 0 and "fingerprint" in capsys.readouterr().out
    rare = "--allow-rare-categories"  # breast_cancer.csv has categories of fewer than 5 rows (not this test's subject)
    assert main(["perturb", str(src), "--config", str(cfg), "-o", str(rel), "--key-file", str(key), rare]) == 0
    out = capsys.readouterr()
    assert "whole-record epsilon" in out.out and "100.0%" in out.err  # progress on stderr
    assert "optrr-audit.json" in out.out and "keyed" in out.out
    assert f"note: a new audit record was started in {audit_dir}" in out.err  # the first release recorded there
    for suffix in ("", ".manifest.json", ".report.html"):
        assert os.path.exists(str(rel) + suffix)
    internal = [n for n in os.listdir(audit_dir) if n.startswith("rel.csv.") and n.endswith(".internal-report.html")]
    assert (audit_dir / "optrr-audit.json").exists() and len(internal) == 1
    assert not (tmp_path / "optrr-audit.json").exists()  # never beside the configuration (a folder that may be sent)
    manifest = json.loads((tmp_path / "rel.csv.manifest.json").read_text())
    assert manifest["randomness"]["source"] == "secret-key" and manifest["shuffled"]
    rel2 = tmp_path / "rel2.parquet"
    args = ["perturb", str(src), "--config", str(cfg), "-o", str(rel2), "--no-shuffle", "--insecure-test-seed", "4"]
    args.append(rare)
    assert main([*args, "--quiet"]) == 2  # the same data again: needs confirmation
    err = capsys.readouterr().err
    assert "optrr: error: this input was released 1 time(s) before" in err and not rel2.exists()
    assert "accumulated whole-record epsilon" in err
    assert main([*args, "--quiet", "--allow-repeat"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "NOT PRIVATE" in captured.err
    assert "new audit record" not in captured.err  # the record exists: it counts this release with the first
    manifest = json.loads((tmp_path / "rel2.parquet.manifest.json").read_text())
    assert manifest["randomness"]["test_seed"] == 4 and not manifest["shuffled"]
    assert manifest["output"]["format"] == "parquet"
    import pyarrow.parquet as pq

    table = pq.read_table(rel2)
    assert table.column_names[0] == "NOT_PRIVATE_insecure_test_seed"  # the data file itself says NOT PRIVATE
    assert set(table.column(0).to_pylist()) == {"yes"}


CATS = {"a": ["x", "y"], "b": ["p", "q", "r"]}


def good_columns(**override):
    cols = [{"name": n, "role": "perturb", "epsilon": 1.0, "categories": c} for n, c in CATS.items()]
    for c in cols:
        c.update(override.get(c["name"], {}))
    return cols


def bad_cases():
    """(name, input bytes, configuration columns or None, extra CLI args, expected message part)."""
    good = b"a,b\nx,p\ny,q\nx,r\n"
    return [
        ("empty", b"", good_columns(), [], "is empty"),
        ("header_only", b"a,b\n", good_columns(), [], "has a header but no data rows"),
        ("ragged", b"a,b\nx,p\ny\n", good_columns(), [], "ragged rows"),
        ("ragged_long", b"a,b\nx,p\ny,q,r\n", good_columns(), [], "3 fields but the header has 2"),
        ("undecodable", b"a,b\nx,p\ny,q\xe9\n", good_columns(), ["--encoding", "utf-8"], "not valid utf-8 text"),
        ("duplicate", b"a,b,a\nx,p,x\n", good_columns(), [], "'a' appears twice"),
        ("one_category", good, good_columns(a={"categories": ["x"]}), [], "'a' has only one category"),
        ("unknown_value", good + b"w,p\n", good_columns(), [], "'a' has values that are not among its categories: 'w'"),
        ("eps_zero", good, good_columns(b={"epsilon": 0}), [], "'b': epsilon is 0"),
        ("eps_negative", good, good_columns(b={"epsilon": -2}), [], "'b': epsilon is -2"),
        ("eps_nan", good, good_columns(b={"epsilon": float("nan")}), [], "'b': epsilon is NaN"),
        ("eps_huge", good, good_columns(b={"epsilon": 1e9}), [], "'b': epsilon is 1e\\+09; at most 50"),
        ("missing_column", good, good_columns() + [{"name": "c", "role": "keep"}], [], "column 'c' of the config"),
        ("bad_format", good, good_columns(), ["--format", "parquet"], "ends in .csv but format parquet"),
    ]


@pytest.mark.parametrize("case", bad_cases(), ids=[c[0] for c in bad_cases()])
def test_bad_inputs_exit_2_with_one_line_and_leave_nothing(tmp_path, capsys, case):
    name, content, columns, extra, pattern = case
    src = tmp_path / "in.csv"
    src.write_bytes(content)
    cfg = config_file(tmp_path, columns)
    before, files = digest(src), set(os.listdir(tmp_path))
    code = main(["perturb", str(src), "--config", cfg, "-o", str(tmp_path / "out.csv"), *extra])
    line = one_error_line(capsys)
    assert code == 2
    assert __import__("re").search(pattern, line), line
    assert set(os.listdir(tmp_path)) == files and digest(src) == before
    if name in ("empty", "header_only", "ragged", "duplicate", "undecodable"):
        assert main(["schema", str(src), "-o", str(tmp_path / "s.json"), *extra]) == 2
        one_error_line(capsys)
        assert not (tmp_path / "s.json").exists()


def test_output_equal_to_input_unwritable_folder_and_full_disk(tmp_path, capsys, monkeypatch):
    from optrr_engine.io import writers

    src = tmp_path / "in.csv"
    src.write_bytes(b"a,b\n" + b"x,p\ny,q\n" * 3000)
    cfg = config_file(tmp_path, good_columns())
    before, files = digest(src), set(os.listdir(tmp_path))
    for target in (str(src), str(tmp_path / "sub" / ".." / "in.csv")):
        assert main(["perturb", str(src), "--config", cfg, "-o", target]) == 2
        assert "is the input file" in one_error_line(capsys)
    assert main(["schema", str(src), "-o", str(src)]) == 2
    assert "is the input file" in one_error_line(capsys)
    locked = "/sys" if os.geteuid() == 0 else str(tmp_path / "locked")
    if locked != "/sys":
        os.mkdir(locked, 0o500)
        files.add("locked")
    assert main(["perturb", str(src), "--config", cfg, "-o", os.path.join(locked, "out.csv")]) == 2
    assert "permission denied" in one_error_line(capsys)
    assert main(["perturb", str(src), "--config", cfg, "-o", str(tmp_path / "no" / "out.csv")]) == 2
    assert "does not exist" in one_error_line(capsys)

    def full(self, table):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writers.CsvWriter, "write", full)
    assert main(["perturb", str(src), "--config", cfg, "-o", str(tmp_path / "out.csv"), "--quiet"]) == 2
    assert "the disk is full" in one_error_line(capsys)
    assert set(os.listdir(tmp_path)) == files and digest(src) == before


def test_corrupt_or_mismatched_manifest_through_the_cli(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_bytes(b"a,b\n" + b"x,p\ny,q\nx,r\n" * 50)
    cfg = config_file(tmp_path, good_columns())
    audit_here = ["--audit-dir", str(tmp_path)]
    assert main(["perturb", str(src), "--config", cfg, "-o", str(tmp_path / "out.csv"), "--quiet", *audit_here]) == 0
    assert "never send them" in capsys.readouterr().err  # the audit record shares the release's folder
    manifest = tmp_path / "out.csv.manifest.json"
    good = manifest.read_text()
    manifest.write_text(good[:100])
    assert main(["estimate", str(tmp_path / "out.csv"), "--manifest", str(manifest), "--marginal", "a"]) == 2
    assert "not valid JSON" in one_error_line(capsys)
    manifest.write_text(good)
    with open(tmp_path / "out.csv", "ab") as fh:
        fh.write(b"x,p\n")
    assert main(["estimate", str(tmp_path / "out.csv"), "--manifest", str(manifest), "--marginal", "a"]) == 2
    assert "SHA-256 differs" in one_error_line(capsys)


def big_csv(path, rows: int) -> None:
    rng = np.random.default_rng(0)
    labels = np.array(["x", "y"]), np.array(["p", "q", "r"])
    block = 200_000
    with open(path, "w") as fh:
        fh.write("a,b,note\n")
        for start in range(0, rows, block):
            n = min(block, rows - start)
            a, b = labels[0][rng.integers(0, 2, n)], labels[1][rng.integers(0, 3, n)]
            fh.write("\n".join(np.char.add(np.char.add(np.char.add(a, ","), b), ",some longer text field")) + "\n")


#: Runs ``optrr`` with its writers held at a definite mid-run state: once the release's temporary file holds more
#: than 1 MB (input order) or the shuffle's spill folder holds data (shuffled), the process says MID-RUN on stdout
#: and waits to be killed, so it can never finish before the test kills it, however busy the machine.
HELD_RUN = """
import os, signal, sys
import optrr_engine.io.writers as writers
import optrr_engine.release.shuffle as shuffle
from optrr_engine.cli.main import main

def hold_when(cls, name, reached):
    original = getattr(cls, name)

    def held(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if reached(self):
            sys.stdout.write("MID-RUN\\n")
            sys.stdout.flush()
            while True:
                signal.pause()

    setattr(cls, name, held)

def csv_past_1_mb(writer):
    writer._fh.flush()
    return os.path.getsize(writer.path) > 1 << 20

hold_when(writers.CsvWriter, "write", csv_past_1_mb)
hold_when(shuffle.ExternalShuffle, "add", lambda spill: spill.rows > 0)
sys.exit(main(sys.argv[1:]))
"""


def held_perturb(tmp_path, shuffle: bool) -> tuple[subprocess.Popen, str]:
    """``optrr perturb`` of a 600,000-row file, held mid-run (HELD_RUN); returns the process and the config."""
    import select

    src = tmp_path / "big.csv"
    big_csv(src, 600_000)
    cfg = config_file(tmp_path, good_columns())
    out = tmp_path / "out.csv"
    cmd = [sys.executable, "-c", HELD_RUN, "perturb", str(src), "--config", cfg, "-o", str(out)]
    cmd += ["--quiet"] + ([] if shuffle else ["--no-shuffle"])
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([proc.stdout], [], [], 600)  # a generous deadline for a loaded machine
    line = proc.stdout.readline() if ready else ""
    if line != "MID-RUN\n":
        proc.kill()
        pytest.fail(f"the run never reached its mid-run state: {line!r} {proc.communicate(timeout=60)[1]}")
    return proc, cfg


@pytest.mark.parametrize("shuffle", [False, True])
def test_sigterm_mid_run_cleans_up_like_ctrl_c(tmp_path, shuffle, audit_dir):
    """``kill`` / ``timeout`` / a job scheduler send SIGTERM: the run stops with exit 143 and removes its hidden
    temporaries, including the shuffle's buckets of perturbed records in input order."""
    proc, _cfg = held_perturb(tmp_path, shuffle)
    assert any(n.startswith(".") for n in os.listdir(tmp_path))
    os.kill(proc.pid, signal.SIGTERM)
    os.kill(proc.pid, signal.SIGTERM)  # a second kill must not interrupt the clean-up the first one started
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "optrr: terminated" in err and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["big.csv", "release.json"]


@pytest.mark.parametrize("shuffle", [False, True])
def test_kill_9_mid_run_leaves_no_output_under_the_final_name(tmp_path, shuffle):
    proc, cfg = held_perturb(tmp_path, shuffle)
    names = os.listdir(tmp_path)
    temp = [n for n in names if n.startswith(".out.csv.") and n.endswith(".optrr-tmp")]
    spill = [n for n in names if n.startswith(".optrr-shuffle-")]
    if shuffle:
        assert spill and any(os.listdir(tmp_path / spill[0]))
    else:
        assert temp and os.path.getsize(tmp_path / temp[0]) > 1 << 20
    assert proc.poll() is None
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    for name in ("out.csv", "out.csv.manifest.json", "out.csv.report.html"):
        assert not (tmp_path / name).exists(), name
    left = [n for n in os.listdir(tmp_path) if n.startswith(".")]
    assert left and all(f"p{proc.pid}" in n for n in left)  # hidden temporaries named after the dead process
    small = tmp_path / "small.csv"
    small.write_text("a,b\nx,p\ny,q\n")
    rare = "--allow-rare-categories"  # a two-row file: every category is rare (not this test's subject)
    assert main(["perturb", str(small), "--config", cfg, "-o", str(tmp_path / "next.csv"), "--quiet", rare]) == 0
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]  # the next run in the folder removed them


def test_outputs_are_never_overwritten_silently(tmp_path, capsys, audit_dir):
    src = tmp_path / "in.csv"
    src.write_text("a,b\nx,p\ny,q\nx,r\n")
    cfg = config_file(tmp_path, good_columns())
    key = tmp_path / "hospital.key"
    assert main(["keygen", "-o", str(key)]) == 0
    assert main(["keygen", "-o", str(key)]) == 2 and "never overwritten" in one_error_line(capsys)
    protected = {p: digest(p) for p in (src, cfg, key)}
    base = ["perturb", str(src), "--config", cfg, "--quiet", "--allow-repeat", "--allow-rare-categories"]  # 3 rows
    for target, role in ((cfg, "configuration"), (key, "key file"), (src, "input")):
        for force in ([], ["--force"]):
            assert main([*base, "--key-file", str(key), "-o", str(target), *force]) == 2
            assert role in one_error_line(capsys)
    assert main([*base, "-o", str(audit_dir / "optrr-audit.json"), "--force"]) == 2
    assert "audit record" in one_error_line(capsys)
    assert main([*base, "-o", str(tmp_path / "r.csv")]) == 0
    capsys.readouterr()
    assert main([*base, "-o", str(tmp_path / "r.csv")]) == 2
    assert "exists; choose another name or use --force" in one_error_line(capsys)
    (tmp_path / "other.csv").write_text("precious\n")
    (tmp_path / "r2.csv.manifest.json").write_text("precious\n")
    assert main([*base, "-o", str(tmp_path / "r2.csv")]) == 2  # its manifest name is taken
    assert "manifest" in one_error_line(capsys) and not (tmp_path / "r2.csv").exists()
    assert main([*base, "-o", str(tmp_path / "other.csv"), "--force"]) == 0
    assert (tmp_path / "other.csv").read_text() != "precious\n"
    assert {p: digest(p) for p in protected} == protected


def test_a_release_with_very_weak_protection_says_so(tmp_path, capsys):
    """An epsilon of 20 keeps a value unchanged in almost every row: perturb warns on stderr, naming the column,
    and the report (sent with the release) says what the whole-record epsilon allows; the weak band (3-8) is said
    too, without the column list; epsilon 1 stays quiet."""
    src = tmp_path / "in.csv"
    src.write_text("a,b\nx,p\ny,q\nx,r\n")
    for eps_a, weak in ((1.0, False), (5.0, False), (20.0, True)):
        cfg = config_file(tmp_path, good_columns(a={"epsilon": eps_a}), name=f"r{eps_a:g}.json")
        out = tmp_path / f"out{eps_a:g}.csv"
        args = ["perturb", str(src), "--config", cfg, "-o", str(out), "--quiet", "--allow-repeat"]
        assert main([*args, "--allow-rare-categories"]) == 0  # 3 rows: every category is rare (not the subject)
        err = capsys.readouterr().err
        assert ("very weak protection" in err) is weak, err
        assert ("weak protection: Whole-record epsilon" in err) is (eps_a > 3), err  # the weak band (3, 8] too
        assert ("columns above epsilon 8, released almost as they are: a (epsilon 20)" in err) is weak, err
        report = (tmp_path / f"out{eps_a:g}.csv.report.html").read_text()
        assert "What it means" in report and ("(very weak)" in report) is weak


def test_empty_rows_are_noted_and_a_kept_column_schema_wanted_dropped_needs_an_explicit_flag(tmp_path, capsys):
    """Trailing ';;' rows of a spreadsheet export are skipped and said (not in the recipient's files); a column
    schema flagged as an identifier and then set to keep is refused before any work unless --allow-flagged-kept."""
    rows = ["id;sex;smoker"] + [f"{1000 + i};{'FM'[i % 2]};{['ja', 'nein'][i % 3 == 0]}" for i in range(60)]
    src = tmp_path / "export.csv"
    src.write_text("\r\n".join(rows + [";;"] * 7) + "\r\n")
    cfg_path = tmp_path / "release.json"
    assert main(["schema", str(src), "-o", str(cfg_path), "--quiet"]) == 0
    assert "optrr: note: 7 rows with every cell empty were skipped (not records)" in capsys.readouterr().err
    cfg = json.loads(cfg_path.read_text())
    assert cfg["source"]["rows"] == 60 and cfg["source"]["empty_rows_skipped"] == 7
    ident = next(c for c in cfg["columns"] if c["name"] == "id")
    assert ident["role"] == "drop"
    ident["role"] = "keep"
    cfg_path.write_text(json.dumps(cfg))
    rel = tmp_path / "rel.csv"
    assert main(["perturb", str(src), "--config", str(cfg_path), "-o", str(rel), "--quiet"]) == 2
    line = one_error_line(capsys)
    assert "kept column(s) that optrr schema proposed to drop would be published as they are" in line
    assert "'id' (likely identifier" in line and "--allow-flagged-kept" in line and not rel.exists()
    args = ["perturb", str(src), "--config", str(cfg_path), "-o", str(rel), "--quiet", "--allow-flagged-kept"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "optrr: note: 7 rows with every cell empty were skipped (not records)" in err
    manifest = json.loads((tmp_path / "rel.csv.manifest.json").read_text())
    assert manifest["rows"] == 60 and "empty_rows_skipped" not in json.dumps(manifest)


def test_a_numeric_column_of_mostly_non_numbers_is_refused_not_released_as_missing(tmp_path, capsys):
    """'137.334,00' (thousands separators with a decimal comma) read with '.': every cell of the forced-numeric
    column was released as missing, with only a note and exit 0. Most cells not numbers: refused, nothing written;
    a few stay a note."""
    rows = ["einkommen;sex"] + [f"{137 + i}.{334 + i},00;{'FM'[i % 2]}" for i in range(300)]
    src = tmp_path / "income.csv"
    src.write_text("\n".join(rows) + "\n")
    columns = [
        {"name": "einkommen", "role": "perturb", "type": "numeric", "epsilon": 1.0,
         "bins": {"method": "edges", "edges": [0, 1000, 1000000]}, "categories": ["NA"]},
        {"name": "sex", "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": ["F", "M"]},
    ]
    cfg = config_file(tmp_path, columns, input={"delimiter": ";", "decimal": "."})
    rel = tmp_path / "rel.csv"
    assert main(["perturb", str(src), "--config", cfg, "-o", str(rel), "--quiet"]) == 2
    line = one_error_line(capsys)
    assert "numeric column(s) whose cells are mostly not numbers: 'einkommen' (300 of 300 cells)" in line
    assert "Check the decimal mark (read with '.'" in line and not rel.exists()
    few = ["einkommen;sex"] + [f"{137 + i};{'FM'[i % 2]}" for i in range(300)] + ["n/a;F"]
    src.write_text("\n".join(few) + "\n")
    # 'n/a' makes the missing-value category 'NA' one row: rare (not the subject here)
    args = ["perturb", str(src), "--config", cfg, "-o", str(rel), "--quiet", "--allow-repeat"]
    assert main([*args, "--allow-rare-categories"]) == 0
    assert "column 'einkommen': 1 cell(s) that are not numbers" in capsys.readouterr().err


def test_a_keyed_reproduction_is_refused_as_a_copy_that_adds_nothing(tmp_path, capsys, audit_dir):
    """A reviewer ran perturb twice with the same key and configuration: the refusal said the accumulated epsilon
    would double, although the second run writes the first release's bytes again. It now says which release it
    would reproduce and that the accumulated epsilon stays; another configuration is a new release, as before."""
    src = TEST_DATA / "car.csv"
    cfg = tmp_path / "release.json"
    assert main(["schema", str(src), "-o", str(cfg), "--quiet"]) == 0
    key = tmp_path / "hospital.key"
    assert main(["keygen", "-o", str(key)]) == 0
    capsys.readouterr()
    first = ["perturb", str(src), "--config", str(cfg), "--key-file", str(key), "--quiet"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert main([*first, "-o", str(tmp_path / "a" / "r.csv")]) == 0
    capsys.readouterr()
    assert main([*first, "-o", str(tmp_path / "b" / "r.csv")]) == 2
    err = one_error_line(capsys)
    assert "would reproduce the records and noise of the release of" in err and "(file car.csv) (the same" in err
    manifest = json.loads((tmp_path / "a" / "r.csv.manifest.json").read_text())
    assert f"the accumulated whole-record epsilon stays {manifest['overall_epsilon']:.6g}" in err
    assert main([*first, "-o", str(tmp_path / "b" / "r.csv"), "--allow-repeat"]) == 0
    assert digest(tmp_path / "a" / "r.csv") == digest(tmp_path / "b" / "r.csv")  # the same bytes indeed
    capsys.readouterr()
    assert main([*first, "--no-shuffle", "-o", str(tmp_path / "c.csv")]) == 2  # another release: fresh noise
    err = one_error_line(capsys)
    assert "would reproduce" not in err and "another release with fresh noise brings" in err


def test_a_keyed_reproduction_counts_every_release_of_the_records_and_its_format_does_not_add(
    tmp_path, capsys, audit_dir
):
    """A review: after a keyed release and one of a CRLF copy of the same records (fresh noise: 2 x eps), a third
    run reproducing the first was refused with "stays eps" (only releases of the same input bytes were summed); and
    the same keyed release written as Parquet was counted anew (3 x eps), although its noise is the first one's."""
    src = tmp_path / "car.csv"
    src.write_bytes((TEST_DATA / "car.csv").read_bytes())
    crlf = tmp_path / "car_crlf.csv"
    crlf.write_bytes(src.read_bytes().replace(b"\n", b"\r\n"))
    cfg = tmp_path / "release.json"
    assert main(["schema", str(src), "-o", str(cfg), "--quiet"]) == 0
    key = tmp_path / "hospital.key"
    assert main(["keygen", "-o", str(key)]) == 0
    common = ["--config", str(cfg), "--key-file", str(key), "--quiet"]
    assert main(["perturb", str(src), *common, "-o", str(tmp_path / "a.csv")]) == 0
    eps = json.loads((tmp_path / "a.csv.manifest.json").read_text())["overall_epsilon"]
    assert main(["perturb", str(crlf), *common, "-o", str(tmp_path / "b.csv"), "--allow-repeat"]) == 0
    capsys.readouterr()
    assert main(["perturb", str(src), *common, "-o", str(tmp_path / "c.csv")]) == 2
    err = one_error_line(capsys)
    assert "would reproduce the records and noise of the release of" in err
    assert f"the accumulated whole-record epsilon stays {2 * eps:.6g}" in err
    assert main(["perturb", str(src), *common, "-o", str(tmp_path / "d.parquet"), "--allow-repeat"]) == 0
    err = capsys.readouterr().err
    assert f"released 3 times; accumulated whole-record epsilon {2 * eps:.6g}" in err
    a = pd.read_csv(tmp_path / "a.csv", dtype=str, keep_default_na=False)
    d = pd.read_parquet(tmp_path / "d.parquet").astype(str)
    assert (a.to_numpy() == d[a.columns].to_numpy()).all()  # the same noise indeed: nothing more revealed


def test_a_file_that_is_no_key_is_refused_before_any_word_about_its_permissions(tmp_path, capsys, audit_dir):
    """A review passed a world-readable CSV as --key-file: it was first warned to chmod 600 it, then told it is not
    a key file. Only the second is true and useful."""
    src = TEST_DATA / "car.csv"
    cfg = tmp_path / "release.json"
    assert main(["schema", str(src), "-o", str(cfg), "--quiet"]) == 0
    not_key = tmp_path / "data.csv"
    not_key.write_bytes(src.read_bytes())
    os.chmod(not_key, 0o644)
    capsys.readouterr()
    args = ["perturb", str(src), "--config", str(cfg), "--key-file", str(not_key), "-o", str(tmp_path / "r.csv")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"optrr: error: {not_key} is not an OptRR key file (make one with optrr keygen)"
    assert not (tmp_path / "r.csv").exists()


def test_the_key_file_is_read_once_and_that_key_makes_the_release(tmp_path, capsys, audit_dir, monkeypatch):
    """perturb read the key file twice (once to check it, once to release with it): a file replaced in between
    would have released with a key that was never checked. It is read once, and the release is made with that key
    (the same records as a release given those key bytes directly)."""
    import optrr_engine.release.randomness as randomness
    from optrr_engine.release.perturb import perturb_file

    src = TEST_DATA / "car.csv"
    cfg = tmp_path / "release.json"
    assert main(["schema", str(src), "-o", str(cfg), "--quiet"]) == 0
    key = tmp_path / "hospital.key"
    assert main(["keygen", "-o", str(key)]) == 0
    reads = []
    real = randomness.read_key_file
    monkeypatch.setattr(randomness, "read_key_file", lambda path: reads.append(path) or real(path))
    out = tmp_path / "a" / "r.csv"
    out.parent.mkdir()
    assert main(["perturb", str(src), "--config", str(cfg), "--key-file", str(key), "-o", str(out), "--quiet"]) == 0
    assert reads == [str(key)]
    direct = tmp_path / "b" / "r.csv"
    direct.parent.mkdir()
    perturb_file(src, str(cfg), direct, key=real(key), allow_repeat=True, audit_dir=audit_dir)
    assert digest(out) == digest(direct)
