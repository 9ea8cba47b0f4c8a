"""Size and start time of a built bundle (targets: <= 400 MB unpacked, <= 150 MB as the Linux tarball, start <= 2 s).

    python3 bench/bundle.py [--bundle packaging/dist/optrr] [--runs 3] [--json OUT]

Size: bytes of the regular files in the folder (symbolic links count zero; du --apparent-size agrees), with the
largest contributors by top-level entry of ``_internal`` and the largest single files. Start time, from the launch
of ``optrr-gui --screenshot --start-report`` (offscreen, with the bundled sample) to three milestones the program
reports: *shown* (the main window is on screen: the start target applies to this), *usable* (the file is read,
its columns listed) and *ready* (every design computed); plus the whole run to PNG written and exit, and
``optrr --version``. Each is run ``--runs`` times; the first run is reported separately because it also pays for
a cold file cache.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BUNDLE = ROOT / "packaging" / "dist" / "optrr"
SIZE_TARGET_MB = 400.0
TARBALL_TARGET_MB = 150.0
START_TARGET_S = 2.0
MB = 2**20


def file_sizes(bundle: Path) -> dict[str, int]:
    """Relative path -> size of every regular file (symbolic links excluded)."""
    sizes = {}
    for folder, _dirs, files in os.walk(bundle):
        for name in files:
            path = Path(folder) / name
            if not path.is_symlink():
                sizes[str(path.relative_to(bundle))] = path.stat().st_size
    return sizes


def contributors(sizes: dict[str, int], depth_for: dict[str, int] | None = None) -> list[tuple[str, int]]:
    """Sizes grouped by top-level entry (inside ``_internal`` for the bundled libraries), largest first."""
    groups: dict[str, int] = {}
    for rel, size in sizes.items():
        parts = Path(rel).parts
        key = "/".join(parts[:2]) if parts[0] in ("_internal", "Contents") and len(parts) > 1 else parts[0]
        groups[key] = groups.get(key, 0) + size
    return sorted(groups.items(), key=lambda kv: -kv[1])


def timed(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, int, dict[str, float]]:
    """(wall seconds, exit code, milestones in seconds since launch from a ``--start-report`` JSON line)."""
    launched, t0 = time.time(), time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    seconds = time.perf_counter() - t0
    milestones = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            milestones = {k: v - launched for k, v in json.loads(line).items()}
    return seconds, proc.returncode, milestones


def executable(bundle: Path, name: str) -> Path:
    for candidate in (bundle / name, bundle / f"{name}.exe", bundle / "Contents" / "MacOS" / name):
        if candidate.exists():
            return candidate
    raise SystemExit(f"no {name} executable in {bundle}")


def start_times(bundle: Path, runs: int) -> dict:
    gui, cli = executable(bundle, "optrr-gui"), executable(bundle, "optrr")
    with tempfile.TemporaryDirectory(prefix="optrr-bench-") as tmp:
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8"}
        if sys.platform == "win32":
            env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        shot = str(Path(tmp) / "shot.png")
        gui_runs, cli_runs, codes, stones = [], [], [], []
        for _ in range(runs):
            seconds, code, milestones = timed([str(gui), "--screenshot", shot, "--start-report"], env, tmp)
            gui_runs.append(seconds)
            stones.append(milestones)
            codes.append(code)
            seconds, code, _ = timed([str(cli), "--version"], env, tmp)
            cli_runs.append(seconds)
            codes.append(code)
    report = {
        f"gui_{name}_median_s": statistics.median(m.get(name, math.inf) for m in stones)
        for name in ("shown", "usable", "ready")
    }
    report["gui_shown_first_s"] = stones[0].get("shown", math.inf)
    return report | {
        "gui_screenshot_first_s": gui_runs[0],
        "gui_screenshot_median_s": statistics.median(gui_runs),
        "cli_version_first_s": cli_runs[0],
        "cli_version_median_s": statistics.median(cli_runs),
        "exit_codes": codes,
    }


def measure(bundle: Path, runs: int = 3, with_times: bool = True) -> dict:
    sizes = file_sizes(bundle)
    total = sum(sizes.values())
    report = {
        "bundle": str(bundle),
        "size_mb": total / MB,
        "files": len(sizes),
        "size_target_mb": SIZE_TARGET_MB,
        "contributors_mb": [(k, v / MB) for k, v in contributors(sizes)[:15]],
        "largest_files_mb": [(k, v / MB) for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])[:10]],
    }
    if with_times:
        report.update(start_times(bundle, runs))
        report["start_target_s"] = START_TARGET_S
    return report


def print_report(report: dict) -> None:
    size, target = report["size_mb"], report["size_target_mb"]
    verdict = "meets" if size <= target else "MISSES"
    print(f"bundle size: {size:.1f} MB unpacked in {report['files']} files ({verdict} the {target:.0f} MB target)")
    print("largest contributors:")
    for name, mb in report["contributors_mb"]:
        print(f"  {mb:7.1f} MB  {name}")
    print("largest files:")
    for name, mb in report["largest_files_mb"]:
        print(f"  {mb:7.1f} MB  {name}")
    if "gui_screenshot_median_s" in report:
        t, first = report["gui_shown_median_s"], report["gui_shown_first_s"]
        verdict = "meets" if t <= report["start_target_s"] else "MISSES"
        print(
            f"optrr-gui start to the window shown (offscreen, bundled sample): median {t:.2f} s, first run "
            f"{first:.2f} s ({verdict} the {report['start_target_s']:.0f} s start target)"
        )
        print(
            f"  to the file read (columns listed): median {report['gui_usable_median_s']:.2f} s; to every design "
            f"computed: median {report['gui_ready_median_s']:.2f} s; to the PNG written and exit: median "
            f"{report['gui_screenshot_median_s']:.2f} s, first run {report['gui_screenshot_first_s']:.2f} s"
        )
        print(
            f"optrr --version: median {report['cli_version_median_s']:.2f} s, "
            f"first run {report['cli_version_first_s']:.2f} s"
        )
        if any(report["exit_codes"]):
            print(f"FAILED: the programs exited with {report['exit_codes']} while timed; the times are not valid")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE, help="the bundle folder")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each program (3)")
    parser.add_argument("--no-times", action="store_true", help="size only")
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = parser.parse_args(argv)
    if not args.bundle.is_dir():
        print(f"no bundle at {args.bundle}; build it with python3 packaging/build.py", file=sys.stderr)
        return 2
    report = measure(args.bundle.resolve(), args.runs, not args.no_times)  # the runs start in other folders
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 1 if any(report.get("exit_codes", [])) else 0


if __name__ == "__main__":
    sys.exit(main())
