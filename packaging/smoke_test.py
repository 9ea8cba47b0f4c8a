"""Smoke test of the BUILT Linux bundle, as a hospital machine would run it: no network, no Python.

    python3 packaging/smoke_test.py [--archive packaging/dist/optrr-VERSION-linux-ARCH.tar.xz] [--keep]

The archive is unpacked into a fresh temporary folder and every program runs with an empty environment
(``env -i``: PATH is an empty folder, HOME a fresh folder, QT_QPA_PLATFORM=offscreen) and PYTHONPATH /
PYTHONHOME pointing at decoy ``numpy`` / ``optrr_engine`` packages that fail on import, so a bundle that reached
outside itself fails. When ``unshare`` works (root or user namespaces), each run also gets a private network
namespace (no network at all) and a private mount namespace in which the build's Python installation, the system Python
libraries and this source tree are hidden under empty tmpfs mounts. Without it the test stops unless
``--allow-no-isolation`` is given (then it says so on every line).

Checks (exit code and output of each): the isolation (only a loopback interface, hidden folders empty);
``optrr --version`` (= the source version); the import self-test of both
programs (every native extension and every OptRR module loads); ``optrr design --method auto --json``;
``optrr schema`` + ``optrr perturb`` + ``optrr estimate`` on the bundled sample; ``optrr compare ratios`` (CSV, PNG and
SVG figures through the bundled renderer); ``optrr-gui --screenshot`` of the
design and compare tabs (valid PNG of plausible size); and ``install.sh`` (per-user menu entry). The last line is
"smoke: N passed, M failed"; the exit code is 0 only when nothing failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SAMPLE = "breast_cancer.csv"
SAMPLE_ROWS = 286
MARGINAL = "menopause"
#: Subcommands the smoke test drives; each must be registered in optrr_engine/cli/main.py COMMANDS.
SUBCOMMANDS = ("design", "schema", "perturb", "estimate")


class Failed(Exception):
    """A check failed; the message says what was expected."""


def source_version() -> str:
    text = (ROOT / "optrr_engine" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'__version__\s*=\s*"([^"]+)"', text).group(1)


def newest_archive() -> Path:
    archives = sorted((HERE / "dist").glob("optrr-*-linux-*.tar.xz"), key=lambda p: p.stat().st_mtime)
    if not archives:
        raise SystemExit("no packaging/dist/optrr-*-linux-*.tar.xz: build it first with python3 packaging/build.py")
    return archives[-1]


def unpack(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        kwargs = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
        tar.extractall(into, **kwargs)
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) != 1:
        raise SystemExit(f"{archive}: expected one top folder, found {sorted(tops)}")
    return into / tops.pop()


def hidden_paths() -> list[str]:
    """Folders hidden from the bundle: the build's Python, system Python libraries, and the source tree."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(ROOT)}
    for base in ("/usr/lib", "/usr/local/lib", "/usr/lib64"):
        if os.path.isdir(base):
            paths.update(str(p) for p in Path(base).glob("python3*") if p.is_dir())
    home_pyenv = Path.home() / ".pyenv"
    if home_pyenv.is_dir():
        paths.add(str(home_pyenv))
    candidates = sorted(os.path.realpath(p) for p in paths if os.path.isdir(p))
    chosen: list[str] = []
    for path in candidates:  # a hidden folder hides its subfolders (mounting on them would then fail)
        if path not in ("/", "/usr", "/usr/local", "/tmp") and not any(path.startswith(c + "/") for c in chosen):
            chosen.append(path)
    return chosen


def isolation_works() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(
        ["unshare", "--net", "--mount", "--", "sh", "-c", "mount -t tmpfs none /mnt && true"],
        capture_output=True,
    )
    return probe.returncode == 0


