"""Code quality gates that CI runs with the tests: ruff and the engine's Qt-free import contract."""

import shutil
import subprocess
import sys

from tests.conftest import ROOT


def test_ruff_clean():
    ruff = shutil.which("ruff")
    cmd = [ruff, "check", str(ROOT)] if ruff else [sys.executable, "-m", "ruff", "check", str(ROOT)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_engine_never_imports_qt():
    exe = shutil.which("lint-imports")
    assert exe, "import-linter is part of the test extras"
    proc = subprocess.run([exe], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # both contracts: no Qt/GUI in the engine, no scipy in the shipped packages (pyproject.toml)
    assert "2 kept, 0 broken" in proc.stdout
    flat = " ".join(proc.stdout.split())
    assert "The engine never imports Qt or the GUI KEPT" in flat
    assert "The shipped program never imports scipy" in flat


def test_engine_imports_without_qt_in_a_fresh_interpreter():
    code = (
        "import sys, optrr_engine.designs, optrr_engine.mechanism, optrr_engine.cli.main;"
        "bad=[m for m in sys.modules if m.startswith(('PySide6','pyqtgraph','shiboken6'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
