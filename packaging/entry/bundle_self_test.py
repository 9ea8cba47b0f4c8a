"""Import check of a frozen bundle, run when OPTRR_BUNDLE_SELF_TEST=1 is set (used by packaging/smoke_test.py).

Imports every native extension module in the bundle (this catches a library damaged by stripping or missing a
dependency), every module of the OptRR packages, and the modules the program imports lazily. Prints one JSON
line {"imported": N, "failed": {module: error}} and returns 0 only when nothing failed.
"""

import importlib
import importlib.util
import json
import os
import sys

#: Modules the engine and GUI import inside functions (file formats, plots, solvers).
LAZY = [
    "numpy",
    "pandas",
    "pyarrow",
    "pyarrow.csv",
    "pyarrow.parquet",
    "pyarrow.compute",
    "pyarrow.types",
    "openpyxl",
    "pyreadstat",
    "highspy",
    "scipy.special",
    "scipy.stats",
    "scipy.optimize",
    "hashlib",
    "csv",
    "json",
]
LAZY_GUI = ["PySide6.QtCore", "PySide6.QtGui", "PySide6.QtWidgets", "PySide6.QtSvg", "pyqtgraph", "pyqtgraph.exporters"]
EXTENSION_SUFFIXES = (".abi3.so", ".so", ".pyd")


def extension_modules(root: str) -> list[str]:
    """Dotted names of the extension modules (``name.cpython-3XY-....so``, ``name.abi3.so``, ``.pyd``) under root."""
    names = []
    for folder, _dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        parts = [] if rel == "." else rel.split(os.sep)
        if parts[:2] and parts[0].startswith("python3") and parts[1:2] == ["lib-dynload"]:
            parts = []  # the standard library's extension modules are top-level modules
        elif any("." in p or "-" in p for p in parts):
            continue  # not a package path (e.g. numpy.libs, *.dist-info)
        for name in files:
            if not name.endswith(EXTENSION_SUFFIXES) or name.startswith("lib"):
                continue
            stem = name.split(".", 1)[0]
            if ".cpython-" in name or name.endswith((".abi3.so", ".pyd")) or folder == root:
                names.append(".".join(parts + [stem]))
    return sorted(set(names))


def missing_gui_resources() -> dict[str, str]:
    """The sample data and the guide, where the GUI looks for them (optrr_gui.state.paths, main_window.show_guide)."""
    from pathlib import Path

    missing = {}
    try:
        from optrr_gui import main_window
        from optrr_gui.state import paths
    except Exception as exc:
        return {"optrr_gui resources": f"{type(exc).__name__}: {exc}"}
    wanted = [Path(p) for p in getattr(paths, "SAMPLES", ())] + [Path(getattr(paths, "ATTRIBUTION", "missing"))]
    wanted.append(Path(main_window.__file__).resolve().parent.parent / "docs" / "gui.md")
    for path in wanted:
        if not path.is_file():
            missing[f"resource {path.name}"] = f"not found at {path}"
    return missing


def worker_process_failure() -> dict[str, str]:
    """The GUI's heavy work runs in worker processes started from the frozen executable itself
    (``--multiprocessing-fork``): run one design there and compare it with the same design run here."""
    try:
        from optrr_engine.designs import run_design
        from optrr_engine.process_pool import ProcessPool

        pool = ProcessPool(max_workers=1)
        try:
            there = pool.run(run_design, ("optimal", [2, 3, 4], [1.0, 0.5, 2.0]))
        finally:
            pool.shutdown()
        here = run_design("optimal", [2, 3, 4], [1.0, 0.5, 2.0])
        if abs(there.overall_epsilon - here.overall_epsilon) > 1e-9:
            return {"worker process": f"eps_total {there.overall_epsilon} there, {here.overall_epsilon} here"}
    except Exception as exc:
        return {"worker process": f"{type(exc).__name__}: {exc}"}
    return {}


def renderer_failure() -> dict[str, str]:
    """``optrr compare`` finds its figure renderer through OptRR's entry points, read from the bundled metadata."""
    try:
        from optrr_engine.compare.figures import renderer

        if renderer() is None:
            return {"figure renderer": "no entry point optrr.figure_renderers (is OptRR's metadata bundled?)"}
    except Exception as exc:
        return {"figure renderer": f"{type(exc).__name__}: {exc}"}
    return {}


def loads(exc: ImportError) -> bool:
    """Whether the dynamic loader accepts the extension's file (all its libraries found, layout valid)."""
    import ctypes

    try:
        ctypes.CDLL(exc.path)
    except (OSError, TypeError):
        return False
    return True


def run(gui: bool) -> int:
    root = getattr(sys, "_MEIPASS", None)
    if root is None:
        print("bundle self-test: not running from a bundle", file=sys.stderr)
        return 2
    import pkgutil

    wanted = LAZY + (LAZY_GUI if gui else [])
    for package in ("optrr_engine", "optrr_gui") if gui else ("optrr_engine",):
        mod = importlib.import_module(package)
        wanted.append(package)
        wanted += [m.name for m in pkgutil.walk_packages(mod.__path__, package + ".")]
    ext = [m for m in extension_modules(root) if gui or not m.startswith(("PySide6", "shiboken6"))]
    failed = {}
    for name in wanted + ext:
        try:
            importlib.import_module(name)
        except Exception as exc:
            if "partially initialized module" in str(exc) and name in ext and loads(exc):
                continue  # the package's own circular import (fails the same outside a bundle); the library loads
            failed[name] = f"{type(exc).__name__}: {exc}"
    failed.update(renderer_failure())
    if gui:
        failed.update(missing_gui_resources())
        failed.update(worker_process_failure())
    print(json.dumps({"imported": len(wanted) + len(ext) - len(failed), "extensions": len(ext), "failed": failed}))
    return 1 if failed else 0
