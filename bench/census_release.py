"""A wide release end to end through the CLI: tests/data/uscensus1990_first99.csv (99 rows, 67 columns after
``optrr schema --merge-rare``), whole-record target 2, the recommended design (Utility for these columns: a classes
block over a large grid), then ``optrr perturb`` and ``optrr estimate`` of one column.

Targets (a recipient-reviewer's run of 2026-11-27 before the fixes of that day: perturb 7 min 34 s, a 40.7 MB
manifest, a 56.7 MB audit record, estimate 19 s): perturb <= 30 s, manifest and audit record <= 12 MB each,
estimate <= 5 s. Prints each step's seconds, the file sizes and PASS / FAIL with the machine's load.

Usage: python3 bench/census_release.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data")
CENSUS = os.path.join(DATA, "uscensus1990_first99.csv")
TARGETS = {"perturb_s": 30.0, "manifest_mb": 12.0, "audit_mb": 12.0, "estimate_s": 5.0}


def optrr(*args) -> float:
    """Seconds of one ``optrr`` command (a fresh interpreter, as a user runs it); exits on failure."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "optrr_engine.cli.main", *map(str, args)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        sys.exit(f"optrr {' '.join(map(str, args))} failed:\n{proc.stderr}")
    return time.perf_counter() - t0


def run(folder: str) -> dict:
    cfg, designed = os.path.join(folder, "census.json"), os.path.join(folder, "designed.json")
    audit, out = os.path.join(folder, "audit"), os.path.join(folder, "release", "census.csv")
    os.makedirs(audit)
    os.makedirs(os.path.dirname(out))
    optrr("schema", CENSUS, "-o", cfg, "--merge-rare", "--quiet")
    with open(cfg, encoding="utf-8") as fh:
        config = json.load(fh)
    config["target_total"] = 2.0
    with open(cfg, "w", encoding="utf-8") as fh:
        json.dump(config, fh)
    times = {"design_s": optrr("design", "--config", cfg, "-o", designed)}
    with open(designed, encoding="utf-8") as fh:
        times["method"] = json.load(fh).get("method")
    times["perturb_s"] = optrr("perturb", CENSUS, "--config", designed, "-o", out, "--audit-dir", audit,
                               "--allow-rare-categories", "--quiet")
    times["estimate_s"] = optrr("estimate", out, "--marginal", "iSex")
    times["manifest_mb"] = os.path.getsize(out + ".manifest.json") / 1e6
    times["audit_mb"] = os.path.getsize(os.path.join(audit, "optrr-audit.json")) / 1e6
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", help="folder to keep the files in (default: a temporary one)")
    args = ap.parse_args()
    if args.keep:
        os.makedirs(args.keep, exist_ok=False)
        got = run(args.keep)
    else:
        with tempfile.TemporaryDirectory() as folder:
            got = run(folder)
    load = "/".join(f"{x:.1f}" for x in os.getloadavg()[:2])
    print(f"census sample, whole-record target 2, design {got['method']} ({got['design_s']:.1f} s to design)")
    for key, limit in TARGETS.items():
        unit = "s" if key.endswith("_s") else "MB"
        verdict = "PASS" if got[key] <= limit else "FAIL"
        print(f"  [{verdict}] {key[:-2].rstrip('_')}: {got[key]:.1f} {unit} (target <= {limit:g} {unit}) [load {load}]")


if __name__ == "__main__":
    main()
