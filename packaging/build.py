"""Build the standalone OptRR bundle for this platform, package it, and report its size and start time.

    python3 -m pip install -e ".[packaging]"
    python3 packaging/build.py [--clean] [--no-bench]

Steps: PyInstaller builds packaging/dist/optrr/ from optrr.spec (one folder, programs ``optrr-gui`` and
``optrr``); the licences, version and a short read-me are copied next to the programs; then per platform:
- Linux: packaging/dist/optrr-VERSION-linux-ARCH.tar.xz (folder optrr-VERSION/ with install.sh, a .desktop
  template and the icons for a per-user installation);
- Windows: packaging/dist/OptRR-VERSION-setup.exe with Inno Setup (iscc on PATH or in its default folder);
- macOS: packaging/dist/OptRR-VERSION.dmg from the OptRR.app bundle (packaging/macos/make_dmg.sh).
Finally bench/bundle.py measures the unpacked size and the start time; both sizes (unpacked and, on Linux, the
compressed tarball) are printed against their targets and written to packaging/dist/build_report.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DIST = HERE / "dist"
WORK = HERE / "build"
BUNDLE = DIST / "optrr"

BUNDLE_README = """\
OptRR {version} - privacy-optimized randomized response, as a standalone program
================================================================================

Everything the programs need is in this folder; no Python, no internet connection and no administrator
rights are required.

  optrr-gui    the desktop application (double-click, or: ./optrr-gui [FILE])
  optrr        the command line (./optrr --help)

Linux: run ./install.sh once to add OptRR to your applications menu and the commands to ~/.local/bin
(./install.sh --remove undoes it). The bundled sample datasets are in _internal/resources/sample.

Licences: LICENSE (OptRR, MIT) and THIRD_PARTY_LICENSES (the bundled Python runtime, Qt and libraries).
"""


def version() -> str:
    text = (ROOT / "optrr_engine" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'__version__\s*=\s*"([^"]+)"', text).group(1)


def run_pyinstaller(clean: bool) -> float:
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN"]
    cmd += ["--distpath", str(DIST), "--workpath", str(WORK)]
    if clean:
        cmd.append("--clean")
    cmd.append(str(HERE / "optrr.spec"))
    print("+", " ".join(cmd), flush=True)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT)
    return time.perf_counter() - t0


def docs_folder() -> Path:
    """Where the licences and read-me go: next to the executables; in a macOS .app, Contents/Resources (files
    other than code in Contents/MacOS would break the code signature)."""
    if sys.platform == "darwin":
        return DIST / "OptRR.app" / "Contents" / "Resources"
    return BUNDLE


def add_top_level_files(folder: Path, ver: str) -> None:
    """Licences, version and read-me next to the executables."""
    internal = BUNDLE / "_internal"
    shutil.copy2(ROOT / "LICENSE", folder / "LICENSE")
    shutil.copy2(internal / "THIRD_PARTY_LICENSES", folder / "THIRD_PARTY_LICENSES")
    (folder / "VERSION").write_text(ver + "\n", encoding="utf-8")
    (folder / "README.txt").write_text(BUNDLE_README.format(version=ver), encoding="utf-8")


def machine() -> str:
    arch = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)


def linux_tarball(ver: str) -> Path:
    """optrr-VERSION-linux-ARCH.tar.xz with top folder optrr-VERSION/ (symbolic links kept as links).

    xz (preset 6) rather than gzip: 108 MB instead of 150 MB for the same 378 MB folder, which every current
    Linux ``tar`` unpacks (``tar xf``); it takes about 3 minutes on one core instead of 40 seconds."""
    share = BUNDLE / "share"
    (share / "icons").mkdir(parents=True, exist_ok=True)
    shutil.copy2(HERE / "linux" / "optrr.desktop.in", share / "optrr.desktop.in")
    shutil.copy2(HERE / "icons" / "optrr.png", share / "icons" / "optrr.png")
    shutil.copy2(HERE / "icons" / "optrr.svg", share / "icons" / "optrr.svg")
    shutil.copy2(HERE / "linux" / "install.sh", BUNDLE / "install.sh")
    os.chmod(BUNDLE / "install.sh", 0o755)
    archive = DIST / f"optrr-{ver}-linux-{machine()}.tar.xz"
    tmp = archive.with_name(archive.name + ".tmp")
    with tarfile.open(tmp, "w:xz", preset=6) as tar:
        tar.add(BUNDLE, arcname=f"optrr-{ver}")
    os.replace(tmp, archive)
    return archive


def windows_installer(ver: str) -> Path | None:
    iscc = shutil.which("iscc") or shutil.which("ISCC")
    default = Path(os.environ.get("ProgramFiles(x86)", r"C:\Program Files (x86)")) / "Inno Setup 6" / "ISCC.exe"
    if not iscc and default.exists():
        iscc = str(default)
    if not iscc:
        print("Inno Setup (ISCC.exe) not found: install Inno Setup 6 to make the installer; the folder is ready.")
        return None
    script = HERE / "windows" / "optrr.iss"
    subprocess.run([iscc, f"/DAppVersion={ver}", f"/DSourceDir={BUNDLE}", f"/O{DIST}", str(script)], check=True)
    return DIST / f"OptRR-{ver}-setup.exe"


def macos_dmg(ver: str) -> Path:
    subprocess.run(["bash", str(HERE / "macos" / "make_dmg.sh"), ver], check=True)
    return DIST / f"OptRR-{ver}.dmg"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_bundle", ROOT / "bench" / "bundle.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def print_sizes(report: dict, bench) -> None:
    """Both sizes against their targets: the unpacked folder and the compressed Linux tarball."""

    def verdict(value, target):
        return f"{'meets' if value <= target else 'MISSES'} the {target:.0f} MB target"

    print(f"unpacked: {report['size_mb']:.1f} MB ({verdict(report['size_mb'], bench.SIZE_TARGET_MB)})")
    if str(report.get("artefact", "")).endswith(".tar.xz"):
        mb = report["artefact_mb"]
        print(f"Linux tarball (xz): {mb:.1f} MB ({verdict(mb, bench.TARBALL_TARGET_MB)})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clean", action="store_true", help="empty PyInstaller's cache first")
    parser.add_argument("--no-bench", action="store_true", help="skip the start times (sizes are always printed)")
    args = parser.parse_args(argv)
    ver = version()
    build_seconds = run_pyinstaller(args.clean)
    add_top_level_files(docs_folder(), ver)
    t0 = time.perf_counter()
    if sys.platform.startswith("linux"):
        artefact = linux_tarball(ver)
    elif sys.platform == "win32":
        artefact = windows_installer(ver)
    elif sys.platform == "darwin":
        artefact = macos_dmg(ver)
    else:
        artefact = None
    package_seconds = time.perf_counter() - t0
    print(f"PyInstaller build: {build_seconds:.0f} s; packaging: {package_seconds:.0f} s")
    report = {"version": ver, "build_seconds": build_seconds, "package_seconds": package_seconds}
    if artefact is not None and artefact.exists():
        report["artefact"] = str(artefact)
        report["artefact_mb"] = artefact.stat().st_size / 2**20
        print(f"artefact: {artefact} ({report['artefact_mb']:.1f} MB)")
    bench = load_bench()
    measured = bench.measure(DIST / "OptRR.app" if sys.platform == "darwin" else BUNDLE, with_times=not args.no_bench)
    bench.print_report(measured)
    report.update(measured)
    print_sizes(report, bench)
    (DIST / "build_report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 1 if any(report.get("exit_codes", [])) else 0


if __name__ == "__main__":
    sys.exit(main())
