"""``optrr perturb`` fixes of the input/output review: Ctrl-C / SIGTERM never leave temporaries behind or undo a
committed release and always end in one line; output names the readers cannot read back and Excel releases of too
many rows are refused before any work.

Each case runs ``optrr`` in a child process. Signals arrive at definite points: the child prints MID-RUN and waits
once it holds temporaries (the test then sends the first signal), and the second signal or the one at the commit
point is raised by the child itself at that point (``signal.raise_signal`` runs the handler before it returns).
"""

import hashlib
import json
import os
import select
import signal
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from tests.conftest import ROOT

#: ``python -c CHILD MODE SIGNAL optrr-arguments...``. MODE "hold": hold at the first chunk of data written (stdout
#: MID-RUN, then wait for the test's signal) and raise SIGNAL when the clean-up starts (the writer's abort, the
#: first clean-up step); "commit": raise SIGNAL right after the audit record is appended (past the commit point);
#: "summary": raise SIGNAL when the command prints its warnings (after perturb_file returned); "parser": raise
#: SIGNAL while the parser is built (the first instant of a run); "end": run as the program and raise SIGNAL once
#: the command returned (the process is exiting).
CHILD = """
import signal, sys
import optrr_engine.cli.main as cli
import optrr_engine.io.writers as writers
import optrr_engine.release.audit as audit
import optrr_engine.release.risk as risk
import optrr_engine.release.shuffle as shuffle

mode, sig, argv = sys.argv[1], getattr(signal, sys.argv[2]), sys.argv[3:]

def before(owner, name, action):
    original = getattr(owner, name)
    def wrapped(*args, **kwargs):
        action()
        return original(*args, **kwargs)
    setattr(owner, name, wrapped)

def after(owner, name, action):
    original = getattr(owner, name)
    def wrapped(*args, **kwargs):
        result = original(*args, **kwargs)
        action()
        return result
    setattr(owner, name, wrapped)

def wait_mid_run():
    sys.stdout.write("MID-RUN\\n")
    sys.stdout.flush()
    while True:
        signal.pause()

if mode == "hold":
    after(writers.CsvWriter, "write", wait_mid_run)
    after(shuffle.ExternalShuffle, "add", wait_mid_run)
    before(writers.CsvWriter, "abort", lambda: signal.raise_signal(sig))
elif mode == "commit":
    after(audit, "append_release", lambda: signal.raise_signal(sig))
elif mode == "summary":
    before(risk, "weak_protection_warnings", lambda: signal.raise_signal(sig))
elif mode == "parser":
    before(cli, "build_parser", lambda: signal.raise_signal(sig))
elif mode == "end":  # the optrr program itself (arguments from sys.argv), signalled once the command returned
    sys.argv[1:] = argv
    code = cli.main()
    signal.raise_signal(sig)
    sys.exit(code)
sys.exit(cli.main(argv))
"""

COLUMNS = [
    {"name": "a", "role": "perturb", "epsilon": 1.0, "categories": ["x", "y"]},
    {"name": "b", "role": "perturb", "epsilon": 1.0, "categories": ["p", "q", "r"]},
]


def make_input(folder, rows: int = 300, source: dict | None = None, **column_options) -> tuple[str, str]:
    """in.csv of ``rows`` rows and its configuration release.json (with ``source`` when given)."""
    rng = np.random.default_rng(0)
    a, b = np.array(["x", "y"])[rng.integers(0, 2, rows)], np.array(["p", "q", "r"])[rng.integers(0, 3, rows)]
    src = folder / "in.csv"
    src.write_text("a,b\n" + "".join(f"{x},{y}\n" for x, y in zip(a, b, strict=True)))
    columns = [{**c, **column_options} for c in COLUMNS]
    cfg = folder / "release.json"
    cfg.write_text(json.dumps({"method": "kronecker", "columns": columns, **({"source": source} if source else {})}))
    return str(src), str(cfg)


def perturb_args(folder, src, cfg, output="out.csv", *extra) -> list[str]:
    return ["perturb", src, "--config", cfg, "-o", str(folder / output), "--quiet", *extra]


def run_child(mode: str, sig: str, argv: list[str]) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", CHILD, mode, sig, *argv]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


def run_optrr(argv: list[str]) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "optrr_engine.cli.main", *argv]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


def releases(audit_dir) -> list:
    path = audit_dir / "optrr-audit.json"
    return json.loads(path.read_text())["releases"] if path.exists() else []