class Runner:
    """Runs bundle programs in the isolated environment and records PASS/FAIL lines."""

    def __init__(self, app: Path, work: Path, isolate: bool):
        self.app, self.work, self.isolate = app, work, isolate
        self.passed, self.failed = 0, 0
        empty_bin = work / "empty-bin"
        home = work / "home"
        decoys = work / "decoys"
        for folder in (empty_bin, home, decoys / "numpy", decoys / "optrr_engine", work / "runtime"):
            folder.mkdir(parents=True, exist_ok=True)
        os.chmod(work / "runtime", 0o700)
        for package in ("numpy", "optrr_engine"):
            (decoys / package / "__init__.py").write_text(
                f"raise ImportError('decoy {package} on PYTHONPATH was imported: the bundle is not self-contained')\n"
            )
        self.env = {
            "PATH": str(empty_bin),
            "HOME": str(home),
            "TMPDIR": str(work),
            "XDG_RUNTIME_DIR": str(work / "runtime"),
            "QT_QPA_PLATFORM": "offscreen",
            "LANG": "C.UTF-8",
            "PYTHONPATH": str(decoys),
            "PYTHONHOME": str(decoys),
        }
        self.hidden = hidden_paths() if isolate else []

    def command(self, argv: list[str], extra_env: dict[str, str] | None = None) -> list[str]:
        env = dict(self.env, **(extra_env or {}))
        inner = ["/usr/bin/env", "-i"] + [f"{k}={v}" for k, v in env.items()] + argv
        if not self.isolate:
            return inner
        mounts = "".join(f"mount -t tmpfs -o size=1m optrr-smoke-hidden {shlex.quote(p)} && " for p in self.hidden)
        script = f'{mounts}exec "$@"'
        return ["unshare", "--net", "--mount", "--", "/bin/sh", "-c", script, "sh"] + inner

    def run(self, argv, extra_env=None, timeout=300) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.command([str(a) for a in argv], extra_env),
            cwd=self.work,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def check(self, name: str, func) -> None:
        t0 = time.perf_counter()
        tag = "" if self.isolate else " [NOT ISOLATED]"
        try:
            detail = func()
        except Failed as exc:
            self.failed += 1
            print(f"FAIL {name}{tag}: {exc}", flush=True)
            return
        except subprocess.TimeoutExpired as exc:
            self.failed += 1
            print(f"FAIL {name}{tag}: timed out after {exc.timeout} s", flush=True)
            return
        self.passed += 1
        print(f"PASS {name}{tag} ({time.perf_counter() - t0:.2f} s){': ' + detail if detail else ''}", flush=True)


def expect_ok(proc: subprocess.CompletedProcess, what: str) -> None:
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-8:]
        raise Failed(f"{what} exited with {proc.returncode}: " + " | ".join(tail))


