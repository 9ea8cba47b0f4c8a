"""Issue 11: every bad input gives one line on stderr and exit code 2, no traceback, nothing left behind.

Each case runs the real ``optrr`` entry point in-process (``optrr_engine.cli.main.main``) on files made in a
fresh folder, then checks: exit code 2, exactly one stderr line ``optrr: error: ...`` matching the case, no
"Traceback", and the folder holds exactly the files it held before (inputs unchanged).
"""

import errno
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile

import pytest

from optrr_engine.cli.main import main
from tests.conftest import ROOT, TEST_DATA

CAR = TEST_DATA / "car.csv"
CONFIG = {
    "method": "kronecker",
    "columns": [
        {"name": "a", "role": "perturb", "epsilon": 1.0, "categories": ["x", "y"]},
        {"name": "b", "role": "perturb", "epsilon": 1.0, "categories": ["p", "q", "r"]},
    ],
}
GOOD = b"a,b\n" + b"x,p\ny,q\nx,r\n" * 20


def write(folder, name, data) -> str:
    path = os.path.join(folder, name)
    with open(path, "wb") as fh:
        fh.write(data if isinstance(data, bytes) else json.dumps(data).encode())
    return path


def xlsx_bytes(folder) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["a", "b", "c"])
    for i in range(60):
        sheet.append(["xy"[i % 2], "pqr"[i % 3], "uv"[i % 2]])
    path = os.path.join(folder, "made.xlsx")
    book.save(path)
    data = open(path, "rb").read()
    os.unlink(path)
    return data