def only_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("second", ["SIGINT", "SIGTERM"])
def test_a_second_signal_during_the_clean_up_does_not_interrupt_it(tmp_path, audit_dir, shuffle, second):
    """Ctrl-C pressed twice (or Ctrl-C then ``kill``): the first signal starts the clean-up, the second one, arriving
    while the clean-up runs, is ignored; no temporary file or shuffle bucket is left, one line, exit 130."""
    src, cfg = make_input(tmp_path, rows=50_000)
    argv = perturb_args(tmp_path, src, cfg) + ([] if shuffle else ["--no-shuffle"])
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, "hold", second, *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ready, _, _ = select.select([proc.stdout], [], [], 300)
    line = proc.stdout.readline() if ready else ""
    if line != "MID-RUN\n":
        proc.kill()
        pytest.fail(f"the run never reached its mid-run state: {line!r} {proc.communicate(timeout=60)[1]}")
    assert any(n.startswith(".") for n in os.listdir(tmp_path))  # temporaries exist when the first signal comes
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert only_line(err) == "optrr: interrupted"
    assert sorted(os.listdir(tmp_path)) == ["in.csv", "release.json"]
    assert releases(audit_dir) == []


@pytest.mark.parametrize("mode", ["commit", "summary"])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_past_the_commit_point_lets_the_release_finish(tmp_path, audit_dir, mode, sig):
    """A signal once the audit record is being written (the commit point) or while the summary is printed: the
    release, manifest and report are in place and counted once in the ledger, the exit code is 0 and stderr says
    the release is complete."""
    src, cfg = make_input(tmp_path)
    proc = run_child(mode, sig, perturb_args(tmp_path, src, cfg))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "optrr: interrupt received after the release was written; the release is complete" in proc.stderr
    assert "interrupted" not in proc.stderr and "terminated" not in proc.stderr
    names = sorted(n for n in os.listdir(tmp_path) if not n.startswith("."))
    assert names == ["in.csv", "out.csv", "out.csv.manifest.json", "out.csv.report.html", "release.json"]
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]
    manifest = json.loads((tmp_path / "out.csv.manifest.json").read_text())
    assert manifest["output_sha256"] == hashlib.sha256((tmp_path / "out.csv").read_bytes()).hexdigest()
    assert len(releases(audit_dir)) == 1


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_while_the_program_exits_after_a_release_does_not_kill_it(tmp_path, audit_dir, sig):
    """Ctrl-C just after the command finished, while the process exits: the release is complete and the exit code
    stays 0 (before, the process died from the signal)."""
    src, cfg = make_input(tmp_path)
    proc = run_child("end", sig, perturb_args(tmp_path, src, cfg))
    assert proc.returncode == 0, proc.stderr
    # nothing but the note of the first release recorded in this audit folder (perturb_cmd)
    assert proc.stderr == f"optrr: note: a new audit record was started in {audit_dir}: repeats are recognised, and " \
        "epsilons added up, only among the releases recorded there; give every release of this data the same " \
        "--audit-dir\n"
    assert (tmp_path / "out.csv.manifest.json").exists() and len(releases(audit_dir)) == 1


def test_a_signal_while_the_parser_is_built_gives_one_line(tmp_path, audit_dir):
    """Ctrl-C (or SIGTERM) in the first instant of a run (importing the commands, building the parser): one line,
    no traceback."""
    src, cfg = make_input(tmp_path)
    for sig, code, line in (("SIGINT", 130, "optrr: interrupted"), ("SIGTERM", 143, "optrr: terminated")):
        proc = run_child("parser", sig, perturb_args(tmp_path, src, cfg))
        assert proc.returncode == code, proc.stderr
        assert only_line(proc.stderr) == line
    assert sorted(os.listdir(tmp_path)) == ["in.csv", "release.json"]


@pytest.mark.parametrize(
    ("output", "extra", "said"),
    [
        ("rel.json", [], "ends in .json, which OptRR cannot read back"),
        ("release", [], "has no extension"),
        ("release", ["--format", "csv"], "has no extension"),
        ("rel.json", ["--format", "parquet"], "ends in .json, which OptRR cannot read back"),
    ],
)
def test_an_output_name_the_readers_cannot_read_back_is_refused_before_any_work(
    tmp_path, audit_dir, output, extra, said
):
    """``-o rel.json`` / ``-o release``: ``optrr estimate`` could never read the release back (readers go by
    extension), so it is refused up front with the extensions that work; nothing is written, nothing recorded."""
    src, cfg = make_input(tmp_path)
    proc = run_optrr(perturb_args(tmp_path, src, cfg, output, *extra))
    assert proc.returncode == 2, proc.stderr
    error = only_line(proc.stderr)
    assert error.startswith("optrr: error: output ") and said in error
    assert ".csv .dta .parquet .sav .tsv .txt .xlsx" in error
    assert sorted(os.listdir(tmp_path)) == ["in.csv", "release.json"]
    assert releases(audit_dir) == []