def parse_json(text: str, what: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise Failed(f"{what} did not print JSON ({exc}): {text[:200]!r}") from None


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise Failed(f"{path.name} is not a PNG file")
    return struct.unpack(">II", data[16:24])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--archive", type=Path, help="the Linux tarball (default: the newest in packaging/dist)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (printed)")
    parser.add_argument("--allow-no-isolation", action="store_true", help="run even if unshare is unavailable")
    args = parser.parse_args(argv)
    archive = args.archive or newest_archive()
    isolate = isolation_works()
    if not isolate and not args.allow_no_isolation:
        print("smoke: cannot isolate with unshare (need root or user namespaces); use --allow-no-isolation")
        return 2
    work = Path(tempfile.mkdtemp(prefix="optrr-smoke-"))
    try:
        return run_checks(archive, work, isolate)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def run_checks(archive: Path, work: Path, isolate: bool) -> int:
    app = unpack(archive, work / "unpacked")
    optrr, gui = app / "optrr", app / "optrr-gui"
    r = Runner(app, work, isolate)
    print(f"smoke test of {archive.name}, unpacked in {app}")
    if isolate:
        print(f"isolation: no network (unshare --net); hidden: {', '.join(r.hidden)}; env -i; decoy PYTHONPATH/HOME")
    version = source_version()
    sample = app / "_internal" / "resources" / "sample" / SAMPLE

    def version_check():
        proc = r.run([optrr, "--version"])
        expect_ok(proc, "optrr --version")
        if proc.stdout.strip() != f"optrr {version}":
            raise Failed(f"expected 'optrr {version}', got {proc.stdout.strip()!r}")
        stamped = (app / "VERSION").read_text().strip()
        if stamped != version:
            raise Failed(f"VERSION file says {stamped!r}, the source says {version!r}")
        return proc.stdout.strip()

    def bundle_contents():
        missing = [
            p
            for p in (
                "LICENSE",
                "THIRD_PARTY_LICENSES",
                "README.txt",
                "install.sh",
                "_internal/resources/sample/ATTRIBUTION.md",
                f"_internal/resources/sample/{SAMPLE}",
                "_internal/LICENSE",
            )
            if not (app / p).is_file()
        ]
        if missing:
            raise Failed(f"missing from the bundle: {', '.join(missing)}")
        notices = (app / "THIRD_PARTY_LICENSES").read_text(encoding="utf-8")
        absent = [
            n
            for n in (
                "PySide6",
                "pyqtgraph",
                "numpy",
                "pandas",
                "pyarrow",
                "highspy",
                "openpyxl",
                "pyreadstat",
                "GNU LESSER GENERAL PUBLIC LICENSE",
            )
            if n not in notices
        ]
        if absent:
            raise Failed(f"THIRD_PARTY_LICENSES lacks {', '.join(absent)}")
        return f"{len(notices) // 1024} KB of notices"

    def subcommands_registered():
        proc = r.run([optrr, "--help"])
        expect_ok(proc, "optrr --help")
        missing = [c for c in SUBCOMMANDS if not re.search(rf"^\s+{c}\s", proc.stdout, re.M)]
        if missing:
            raise Failed(f"subcommand(s) {', '.join(missing)} not in this build (COMMANDS in optrr_engine/cli/main.py)")

    def self_test(program, label):
        def check():
            proc = r.run([program], {"OPTRR_BUNDLE_SELF_TEST": "1"})
            lines = proc.stdout.strip().splitlines()
            result = parse_json(lines[-1] if lines else "", f"{label} self-test")
            if proc.returncode != 0 or result.get("failed"):
                raise Failed(f"{label}: imports failed: {json.dumps(result.get('failed'))[:1500]}")
            # One line only: a helper process (worker, resource tracker) that ran the program again would add one.
            if len(lines) != 1:
                raise Failed(f"{label}: {len(lines)} lines on stdout instead of one: {proc.stdout[:300]!r}")
            warnings = [w for w in proc.stderr.splitlines() if "Warning:" in w or "Traceback" in w]
            if warnings:
                raise Failed(f"{label}: Python warnings or errors on stderr: {' | '.join(warnings[:3])[:500]}")
            return f"{result['imported']} modules imported, {result['extensions']} native extensions"

        return check

    def design():
        proc = r.run([optrr, "design", "--method", "auto", "--sizes", "3,4,2", "--epsilons", "1,2,0.5", "--json"])
        expect_ok(proc, "optrr design")
        d = parse_json(proc.stdout, "optrr design --json")
        if d.get("sizes") != [3, 4, 2]:
            raise Failed(f"sizes {d.get('sizes')} != [3, 4, 2]")
        eps = d.get("attribute_epsilons") or []
        if len(eps) != 3 or any(e > r_ + 1e-9 for e, r_ in zip(eps, [1, 2, 0.5], strict=True)):
            raise Failed(f"attribute epsilons {eps} exceed the request [1, 2, 0.5]")
        total = d.get("overall_epsilon")
        if not isinstance(total, (int, float)) or not max(eps) - 1e-9 <= total <= 3.5 + 1e-9:
            raise Failed(f"overall epsilon {total} outside [max eps_i, sum eps_i] = [{max(eps)}, 3.5]")
        return f"overall epsilon {total:.4f} (sum of requests 3.5)"

    def recommend():
        """A whole-record target: every design kind built and ranked (the utility design needs Clarabel, the
        exact designs HiGHS), and nothing but JSON on stdout."""
        argv = ["design", "--sizes", "3,4,2", "--target-total", "2", "--marginals", "1,2", "--rows", "5000", "--json"]
        proc = r.run([optrr, *argv])
        expect_ok(proc, "optrr design --target-total")
        d = parse_json(proc.stdout, "optrr design --target-total --json")
        cands = d.get("recommendation", {}).get("candidates", [])
        failed = [f"{c.get('design')}: {c['result']}" for c in cands if "result" in c]
        if failed or {"utility", "auto", "kronecker", "smp"} - {c.get("design") for c in cands}:
            raise Failed(f"candidates missing or not built: {failed or [c.get('design') for c in cands]}")
        worst = max(c["whole_record_epsilon"] for c in cands)
        if worst > 2 * (1 + 1e-9):
            raise Failed(f"a candidate's whole-record epsilon {worst} exceeds the target 2")
        return f"{len(cands)} candidates ranked, recommended {d.get('recommended')}"

    def schema():
        proc = r.run([optrr, "schema", sample, "-o", work / "release.json", "--quiet"])
        expect_ok(proc, "optrr schema")
        config = parse_json((work / "release.json").read_text(encoding="utf-8"), "release.json")
        if MARGINAL not in json.dumps(config):
            raise Failed(f"release.json does not mention column {MARGINAL!r}")
        return f"release.json ({(work / 'release.json').stat().st_size} bytes)"

    def perturb():
        if not (work / "release.json").exists():
            raise Failed("no release.json (optrr schema failed)")
        out = work / "out.csv"
        # the bundled sample has rare categories (fewer than 5 rows): publishing them is acknowledged, as a user would
        args = ["perturb", sample, "--config", work / "release.json", "-o", out, "--quiet", "--allow-rare-categories"]
        proc = r.run([optrr, *args])
        expect_ok(proc, "optrr perturb")
        manifest = work / "out.csv.manifest.json"
        for path in (out, manifest):
            if not path.is_file():
                raise Failed(f"optrr perturb did not write {path.name}")
        rows = out.read_text(encoding="utf-8").strip().splitlines()
        if len(rows) != SAMPLE_ROWS + 1:
            raise Failed(f"out.csv has {len(rows) - 1} records, the sample has {SAMPLE_ROWS}")
        if MARGINAL not in rows[0].split(","):
            raise Failed(f"out.csv header {rows[0]!r} lacks {MARGINAL!r}")
        parse_json(manifest.read_text(encoding="utf-8"), manifest.name)
        return f"{len(rows) - 1} records + manifest"

    def estimate():
        out = work / "out.csv"
        if not out.exists():
            raise Failed("no out.csv (optrr perturb failed)")
        proc = r.run(
            [optrr, "estimate", out, "--manifest", work / "out.csv.manifest.json", "--marginal", MARGINAL, "--json"]
        )
        expect_ok(proc, "optrr estimate")
        est = parse_json(proc.stdout, "optrr estimate --json")
        cells = est.get("cells") or []
        if not cells or est.get("rows") != SAMPLE_ROWS:
            raise Failed(f"expected cells over {SAMPLE_ROWS} rows: {proc.stdout[:300]!r}")
        total = sum(c["estimate"] for c in cells)
        if abs(total - 1) > 1e-6:
            raise Failed(f"estimated proportions sum to {total}, not 1")
        return f"{len(cells)} cells of {MARGINAL}, proportions sum to {total:.6f}"

    def compare_figures():
        out = work / "compare"
        cmd = [optrr, "compare", "ratios", "--ks", "3", "--sets", "4", "--seed", "7", "--out", str(out)]
        proc = r.run(cmd + ["--csv", "--png", "--svg"])
        expect_ok(proc, "optrr compare ratios")
        pngs, svgs = sorted(out.glob("*.png")), sorted(out.glob("*.svg"))
        if len(pngs) != 2 or len(svgs) != 2 or not list(out.glob("*.csv")):
            raise Failed(f"optrr compare ratios wrote {sorted(p.name for p in out.iterdir())}")
        sizes = [png_size(p) for p in pngs]
        if any(w < 200 or h < 200 for w, h in sizes):
            raise Failed(f"implausible figure sizes {sizes}")
        if not all("<svg" in p.read_text(encoding="utf-8", errors="replace")[:4000] for p in svgs):
            raise Failed("an SVG figure is not SVG")
        return f"CSV + {len(pngs)} PNG ({sizes[0][0]}x{sizes[0][1]}) + {len(svgs)} SVG figures drawn with pyqtgraph"

    def screenshot(tab):
        def check():
            shot = work / f"shot-{tab}.png"
            proc = r.run([gui, "--screenshot", shot, "--tab", tab])
            expect_ok(proc, f"optrr-gui --screenshot --tab {tab}")
            if not shot.is_file():
                raise Failed(f"{shot.name} not written")
            width, height = png_size(shot)
            size = shot.stat().st_size
            if width < 800 or height < 500 or size < 20_000:
                raise Failed(f"{shot.name} is {width}x{height}, {size} bytes: not a plausible window picture")
            return f"{width}x{height} PNG, {size // 1024} KB"

        return check

    def install():
        # A shell script: it needs the system's coreutils (and nothing else) on PATH.
        tools = {"PATH": "/usr/bin:/bin"}
        proc = r.run([app / "install.sh"], tools)
        expect_ok(proc, "install.sh")
        desktop = work / "home" / ".local" / "share" / "applications" / "optrr.desktop"
        if not desktop.is_file():
            raise Failed("install.sh wrote no ~/.local/share/applications/optrr.desktop")
        text = desktop.read_text(encoding="utf-8")
        if f'Exec="{app}/optrr-gui" %f' not in text or "@APPDIR@" in text:
            raise Failed(f"the menu entry does not start {app}/optrr-gui: {text!r}")
        link = work / "home" / ".local" / "bin" / "optrr"
        if not link.is_symlink() or link.resolve() != optrr.resolve():
            raise Failed("~/.local/bin/optrr does not link to the bundle")
        proc = r.run([app / "install.sh", "--remove"], tools)
        expect_ok(proc, "install.sh --remove")
        if desktop.exists() or link.is_symlink():
            raise Failed("install.sh --remove left files behind")

    def isolation_in_effect():
        proc = r.run(["/bin/cat", "/proc/net/dev"])
        expect_ok(proc, "cat /proc/net/dev")
        interfaces = sorted(line.split(":")[0].strip() for line in proc.stdout.splitlines()[2:] if ":" in line)
        if interfaces != ["lo"]:
            raise Failed(f"network interfaces inside the namespace: {interfaces} (expected only lo)")
        proc = r.run(["/bin/sh", "-c", 'for d in "$@"; do /bin/ls -A "$d"; done', "sh", *r.hidden])
        expect_ok(proc, "listing the hidden folders")
        if proc.stdout.strip():
            raise Failed(f"hidden folders are not empty inside the namespace: {proc.stdout.split()[:5]}")
        return "only the loopback interface; Python installations and source tree invisible"

    if isolate:
        r.check("isolation in effect", isolation_in_effect)
    r.check("optrr --version", version_check)
    r.check("bundle contents and licences", bundle_contents)
    r.check("subcommands registered", subcommands_registered)
    r.check("optrr import self-test", self_test(optrr, "optrr"))
    r.check("optrr-gui import self-test", self_test(gui, "optrr-gui"))
    r.check("optrr design --method auto --json", design)
    r.check("optrr design --target-total --json (every design kind ranked)", recommend)
    r.check("optrr schema (bundled sample)", schema)
    r.check("optrr perturb (bundled sample)", perturb)
    r.check("optrr estimate --marginal --json", estimate)
    r.check("optrr compare ratios (CSV + PNG + SVG figures)", compare_figures)
    r.check("optrr-gui --screenshot (design tab)", screenshot("design"))
    r.check("optrr-gui --screenshot (compare tab)", screenshot("compare"))
    r.check("install.sh per-user menu entry", install)
    print(f"smoke: {r.passed} passed, {r.failed} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