def damaged_xlsx(folder) -> bytes:
    """A valid zip whose sheet XML is cut in half."""
    import io

    src = zipfile.ZipFile(io.BytesIO(xlsx_bytes(folder)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for item in src.infolist():
            data = src.read(item.filename)
            z.writestr(item, data[: len(data) // 2] if "worksheets/sheet" in item.filename else data)
    return out.getvalue()


def release(folder) -> str:
    """A small release with its manifest (made through the CLI); returns the release path."""
    src = write(folder, "in.csv", GOOD)
    cfg = write(folder, "release.json", CONFIG)
    out = os.path.join(folder, "rel.csv")
    assert main(["perturb", src, "--config", cfg, "-o", out, "--quiet"]) == 0
    return out


def edited_manifest(folder, edit) -> list[str]:
    rel = release(folder)
    manifest = json.loads(open(rel + ".manifest.json").read())
    manifest["mechanism"]["sizes"] = edit(manifest["mechanism"]["sizes"])
    path = write(folder, "edited.json", manifest)
    return ["estimate", rel, "--manifest", path, "--marginal", "a"]


def too_large_table_args(folder) -> list[str]:
    """A release of 7 columns of 10 categories; their joint table (10^7 cells, 1.9e7 split cells) is refused
    before any array is made (it took 6 GB and 150 s before)."""
    names = [f"c{j}" for j in range(7)]
    rows = "\n".join(",".join(str((i * (j + 1)) % 10) for j in range(7)) for i in range(50))
    src = write(folder, "wide.csv", (",".join(names) + "\n" + rows + "\n").encode())
    cols = [{"name": c, "role": "perturb", "epsilon": 1.0, "categories": [str(v) for v in range(10)]} for c in names]
    cfg = write(folder, "wide.json", {"method": "kronecker", "columns": cols})
    out = os.path.join(folder, "wide_rel.csv")
    assert main(["perturb", src, "--config", cfg, "-o", out, "--quiet"]) == 0
    return ["estimate", out, "--marginal", ",".join(names)]


def perturb_args(folder, data, name="in.csv", config=CONFIG, extra=()) -> list[str]:
    src = write(folder, name, data)
    cfg = write(folder, "release.json", config)
    return ["perturb", src, "--config", cfg, "-o", os.path.join(folder, "out.csv"), *extra]


def config_with(**top) -> dict:
    return {**CONFIG, **top}


def mixed_utf8() -> bytes:
    rows = ["a,b"] + [f"{'xy'[i % 2]}é,{'pqr'[i % 3]}" for i in range(30_000)]
    body = "\n".join(rows[:25_001]).encode() + b"\n"
    return body + "yé,q\n".encode("cp1252") + ("\n".join(rows[25_001:]) + "\n").encode()


def ragged_late() -> bytes:
    rows = ["a,b"] + [f"{'xy'[i % 2]},{'pqr'[i % 3]}" for i in range(30_000)]
    rows[22_000] = "x,p,extra"
    return ("\n".join(rows) + "\n").encode()


CASES = {
    # (setup(folder) -> argv, pattern of the error line)
    "xlsx_not_a_zip": (lambda d: ["schema", write(d, "bad.xlsx", b"PK\x03\x04garbage"), "-o", f"{d}/s.json"], "Excel"),
    "xlsx_damaged_sheet": (lambda d: ["schema", write(d, "bad.xlsx", damaged_xlsx(d)), "-o", f"{d}/s.json"], "Excel"),
    "xlsx_damaged_perturb": (lambda d: perturb_args(d, damaged_xlsx(d), "in.xlsx"), "Excel"),
    "non_utf8_input_name": (
        lambda d: ["schema", write(d, os.fsdecode(b"caf\xe9.csv"), GOOD), "-o", f"{d}/s.json"],
        r"name b'.*caf\\xe9\.csv' is not valid UTF-8",
    ),
    "non_utf8_output_name": (
        lambda d: ["schema", write(d, "in.csv", GOOD), "-o", os.path.join(d, os.fsdecode(b"s\xe9.json"))],
        "not valid UTF-8",
    ),
    "design_eps_below_minimum": (lambda d: ["design", "--sizes", "3,4", "--epsilons", "1e-11,1"], "smallest accepted"),
    "perturb_eps_below_minimum": (
        lambda d: perturb_args(
            d, GOOD, config={**CONFIG, "columns": [{**CONFIG["columns"][0], "epsilon": 1e-11}, CONFIG["columns"][1]]}
        ),
        "column 'a': epsilon is 1e-11; the smallest accepted is 1e-10",
    ),
    "manifest_sizes_shortened": (lambda d: edited_manifest(d, lambda s: s[:-1]), "invalid mechanism"),
    "manifest_sizes_changed": (lambda d: edited_manifest(d, lambda s: [s[0] + 1, *s[1:]]), "invalid mechanism"),
    "manifest_sizes_fraction": (lambda d: edited_manifest(d, lambda s: [s[0] + 0.5, *s[1:]]), "whole number"),
    "manifest_sizes_text": (lambda d: edited_manifest(d, lambda s: ["x", *s[1:]]), "invalid mechanism"),
    "manifest_sizes_null": (lambda d: edited_manifest(d, lambda s: None), "invalid mechanism"),
    "compare_empty": (lambda d: ["compare", "avd", "--data", write(d, "e.csv", b""), "--target", "4"], "is empty"),
    "compare_binary": (
        lambda d: ["compare", "avd", "--data", write(d, "b.csv", bytes(range(256)) * 20), "--target", "4"],
        "not a text file",
    ),
    "compare_ragged": (
        lambda d: ["compare", "avd", "--data", write(d, "r.csv", b"a,b,c\n1,2,3\n4,5\n"), "--target", "4"],
        r"data row 2 \(line 3 of the file\) has 2 fields",
    ),
    "compare_damaged_xlsx": (
        lambda d: ["compare", "avd", "--data", write(d, "x.xlsx", damaged_xlsx(d)), "--target", "4"],
        "Excel",
    ),
    "compare_methods_bogus": (
        lambda d: ["compare", "avd", "--data", str(CAR), "--target", "4", "--methods", "bogus", "--out", d],
        "unknown method 'bogus'",
    ),
    "compare_ways_9": (
        lambda d: ["compare", "avd", "--data", str(CAR), "--target", "4", "--ways", "9", "--out", d],
        "--ways 9",
    ),
    "compare_target_negative": (
        lambda d: ["compare", "avd", "--data", str(CAR), "--target", "-1", "--out", d],
        "--target is -1",
    ),
    "compare_snp_target_negative": (
        lambda d: ["compare", "snp-chi2", "--target", "-1", "--ks", "10", "--runs", "1", "--out", d],
        "--target is -1",
    ),
    "design_budget_negative": (lambda d: ["design", "--sizes", "3,4", "--epsilons", "1,1", "--budget=-5"], "--budget"),
    "design_budget_nan": (lambda d: ["design", "--sizes", "3,4", "--epsilons", "1,1", "--budget", "nan"], "--budget"),
    "mixed_utf8_cp1252": (
        lambda d: ["schema", write(d, "m.csv", mixed_utf8()), "-o", f"{d}/s.json"],
        r"line 25,002 is not valid UTF-8",
    ),
    "ragged_row_22000": (lambda d: perturb_args(d, ragged_late()), r"data row 22,000 \(line 22,001"),
    "config_version_text": (lambda d: perturb_args(d, GOOD, config=config_with(version="1")), "must be a whole number"),
    "config_unknown_input_key": (
        lambda d: perturb_args(d, GOOD, config=config_with(input={"delimter": ";"})),
        "unknown key 'delimter' in 'input'",
    ),
    "config_unknown_source_key": (
        lambda d: perturb_args(d, GOOD, config=config_with(source={"file": "x.csv", "sha": "0"})),
        "unknown key 'sha' in 'source'",
    ),
    "config_weight_negative": (
        lambda d: perturb_args(
            d, GOOD, config={**CONFIG, "target_total": 2, "columns": [{**CONFIG["columns"][0], "weight": -3}]}
        ),
        "column 'a': weight is -3; it must be a finite positive number",
    ),
    "config_target_text": (
        lambda d: perturb_args(d, GOOD, config=config_with(target_total="2 eps")),
        "target_total must be a number; got '2 eps'",
    ),
    "estimate_table_too_large": (too_large_table_args, "a marginal of 7 attributes with 1e\\+07 cells is too large"),
    "config_duplicate_category": (
        lambda d: perturb_args(
            d, GOOD, config={**CONFIG, "columns": [{**CONFIG["columns"][0], "categories": ["x", "y", "x"]}]}
        ),
        "lists 'x' twice",
    ),
}


def snapshot(folder) -> dict:
    out = {}
    for base, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(base, f)
            out[os.path.relpath(p, folder)] = hashlib.sha256(open(p, "rb").read()).hexdigest()
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_gives_one_line_and_exit_2(name, tmp_path, capsys):
    folder = str(tmp_path)
    setup, pattern = CASES[name]
    argv = setup(folder)
    capsys.readouterr()
    before = snapshot(folder)
    code = main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("[")]  # progress lines start "["
    assert code == 2, err
    assert "Traceback" not in err
    assert len(lines) == 1 and lines[0].startswith("optrr: error: "), err
    assert re.search(pattern, lines[0]), lines[0]
    assert snapshot(folder) == before


def test_full_disk_during_the_shuffle_leaves_nothing_and_a_retry_works(tmp_path, capsys, monkeypatch):
    """ENOSPC in each phase of the external shuffle: one line, exit 2, no temporary files; then a clean run."""
    from optrr_engine.release import shuffle

    folder = str(tmp_path)
    argv = perturb_args(folder, b"a,b\n" + b"x,p\ny,q\nx,r\n" * 3000, extra=["--quiet"])
    before = snapshot(folder)
    original_add = shuffle.ExternalShuffle.add

    def add_then_full(self, table):
        original_add(self, table)  # bucket files exist on disk now
        raise OSError(errno.ENOSPC, "No space left on device")

    def bucket_full(self, path, depth):
        raise OSError(errno.ENOSPC, "No space left on device")

    for method, replacement in (("add", add_then_full), ("_bucket", bucket_full)):
        with monkeypatch.context() as m:
            m.setattr(shuffle.ExternalShuffle, method, replacement)
            assert main(argv) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and err.count("\n") == 1 and "the disk is full" in err, err
        assert snapshot(folder) == before, method  # no .optrr-shuffle-* folder, no partial output
    assert main(argv) == 0  # the retry finds a clean folder
    assert os.path.exists(os.path.join(folder, "out.csv"))


def test_estimate_into_a_closed_pipe_exits_quietly(tmp_path):
    """``optrr estimate ... | head -1``: no traceback, nothing on stderr (Python's SIGPIPE advice: exit 1)."""
    rel = release(str(tmp_path))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "optrr_engine.cli.main", "estimate", rel, "--marginal", "a,b", "--json"]
    # The reader is gone before the first write, as when head has already exited: deterministic, whatever the
    # output's size (a reader that closes after one byte races against a small output that fits the pipe).
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(cmd, stdout=write_end, stderr=subprocess.PIPE, env=env, cwd=str(tmp_path), timeout=120)
    finally:
        os.close(write_end)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err == "", err


def test_a_whole_estimate_still_reaches_a_pipe(tmp_path):
    rel = release(str(tmp_path))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "optrr_engine.cli.main", "estimate", rel, "--marginal", "a", "--json"]
    proc = subprocess.run(cmd, capture_output=True, env=env, cwd=str(tmp_path), timeout=120)
    assert proc.returncode == 0 and json.loads(proc.stdout)["attributes"] == ["a"]


@pytest.mark.parametrize(
    "args, said",
    [
        # a negative value after its option was read as another option ("expected one argument")
        (["design", "--sizes", "3,4", "--epsilons", "-1,1"], "epsilon of attribute 1 is -1; it must be greater than 0"),
        (["design", "--sizes", "3,4", "--target-total", "-2"], "target total epsilon is -2; it must be a finite"),
        (["design", "--sizes", "3,4", "--target-total", "2", "--method", "utility", "--caps", "-1,1"],
         "caps must be positive"),
        # --caps without a target, or with a method that does not use them, was ignored without a word
        (["design", "--sizes", "3,4", "--epsilons", "1,1", "--caps", "1,1"],
         "--caps (per-attribute epsilon caps) applies to a whole-record target (--target-total)"),
        (["design", "--sizes", "3,4", "--target-total", "2", "--method", "kronecker", "--caps", "1,1"],
         "--caps applies to --method auto or utility; method kronecker does not use them"),
    ],
)
def test_negative_values_reach_their_own_check_and_caps_are_never_ignored(capsys, args, said):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("optrr: error: ") and said in err, err


def test_only_a_long_option_taking_a_value_is_joined_to_a_negative_value():
    from optrr_engine.cli.main import build_parser, negative_values_joined

    parser = build_parser()
    assert negative_values_joined(parser, ["design", "--epsilons", "-1,1", "--quiet", "-2"]) == [
        "design", "--epsilons=-1,1", "--quiet", "-2"
    ]
    short = ["perturb", "in.csv", "-o", "-1.csv"]
    assert negative_values_joined(parser, short) == short