def test_an_excel_release_of_too_many_rows_is_refused_up_front_when_sure(tmp_path, audit_dir):
    """The configuration counted more rows (source.rows, by optrr schema) than an Excel sheet holds: refused before
    reading the data, naming the count and the formats that work. Only a count made for this file, with no row left
    out by the configuration, refuses up front; otherwise the writer's check of the rows written decides (here: few
    rows, released)."""
    for name, rows, source, options in (
        ("other", 300, {"file": "other.csv", "format": "csv", "rows": 2_000_000}, {}),  # counted for another file
        ("exclude", 301, {"file": "in.csv", "format": "csv", "rows": 2_000_000}, {"missing": "exclude"}),  # left out
    ):
        folder = tmp_path / name
        folder.mkdir()
        src, cfg = make_input(folder, rows, source=source, **options)
        proc = run_optrr(perturb_args(folder, src, cfg, "out.xlsx"))
        assert proc.returncode == 0, proc.stderr
        assert (folder / "out.xlsx").exists()
    folder = tmp_path / "refused"
    folder.mkdir()
    src, cfg = make_input(folder, source={"file": "in.csv", "format": "csv", "rows": 2_000_000})
    for args in (["-o", str(folder / "out.xlsx")], ["-o", str(folder / "out.csv"), "--format", "xlsx"]):
        proc = run_optrr(["perturb", src, "--config", cfg, "--quiet", *args])
        assert proc.returncode == 2, proc.stderr
        error = only_line(proc.stderr)
        assert "in.csv has 2,000,000 data rows" in error and "an Excel sheet holds at most 1,048,575" in error
        assert "csv or parquet" in error
    assert sorted(os.listdir(folder)) == ["in.csv", "release.json"]
    assert len(releases(audit_dir)) == 2  # the two released above


#: ``python -c LOST_CHILD MODE optrr-arguments...``: at the first chunk of data written, a SIGINT is raised inside a
#: ``__del__`` (CPython prints the KeyboardInterrupt as "Exception ignored in" and the run goes on), then MODE
#: "window": the clean-up window is over (CLEANUP_SECONDS set to 0) and one more SIGINT is raised; "third": two more
#: SIGINTs are raised at once (the second and third of the run).
LOST_CHILD = """
import signal, sys
import optrr_engine.cli.interrupts as interrupts
import optrr_engine.cli.main as cli
import optrr_engine.io.writers as writers

mode, argv = sys.argv[1], sys.argv[2:]

class Finalized:
    def __del__(self):
        signal.raise_signal(signal.SIGINT)

original, fired = writers.CsvWriter.write, []

def write(self, table):
    original(self, table)
    if fired:
        return
    fired.append(True)
    Finalized()  # collected at once: its __del__ swallows the first interrupt
    if mode == "window":
        interrupts.CLEANUP_SECONDS = 0.0
        signal.raise_signal(signal.SIGINT)
    else:
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)

writers.CsvWriter.write = write
sys.exit(cli.main(argv))
"""


@pytest.mark.parametrize("mode", ["window", "third"])
def test_an_interrupt_lost_in_a_finalizer_does_not_make_the_run_unstoppable(tmp_path, audit_dir, mode):
    """The first Ctrl-C lands in a ``__del__`` (its KeyboardInterrupt is printed and discarded; the run goes on): a
    later Ctrl-C once the clean-up window is over, or a third one within it, still stops the run with the clean-up
    done: exit 130, "optrr: interrupted", no temporary left, nothing recorded (before, every later signal was ignored
    and only SIGKILL stopped the run)."""
    src, cfg = make_input(tmp_path)
    cmd = [sys.executable, "-c", LOST_CHILD, mode, *perturb_args(tmp_path, src, cfg, "out.csv", "--no-shuffle")]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert "Exception ignored in" in proc.stderr  # the first interrupt was indeed lost
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "optrr: interrupted"
    assert sorted(os.listdir(tmp_path)) == ["in.csv", "release.json"]
    assert releases(audit_dir) == []


def test_the_signal_after_an_ignored_one_or_the_clean_up_window_raises(monkeypatch):
    """The handler's sequence on a controlled clock: a signal raises; the next one within CLEANUP_SECONDS is ignored,
    the one after it raises (and starts a new window); once the window is over a signal raises; past the commit
    point a signal is recorded, never raised."""
    from optrr_engine.cli import interrupts

    clock = [100.0]
    monkeypatch.setattr(interrupts, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    handler = interrupts._Handler()

    def raises(signum=signal.SIGINT) -> bool:
        try:
            handler(signum, None)
        except KeyboardInterrupt:
            return True
        return False

    assert [raises(), raises(), raises(), raises(), raises()] == [True, False, True, False, True]
    clock[0] += interrupts.CLEANUP_SECONDS
    assert raises()  # the window is over
    clock[0] += 1
    assert not raises()  # a new window began with that raise
    with pytest.raises(interrupts.Terminated):
        clock[0] += interrupts.CLEANUP_SECONDS
        handler(signal.SIGTERM, None)
    handler.holding = True
    assert not raises(signal.SIGTERM) and not raises() and handler.received == signal.SIGTERM
